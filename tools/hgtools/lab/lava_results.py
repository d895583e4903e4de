"""lava_results - what LAVA's dispatcher said of a job: its test cases, from lava-run's log.

    python3 -m hgtools.lab.lava_results JOB.log [--pass NAME]... [--present NAME]... [--fail NAME]...
                              [--reference NAME]...

lava-run (no server: --url unset) writes its log as one YAML flow mapping a line (JSON but
for its tags: `"starttc": ! "788"`); the lines of
level "results" are the job's test cases: LAVA's own (validate, job, the actions) and the
job's tests' (definition 0_commands..., each lava-test-case call). Prints them as a table:
definition, case, result, measurement and units, or the URL a case links to
(lava-test-reference). --reference NAME: a case of NAME must have passed with a link,
whose URL is printed alone on the last line ("reference NAME URL"). --pass NAME: a case whose name starts with
NAME must have passed (or been skipped: a class check shown, not held); --present NAME: there
must be cases of NAME, whatever their results; --fail NAME: one must have failed. Exit 0 only if the job finished (LAVA's case "job" passed or, with --fail, ran
to its end) and every --pass and --fail held; 1 otherwise, saying which did not.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any, Dict, List

import yaml

Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)   # libyaml's: a job's log has thousands of lines


def results(path: str) -> List[Dict[str, Any]]:
    """The "results" entries of lava-run's log @path, in order."""
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            try:
                entry = yaml.load(line, Loader=Loader)
            except yaml.YAMLError:
                continue
            if isinstance(entry, dict) and entry.get("lvl") == "results" and isinstance(entry.get("msg"), dict):
                out.append(entry["msg"])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description="the test cases of a LAVA job, from lava-run's log (docs/lava.md)")
    ap.add_argument("log", help="lava-run's standard output")
    ap.add_argument("--pass", dest="passes", action="append", default=[], metavar="NAME",
                    help="cases whose names start with NAME must pass (or skip)")
    ap.add_argument("--present", action="append", default=[], metavar="NAME",
                    help="cases whose names start with NAME must be there, whatever their result")
    ap.add_argument("--fail", dest="fails", action="append", default=[], metavar="NAME",
                    help="a case whose name starts with NAME must fail")
    ap.add_argument("--reference", dest="refs", action="append", default=[], metavar="NAME",
                    help="a case whose name starts with NAME must pass and link to a URL (printed last)")
    a = ap.parse_args()
    try:
        rs = results(a.log)
    except OSError as e:
        print(f"lava_results: {a.log}: {e.strerror}", file=sys.stderr)
        return 2
    print(f"{'definition':<16} {'case':<60} {'result':<6} measurement")
    for r in rs:
        m = f"{r.get('measurement')} {r.get('units') or ''}".strip() if r.get("measurement") is not None \
            else str(r.get("reference") or "")
        print(f"{str(r.get('definition')):<16} {str(r.get('case')):<60} {str(r.get('result')):<6} {m}")
    problems = []
    job = [r for r in rs if r.get("definition") == "lava" and r.get("case") == "job"]
    if not job:
        problems.append("the job did not finish: LAVA reported no result for it")
    tests = [r for r in rs if r.get("definition") != "lava"]
    for name in a.passes:
        mine = [r for r in tests if str(r.get("case", "")).startswith(name)]
        if not mine:
            problems.append(f"no case of {name}")
        problems += [f"{r['case']}: {r.get('result')}, expected to pass" for r in mine
                     if r.get("result") not in ("pass", "skip")]
    for name in a.present:
        if not any(str(r.get("case", "")).startswith(name) for r in tests):
            problems.append(f"no case of {name}")
    for name in a.fails:
        if not any(str(r.get("case", "")).startswith(name) and r.get("result") == "fail" for r in tests):
            problems.append(f"no case of {name} failed, and it fails on purpose")
    links = []
    for name in a.refs:
        mine = [r for r in tests if str(r.get("case", "")).startswith(name) and r.get("reference")]
        if not mine or mine[0].get("result") != "pass":
            problems.append(f"no case of {name} passed with a link (lava-test-reference)")
        else:
            links.append(f"reference {name} {mine[0]['reference']}")
    if not a.fails and job and job[0].get("result") != "pass":
        problems.append(f"LAVA's job case: {job[0].get('result')}")
    for p in problems:
        print(f"lava_results: {p}", file=sys.stderr)
    print(f"# {len(tests)} test cases of the job's tests; "
          + ("as expected" if not problems else f"{len(problems)} problems"))
    for line in links:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

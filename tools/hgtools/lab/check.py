"""check - issue 17's targets asserted on a lab's results (OUT/lab.json, as
tools/hgtools/lab/analyse.py writes it), as TAP:

    python3 -m hgtools.lab.check OUT [--guest icount]

For each run of the guest (default icount, the reference lab): one test that
nothing was lost and each expectation's count is within 2% of what is
expected and the gaps are named right (of the expected class), and one that
every class the issue lists (switch_hg, switch_other, timer, interrupt) that
occurs 10 times or more has precision and recall of at least 0.95, or misses
it by one gap at most (a TODO in a guest whose class figures are not held:
scenario.not_held says why: the scenario's or the guest's word). A failure prints the figures it failed on. A class
short only by gaps a kernel is known to misread in a scenario's guest (its
[[known_misread]] data, each with its share, why and the dated runs behind it),
or a class the scenario does not hold on that kernel and guest (its
[[class_not_held]]), makes its test TAP's "# TODO": printed with its figures
and counted apart, never as passed. No allowance excuses more than its share,
nor all together more than vocab.ALLOWANCE_CEILING (2%), of a class's gaps in
a run: more, or any other class short, fails as before. The classes are judged
here against the scenario data as it is now (lab.json keeps each run's
confusion matrix), so that editing the data needs no new analysis. Exit 0 only if every
test passed or is a known shortfall.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import subprocess
import sys
from typing import Any, Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "../../.."))
from . import expect
from . import labsummary
from . import scenario


def _fmt(x: Any) -> str:
    return "none" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


def tests_of(lab: Dict[str, Any], guest: str) -> List[Tuple[str, List[str], str]]:
    """(name, problems, todo) for every test; no problems: passed; todo: why its problems
    are a known shortfall (the scenario's known misreads and classes not held), or empty. A scenario recorded several times
    in a boot (its check_runs) is judged on the majority of its runs (majority)."""
    groups: Dict[Tuple[str, str], List[List[Tuple[str, List[str], str]]]] = {}
    for r in sorted(lab["runs"], key=lambda r: (r["kernel"], r["scenario"], r.get("run", 1))):
        if r["guest"] == guest:
            groups.setdefault((r["kernel"], r["scenario"]), []).append(run_tests(r, guest))
    out = []
    for runs in groups.values():
        if len(runs) == 1 or any(len(t) != len(runs[0]) for t in runs):
            out += [t for ts in runs for t in ts]   # one run, or one that could not be analysed: each judged
        else:
            out += [majority(list(t)) for t in zip(*runs)]
    return out


def majority(runs: List[Tuple[str, List[str], str]]) -> Tuple[str, List[str], str]:
    """One test over a scenario's runs in a boot: failed if most runs failed it, passed if
    most passed it, else a known shortfall. The runs that disagree with the verdict show
    in it, their problems with them: a minority is reported, never dropped."""
    n = len(runs)
    fails = [k for k, (_, p, t) in enumerate(runs, 1) if p and not t]
    oks = [k for k, (_, p, _) in enumerate(runs, 1) if not p]
    todo = "; ".join(sorted({t for _, p, t in runs if p and t}))
    name = f"{runs[0][0]}, in most of {n} runs"
    probs = [f"run {k}: {line}" for k, (_, p, _) in enumerate(runs, 1) for line in p]
    if 2 * len(fails) > n:
        return name + f": run {', '.join(map(str, fails))} failed", probs, ""
    if 2 * len(oks) > n:
        short = [k for k in range(1, n + 1) if k not in oks]
        return name + (f" (run {', '.join(map(str, short))} short: {probs[0]})" if short else ""), [], ""
    return name, probs, todo


def _not_held(name: str, guest: str) -> str:
    """Why scenario @name's class figures in @guest are not held (scenario.not_held), '' if they are."""
    try:
        return scenario.not_held(scenario.load(name), guest)
    except (scenario.ScenarioError, OSError):      # a run of a scenario since renamed: the guest's word
        return str(scenario.GUESTS.get(guest, {}).get("not_held", ""))


def class_short(r: Dict[str, Any]) -> Dict[str, Any]:
    """Run @r's classes short of the targets, judged now against its scenario's known misreads
    and classes not held for its kernel and guest (expect.class_targets: the ceiling is held
    there), from the figures analyse.py kept; a run analysed before lab.json kept its confusion
    matrix, as analyse.py judged it then."""
    if r.get("classes") is None or r.get("confusion") is None:
        return r.get("class_short") or {}
    try:
        sc = scenario.load(r["scenario"])
    except (scenario.ScenarioError, OSError):      # a run of a scenario since renamed: no allowance
        sc = {}
    rep = {"inference": {"classes": r["classes"], "confusion": r["confusion"]}}
    return expect.class_targets(rep, None, scenario.known_misreads(sc, r["kernel"], r["guest"]) if sc else [],
                                scenario.classes_not_held(sc, r["kernel"], r["guest"]) if sc else {})


def _todo(short: Dict[str, Dict[str, Any]]) -> str:
    """The known shortfall of @short's classes, each reason once: classes not held for one
    reason share it ("switch_other, timer not held: ..."), as the scenario's data gives one
    reason for several classes."""
    by_reason: Dict[str, List[str]] = {}
    for c, f in sorted(short.items()):
        if not f.get("known"):
            by_reason.setdefault(f["not_held"], []).append(c)
    return "; ".join(sorted({f["known"] for f in short.values() if f.get("known")}
                            | {f"{', '.join(cs)} not held: {why}" for why, cs in by_reason.items()}))


def run_tests(r: Dict[str, Any], guest: str) -> List[Tuple[str, List[str], str]]:
    """The two tests of one run."""
    out = []
    where = f"{r['scenario']} on {r['kernel']} {guest}"
    if r.get("error"):
        return [(f"{where}: recorded and analysed", [r["error"][:500]], "")]
    if r.get("not_run"):
        # make check's subset asserts its targets on every kernel it names: a scenario that
        # cannot run on one of them fails there rather than pass unseen
        return [(f"{where}: recorded", [f"not made for this kernel: {r['not_run']}"], "")]
    probs = []
    if r.get("lost"):
        # a count short because the recorder's buffer overflowed is not the merger's miss
        probs.append(f"the recording lost {r['lost']} events (a buffer too small for the drain period)")
    for e in r["expectations"]:
        line = (f"{e['what']}: found {e['found']} of {e['expected']} expected ({e['expected_how']}; "
                f"{e['found_how']})")
        if not e["count_ok"]:
            probs.append(f"{line}: not within {100 * expect.TOLERANCE:.0f}%")
        if not e.get("class_ok", True):
            probs.append(f"{line}: only {_fmt(e.get('class_share'))} of them {e['class']} "
                         f"(actual classes {e.get('actual_classes')})")
        if not e.get("named_ok", True):
            probs.append(f"{line}: only {_fmt(e.get('named_share'))} of them named /{e.get('named')}/")
        if not e.get("hidden_ok", True):
            probs.append(f"{line}: {e.get('hidden')} of them hidden ({_fmt(e.get('hidden_share'))}; at most "
                         f"{100 * expect.HIDDEN_SHARE:.0f}% without a reason for this guest): the kernel "
                         "recorded too little of them to name")
        if not e.get("median_ok", True):
            probs.append(f"{line}: median {_fmt(e.get('median_us'))} us outside {e.get('median_bounds')}")
    out.append((f"{where}: expected counts within {100 * expect.TOLERANCE:.0f}% and named right", probs, ""))
    short = class_short(r)
    # the report's rates must be its own counts': a rate from the wrong column would move every
    # class figure above without a gap read differently (tests/mutants: precision over actual)
    rates = [f"{c}: the report's {k} {_fmt(f.get(k))} is not {f.get('correct')} of {f.get(d)} {d}"
             for c, f in sorted((r.get("classes") or {}).items()) if f.get("correct") is not None
             for k, d in (("precision", "inferred"), ("recall", "actual"))
             if f.get(d) and (f.get(k) is None or abs(f[k] - f["correct"] / f[d]) > 1e-3)]
    # a known shortfall only if every short class is short by known misreads alone, or not held
    # on this kernel and guest (the scenario's data)
    todo = _todo(short) if short and all(f.get("known") or f.get("not_held") for f in short.values()) else ""
    # a guest whose class figures are shown, not held (scenario.not_held): its misreads
    # are printed below the TODO all the same
    not_held = _not_held(r["scenario"], guest) if short and not todo else ""
    few = "".join(f"; {c} {f['actual']} actual, {f['inferred']} inferred: "
                  + (f"within {expect.CLASS_SLACK} gap" if f.get("why") == "slack" else "not held to it")
                  for c, f in sorted((r.get("class_few") or {}).items()))
    out.append((f"{where}: every class that occurs {expect.CLASS_MIN} times or more at precision and "
                f"recall >= {expect.CLASS_TARGET} or within {expect.CLASS_SLACK} gap of it{few}",
                rates + [f"{c}: precision {_fmt(f['precision'])} recall {_fmt(f['recall'])} "
                 f"({f['actual']} actual, {f['inferred']} inferred)"
                 + (f": {f['excused']}" if f.get("excused") else "") for c, f in sorted(short.items())]
                # a failure says why, for a run seen only in a log (CI keeps no run directory)
                + (list(r.get("misreads") or []) if short and not todo else []),
                "" if rates else todo or not_held))
    return out


def results_test(out: str, lab: Dict[str, Any]) -> Tuple[str, List[str], str]:
    """OUT/results.parquet (issue 41): the table analyse.py wrote with `hourglass results` and
    built the page from (written now for a lab analysed before it did), its per-class figures
    read back with DuckDB, are lab.json's for every run and class."""
    name = "hourglass results: the Parquet table holds lab.json's per-class figures of every run"
    table = os.path.join(out, "results.parquet")
    if not os.path.exists(table):
        written, why = labsummary.write_table(out)
        if not written:
            return name, [why], ""
    q = subprocess.run([os.path.join(TOP, "build", "hourglass"), "results", table, "--csv", "--query",
                        "SELECT run_dir, cls, actual, inferred, correct FROM results WHERE actual IS NOT NULL"],
                       capture_output=True, text=True)
    if q.returncode != 0:
        return name, [f"query: exit {q.returncode}: {q.stderr.strip()[-300:]}"], ""
    got = {(os.path.realpath(r[0]), r[1]): tuple(int(x) for x in r[2:]) for r in list(csv.reader(io.StringIO(q.stdout)))[1:]}
    probs, n = [], 0
    for r in lab["runs"]:
        for cls, k in (r.get("classes") or {}).items():
            n += 1
            want = (k["actual"], k["inferred"], k["correct"])
            have = got.get((os.path.realpath(r["dir"]), cls))
            if have != want:
                probs.append(f"{r['dir']} {cls}: lab.json {want}, the table {have}")
    if not n:
        probs.append("lab.json holds no per-class figures")
    return name + f" ({n})", probs[:10], ""


def main() -> int:
    ap = argparse.ArgumentParser(description="assert issue 17's targets on a lab's results")
    ap.add_argument("out", help="the directory with lab.json")
    ap.add_argument("--guest", default="icount")
    ap.add_argument("--results", action="store_true",
                    help="also check hourglass results' table against lab.json (writes OUT/results.parquet)")
    a = ap.parse_args()
    with open(os.path.join(a.out, "lab.json")) as f:
        lab = json.load(f)
    tests = tests_of(lab, a.guest) + ([results_test(a.out, lab)] if a.results else [])
    print(f"TAP version 13\n1..{len(tests)}")
    failed = known = 0
    for i, (name, probs, todo) in enumerate(tests, 1):
        print(f"{'not ok' if probs else 'ok'} {i} - lab: {name}" + (f" # TODO known short: {todo}" if todo else ""))
        for p in probs:
            print(f"#   {p}")
        known += bool(probs) and bool(todo)
        failed += bool(probs) and not todo
    print(f"# lab: {len(tests) - failed - known} passed, {failed} failed"
          + (f", {known} known short (TODO, not passed)" if known else ""))
    return 1 if failed or not tests else 0


if __name__ == "__main__":
    sys.exit(main())

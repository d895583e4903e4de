"""lava_cases - the lab's checks and figures as LAVA test cases:

    python3 -m hgtools.lab.lava_cases [--print] OUT [--guest machine]
    python3 -m hgtools.lab.lava_cases [--print] --case NAME pass|fail|skip WHY [--reference URL]
    python3 -m hgtools.lab.lava_cases [--print] --paper DIR

Reads OUT/lab.json (tools/hgtools/lab/analyse.py) and reports, for each run of the guest:
  - each of tools/hgtools/lab/check.py's checks (its expected counts, its class figures) as a
    test case that passes or fails as the check does; a check whose figures are shown but
    not held (a known shortfall, or the machine guest's class figures) is skipped, never
    passed;
  - each expectation's count found (unit: events) and each class's precision and recall
    (unit: ratio), the longest gap hourglass did not ask for (its worst latency, us), the
    steal (percent) and the share of gaps explained, as measurements.
Inside a LAVA job (lava-test-case on PATH) it calls lava-test-case, which LAVA records; else,
or with --print, it prints the lava-test-case command lines it would run. --case reports one
case (scripts/lava-lab's build steps). --paper DIR: the paper's runs that scripts/paper-run
--guest machine left in DIR/<experiment>/<run>/: each a case that passes when it recorded with
no error, and its report's figures as measurements (the share of gaps inferred right, its
worst wake-up latency, its missed deadlines, cyclictest's worst latency beside it). With --reference, through lava-test-reference: a
case that links to a file (the run directories' archive on the farm's artifact store). Exit 1
if any case failed.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from typing import Any, Dict, List, Optional

from . import check

RESULTS = ("pass", "fail", "skip")


def slug(text: str, limit: int = 90) -> str:
    """@text as a LAVA test case name: letters, digits, '.', '_' and '-' only."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:limit]


class Reporter:
    """Test cases, to lava-test-case or to standard output."""

    def __init__(self, printing: bool):
        self.tool = None if printing else shutil.which("lava-test-case")
        self.failed = 0
        self.cases: List[List[str]] = []

    def case(self, name: str, result: str, measurement: Optional[float] = None, units: str = "") -> None:
        argv = ["lava-test-case", slug(name), "--result", result]
        if measurement is not None:
            argv += ["--measurement", f"{measurement:.6g}"] + (["--units", units] if units else [])
        self.cases.append(argv)
        self.failed += result == "fail"
        if self.tool:
            subprocess.run([self.tool] + argv[1:], check=False)
        else:
            print(" ".join(argv), flush=True)

    def reference(self, name: str, result: str, url: str) -> None:
        """A case linked to @url: LAVA keeps the link with the result (lava-test-reference)."""
        argv = ["lava-test-reference", slug(name), "--result", result, "--reference", url]
        self.cases.append(argv)
        self.failed += result == "fail"
        tool = shutil.which("lava-test-reference") if self.tool else None
        if tool:
            subprocess.run([tool] + argv[1:], check=False)
        else:
            print(" ".join(argv), flush=True)

    def note(self, text: str) -> None:
        """Why a case is what it is: a comment in the job's log (LAVA keeps the log)."""
        for line in text.splitlines():
            print(f"# {line}", flush=True)


def report_lab(rep: Reporter, lab: Dict[str, Any], guest: str) -> int:
    """Every check and figure of @lab's runs in @guest; the number of runs."""
    runs = [r for r in lab.get("runs", []) if r.get("guest") == guest]
    for name, probs, todo in check.tests_of(lab, guest):
        where, _, what = name.partition(": ")
        kind = "counts" if what.startswith("expected counts") else "classes" if what.startswith("every class") \
            else slug(what, 30)
        result = "pass" if not probs else "skip" if todo else "fail"
        if probs:
            rep.note(f"{name}" + (f": not held: {todo}" if todo else "") + "".join(f"\n  {p}" for p in probs[:12]))
        rep.case(f"{where}-{kind}", result)
    for r in runs:
        run = os.path.basename(r.get("dir", "")) or r["scenario"]
        if r.get("error") or r.get("not_run"):
            continue      # its check above failed with the reason
        for e in r.get("expectations") or []:
            rep.case(f"{run}-{e['what']}-found", "pass" if e.get("count_ok") else "fail", e.get("found"), "events")
        for cls, f in sorted((r.get("classes") or {}).items()):
            for k in ("precision", "recall"):
                if f.get(k) is not None:
                    rep.case(f"{run}-{cls}-{k}", "pass", f[k], "ratio")
        if r.get("longest_gap_us") is not None:
            # the worst latency hourglass's threads saw: their longest gap they did not ask for
            rep.case(f"{run}-longest-gap", "pass", r["longest_gap_us"], "us")
        if r.get("steal_share") is not None:
            rep.case(f"{run}-steal", "pass", 100 * r["steal_share"], "percent")
        if r.get("explained_share") is not None:
            rep.case(f"{run}-explained", "pass", 100 * r["explained_share"], "percent")
    return len(runs)


def report_paper(rep: Reporter, top: str) -> int:
    """A case per run of the paper's experiments under @top, with its figures; the number of runs."""
    from .. import results   # the one reader of a run's report (its report.json, or a merge now)
    from ..errors import HgError
    from ..paper.runs import RunDir
    from ..paper.table1 import cyclictest_figures   # the paper's reader of cyclictest's histogram

    n = 0
    for exp in sorted(os.listdir(top)) if os.path.isdir(top) else []:
        if not os.path.isdir(os.path.join(top, exp)):
            continue        # paper-run's own files beside the runs: dmesg.txt, guest.json
        for run in sorted(os.listdir(os.path.join(top, exp))):
            d = os.path.join(top, exp, run)
            try:
                with open(os.path.join(d, "paper-run.json")) as f:
                    pr = json.load(f)
            except (OSError, ValueError):
                continue
            n += 1
            name = f"paper-{exp}-{run}"
            errors = list(pr.get("errors") or [])
            report: Dict[str, Any] = {}
            if not errors:
                try:
                    report = results.report_of(d)
                except HgError as e:
                    errors.append(f"its report: {e}")
            if errors:
                rep.note(f"{name}: " + "; ".join(errors[:5]))
            rep.case(name, "fail" if errors else "pass")
            head = (report.get("inference") or {}).get("headline") or {}
            if report.get("ground_truth") not in (None, "none") and head.get("accuracy") is not None:
                rep.case(f"{name}-accuracy", "pass", head["accuracy"], "ratio")
            worst = ((report.get("latency") or {}).get("worst") or {}).get("latency_us")
            if worst is not None:
                rep.case(f"{name}-worst-latency", "pass", worst, "us")
            missed = (report.get("missed_deadlines") or {}).get("count")
            if missed is not None:
                rep.case(f"{name}-missed-deadlines", "pass", missed, "deadlines")
            ct = cyclictest_figures(RunDir(d)) if pr.get("cyclictest") else None
            if ct and ct.get("worst_us") is not None:
                rep.case(f"{name}-cyclictest-max", "pass", ct["worst_us"], "us")
    return n


def main() -> int:
    ap = argparse.ArgumentParser(description="the lab's checks and figures as LAVA test cases (docs/lava.md)")
    ap.add_argument("--print", action="store_true", help="print the lava-test-case lines, never run them")
    ap.add_argument("--case", nargs=3, metavar=("NAME", "RESULT", "WHY"), help="report one case: RESULT pass|fail|skip")
    ap.add_argument("--reference", metavar="URL", help="with --case: the case links to URL (lava-test-reference)")
    ap.add_argument("--paper", metavar="DIR", help="report the paper's runs under DIR (scripts/paper-run --guest machine)")
    ap.add_argument("out", nargs="?", help="the lab's directory with lab.json")
    ap.add_argument("--guest", default="machine", help="whose runs (default machine)")
    a = ap.parse_args()
    rep = Reporter(a.print)
    if a.case:
        name, result, why = a.case
        if result not in RESULTS:
            ap.error(f"--case: the result must be one of {', '.join(RESULTS)}, not {result!r}")
        rep.note(f"{name}: {why}")
        if a.reference:
            rep.reference(name, result, a.reference)
        else:
            rep.case(name, result)
        return 1 if rep.failed else 0
    if a.reference:
        ap.error("--reference goes with --case")
    if a.paper:
        if not report_paper(rep, a.paper):
            rep.note(f"no run of the paper's experiments in {a.paper}")
            rep.case("paper", "fail")
        return 1 if rep.failed else 0
    if not a.out:
        ap.error("the lab's directory (OUT, with lab.json) is needed, or --case")
    try:
        with open(os.path.join(a.out, "lab.json")) as f:
            lab = json.load(f)
    except (OSError, ValueError) as e:
        rep.note(f"no lab to report: {e}")
        rep.case("hourglass-lab", "fail")
        return 1
    if not report_lab(rep, lab, a.guest):
        rep.note(f"lab.json holds no run of the {a.guest} guest")
        rep.case("hourglass-lab", "fail")
    return 1 if rep.failed else 0


if __name__ == "__main__":
    sys.exit(main())

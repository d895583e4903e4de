#!/usr/bin/env python3
"""runs - every test's record over the fresh-clone `make check` runs: which ever failed.

    python3 tests/runs.py add LOG --run NAME [--commit C] [--date D]   one run's results, from its log
    python3 tests/runs.py table [--write]                               the table (into docs/testing.md)

A flaky test blocks every landing, and one run says nothing about it: judging a test
needs its record over many runs. `add` reads a `make check` log (what .ci/run
printed), takes every TAP line of its sections (each guest kernel's suite and host
halves, the lab's quick subset, the demo's and the docs' checks) and appends one
row per test to docs/test-runs.tsv: the run, its commit and date, the section, the
test and its result (pass, fail, todo: a known short, skip). `table` counts them per
test: runs, failures, and the runs a failure was in; --write puts the table in
docs/testing.md between its markers. A run that stopped early counts only the
tests it reached. Failures stay in the record after their fix: the table says when
a test last failed, so "no failure in the last 10 runs" is read off it.
"""
import argparse
import collections
import csv
import os
import re
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DATA = os.path.join(TOP, "docs", "test-runs.tsv")
DOC = os.path.join(TOP, "docs", "testing.md")
BEGIN, END = "<!-- test-runs: begin (tests/runs.py table --write) -->", "<!-- test-runs: end -->"
FIELDS = ("run", "commit", "date", "section", "test", "result")

SECTION = re.compile(r"^=== guest tests on (.+?)\s*$")
TAP = re.compile(r"^(not ok|ok) \d+ - (.*?)(?: # (SKIP|TODO)\b.*)?$")


def name_of(text):
    """A TAP line's test, without what changes from run to run: timings, counts, figures."""
    text = re.sub(r" \(\d+(\.\d+)?s\)", "", text)
    if text.startswith("lab: "):
        # "lab: cpu-yield on 6.1 icount: expected counts ... right, in most of 3 runs; ..."
        text = re.split(r"[;,] ", text, 1)[0]
    elif re.match(r"\d+ commands in ", text):
        text = re.sub(r": \d+ passed.*", "", re.sub(r"^\d+ ", "", text))
    return re.sub(r" # \d+(\.\d+)? s$", "", text).strip()


def parse(lines):
    """(section, test, result) of every TAP line of a make check log."""
    section = "host"
    for line in lines:
        m = SECTION.match(line)
        if m:
            section = m.group(1)
            continue
        if re.match(r"guest: \d+ passed", line):     # check-kernels' total: the guest stage ended
            section = "demo"
            continue
        if line.startswith("make check: ") or line.startswith("=== starting"):
            continue
        m = TAP.match(line.rstrip("\n"))
        if not m:
            continue
        ok, text, directive = m.groups()
        result = {"SKIP": "skip", "TODO": "todo"}.get(directive, "pass" if ok == "ok" else "fail")
        yield section, name_of(text), result


def load():
    if not os.path.exists(DATA):
        return []
    with open(DATA, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def add(log, run, commit, date):
    rows = load()
    if any(r["run"] == run for r in rows):
        sys.exit(f"runs: {run} is already in {os.path.relpath(DATA, TOP)}")
    with open(log, errors="replace") as f:
        new = [dict(run=run, commit=commit, date=date, section=s, test=t, result=r) for s, t, r in parse(f)]
    if not new:
        sys.exit(f"runs: {log}: no TAP lines (not a make check log?)")
    write = not os.path.exists(DATA)
    with open(DATA, "a", newline="") as f:
        w = csv.DictWriter(f, FIELDS, delimiter="\t", lineterminator="\n")
        if write:
            w.writeheader()
        w.writerows(new)
    print(f"runs: {run}: {len(new)} results, {sum(r['result'] == 'fail' for r in new)} failed")


def table(rows):
    """The markdown table: one line per test that ever failed, then the totals."""
    runs = sorted({r["run"] for r in rows}, key=lambda x: min(r["date"] for r in rows if r["run"] == x))
    by = collections.defaultdict(list)
    for r in rows:
        by[(r["section"], r["test"])].append(r)
    out = [f"{len(runs)} fresh-clone runs recorded ({', '.join(runs)}); {len(by)} tests. "
           "Every test that failed in any of them:", "",
           "| section | test | runs | failed | todo | failed in |", "|---|---|---|---|---|---|"]
    for (sec, test), rs in sorted(by.items()):
        bad = [r["run"] for r in rs if r["result"] == "fail"]
        if bad:
            todo = sum(r["result"] == "todo" for r in rs)
            out.append(f"| {sec} | {test.replace('|', '/')} | {len(rs)} | {len(bad)} | {todo} | "
                       f"{', '.join(sorted(set(bad)))} |")
    last = runs[-10:]
    clean = [k for k, rs in by.items() if not any(r["result"] == "fail" and r["run"] in last for r in rs)]
    out += ["", f"Tests with no failure in the last {len(last)} runs: {len(clean)} of {len(by)}; "
            f"tests run in at least 10 runs: {sum(len({r['run'] for r in rs}) >= 10 for rs in by.values())}."]
    return "\n".join(out)


def write_doc(text):
    with open(DOC) as f:
        doc = f.read()
    if BEGIN not in doc or END not in doc:
        sys.exit(f"runs: {os.path.relpath(DOC, TOP)} has no {BEGIN} ... {END} markers")
    head, rest = doc.split(BEGIN, 1)
    with open(DOC, "w") as f:
        f.write(head + BEGIN + "\n" + text + "\n" + END + rest.split(END, 1)[1])


def main(argv=None):
    ap = argparse.ArgumentParser(prog="runs", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("add", help="one run's results from its make check log")
    a.add_argument("log")
    a.add_argument("--run", required=True, help="the run's name (unique)")
    a.add_argument("--commit", default="")
    a.add_argument("--date", default="", help="when it ran (YYYY-MM-DD HH:MM)")
    t = sub.add_parser("table", help="print the per-test table")
    t.add_argument("--write", action="store_true", help="into docs/testing.md between its markers")
    args = ap.parse_args(argv)
    if args.cmd == "add":
        add(args.log, args.run, args.commit, args.date)
        return 0
    text = table(load())
    if args.write:
        write_doc(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

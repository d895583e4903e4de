#!/usr/bin/env python3
"""check_tutorial - the generated tutorial's figures come from its run, and every command
the docs show runs on the demo's outputs.

    python3 tests/demo/check_tutorial.py [--no-guest] out/demo      (make check runs it after make demo)

scripts/tutorial writes out/demo/tutorial.md from the run make demo just made.
Every number in it must be found in that run's outputs: as text in
summary.txt or the runs' report.txt, or as a value of their report.json
(to the digits printed), or in the run's command line. Only the document's
own structure (its section numbers, the paper's figure and section numbers,
the execution map's 40 ms) and the commands it shows (its sh blocks, which
are run instead) are exempt. Then doc_commands.py runs every command of
README.md, docs/tutorial.md and the docs' examples (--no-guest: not those
that need the guest). Prints TAP; exits 1 on a failure.
"""
import json
import os
import re
import sys

# numbers that are the document's, not the run's: section numbers, "Fig. 3", "section 5.1", "first 40 ms"
STRUCTURE = {"1", "2", "3", "4", "5", "5.1", "6", "40"}
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")


def values(x, out):
    """Every number in a JSON document."""
    if isinstance(x, bool):
        return
    if isinstance(x, (int, float)):
        out.append(float(x))
    elif isinstance(x, dict):
        for v in x.values():
            values(v, out)
    elif isinstance(x, list):
        for v in x:
            values(v, out)


def checks(d):
    tut = open(os.path.join(d, "tutorial.md")).read()
    texts = [open(os.path.join(d, "summary.txt")).read()]
    nums = []
    for run in ("three", "lat"):
        texts.append(open(os.path.join(d, run, "report.txt")).read())
        rep = json.load(open(os.path.join(d, run, "report.json")))
        texts.append(" ".join(rep["run"].get("command") or []))
        values(rep, nums)
    text = "\n".join(texts)
    # the date and the kernel's release say when and where; not figures of the run
    prose = re.sub(r"```sh\n.*?```", "", tut, flags=re.S)        # commands: run, not quoted
    prose = re.sub(r"\d{4}-\d{2}-\d{2}|Linux \S+", "", prose)
    prose = re.sub(r"\(img/[^)]*\)|docs/\S+|`[^`\n]*`", "", prose)
    missing = []
    found = 0
    for m in NUMBER.finditer(prose):
        tok = m.group(0)
        if tok in STRUCTURE:
            continue
        found += 1
        if re.search(r"(?<![\w.])" + re.escape(tok) + r"(?![\d])", text):
            continue
        dec = len(tok.split(".")[1]) if "." in tok else 0
        v = float(tok)
        if any(abs(v - x) <= 0.5 * 10 ** -dec + 1e-12 for x in nums):
            continue
        missing.append(tok)
    yield f"the tutorial prints {found} figures, every one from its run's reports" + \
        (f" (not found: {', '.join(missing[:10])})" if missing else ""), not missing and found >= 20
    yield "the tutorial quotes the summary", open(os.path.join(d, "summary.txt")).read().strip() in tut


def main():
    args = sys.argv[1:]
    guest = "--no-guest" not in args
    args = [a for a in args if a != "--no-guest"]
    d = args[0] if args else "out/demo"
    results = [(name, ok, "") for name, ok in checks(d)]
    import doc_commands     # beside this script
    results += doc_commands.results(d, guest)
    return doc_commands.tap(results)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""host_halves - the guest tests' checks that only read files, run on the host.

    tests/guest/host_halves.py OUT

scripts/vm runs it after a guest that ran tests/guest/run.py exits: OUT is
that boot's output folder (HGT_OUT), where the harness listed, in
host-halves.jsonl, each test whose guest half passed and left its checks to
the host (harness.Context.on_host). Each runs here, on the same files, as
check(ctx, *args), and prints a TAP line of its own ("test_x: host
half"). Exits 0 iff all passed (and when the guest left none).

Why: under TCG, Python reading a recording back (hgtrace dump --json, one
object a record) costs about 50 times what it costs here; it was half of
the quick suite's time. The files are the same, the reader is the same
(the tree's build/hgtrace), and nothing here asks the running kernel: what
a check needs of the guest's kernel, its guest half measured and passed on.
"""
import importlib
import json
import os
import sys
import time



def main(out):
    import harness                      # beside this script; it puts the tree's folders on the path
    harness.OUT = out
    path = os.path.join(out, harness.HOST_HALVES)
    try:
        with open(path) as f:
            halves = [json.loads(line) for line in f if line.strip()]
    except OSError as e:
        print(f"host_halves: cannot read {path}: {e.strerror}", file=sys.stderr)
        return 2
    if not halves:
        return 0
    print(f"# the host halves of {len(halves)} guest tests, on this boot's files in {out}", flush=True)
    print(f"1..{len(halves)}", flush=True)
    failed = 0
    for i, h in enumerate(halves, 1):
        ctx = harness.Context(h["test"], fresh=False)
        t0 = time.monotonic()
        err = None
        try:
            check = getattr(importlib.import_module(h["module"]), h["func"])
            check(ctx, *h["args"])
        except Exception as e:  # noqa: BLE001 - a check's own crash is a failure too
            err = harness.failure(e)
        harness.print_result(i, f"{h['test']}: host half", time.monotonic() - t0, ctx, err)
        failed += bool(err)
    print(f"# host halves: {len(halves) - failed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0)
    if len(sys.argv) != 2:
        print("usage: tests/guest/host_halves.py OUT", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(os.path.abspath(sys.argv[1])))

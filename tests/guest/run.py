#!/usr/bin/env python3
"""run.py - the guest test suite: `scripts/vm -k KERNEL -- tests/guest/run.py [NAME...]`.

Prints TAP; exits 0 only if every selected test passed. NAME selects tests by
substring (default all). HGT_GUEST_DEPTH=quick runs the quick subset make
check runs (tests/guest/depth.py); full, the default, everything.
"""
import os
import sys

# beside this script, so found first; harness puts the rest of the tree on the path (testpath)
import depth
import harness
import test_ftrace
import test_health
import test_hourglass
import test_kmod
import test_merge
import test_record_loads
import test_recorder
import test_stop_under_load
import test_ux

if __name__ == "__main__":
    if os.geteuid() != 0 or not os.path.exists("/proc/modules"):
        print("1..0 # SKIP needs root in a kernel that loads modules (run through scripts/vm)")
        sys.exit(4)
    wanted = sys.argv[1:]
    tests = [t for t in test_recorder.TESTS + test_kmod.TESTS + test_hourglass.TESTS + test_merge.TESTS
             + test_record_loads.TESTS + test_ux.TESTS + test_ftrace.TESTS + test_health.TESTS
             + test_stop_under_load.TESTS
             if not wanted or any(w in t.__name__ for w in wanted)]
    tests, note = depth.select(tests, wanted)
    sys.exit(harness.main(tests, note))

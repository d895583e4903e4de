#!/usr/bin/env python3
"""run.py - the guest test suite: `scripts/vm -k KERNEL -- tests/guest/run.py [NAME...]`.

Prints TAP; exits 0 only if every selected test passed. NAME selects tests by
substring (default all). HGT_GUEST_DEPTH=quick runs the quick subset make
check runs (tests/guest/depth.py); full, the default, everything.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import depth  # noqa: E402
import harness  # noqa: E402
import test_ftrace  # noqa: E402
import test_health  # noqa: E402
import test_hourglass  # noqa: E402
import test_kmod  # noqa: E402
import test_merge  # noqa: E402
import test_record_loads  # noqa: E402
import test_recorder  # noqa: E402
import test_stop_under_load  # noqa: E402
import test_ux  # noqa: E402

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

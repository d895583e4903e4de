"""`pytest tests` collects everything (issue 14): the guest tests too, skipped
with how to run them outside a guest, their test_merge.py and
test_record_loads.py beside the unit tests' own; the demo's checks, skipped
without a demo."""
import glob
import importlib
import os
import subprocess
import sys

from conftest import TOP

import harness

GUEST = os.path.join(TOP, "tests", "guest")


def pytest(*args, env_add=None):
    # as on the host whatever runs this: no module for the guest tests to load
    env = {k: v for k, v in os.environ.items() if k != "HGT_KO"} | (env_add or {})
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=TOP, env=env,
                          capture_output=True, text=True, timeout=120)


def guest_tests():
    """Every test function of tests/guest: run.py's (each module's TESTS) and test_ftrace's LOCKDOWN."""
    names = set()
    for path in glob.glob(os.path.join(GUEST, "test_*.py")):
        stem = os.path.basename(path)[:-3]
        mod = importlib.import_module(f"guest.{stem}")
        for t in mod.TESTS + [t for ts in getattr(mod, "LOCKDOWN", {}).values() for t in ts]:
            names.add(f"tests/guest/{stem}.py::{t.__name__}")
    return names


def test_collects_the_guest_tests_beside_the_unit_tests_of_the_same_names():
    p = pytest("--collect-only", "-q", "tests/guest", "tests/unit/test_merge.py", "tests/unit/test_record_loads.py")
    assert p.returncode == 0, p.stdout + p.stderr
    ids = set(p.stdout.splitlines())
    want = guest_tests()
    assert len(want) >= 40 and want <= ids, sorted(want - ids)
    assert any(i.startswith("tests/unit/test_merge.py::") for i in ids)
    assert any(i.startswith("tests/unit/test_record_loads.py::") for i in ids)


def test_guest_tests_skip_on_the_host_saying_how_to_run_them():
    p = pytest("-q", "-rs", "tests/guest/test_merge.py", "tests/guest/test_ftrace.py")
    assert p.returncode == 0, p.stdout + p.stderr
    last = p.stdout.strip().splitlines()[-1]
    assert "skipped" in last and "passed" not in last and "error" not in last, last
    assert "needs the hgtrace module in a guest kernel: scripts/vm -k 6.12 -- tests/guest/run.py " \
        "test_record_report_three_threads" in p.stdout
    assert "tests/guest/test_ftrace.py integrity" in p.stdout     # not run.py's: a boot of its own


def test_kernel_trouble_fails_on_the_kernels_and_ours_only_reports_a_loads():
    bad, traps = harness.kernel_trouble([
        "[  1.0] hgtrace: loaded",
        "[  2.0] WARNING: CPU: 1 PID: 9 at kernel/sched/core.c:1 x",
        "[  3.0] traps: hackbench[77] general protection fault ip:1 sp:2 error:0",
        "[  4.0] traps: hourglass[78] general protection fault ip:1 sp:2 error:0",
    ])
    assert [b[:6] for b in bad] == ["[  2.0", "[  4.0"] and [t[:6] for t in traps] == ["[  3.0"]


def test_demo_checks_skip_without_a_demo(tmp_path):
    p = pytest("-q", "-rs", "tests/demo", env_add={"HGT_DEMO_DIR": str(tmp_path)})
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.strip().splitlines()[-1].startswith("3 skipped"), p.stdout
    assert f"no demo output in {tmp_path}: make demo first" in p.stdout

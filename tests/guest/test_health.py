"""test_health - the harness's judge of the kernel's health, itself tested in a guest.

  - test_kernel_checkers_on: the checkers scripts/vm switched on by boot options
    (HGT_VM_CHECKERS_ASKED: KFENCE, SLUB debugging, page poisoning, the hung-task timeout) are
    on in the kernel, by what the kernel says of itself, and the suite's header names them;
  - test_health_catches_a_taint: the harness, run on a test that taints the kernel (a flag
    written into /proc/sys/kernel/tainted, as root may), fails that test and names the
    flag; the same harness passes a test that loads and unloads hgtrace.ko, whose O and E
    flags are the module's;
  - test_health_catches_the_modules_report: the harness, run on a test that writes the
    module's message of a corrupt ring into the kernel log (/dev/kmsg), fails that test
    and quotes the record with its sequence number.
"""
import os
import re
import sys
import time

import health
from depth import once
from harness import KO, TOP, NotHere, run

GUEST = os.path.join(TOP, "tests", "guest")

# a guest suite of one test, run by the harness in a process of its own, its files in OUT
INNER = """
import os, sys
import harness

def {name}(ctx):
    {body}

sys.exit(harness.main([{name}]))
"""


def inner_suite(ctx, name, body):
    """Run the harness on a suite of one test, @name doing @body; (exit status, TAP text)."""
    out = ctx.path(name)
    os.makedirs(out, exist_ok=True)
    script = INNER.format(name=name, body=body)
    # its own HGT_OUT: the outer run's host-halves list must not be truncated by it; the guest
    # suite's folder on its path, where -c's script finds harness (and harness the rest)
    p = run([sys.executable, "-c", script], check=False, timeout=300,
            env=dict(os.environ, HGT_OUT=out, PYTHONPATH=os.pathsep.join(
                [GUEST] + [p for p in [os.environ.get("PYTHONPATH")] if p])))
    with open(ctx.path(f"{name}.tap"), "w") as f:
        f.write(p.stdout + p.stderr)
    return p.returncode, p.stdout + p.stderr


def test_kernel_checkers_on(ctx):
    asked = os.environ.get("HGT_VM_CHECKERS_ASKED", "")
    if not asked or asked == "off":
        raise NotHere(f"scripts/vm switched no checker on (HGT_VM_CHECKERS_ASKED={asked or 'unset'})")
    on = health.checkers()
    ctx.note(f"asked of the boot: {asked}")
    ctx.note(f"on: {'; '.join(on)}")
    for item in asked.split():
        what, _, value = item.partition("=")
        if what == "kfence":
            iv = open("/sys/module/kfence/parameters/sample_interval").read().strip()
            assert iv == value, f"KFENCE samples every {iv} ms, not the {value} the boot asked"
            assert any(c.startswith("KFENCE") for c in on), on
        elif what == "slub_debug":
            flags = health.slub_debug_flags()
            assert sorted(flags) == sorted(value), \
                f"SLUB debugs kmalloc-64 with '{flags}', not the '{value}' the boot asked"
            assert any(c.startswith("SLUB debugging") for c in on), on
        elif what == "page_poison":
            assert "page poisoning" in on, on
        elif what == "hung_task":
            t = open("/proc/sys/kernel/hung_task_timeout_secs").read().strip()
            assert t == value, f"the hung-task timeout is {t} s, not the {value} s the boot asked"
        elif what == "watchdog_thresh":
            t = open("/proc/sys/kernel/watchdog_thresh").read().strip()
            assert t == value, f"watchdog_thresh is {t}, not the {value} the boot asked"
        else:
            raise AssertionError(f"HGT_VM_CHECKERS_ASKED names '{what}', which this test does not know")
    assert health.read_taint() is not None, "/proc/sys/kernel/tainted cannot be read"


@once(20)
def test_health_catches_a_taint(ctx):
    before = health.read_taint()
    letter = next((c for c in ("U", "X") if not before >> health.taint_letter(c) & 1), None)
    if letter is None:
        raise NotHere(f"the taint flags U and X are both set already in this boot ({before})")
    bit = health.taint_letter(letter)

    # the control: a module loaded and unloaded sets O (and E where signatures are checked)
    rc, tap = inner_suite(ctx, "loads_the_module",
                          f"harness.load(); harness.unload()  # {KO}")
    assert rc == 0 and "ok 1 - loads_the_module" in tap, \
        f"the harness failed a test that only loaded and unloaded the module ({rc}):\n{tap[-2000:]}"

    body = f"open('/proc/sys/kernel/tainted', 'w').write('{1 << bit}')"
    rc, tap = inner_suite(ctx, "taints_the_kernel", body)
    ctx.expect_taint(letter)          # the inner suite's taint is this test's too: on purpose
    after = health.read_taint()
    assert after >> bit & 1, f"writing {1 << bit} into /proc/sys/kernel/tainted did not set {letter} ({after})"
    want = f"the kernel was tainted during the test: {health.taint_names(1 << bit)}"
    assert rc == 1 and "not ok 1 - taints_the_kernel" in tap and want in tap, \
        f"the harness did not fail a test that tainted the kernel with {letter} (exit {rc}):\n{tap[-2000:]}"
    ctx.note(f"caught: {want}")


@once(10)
def test_health_catches_the_modules_report(ctx):
    nonce = f"written-by-test-health-{os.getpid()}-{time.monotonic_ns()}"
    line = f"hgtrace: CPU 0's ring held a record of impossible length; ({nonce})"
    ctx.expect_log(nonce)             # the inner suite's record is in this test's log too
    body = f"open('/dev/kmsg', 'w').write({line!r} + '\\n')"
    rc, tap = inner_suite(ctx, "writes_a_report", body)
    m = re.search(r"#(\d+) \[ *\d+\.\d+\] " + re.escape(line), tap)
    assert rc == 1 and "not ok 1 - writes_a_report" in tap and "kernel log shows trouble" in tap and m, \
        f"the harness did not fail a test whose kernel log held the module's report (exit {rc}):\n{tap[-2000:]}"
    ctx.note(f"caught: record #{m.group(1)}")


TESTS = [test_kernel_checkers_on, test_health_catches_a_taint, test_health_catches_the_modules_report]

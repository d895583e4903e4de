"""harness - what every guest test needs: TAP output, the module, dmesg checks.

Runs inside a guest booted by scripts/vm (environment: HGT_KO, HGT_KREL,
HGT_OUT, HGT_TOP). Each test is a function taking a Context; it fails by
raising AssertionError with a message worth reading. After every test the
harness unloads the module if it is still loaded (a failing rmmod is a
failure) and judges the kernel by its own record (tests/guest/health.py): the
log records written since the test began, by sequence number (a record the
ring lost before it was read fails the test, saying which), for WARN, BUG,
oopses, lockups, stalls, hung tasks and every checker's report (lockdep, KASAN,
KFENCE, UBSAN, SLUB debugging) and the module's own messages of trouble; and
the taint flags, which must gain none but O and E (an out-of-tree, unsigned
module: ours). The run opens and ends with the checkers the kernel has on.

A test whose checks only read the files it recorded can leave them to the
host (Context.on_host): under TCG, Python reading a recording back costs
about 50 times what it costs on the host, and was half of the suite's time.
The harness lists such a host half, once its guest half passed, in
$HGT_OUT/host-halves.jsonl; scripts/vm runs them after the guest exits
(tests/guest/host_halves.py), each a TAP line of its own.
"""
import json
import os
import re
import shutil
import subprocess
import time
import traceback

import testpath  # noqa: F401  (pytest.ini's folders on the import path: hgtools, tests/helpers)

TOP = os.environ.get("HGT_TOP", os.path.abspath(os.path.join(os.path.dirname(__file__), "../..")))

import health  # noqa: E402  (it takes the kernel's words for trouble from hgtools.lab.kernel)

KO = os.environ.get("HGT_KO", "")
KREL = os.environ.get("HGT_KREL", os.uname().release)
OUT = os.environ.get("HGT_OUT", "/tmp/hgt-out")
HGTRACE = os.path.join(TOP, "build", "hgtrace")
TESTBIN = os.path.join(TOP, "build", "tests")

# What a healthy kernel never prints: health.TROUBLE (the kernel's own prefixes, every
# checker's, and the module's messages of trouble). A user-space fault is printed as
# "traps: COMM[PID] general protection fault ip:... sp:..." (show_signal): not the kernel's
# trouble, so USER_TRAP sets it apart; it fails the test when the program is one of ours
# (OURS), and is reported otherwise (a load such as hackbench, killed in a storm of signals).
USER_TRAP = re.compile(r"traps: (\S+)\[\d+\] ")
OURS = ("hourglass", "hgtrace", "hgtrace-ftrace", "hgmerge", "hgtrace-import", "python3")
BAD_DMESG = health.TROUBLE
# the kernel's CONFIG_HZ, and debugfs mounted as a typical system has it: the lab's (run() is ours)
from hgtools.lab.kernel import config_hz, mount_debugfs  # noqa: E402,F401


def run(cmd, check=True, timeout=180, **kw):
    """Run a command, capture its output; on check failure raise with the output."""
    p = subprocess.run(cmd, shell=isinstance(cmd, str), capture_output=True, text=True,
                       timeout=timeout, **kw)
    if check and p.returncode != 0:
        raise AssertionError(f"command failed ({p.returncode}): {cmd}\n"
                             f"stdout: {p.stdout[-2000:]}\nstderr: {p.stderr[-2000:]}")
    return p


def module_loaded():
    with open("/proc/modules") as f:
        return any(line.split()[0] == "hgtrace" for line in f)


def load(*params):
    if module_loaded():
        unload()
    run(["insmod", KO, *params])
    # udev applies its rules to the new /dev/hgtrace after insmod has returned: a test that
    # changed the node at once (test_hostile_calls_user's chmod 0666) saw it put back to 0600
    # (CI of 2026-12-07; 4 of 30 loads in a 6.1 guest, none of 30 after a settle)
    if shutil.which("udevadm"):
        run(["udevadm", "settle", "--timeout=30"], check=False)


def unload():
    if module_loaded():
        run(["rmmod", "hgtrace"])


def dmesg_lines():
    return run(["dmesg"], check=False).stdout.splitlines()


def sched_clock_stable():
    """Is the scheduler's clock the raw TSC? Without a stable TSC (the 6.1 guests
    by default: "TSCs unsynchronized") sched_clock_cpu() is filtered and held
    back within a tick of the wall clock, so it loses time the TSC counts."""
    log = "\n".join(dmesg_lines())
    return "sched_clock: Marking stable" in log and "Marking TSC unstable" not in log


def tick_ns():
    """One tick of this kernel (config_hz); 10 ms (HZ 100, the longest) when it cannot be read."""
    hz = config_hz()
    return 1e9 / hz if hz else 10e6


def kernel_trouble(lines):
    """(bad, traps) in kernel log @lines: what fails the test, and the faults of a
    load's programs, not ours, which are only reported (USER_TRAP)."""
    bad, traps = [], []
    for line in lines:
        m = USER_TRAP.search(line)
        if m and not m.group(1).startswith(OURS):
            traps.append(line)
        elif BAD_DMESG.search(line) or m:
            bad.append(line)
    return bad, traps


HOST_HALVES = "host-halves.jsonl"


class Context:
    def __init__(self, name, fresh=True):
        self.name = name
        self.dir = os.path.join(OUT, name)
        # a fresh folder every run: what an earlier run (or boot) left must not be taken for
        # this one's, nor refuse it (hourglass record will not reuse a folder that has files);
        # the host half reads what its guest half left (fresh=False)
        if fresh:
            shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir, exist_ok=True)
        self.notes = []
        self.host_half = None
        self.taints_expected = 0
        self.logs_expected = []

    def expect_taint(self, letter):
        """This test sets taint flag @letter on purpose (the test of the taint check
        itself): the harness does not fail it for that flag, and no other test is spared."""
        self.taints_expected |= 1 << health.taint_letter(letter)

    def expect_log(self, nonce):
        """This test writes kernel log records holding @nonce on purpose (a report, to
        see the harness catch it): those records alone are not judged."""
        assert len(nonce) >= 16, "a nonce no other record can hold"
        self.logs_expected.append(nonce)

    def path(self, name):
        return os.path.join(self.dir, name)

    def note(self, msg):
        """A line printed under the test's result: the figures a reader wants."""
        self.notes.append(msg)

    def on_host(self, check, *args):
        """Leave @check(ctx, *args) to the host, after the boot: a function of a
        tests/guest module, at its top level, that reads files this test wrote
        and asserts on them, with arguments JSON keeps (paths, numbers,
        strings). Whatever it needs of the kernel (CPU count, tick, clock) the
        guest half measures and passes; it runs only if the guest half passed."""
        assert self.host_half is None, f"{self.name}: one host half a test"
        self.host_half = {"test": self.name, "module": check.__module__, "func": check.__name__,
                          "args": list(args)}
        json.dumps(self.host_half)          # refused here, in the guest, if JSON cannot keep it


class NotHere(Exception):
    """Raised by a test that cannot run on this kernel, with the reason: TAP's
    "ok N - name # SKIP reason", which scripts/check-kernels counts apart, never
    as passed. Only for what the kernel makes impossible, each test saying where."""


def failure(e):
    """An exception as the test's failure: an assertion's own message, else the traceback
    (a test's own crash is a failure too)."""
    return e if isinstance(e, AssertionError) else AssertionError(traceback.format_exc())


def print_result(i, name, seconds, ctx, err, skip=None):
    """A test's TAP line, its notes, and what failed (its first 60 lines)."""
    print(f"{'ok' if not err else 'not ok'} {i} - {name} ({seconds:.1f}s)"
          f"{f' # SKIP {skip}' if skip and not err else ''}", flush=True)
    for n in ctx.notes:
        print(f"#   {n}", flush=True)
    for line in str(err).splitlines()[:60] if err else ():
        print(f"#   {line}", flush=True)


class Judge:
    """What the harness reads of the kernel around each test: the log records written
    while it ran (by sequence number, in a guest of scripts/vm; elsewhere, such as under
    make test, dmesg's lines by count) and the taint flags it set."""

    def __init__(self):
        self.log, why = health.open_log() if "HGT_VM_CPUS" in os.environ else (None, "not in a guest")
        self.why = why
        if self.log:
            self.log.sync("the guest suite begins")   # the boot's records read before the first test

    def start(self, name):
        self.taint = health.read_taint()
        self.mark = self.log.mark(name) if self.log else len(dmesg_lines())

    def lines(self, name):
        """The log of the test (records synced up to now, as dmesg prints them) and the
        records not read: [(first, last)] the ring lost, (first, None) not reached."""
        if not self.log:
            return dmesg_lines()[self.mark:], []
        end = self.log.sync(f"{name} ends")
        lost = self.log.lost_since(self.mark)
        if self.log.unseen:     # what came after the last record read is not known: lost to us
            lost = lost + [(end + 1, None)]
        return [r.line() for r in self.log.records_since(self.mark) if r.seq <= end], lost

    def verdict(self, ctx):
        """(what fails the test, its log): the log's trouble, records lost, new taint."""
        lines, lost = self.lines(ctx.name)
        bad, traps = kernel_trouble([line for line in lines if not any(n in line for n in ctx.logs_expected)])
        why = []
        if bad:
            why.append("kernel log shows trouble:\n" + "\n".join(bad[:30]))
        if lost:
            why.append("the kernel log was not read whole, so this test's health cannot be judged: "
                       + ", ".join(f"records #{a}..#{b} lost (the ring wrapped before they were read)"
                                   if b is not None else f"records from #{a} unread (its reader did not reach "
                                   "the harness's own record within 30 s)" for a, b in lost))
        for line in traps[:5]:
            ctx.note(f"a program of the load faulted (the kernel is fine): {line.strip()}")
        after = health.read_taint()
        if self.taint is not None and after is not None:
            new = after & ~self.taint & ~health.MODULE_TAINTS & ~ctx.taints_expected
            if new:
                why.append(f"the kernel was tainted during the test: {health.taint_names(new)} "
                           f"(/proc/sys/kernel/tainted {self.taint} -> {after})")
        return "\n".join(why), lines

    def header(self, when):
        """A TAP comment: the checkers on and the taint flags."""
        taint = health.read_taint()
        on = health.checkers()
        return (f"# {when}: checkers on: {'; '.join(on) or 'none'}\n"
                f"# {when}: tainted {taint} ({health.taint_names(taint or 0)})"
                + (f"\n# kernel log read by line count ({self.why}): records the ring lost go unseen"
                   if not self.log and when == "start" else "")
                + (f"\n# the kernel log's ring had wrapped before the suite began: its first record is "
                   f"#{self.log.first_seq()}" if self.log and when == "start" and self.log.first_seq() else ""))


def main(tests, note=None):
    """Run tests (list of functions) and print TAP; exit 0 iff all passed.
    @note: what this run leaves out (a TAP comment)."""
    print(f"TAP version 13\n1..{len(tests)}", flush=True)
    print(f"# kernel {KREL}, module {KO}", flush=True)
    why = mount_debugfs()
    if why:
        print(f"# {why}", flush=True)
    if note:
        print(f"# {note}", flush=True)
    judge = Judge()
    print(judge.header("start"), flush=True)
    failed = skipped = 0
    halves = os.path.join(OUT, HOST_HALVES)
    open(halves, "w").close()               # this run's, not an earlier boot's
    for i, test in enumerate(tests, 1):
        name = test.__name__
        ctx = Context(name)
        judge.start(name)
        t0 = time.monotonic()
        err = skip = None
        try:
            test(ctx)
        except NotHere as e:
            skip = str(e)
        except Exception as e:  # noqa: BLE001 - a test's own crash is a failure too
            err = failure(e)
        try:
            unload()
        except AssertionError as e:
            err = err or AssertionError(f"module did not unload cleanly: {e}")
        sick, log = judge.verdict(ctx)
        if sick:
            err = AssertionError(f"{err}\n{sick}" if err else sick)
        if ctx.host_half and not err:
            with open(halves, "a") as f:
                f.write(json.dumps(ctx.host_half) + "\n")
            ctx.note("its files are checked on the host after the boot: its host half")
        print_result(i, name, time.monotonic() - t0, ctx, err, skip)
        skipped += bool(skip and not err)
        if err:
            failed += 1
            with open(ctx.path("dmesg.txt"), "w") as f:
                f.write("\n".join(log) + "\n")
    print(judge.header("end"), flush=True)
    print(f"# {len(tests) - failed - skipped} passed, {failed} failed, {skipped} not run here (SKIP) on {KREL}",
          flush=True)
    return 0 if failed == 0 else 1

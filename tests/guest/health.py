"""health - the kernel's own record of its health, as every guest test is judged by it.

Three sources, none of them a guess from outside:

  - the kernel log, read record by record from /dev/kmsg as it is written (KernelLog):
    each record carries a sequence number, so a test's records are those after the
    number its start saw, whatever the log held before; a ring that wrapped before a
    record was read shows as a gap in the numbers, and is said, never passed over;
  - the taint flags (/proc/sys/kernel/tainted) before and after: a flag a test set
    fails it, but O and E, which loading an out-of-tree, unsigned module sets (ours);
  - the reports of the kernel's checkers in that log (TROUBLE): WARN and BUG, oopses,
    lockdep, KASAN, KFENCE, UBSAN, SLUB debugging, list and page corruption, RCU stalls,
    soft and hard lockups, hung tasks, workqueue stalls, and hgtrace.ko's own messages
    of trouble (MODULE_TROUBLE; tests/unit/test_guest_health.py holds them to kmod/).

checkers() says which checkers the running kernel has on: its config (/proc/config.gz,
/boot/config-RELEASE or /lib/modules/RELEASE/config), its command line and what it says
of itself (/proc/lockdep_stats, /sys/module/kfence, /sys/kernel/slab).
"""
import errno
import gzip
import os
import re
import threading
import time

# TAINT_* of include/linux/panic.h, bit: (letter, what)
TAINT_FLAGS = {
    0: ("P", "proprietary module"), 1: ("F", "module force-loaded"), 2: ("S", "CPU out of spec"),
    3: ("R", "module force-unloaded"), 4: ("M", "machine check"), 5: ("B", "bad page"),
    6: ("U", "taint requested by user space"), 7: ("D", "kernel died (oops)"),
    8: ("A", "ACPI table overridden"), 9: ("W", "kernel warning"), 10: ("C", "staging driver"),
    11: ("I", "firmware workaround"), 12: ("O", "out-of-tree module"), 13: ("E", "unsigned module"),
    14: ("L", "soft lockup"), 15: ("K", "live patch"), 16: ("X", "auxiliary"),
    17: ("T", "struct randomization"), 18: ("N", "test (kunit)"), 19: ("J", "fwctl"),
}
# what loading hgtrace.ko (or the tests' other builds of it) sets: it is out of tree, and
# unsigned where the kernel checks signatures (Debian's; the debug kernel does not)
MODULE_TAINTS = (1 << 12) | (1 << 13)

TAINTED = "/proc/sys/kernel/tainted"


def taint_letter(letter):
    """The bit of taint flag @letter ("U")."""
    return next(b for b, (c, _) in TAINT_FLAGS.items() if c == letter)


def taint_names(mask):
    """'W (kernel warning), L (soft lockup)' for the flags in @mask."""
    out = []
    for bit in range(max(mask.bit_length(), 1)):
        if mask >> bit & 1:
            c, what = TAINT_FLAGS.get(bit, (f"bit {bit}", "unknown"))
            out.append(f"{c} ({what})")
    return ", ".join(out) or "none"


def read_taint():
    """The kernel's taint flags, or None where they cannot be read."""
    try:
        with open(TAINTED) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


# The kernel's own words for trouble (every checker's report, and hgtrace.ko's messages of
# trouble): the lab judges its guests by the same, so they are defined once, in the lab's
# kernel module (tools/hgtools/lab/kernel.py); tests/unit/test_guest_health.py holds
# MODULE_TROUBLE and MODULE_REFUSALS to kmod/'s messages.
from hgtools.lab.kernel import KERNEL_TROUBLE, MODULE_REFUSALS, MODULE_TROUBLE, TROUBLE  # noqa: E402,F401


class Record:
    """One record of the kernel log: its sequence number, priority, time and text."""
    __slots__ = ("seq", "prio", "usec", "text")

    def __init__(self, seq, prio, usec, text):
        self.seq, self.prio, self.usec, self.text = seq, prio, usec, text

    def line(self):
        """As dmesg prints it (with the sequence number in front)."""
        return f"#{self.seq} [{self.usec // 1000000:5d}.{self.usec % 1000000:06d}] {self.text}"


def parse_record(data):
    """A Record of one read() of /dev/kmsg ("PRI,SEQ,USEC,FLAGS[,...];TEXT\\n" and its
    " KEY=VALUE" lines), or None when it is not one."""
    text = data.decode("utf-8", "replace")
    head, sep, rest = text.partition(";")
    if not sep:
        return None
    fields = head.split(",")
    try:
        prio, seq, usec = int(fields[0]), int(fields[1]), int(fields[2])
    except (ValueError, IndexError):
        return None
    return Record(seq, prio & 7, usec, rest.split("\n", 1)[0])


class KernelLog:
    """The kernel log as it is written, read by a thread of its own from /dev/kmsg so that
    the ring cannot wrap past what was not read yet (unless the kernel writes faster than
    a blocked read wakes up: then the sequence numbers jump, and lost() says which).

    A test's window is mark() at its start to sync() at its end: sync() writes a record
    naming the test and waits until the thread has read it, so every record written
    before it is in records_since(mark)."""

    def __init__(self, path="/dev/kmsg"):
        self._records = []
        self._gaps = []                 # (first lost, last lost)
        self._last = None               # the last sequence number read
        self._cv = threading.Condition()
        self._fd = None
        self.unseen = None              # the record the last sync() waited for in vain
        if path:
            # from the start of what the ring still holds: the boot's records too, and a
            # first sequence number above 0 says the ring had wrapped before the suite began
            self._fd = os.open(path, os.O_RDONLY)
            threading.Thread(target=self._read, name="kmsg", daemon=True).start()

    def _read(self):
        while True:
            try:
                data = os.read(self._fd, 8192)
            except OSError as e:
                if e.errno == errno.EPIPE:  # overwritten before it was read: the next read goes on
                    continue
                if e.errno == errno.EINTR:
                    continue
                return
            r = parse_record(data)
            if r is not None:
                self.take(r)

    def take(self, r):
        """Keep record @r; a jump in the sequence numbers is records the ring lost."""
        with self._cv:
            if self._last is not None and r.seq > self._last + 1:
                self._gaps.append((self._last + 1, r.seq - 1))
            self._last = r.seq
            self._records.append(r)
            self._cv.notify_all()

    def first_seq(self):
        """The first sequence number read (0 unless the ring had wrapped at the start)."""
        with self._cv:
            return self._records[0].seq if self._records else None

    def mark(self, name=None):
        """The last sequence number read now, after a record saying @name begins."""
        return self.sync(f"{name} begins" if name else None)

    def sync(self, what=None, timeout=30.0):
        """Write a record (hgt-harness: @what) and wait for the thread to read it: the last
        sequence number read, which includes every record written before. Without a
        record to wait for (@what None, or /dev/kmsg refusing the write), a short wait."""
        want = f"hgt-harness: {what}" if what and self._fd is not None else None
        with self._cv:
            start = self._last if self._last is not None else -1
        if want:
            try:
                # a fresh descriptor each time: /dev/kmsg rate-limits writes per open file
                # and drops the ones past its burst without an error. The newline ends the
                # record: without it the kernel keeps the record open for a continuation,
                # and no reader sees it until another record follows
                fd = os.open("/dev/kmsg", os.O_WRONLY)
                try:
                    os.write(fd, want.encode() + b"\n")
                finally:
                    os.close(fd)
            except OSError:
                want = None
        deadline = time.monotonic() + (timeout if want else 0.2)
        self.unseen = None
        with self._cv:
            while time.monotonic() < deadline:
                if want and self._seen(want, start):
                    break
                self._cv.wait(max(0.0, min(0.5, deadline - time.monotonic())))
            else:
                # the window may miss records written just before: the caller says so
                self.unseen = want
            return self._last if self._last is not None else -1

    def _seen(self, text, start):
        """Is a record after sequence number @start @text? (under the lock)"""
        for r in reversed(self._records):
            if r.seq <= start:
                return False
            if r.text == text:
                return True
        return False

    def records_since(self, seq):
        """The records after sequence number @seq, in order."""
        with self._cv:
            return [r for r in self._records if r.seq > seq]

    def lost_since(self, seq):
        """The records after @seq the ring overwrote before they were read: [(first, last)]."""
        with self._cv:
            return [(a, b) for a, b in self._gaps if b > seq]


def open_log():
    """A KernelLog, or (None, why) where /dev/kmsg cannot be read (not root: outside a guest)."""
    try:
        return KernelLog(), None
    except OSError as e:
        return None, f"/dev/kmsg: {e.strerror}"


def trouble(lines):
    """The lines of @lines that a checker or the module wrote as trouble."""
    return [line for line in lines if TROUBLE.search(line)]


# -- which checkers are on ---------------------------------------------------------------

def kernel_config():
    """The running kernel's config as {CONFIG_X: value}, {} when none can be read."""
    rel = os.uname().release
    for path in ("/proc/config.gz", f"/boot/config-{rel}", f"/lib/modules/{rel}/config"):
        try:
            text = gzip.open(path, "rt").read() if path.endswith(".gz") else open(path).read()
        except OSError:
            continue
        return dict(m.groups() for m in re.finditer(r"^(CONFIG_\w+)=(.*)$", text, re.M))
    return {}


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _cmdline_value(name):
    m = re.search(rf"(?:^|\s){re.escape(name)}=(\S*)", _read("/proc/cmdline") or "")
    return m.group(1) if m else None


def slub_debug_flags():
    """The debugging SLUB does on a kmalloc cache, by what it says of itself: a subset of
    'FZPU' (sanity checks, red zones, poisoning, owner tracking), '' when none."""
    base = "/sys/kernel/slab/kmalloc-64"
    flags = ""
    for letter, attr in (("F", "sanity_checks"), ("Z", "red_zone"), ("P", "poison"), ("U", "store_user")):
        if _read(f"{base}/{attr}") == "1":
            flags += letter
    return flags


def lockdep_live():
    """(configured, still on): lockdep turns itself off after its first report, or when a
    table runs full ("debug_locks: 0" in /proc/lockdep_stats)."""
    text = _read("/proc/lockdep_stats")
    if text is None:
        return False, False
    m = re.search(r"debug_locks:\s+(\d+)", text)
    return True, bool(m and m.group(1) != "0")


def checkers(config=None):
    """Each checker the running kernel has on, as 'name (how it shows)', in a fixed order."""
    c = kernel_config() if config is None else config
    on = lambda k: c.get(k) == "y"       # noqa: E731
    out = []
    configured, live = lockdep_live()
    if on("CONFIG_PROVE_LOCKING"):
        out.append(f"lockdep (PROVE_LOCKING, debug_locks {'1' if live else '0: turned itself off'})"
                   if configured else "lockdep (PROVE_LOCKING; no /proc/lockdep_stats)")
    for k, name in (("CONFIG_PROVE_RCU", "PROVE_RCU"), ("CONFIG_DEBUG_ATOMIC_SLEEP", "DEBUG_ATOMIC_SLEEP"),
                    ("CONFIG_DEBUG_PREEMPT", "DEBUG_PREEMPT")):
        if on(k):
            out.append(name)
    if on("CONFIG_KASAN"):
        kind = "generic" if on("CONFIG_KASAN_GENERIC") else "tags"
        out.append(f"KASAN ({kind}{', vmalloc' if on('CONFIG_KASAN_VMALLOC') else ''})")
    if on("CONFIG_UBSAN"):
        parts = [k[len("CONFIG_UBSAN_"):].lower() for k in sorted(c) if k.startswith("CONFIG_UBSAN_")
                 and on(k) and k not in ("CONFIG_UBSAN_TRAP",)]
        out.append(f"UBSAN ({', '.join(parts) or 'on'})")
    if on("CONFIG_KFENCE"):
        iv = _read("/sys/module/kfence/parameters/sample_interval")
        if iv and iv != "0":
            out.append(f"KFENCE (every {iv} ms)")
    if on("CONFIG_SLUB_DEBUG"):
        flags = slub_debug_flags()
        if flags:
            out.append(f"SLUB debugging ({flags})")
    if on("CONFIG_PAGE_POISONING") and _cmdline_value("page_poison") in ("1", "on", "y"):
        out.append("page poisoning")
    for k, name in (("CONFIG_DEBUG_LIST", "DEBUG_LIST"), ("CONFIG_BUG_ON_DATA_CORRUPTION", "BUG_ON_DATA_CORRUPTION"),
                    ("CONFIG_SCHED_STACK_END_CHECK", "SCHED_STACK_END_CHECK")):
        if on(k):
            out.append(name)
    stall = _read("/sys/module/rcupdate/parameters/rcu_cpu_stall_timeout")
    if on("CONFIG_RCU_STALL_COMMON") and stall:
        out.append(f"RCU stalls ({stall} s)")
    thresh = _read("/proc/sys/kernel/watchdog_thresh")
    if on("CONFIG_SOFTLOCKUP_DETECTOR") and thresh and _read("/proc/sys/kernel/soft_watchdog") != "0":
        out.append(f"soft lockups ({2 * int(thresh)} s)")
    hung = _read("/proc/sys/kernel/hung_task_timeout_secs")
    if on("CONFIG_DETECT_HUNG_TASK") and hung and hung != "0":
        out.append(f"hung tasks ({hung} s)")
    if on("CONFIG_WQ_WATCHDOG"):
        wq = _read("/sys/module/workqueue/parameters/watchdog_thresh")
        if wq and wq != "0":
            out.append(f"workqueue stalls ({wq} s)")
    return out

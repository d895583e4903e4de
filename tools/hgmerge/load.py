"""load - read an hourglass run directory and check that both sides agree.

A run directory holds hourglass.hgl (hourglass --trace), and kernel.hgt
(hgtrace record) for the ground truth. The kernel side is streamed; only the
hourglass side (intervals: far fewer than kernel events) is held in memory.
"""
import os
from dataclasses import dataclass, field

import hourglass_trace as H
from hgtrace_file import HgtFormatError, HgtStream


class RunError(Exception):
    """A run directory that cannot be merged: names the file and the problem."""


@dataclass
class Gap:
    """A stretch of one CPU between two hourglass intervals, the paper's gap:
    thread A's interval ends at g0, the next interval on that CPU, of thread
    B (A itself, or another), starts at g1. No hourglass thread ran between."""
    thread: int             # A
    tid: int
    g0: int                 # A's last TSC read before the gap
    g1: int                 # B's first TSC read after it
    cpu0: int               # the CPU
    cpu1: int               # the same CPU (kept for readers of one thread's view)
    voluntary: str = ""     # "yield" or "sleep" when A asked for it
    next_thread: int = -1   # B
    next_tid: int = 0
    reset = True            # the sweep knows the CPU's state at g0
    truth: dict = field(default=None, repr=False)      # filled by truth.py
    inferred: str = ""      # filled by infer.py
    why: str = ""           # the rule that inferred it

    @property
    def length(self):
        return self.g1 - self.g0


@dataclass
class Window:
    """A stretch of one CPU to account without knowing its state at the start:
    a timer wake-up (intended expiry to first user-space read) or a job's
    period that ended in a missed deadline."""
    kind: str               # "wake" or "miss"
    thread: int
    tid: int
    g0: int
    g1: int
    cpu0: int
    rec: object             # the hourglass record
    truth: dict = field(default=None, repr=False)
    inferred = ""
    reset = False


@dataclass
class Run:
    dir: str
    hg: object              # hourglass_trace.Trace
    hz: float               # TSC frequency (hourglass's, over the whole run)
    threads: list           # info["threads"]
    tids: dict              # kernel tid -> hourglass thread number
    intervals: list         # per thread: list of INTERVAL records, in time order
    gaps: list              # every Gap, by (cpu0, g0)
    migrations: list = field(default_factory=list)
    kernel_path: str = None
    warnings: list = field(default_factory=list)
    hgl_path: str = None


def find(dir_, names):
    for n in names:
        p = os.path.join(dir_, n)
        if os.path.exists(p):
            return p
    return None


def load_run(dir_, kernel=None, records=True):
    """Read hourglass's side and prepare the gaps; the kernel side is streamed later.
    With records=False only the run's info is read: hgmerge-core reads the records."""
    if not os.path.isdir(dir_):
        raise RunError(f"{dir_}: not a directory")
    hgl = find(dir_, ["hourglass.hgl"])
    if not hgl:
        raise RunError(f"{dir_}: no hourglass.hgl (hourglass --trace) in this directory")
    marker = os.path.join(dir_, "INCOMPLETE")
    if os.path.exists(marker):
        raise RunError(f"{dir_}: the recording was interrupted ({open(marker).read().strip()})")
    try:
        hg = H.read_trace(hgl, records=records)
    except H.HglFormatError as e:
        raise RunError(str(e))
    info = hg.info
    threads = info.get("threads") or []
    hz = float(info.get("tsc", {}).get("hz") or 0)
    if hz <= 0:
        raise RunError(f"{hgl}: no TSC frequency in the info section")
    run = Run(dir_, hg, hz, threads, {t["tid"]: t["thread"] for t in threads if t.get("tid")},
              [[] for _ in threads], [])
    if hg.dropped:
        run.warnings.append(f"{hgl}: hourglass's buffer filled, {hg.dropped} records missing: "
                            "gaps around them are wrong")
    run.kernel_path = kernel or find(dir_, ["kernel.hgt", "trace.dat"])
    if not records:
        run.hgl_path = hgl
        return run
    for r in hg.records:
        if r.type == H.INTERVAL:
            run.intervals[r.thread].append(r)
    per_cpu = {}
    for k, ivs in enumerate(run.intervals):
        ivs.sort(key=lambda r: r.t0)
        for a, b in zip(ivs, ivs[1:]):
            if b.t0 < a.t1:
                raise RunError(f"{hgl}: thread {k}: intervals overlap at TSC {b.t0}")
        for r in ivs:
            per_cpu.setdefault(r.cpu, []).append(r)
    tid_of = [t.get("tid", 0) for t in threads]
    for cpu, ivs in sorted(per_cpu.items()):
        ivs.sort(key=lambda r: r.t0)
        for a, b in zip(ivs, ivs[1:]):
            if b.t0 < a.t1:
                run.warnings.append(f"{hgl}: threads {a.thread} and {b.thread} both ran on CPU {cpu} "
                                    f"at TSC {b.t0}: CPU numbers from rdtscp are off")
                continue
            vol = "yield" if a.flags & H.IV_YIELD else "sleep" if a.flags & H.IV_SLEEP else ""
            run.gaps.append(Gap(a.thread, tid_of[a.thread], a.t1, b.t0, cpu, cpu, vol,
                                b.thread, tid_of[b.thread]))
    # per thread, a change of CPU between two intervals: the migrations
    run.migrations = [(k, a, b) for k, ivs in enumerate(run.intervals)
                      for a, b in zip(ivs, ivs[1:]) if a.cpu != b.cpu]
    return run


def kernel_stream(run):
    """The kernel's recording as a stream, after checking that its clock is hourglass's:
    hgtrace.ko's kernel.hgt, or else trace-cmd's trace.dat (x86-tsc clock)."""
    if not run.kernel_path:
        raise RunError(f"{run.dir}: no kernel.hgt (hgtrace record) or trace.dat (trace-cmd record "
                       "-C x86-tsc) in this directory")
    if run.kernel_path.endswith(".dat"):
        from .ftrace_source import FtraceError, FtraceStream
        try:
            st = FtraceStream(run.kernel_path)
        except FtraceError as e:
            raise RunError(str(e))
        if st.window is None:
            raise RunError(f"{run.kernel_path}: no events")
        # with the x86-tsc clock the stamps are TSC cycles: they must fall in hourglass's run
        t0 = run.hg.info.get("t0_tsc", 0)
        if not (st.window[0] - 10 * run.hz < t0 < st.window[1]):
            raise RunError(f"{run.kernel_path}: its timestamps ({st.window[0]}..{st.window[1]}) do not "
                           f"cover hourglass's run (TSC {t0}): recorded with -C x86-tsc?")
        return st
    try:
        st = HgtStream(run.kernel_path)
    except (HgtFormatError, OSError) as e:
        raise RunError(str(e))
    if st.meta.get("clock", "tsc") not in ("tsc", "rdtsc"):
        raise RunError(f"{run.kernel_path}: stamped with clock '{st.meta.get('clock')}', not the TSC")
    khz = float(st.meta.get("tsc_khz") or 0)
    if khz > 0:
        ratio = run.hz / (khz * 1e3)
        # the kernel's tsc_khz is its boot-time estimate (0.08% off in the
        # emulated guests); a few percent apart means another counter
        if abs(ratio - 1) > 0.02:
            raise RunError(f"{run.kernel_path}: the kernel says the TSC runs at {khz / 1e3:.3f} MHz, "
                           f"hourglass measured {run.hz / 1e6:.3f} MHz: not the same counter?")
        if abs(ratio - 1) > 0.001:
            run.warnings.append(f"TSC rate: kernel {khz / 1e3:.3f} MHz, hourglass {run.hz / 1e6:.3f} MHz "
                                f"({(ratio - 1) * 1e6:+.0f} ppm); hourglass's is used")
    return st

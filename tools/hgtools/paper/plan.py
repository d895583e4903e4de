"""plan - the paper's experiments (Regehr 2002, section 5; seeds 001-003) as
data: which guest each runs in and why, its runs (hourglass options, the
load beside them, the reference tools), their lengths in full and quick
mode. The guest-side runner (runner.py) executes a plan, the analysis
(analyse.py) reads it back: one description for both.

Durations are the hourglass run's own (-d), in the guest's time. The
paper's runs were 6 minutes (5.3), 60 s (5.1), 45 s (5.2) and 20 s (5.4);
ours are shorter so that four kernels fit in an hour on two cores of
emulation (docs/paper.md gives the samples each yields).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

# The guest kinds (docs/paper.md, "Which guest"):
ICOUNT = "icount"       # scripts/vm --icount: 1 CPU, deterministic clock, 8 ns an instruction, no caches
SMP2 = "smp2"           # scripts/vm: 2 vCPUs on one host thread, the host's time, heavy steal
NATIVE = "native"       # this machine: real caches and clock, no module (no kernel recording)
MACHINE = "machine"     # a real machine with the module (a farm's device: scripts/lava-lab --paper)
GUESTS = (ICOUNT, SMP2, NATIVE, MACHINE)

# scripts/kernels' HG_KERNELS, in its order (tests/unit/test_vm_script.py holds them equal)
KERNELS = ("6.1", "6.1-rt", "6.12", "6.12-rt", "7.3", "7.3-rt")

# Why each experiment runs where it runs: printed on the page beside its table.
WHY = {
    ICOUNT: "the instruction-count guest (scripts/vm --icount): one CPU like the paper's Pentium III, a "
            "clock that advances 8 ns per guest instruction, so nothing outside the guest (the emulator, "
            "the host's load) opens a gap (steal below 0.5%), and every run repeats; times are "
            "instruction counts, not the speed of any real machine, and caches are not modelled",
    SMP2: "the default guest (scripts/vm: 2 vCPUs taking turns on one host thread): its clock follows the "
          "host's, which the RTC needs (the instruction-count guest's RTC ticks in the host's time, not the "
          "guest's, and QEMU 7.2 hangs it on the guest's clock), but whatever the other vCPU runs is time "
          "stolen from this one: the steal is shown beside every figure. hourglass, the load and cyclictest "
          "are pinned to CPU 1, the other CPU is left idle",
    NATIVE: "this machine itself, without the module (its kernel cannot load one): the only place with "
            "real caches, which an indirect cost is made of; the kernel's own counters (schedstat, "
            "getrusage) are the truth there",
    MACHINE: "a real machine that loads the module (a farm's device, docs/lava.md): the guests' runs that "
             "need nothing of this project's host, measured on CPU 1 beside their loads as in the 2-vCPU "
             "guest, with the machine's own clock, caches and interrupts",
}


@dataclass
class Load:
    """Something that runs beside hourglass: started before it, stopped after it."""
    name: str               # short name: the page's column, the merger's label
    what: str               # what it is, for the page ("stress-ng --vm: page faults")
    command: List[str]      # argv, run from the source tree; {tmp} is a scratch directory
    comm: str               # the comm prefix that names its tasks in the kernel's recording
    setup: List[List[str]] = field(default_factory=list)      # run before, as root
    teardown: List[List[str]] = field(default_factory=list)   # run after, always
    ready: Optional[str] = None     # a file whose appearance says the load is under way (waited for)


# Seed 003's five stress loads (Abeni et al., RTAS 2002), each one process on the guest's CPU.
STRESS = {
    "memory": Load("memory", "stress-ng --vm: mmap, touch and munmap 32 MB again and again (page faults)",
                   ["stress-ng", "--vm", "1", "--vm-bytes", "32M", "--temp-path", "{tmp}", "--quiet"],
                   "stress-ng"),
    "console": Load("console", "printk to the serial console: a loop writing lines to /dev/kmsg with the "
                    "console log level raised, so every line goes through the 8250 console driver",
                    ["scripts/paper-load-console"], "paper-load-cons",
                    setup=[["sh", "-c", "cat /proc/sys/kernel/printk > {tmp}/printk; "
                            "cat /proc/sys/kernel/printk_devkmsg > {tmp}/devkmsg; "
                            "echo 8 > /proc/sys/kernel/printk; echo on > /proc/sys/kernel/printk_devkmsg"]],
                    teardown=[["sh", "-c", "cat {tmp}/printk > /proc/sys/kernel/printk; "
                               "cat {tmp}/devkmsg > /proc/sys/kernel/printk_devkmsg"]]),
    "io": Load("io", "stress-ng --hdd: 16 MB written and read back through the 9p file system on "
               "virtio (device interrupts, copies between user and kernel)",
               ["stress-ng", "--hdd", "1", "--hdd-bytes", "16M", "--temp-path", "{out}/iotmp", "--quiet"],
               "stress-ng", setup=[["mkdir", "-p", "{out}/iotmp"]], teardown=[["rm", "-rf", "{out}/iotmp"]]),
    "procfs": Load("procfs", "stress-ng --procfs: reads every file under /proc",
                   ["stress-ng", "--procfs", "1", "--temp-path", "{tmp}", "--quiet"], "stress-ng"),
    "fork": Load("fork", "stress-ng --fork: fork and exit in a loop",
                 ["stress-ng", "--fork", "1", "--temp-path", "{tmp}", "--quiet"], "stress-ng"),
}

# Network receive into the guest (section 5.4): a TCP stream from the host through QEMU's user-mode
# network into virtio-net, read by a small receiver that logs its byte count.
NET = Load("net", "a TCP stream from the host (scripts/paper-netsend, as fast as the guest takes it) "
           "through QEMU's user-mode network into virtio-net, read by scripts/paper-netrecv",
           ["scripts/paper-netrecv", "--log", "{run}/netrecv.log", "--port-file", "{out}/net-port"], "paper-netrecv",
           ready="{run}/netrecv.log")

LOADS: Dict[str, Load] = dict(STRESS, net=NET)


@dataclass
class Run:
    """One hourglass run (or, with hourglass None, one reference measurement alone)."""
    name: str
    hourglass: Optional[str]            # options; {d} is the duration
    seconds: float                      # full mode
    quick_seconds: float
    load: Optional[str] = None          # a key of LOADS
    cyclictest: bool = False            # also cyclictest for as long, under the same load
    record: bool = True                 # with the module (guests); natively never
    guest: Optional[str] = None         # another guest than the experiment's

    def duration(self, quick: bool) -> float:
        return self.quick_seconds if quick else self.seconds

    def args(self, quick: bool) -> List[str]:
        if self.hourglass is None:
            return []
        return self.hourglass.format(d=f"{self.duration(quick):g}s").split()


@dataclass
class Experiment:
    key: str                # the name `make paper EXP=...` takes
    section: str            # the paper's
    title: str
    guest: str
    runs: List[Run]
    uses: Sequence[str] = ()    # other experiments whose runs it analyses (no runs of its own)


# Fig. 5's working sets (KB per thread): 4 KB to 32 MB, past this machine's L2 (1 MB a core) and,
# with ten threads, its L3 (32 MB). The analysis reads the caches' sizes from the machine.
FIG5_KB = [4, 16, 64, 256, 1024, 2048, 4096, 8192, 16384, 32768]
FIG5_QUICK_KB = [16, 1024, 16384]
FIG5_TRIALS = 6
FIG5_QUICK_TRIALS = 3


def fig5_runs(quick: bool) -> List[Run]:
    """Trials interleaved: one thread then ten, per working set, per trial (the paper: 15 trials of
    45 s each way; here fewer and shorter: docs/paper.md). --gap 1us: the figure counts switches, and
    a thread switched away is gone for a time slice, milliseconds; at the default GAP (twice an
    iteration of the bare loop, about 15 ns) a scan past the L2 opened a gap at each cache miss:
    12.5 million in 2 s on 2026-12-02's machine (a Xeon with a 4 MiB L2), filling even -e 3000000
    (hourglass exit 4, N10 cut short, the trial left out); -e 3000000 (96 MB) is kept, for a busy
    machine's steal."""
    runs = []
    sizes = FIG5_QUICK_KB if quick else FIG5_KB
    trials = FIG5_QUICK_TRIALS if quick else FIG5_TRIALS
    for trial in range(trials):
        for kb in sizes:
            for n in (1, 10):
                runs.append(Run(f"ws{kb}k-n{n}-t{trial}",
                                f"-n {n} -d {{d}} -a -p NORMAL -w CPU_SCAN {kb} --affinity 1 --fallback -e 3000000 "
                                "--gap 1us",
                                2.0, 0.5, record=False))
    return runs


# A LAT thread records no intervals, so it cannot see steal: beside it a SCHED_IDLE CPU thread on the same
# CPU, which runs whenever nothing else does, and whose gaps with no kernel event are the guest's steal.
LAT_HR = "-n 2 -d {d} -t 0 -p RTHIGH -w LAT 1ms -i HR -t 1 -p IDLE -w CPU"
# the paper's own command, in the guest whose RTC runs on the guest's clock, pinned beside its load
LAT_RTC = "-n 2 -d {d} -t 0 -p RTHIGH -w LAT 5.3ms -i RTC -t 1 -p IDLE -w CPU -a --affinity 1"
P55 = "-n 2 -d {d} -t 0 -p RTMED -w PERIODIC 3ms 8ms -i HR -t 1 -p RTLOW -w PERIODIC {c1} 33ms -i {timer}"
P56 = "-n 2 -d {d} -t 0 -w PERIODIC 3ms 8ms {r} {a0} 8ms -t 1 -w PERIODIC 17ms 33ms {r} {a1} 33ms"


def _p56(r: str, a0: str, a1: str) -> str:
    return P56.replace("{r}", r).replace("{a0}", a0).replace("{a1}", a1)


EXPERIMENTS: List[Experiment] = [
    Experiment("fig4", "5.1", "Direct cost of context switches (Fig. 4)", ICOUNT, [
        Run("cpu", "-n 10 -d {d} -a -p NORMAL -w CPU", 5.0, 1.0),
        Run("yield", "-n 10 -d {d} -a -p NORMAL -w CPU_YIELD 0.9ms", 5.0, 1.0),
    ]),
    Experiment("fig5", "5.2", "Indirect cost of context switches (Fig. 5)", NATIVE, []),   # runs: fig5_runs()
    Experiment("table1", "5.3", "Dispatch latency under stress (Table 1; seed 003)", ICOUNT,
               [Run("idle", LAT_HR, 3.0, 1.0, cyclictest=True)] +
               [Run(k, LAT_HR, 3.0, 1.0, load=k, cyclictest=True) for k in STRESS] +
               [Run("rtc-idle", LAT_RTC, 3.0, 1.0, cyclictest=True, guest=SMP2)] +
               [Run(f"rtc-{k}", LAT_RTC, 3.0, 1.0, load=k, cyclictest=True, guest=SMP2) for k in STRESS]),
    Experiment("table2", "5.4", "Deadlines during network receive processing (Table 2)", ICOUNT, [
        Run("control1", "-n 1 -d {d} -t 0 -p RTHIGH -w PERIODIC 4ms 5ms -i HR", 3.0, 1.0),
        Run("control2", None, 3.0, 1.0, load="net"),
        Run("p4in5", "-n 1 -d {d} -t 0 -p RTHIGH -w PERIODIC 4ms 5ms -i HR", 3.0, 1.0, load="net"),
        Run("p8in10", "-n 1 -d {d} -t 0 -p RTHIGH -w PERIODIC 8ms 10ms -i HR", 3.0, 1.0, load="net"),
    ]),
    Experiment("rta", "5.5", "Response-time analysis against measurement", ICOUNT, [
        Run("native", P55.replace("{c1}", "17ms").replace("{timer}", "NATIVE"), 4.0, 1.0),
        Run("hr", P55.replace("{c1}", "17ms").replace("{timer}", "HR"), 4.0, 1.0),
        Run("c12", P55.replace("{c1}", "12ms").replace("{timer}", "NATIVE"), 4.0, 1.0),
    ]),
    Experiment("dl", "5.6", "CPU reservations with SCHED_DEADLINE", ICOUNT, [
        Run("hard_exact", _p56("-rh", "3ms", "17ms"), 4.0, 1.0),
        Run("hard_over", _p56("-rh", "3.1ms", "17.1ms"), 4.0, 1.0),
        # more: how much a reservation needs here (+0.5 would pass the 95% the kernel admits)
        Run("hard_more", _p56("-rh", "3.3ms", "17.3ms"), 4.0, 1.0),
        Run("soft_exact", _p56("-rs", "3ms", "17ms"), 4.0, 1.0),
        Run("soft_over", _p56("-rs", "3.1ms", "17.1ms"), 4.0, 1.0),
    ]),
    Experiment("seeds", "seeds 001, 002", "Supply-bound functions and microstates", ICOUNT, [],
               uses=("fig4", "rta", "dl", "table1")),
]

BY_KEY = {e.key: e for e in EXPERIMENTS}


def select(names: Sequence[str]) -> List[Experiment]:
    """The experiments named (all when none), in the page's order; an unknown name is an error
    that lists the known ones. Naming one that uses others' runs brings those along."""
    if not names:
        return list(EXPERIMENTS)
    bad = [n for n in names if n not in BY_KEY]
    if bad:
        raise ValueError(f"unknown experiment {', '.join(bad)}: choose from {', '.join(BY_KEY)}")
    want = set(names)
    for n in names:
        want.update(BY_KEY[n].uses)
    return [e for e in EXPERIMENTS if e.key in want]


def runs_of(exp: Experiment, quick: bool) -> List[Run]:
    return fig5_runs(quick) if exp.key == "fig5" else exp.runs


def guest_of(exp: Experiment, run: Run) -> str:
    return run.guest or exp.guest


# loads a real machine does not get: the network sender runs on this project's host, and the console
# load floods the serial console, which is a farm's line to its device (LAVA reads the job through it)
NOT_ON_MACHINE = {"net": "its sender is this project's host (scripts/paper-netsend)",
                  "console": "it floods the serial console, the farm's line to the device"}


def on_machine(exp: Experiment, run: Run) -> bool:
    """Whether @run is made for a real machine (MACHINE): a guest's run recorded with the module,
    whose load needs nothing a farm's device lacks (NOT_ON_MACHINE); fig5's native runs are not."""
    return guest_of(exp, run) != NATIVE and run.record and run.hourglass is not None \
        and run.load not in NOT_ON_MACHINE


def guests_needed(exps: Sequence[Experiment], quick: bool) -> List[str]:
    """The guest kinds the experiments' runs need, in GUESTS' order."""
    want = {guest_of(e, r) for e in exps for r in runs_of(e, quick)}
    return [g for g in GUESTS if g in want]

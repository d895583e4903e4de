"""truth - the kernel's account of every gap, from one pass over its events.

Each CPU is swept in time order with its own small state (the task on the
CPU, the stack of handlers running), so memory does not grow with the trace.
A gap starts from what is known for sure: its thread was running in user
space on that CPU at g0. From there every stretch of time between two events
is charged to what was running: the innermost handler (NMI, hard irq or x86
vector, softirq), else the task on the CPU when it is not the gap's thread,
else the thread itself (`self`: kernel entry and exit around handlers, or
time nothing in the guest kernel accounts for).
"""
import struct

from hgtrace_file import VECTORS, HgtFormatError

from . import progress

# record types (kmod/uapi/hgtrace.h)
SWITCH, WAKING, WAKEUP, WAKEUP_NEW, MIGRATE, EXIT = 1, 2, 3, 4, 5, 6
IRQ_ENTRY, IRQ_EXIT, SOFTIRQ_ENTRY, SOFTIRQ_EXIT, VEC_ENTRY, VEC_EXIT = 7, 8, 9, 10, 11, 12
NMI, HRTIMER_ENTRY, HRTIMER_EXIT, SYS_ENTER, SYS_EXIT, COMM, NAME, LOST = range(13, 21)
SOFTIRQS = ["HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"]
KEEP_EVENTS = 48            # kernel events kept per gap for the report

_SWITCH = struct.Struct("<IIhh")
_MIGRATE = struct.Struct("<HH")
_NMI = struct.Struct("<II")
_COMM = struct.Struct("<II16s")
_NAME = struct.Struct("<32s")

# what a component's kind says about the gap
COARSE = {"irq": "interrupt", "softirq": "interrupt", "nmi": "interrupt", "ipi": "interrupt",
          "timer": "timer", "switch_hg": "switch_hg", "switch_other": "switch_other",
          "idle": "switch_other", "hidden": "hidden", "other": "other"}


# every kind a gap can have, in hgmerge-core's order (enum kind)
KINDS = ("irq", "softirq", "nmi", "ipi", "timer", "switch_hg", "switch_other", "idle", "hidden", "other",
         "unexplainable")
# why the kernel's account says what it says, by hgmerge-core's code
WHY = ("", "outside the recording window", "the recorder lost events on this CPU during the gap",
       "no kernel event at all: hypervisor, emulator, SMI", "kernel events but no handler or other task")
WHY_OUT = 5


def why_switched(out):
    """The text for a gap whose thread was switched out: out = (tsc, how, next pid, prev_state)."""
    return f"{out[1]} (prev_state {out[3]:#x}), switched to {out[2]}"


class Names:
    """What the recording says about ids: task names, irq names."""

    def __init__(self):
        self.comm = {0: "swapper"}
        self.irq = {}

    def task(self, pid):
        return f"{self.comm.get(pid, '?')}:{pid}"


def component_kind(key, hg_tids):
    """The class of one component: ('vec', 0) is the tick, ('task', pid) a switch..."""
    k = key[0]
    if k == "vec":
        return "timer" if key[1] == 0 else "ipi"
    if k == "task":
        return "idle" if key[1] == 0 else "switch_hg" if key[1] in hg_tids else "switch_other"
    return k


def component_name(key, names):
    k = key[0]
    if k == "irq":
        return f"irq {key[1]} {names.irq.get(key[1], '')}".rstrip()
    if k == "vec":
        return VECTORS[key[1]] if key[1] < len(VECTORS) else f"vector kind {key[1]}"
    if k == "softirq":
        return f"softirq {SOFTIRQS[key[1]] if key[1] < len(SOFTIRQS) else key[1]}"
    if k == "task":
        if key[1] is None:
            return "unknown task"
        return "idle" if key[1] == 0 else f"task {names.task(key[1])}"
    return k


class CpuSweep:
    """The sweep of one CPU: its state, and the gaps open on it.

    Gaps of different threads overlap (a waiting thread's gap spans the
    intervals and gaps of the one running), so several can be open at once;
    the CPU's state is one, and each open gap is charged from its own
    thread's point of view.
    """

    def __init__(self, cpu, gaps, hz, hg_tids=frozenset(), switches=None):
        self.cpu, self.gaps, self.i = cpu, gaps, 0
        self.hg_tids = hg_tids
        self.switches = {} if switches is None else switches   # shared by all CPUs
        self.openg = []           # gaps being accounted
        self.cur = None           # task on the CPU
        self.stack = []           # handlers running, innermost last
        self.t = 0                # time charged up to
        self.prev_tsc = 0         # last event on this CPU (for loss windows)
        self.nmi_cycles = hz / 1e9
        self.events = 0
        self.backwards = 0
        self.losses = []

    def _charge(self, upto):
        if upto <= self.t:
            return
        d = upto - self.t
        self.t = upto
        st = self.stack
        for g in self.openg:
            if st:
                key = st[-1]
            elif self.cur != g.tid:
                key = ("task", self.cur)
            else:
                key = ("self",)
            comp = g.truth["comp"]
            comp[key] = comp.get(key, 0) + d

    def advance(self, tsc):
        """Open and close the gaps whose boundaries come before @tsc, in order."""
        gaps = self.gaps
        while True:
            nxt_start = gaps[self.i].g0 if self.i < len(gaps) else None
            end_g = min(self.openg, key=lambda g: g.g1) if self.openg else None
            if end_g is not None and end_g.g1 < tsc and (nxt_start is None or end_g.g1 <= nxt_start):
                self._charge(end_g.g1)
                self.openg.remove(end_g)
                if end_g.reset and end_g.inferred:
                    # the events are kept for the report's disagreements only
                    classify(end_g, self.hg_tids, None)
                    if end_g.truth["class"] == end_g.inferred:
                        end_g.truth["events"] = None
            elif nxt_start is not None and nxt_start < tsc:
                g = gaps[self.i]
                self.i += 1
                self._charge(g.g0)
                g.truth = {"comp": {}, "events": [], "n_events": 0, "out": None, "in": None,
                           "migrated": None, "woken": None, "lost": False}
                if not g.reset:
                    g.truth["ticks"], g.truth["hrtimers"] = [], []
                if g.reset:
                    # known for sure: this thread ran in user space here at g0
                    self.cur = g.tid
                    self.stack = []
                self.t = g.g0
                self.openg.append(g)
            else:
                return

    def event(self, tsc, typ, flags, aux, arg, buf, pos):
        self.events += 1
        if tsc < self.prev_tsc:
            self.backwards += 1
        if typ == LOST:
            # events went missing on this CPU between the previous one and this
            self.losses.append((self.prev_tsc, tsc))
        self.prev_tsc = tsc
        self.advance(tsc)
        self._charge(tsc)
        st = self.stack
        if typ == IRQ_ENTRY:
            st.append(("irq", arg))
        elif typ == VEC_ENTRY:
            st.append(("vec", flags))
        elif typ == SOFTIRQ_ENTRY:
            st.append(("softirq", arg))
        elif typ in (IRQ_EXIT, VEC_EXIT, SOFTIRQ_EXIT):
            want = ("irq" if typ == IRQ_EXIT else "vec" if typ == VEC_EXIT else "softirq",
                    flags if typ == VEC_EXIT else arg)
            if want in st:        # an exit whose entry came before what we know is ignored
                while st.pop() != want:
                    pass
        elif typ == SWITCH:
            prev, state, _pp, _np = _SWITCH.unpack_from(buf, pos + 16)
            st.clear()            # schedule() runs with no handler active
            self.cur = arg
            # every switch of an hourglass thread, for its on-CPU time
            if prev in self.hg_tids:
                self.switches.setdefault(prev, []).append((tsc, 0))
            if arg in self.hg_tids:
                self.switches.setdefault(arg, []).append((tsc, 1))
        if not self.openg or typ >= COMM:
            return
        for g in self.openg:
            tr = g.truth
            tr["n_events"] += 1
            if tr["events"] is not None and len(tr["events"]) < KEEP_EVENTS:
                tr["events"].append((tsc, typ, arg, flags))
            if typ == SWITCH:
                if prev == g.tid:
                    tr["out"] = (tsc, "preempted" if state == 0 or flags & 1 else "blocked", arg, state)
                if arg == g.tid and tr["in"] is None:
                    tr["in"] = tsc
            elif typ == NMI:
                delta, _h = _NMI.unpack_from(buf, pos + 16)
                d = min(int(delta * self.nmi_cycles), tsc - g.g0)
                # the handler ran just before its tracepoint: move that time to NMI
                comp = tr["comp"]
                for key in list(comp):
                    if d <= 0:
                        break
                    take = min(d, comp[key])
                    comp[key] -= take
                    comp[("nmi",)] = comp.get(("nmi",), 0) + take
                    d -= take
            elif typ == MIGRATE and arg == g.tid:
                tr["migrated"] = _MIGRATE.unpack_from(buf, pos + 16)
            elif typ in (WAKING, WAKEUP) and arg == g.tid and tr["woken"] is None:
                tr["woken"] = tsc
            elif typ == VEC_ENTRY and flags == 0 and not g.reset:
                tr["ticks"].append(tsc)
            elif typ == HRTIMER_ENTRY and not g.reset:
                tr["hrtimers"].append(tsc)

    def finish_all(self):
        self.advance(1 << 64)


def _feed(run, stream, sweeps, names, migrations, new_sweep):
    """Hand every kernel event to its CPU's sweep; return how many there were."""
    n = 0
    for cpu, tsc, typ, flags, aux, arg, buf, pos, ln in progress.over_stream(stream, f"sweeping {run.kernel_path}"):
        n += 1
        try:
            if typ == COMM:
                names.comm[arg] = _COMM.unpack_from(buf, pos + 16)[2].split(b"\0")[0].decode(errors="replace")
                continue
            if typ == NAME:
                if flags == 0:
                    names.irq[arg] = _NAME.unpack_from(buf, pos + 16)[0].split(b"\0")[0].decode(errors="replace")
                continue
            s = sweeps.get(cpu)
            if s is None:
                s = sweeps[cpu] = new_sweep(cpu, [])
            if typ == MIGRATE and arg in run.tids:
                migrations.append((tsc, arg) + _MIGRATE.unpack_from(buf, pos + 16))
            s.event(tsc, typ, flags, aux, arg, buf, pos)
        except struct.error:
            raise struct.error(f"a record of type {typ} on CPU {cpu} at TSC {tsc} is too short for its type")
    return n


def sweep(run, stream, windows=()):
    """Attribute every gap of @run, and every window (load.Window: a wake-up,
    a missed deadline), from the kernel's @stream; return the sweep's figures."""
    names = Names()
    by_cpu = {}
    for g in list(run.gaps) + list(windows):
        by_cpu.setdefault(g.cpu0, []).append(g)
    for lst in by_cpu.values():
        lst.sort(key=lambda g: g.g0)
    tids = frozenset(run.tids)
    switches = {}           # hourglass tid -> [(tsc, 1 in / 0 out)], from every CPU

    def new_sweep(cpu, gaps):
        return CpuSweep(cpu, gaps, run.hz, tids, switches)
    sweeps = {c: new_sweep(c, gs) for c, gs in by_cpu.items()}
    migrations = []
    try:
        n = _feed(run, stream, sweeps, names, migrations, new_sweep)
    except struct.error as e:
        raise HgtFormatError(f"{run.kernel_path}: {e.args[0]}")
    for s in sweeps.values():
        s.finish_all()
    window = stream.window
    hg_tids = set(run.tids)
    for s in sweeps.values():
        if not s.losses:
            continue
        for g in s.gaps:
            if g.truth is not None:
                g.truth["lost"] = any(p < g.g1 and t > g.g0 for p, t in s.losses)
    for g in run.gaps:
        classify(g, hg_tids, window)
    backwards = sum(s.backwards for s in sweeps.values())
    if backwards:
        run.warnings.append(f"{run.kernel_path}: {backwards} kernel events went back in time on their CPU")
    return {"events": n, "names": names, "stats": stream.stats, "window": window,
            "meta": stream.meta, "migrations": migrations, "switches": switches,
            "losses": {c: len(s.losses) for c, s in sweeps.items() if s.losses}}


def classify(g, hg_tids, window):
    """The gap's primary cause and its class, from its components."""
    tr = g.truth
    comp = tr["comp"]
    explained = {k: v for k, v in comp.items() if k[0] != "self" and v > 0}
    tr["self"] = comp.get(("self",), 0)
    tr["explained"] = sum(explained.values())
    if window and (g.g0 < window[0] or g.g1 > window[1]):
        tr["kind"], tr["primary"] = "unexplainable", None
        tr["why"] = WHY[1]
    elif tr["lost"]:
        tr["kind"], tr["primary"] = "unexplainable", None
        tr["why"] = WHY[2]
    elif not explained:
        tr["primary"] = None
        tr["kind"] = "hidden" if tr["n_events"] == 0 else "other"
        tr["why"] = WHY[3] if tr["n_events"] == 0 else WHY[4]
    else:
        key = max(explained, key=explained.get)
        tr["primary"] = key
        tr["kind"] = component_kind(key, hg_tids)
        tr["why"] = ""
    out = tr["out"]
    if out and tr["kind"] != "unexplainable":
        # the thread was switched out: whatever else happened, this is a
        # switch. Between hourglass threads when another one runs next on this
        # CPU, even if a kernel thread ran in between (PREEMPT_RT's ktimers);
        # else to another task, or to idle
        nxt = getattr(g, "next_tid", g.tid)
        if nxt != g.tid and nxt in hg_tids:
            tr["kind"] = "switch_hg"
        else:
            tr["kind"] = "switch_hg" if out[2] in hg_tids else "idle" if out[2] == 0 else "switch_other"
        tr["why"] = why_switched(out)
    tr["class"] = COARSE.get(tr["kind"], tr["kind"])

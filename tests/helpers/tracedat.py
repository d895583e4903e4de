"""tracedat - a test helper that writes a trace-cmd trace.dat, format version 6,
from scratch, as trace-cmd records one: the input of hgtrace-import's tests and
of the merger's trace.dat path. (The product's writer is userspace/export.)
File format version 6:
event formats, per-CPU pages of records, a second buffer, lost-event marks.
No tracefs is needed. Format: trace-cmd.dat.v6(5); the facts this relies
on are in ../shared/TRACE-DAT.md (checked against trace-cmd 3.1.6 and
KernelShark 2.2.1).

    w = TraceDat(cpus=2, tsc_hz=2.6e9)
    sw = w.event("sched", "sched_switch", [("char", "prev_comm", 16), ("pid_t", "prev_pid", 4), ...])
    w.add("", cpu, tsc, sw, pid, {"prev_comm": "x", ...})
    w.write("out.dat")
"""
import struct

PAGE = 4096
PAGE_HEADER = 16                # u64 timestamp, u64 commit
DATA = PAGE - PAGE_HEADER
TS_BITS = 27
MISSING_EVENTS = 1 << 31
MISSING_STORED = 1 << 30

HEADER_PAGE = ("\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
               "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
               "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
               f"\tfield: char data;\toffset:16;\tsize:{DATA};\tsigned:0;\n")
HEADER_EVENT = ("# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n"
                "\tarray       :   32 bits\n\n\tpadding     : type == 29\n\ttime_extend : type == 30\n"
                "\ttime_stamp : type == 31\n\tdata max type_len  == 28\n")
COMMON = [("unsigned short", "common_type", 2, 0), ("unsigned char", "common_flags", 1, 0),
          ("unsigned char", "common_preempt_count", 1, 0), ("int", "common_pid", 4, 1)]

OPT_BUFFER, OPT_TRACECLOCK, OPT_UNAME, OPT_OFFSET, OPT_VERSION, OPT_CPUCOUNT, OPT_TSC2NSEC = 3, 4, 5, 7, 9, 8, 14


class Event:
    """One event type: its id, fixed fields (name, offset, size, kind) and format text."""

    def __init__(self, eid, system, name, fields, fmt):
        self.id, self.system, self.name = eid, system, name
        self.fields = {}
        off = 8
        lines = [f"\tfield:{t} {n};\toffset:{o};\tsize:{s};\tsigned:{g};"
                 for (t, n, s, g), o in zip(COMMON, (0, 2, 3, 4))]
        lines.append("")
        for ctype, fname, size in fields:
            kind = "str" if ctype == "char" else "loc" if ctype == "__data_loc char[]" else "int"
            signed = 0 if ctype.startswith("unsigned") or ctype in ("char", "u64", "u32") else 1
            align = 4 if kind in ("str", "loc") else min(size, 8)
            off = (off + align - 1) // align * align
            decl = f"char {fname}[{size}]" if kind == "str" else \
                f"__data_loc char[] {fname}" if kind == "loc" else f"{ctype} {fname}"
            lines.append(f"\tfield:{decl};\toffset:{off};\tsize:{size};\tsigned:{signed};")
            self.fields[fname] = (off, size, kind, signed)
            off += size
        self.fixed = off
        self.format = f"name: {name}\nID: {eid}\nformat:\n" + "\n".join(lines) + f"\n\nprint fmt: {fmt}\n"

    def pack(self, pid, values):
        buf = bytearray(self.fixed)
        struct.pack_into("<HBBi", buf, 0, self.id, 0, 0, pid)
        tail = bytearray()
        for fname, (off, size, kind, signed) in self.fields.items():
            v = values.get(fname, 0 if kind == "int" else "")
            if kind == "str":
                b = str(v).encode()[:size - 1]
                buf[off:off + len(b)] = b
            elif kind == "loc":
                b = str(v).encode() + b"\0"
                struct.pack_into("<I", buf, off, (len(b) << 16) | (self.fixed + len(tail)))
                tail += b
            else:
                fmt = {1: "b", 2: "h", 4: "i", 8: "q"}[size]
                struct.pack_into("<" + (fmt if signed else fmt.upper()), buf, off, int(v))
        buf += tail
        buf += b"\0" * (-len(buf) % 4)
        return bytes(buf)


class _Cpu:
    """The pages of one CPU of one buffer."""

    def __init__(self):
        self.pages = []
        self.cur = None
        self.used = 0
        self.last = 0
        self.lost = 0           # events lost before the next page

    def _new_page(self, ts):
        if self.cur is not None:
            self._seal()
        self.cur = bytearray(PAGE)
        self.used = 0
        self.page_ts = ts
        self.last = ts
        self.page_lost = self.lost
        self.lost = 0

    def _seal(self):
        commit = self.used
        if self.page_lost:
            # the count is stored after the data, when there is room for it
            if self.used + 8 <= DATA:
                struct.pack_into("<Q", self.cur, PAGE_HEADER + self.used, self.page_lost)
                commit |= MISSING_EVENTS | MISSING_STORED
            else:
                commit |= MISSING_EVENTS
        struct.pack_into("<QQ", self.cur, 0, self.page_ts, commit)
        self.pages.append(bytes(self.cur))
        self.cur = None

    def add(self, ts, payload):
        if ts < self.last:
            raise ValueError(f"timestamps must not decrease within a CPU ({ts} after {self.last})")
        n = len(payload)
        head = 4 if n <= 28 * 4 else 8
        if self.cur is None or self.lost:
            self._new_page(ts)
        delta = ts - self.last
        ext = 8 if delta >= (1 << TS_BITS) else 0
        if self.used + ext + head + n + (8 if self.page_lost else 0) > DATA:
            self._new_page(ts)
            delta, ext = 0, 0
        p = PAGE_HEADER + self.used
        if ext:
            struct.pack_into("<II", self.cur, p, 30 | ((delta & ((1 << TS_BITS) - 1)) << 5), delta >> TS_BITS)
            p += 8
            delta = 0
        if head == 4:
            struct.pack_into("<I", self.cur, p, (n // 4) | (delta << 5))
        else:
            struct.pack_into("<II", self.cur, p, delta << 5, n + 4)
        p += head
        self.cur[p:p + n] = payload
        self.used = p + n - PAGE_HEADER
        self.last = ts

    def finish(self):
        if self.cur is not None:
            self._seal()
        return b"".join(self.pages)


class TraceDat:
    def __init__(self, cpus, tsc_hz, uname="", version="hourglass"):
        self.ncpus = cpus
        self.tsc_hz = tsc_hz
        self.uname, self.version = uname, version
        self.events = []
        self.buffers = {"": [_Cpu() for _ in range(cpus)]}
        self.cmdlines = {}

    def event(self, system, name, fields, fmt='""'):
        ev = Event(1000 + len(self.events), system, name, fields, fmt)
        self.events.append(ev)
        return ev

    def buffer(self, name):
        self.buffers.setdefault(name, [_Cpu() for _ in range(self.ncpus)])

    def add(self, buffer, cpu, ts, ev, pid, values):
        """Add one event; @ts is the TSC rebased so that it is at least 1."""
        self.buffers[buffer][cpu].add(ts, ev.pack(pid, values))

    def lost(self, buffer, cpu, count):
        """Events went missing here: the next page carries the mark."""
        self.buffers[buffer][cpu].lost += count

    def tsc2nsec(self):
        """(mult, shift) of the TSC2NSEC option: ns = (ts * mult) >> shift."""
        # trace-cmd keeps mult in an int: it must stay below 2^31
        shift = 32
        mult = round(1e9 / self.tsc_hz * (1 << shift))
        while mult >= 1 << 31:
            shift -= 1
            mult = round(1e9 / self.tsc_hz * (1 << shift))
        return mult, shift

    def write(self, path):
        out = bytearray()
        out += b"\x17\x08\x44tracing6\0" + bytes([0, 8]) + struct.pack("<I", PAGE)
        for name, text in (("header_page", HEADER_PAGE), ("header_event", HEADER_EVENT)):
            t = text.encode()
            out += name.encode() + b"\0" + struct.pack("<Q", len(t)) + t
        out += struct.pack("<I", 0)                               # no ftrace formats
        systems = {}
        for ev in self.events:
            systems.setdefault(ev.system, []).append(ev)
        out += struct.pack("<I", len(systems))
        for sysname, evs in systems.items():
            out += sysname.encode() + b"\0" + struct.pack("<I", len(evs))
            for ev in evs:
                t = ev.format.encode()
                out += struct.pack("<Q", len(t)) + t
        out += struct.pack("<II", 0, 0)                           # kallsyms, printk
        cmd = "".join(f"{pid} {comm}\n" for pid, comm in sorted(self.cmdlines.items())).encode()
        out += struct.pack("<Q", len(cmd)) + cmd
        out += struct.pack("<I", self.ncpus)
        out += b"options  \0"

        def opt(oid, data):
            return struct.pack("<HI", oid, len(data)) + data
        mult, shift = self.tsc2nsec()
        opts = opt(OPT_TRACECLOCK, b"[x86-tsc]\0") + opt(OPT_TSC2NSEC, struct.pack("<IIQ", mult, shift, 0))
        if self.uname:
            opts += opt(OPT_UNAME, self.uname.encode() + b"\0")
        opts += opt(OPT_VERSION, self.version.encode() + b"\0")
        extra = [n for n in self.buffers if n]
        # buffer options point at their own flyrecord tables, placed later
        buf_opt_at = {}
        for n in extra:
            buf_opt_at[n] = len(out) + len(opts) + 6
            opts += opt(OPT_BUFFER, struct.pack("<Q", 0) + n.encode() + b"\0")
        out += opts + struct.pack("<H", 0)
        out += b"flyrecord\0"
        top_table = len(out)
        out += b"\0" * (16 * self.ncpus)
        clock = b"[x86-tsc]"
        out += struct.pack("<Q", len(clock)) + clock
        tables = {"": top_table}
        for n in extra:
            struct.pack_into("<Q", out, buf_opt_at[n], len(out))
            out += b"flyrecord\0"
            tables[n] = len(out)
            out += b"\0" * (16 * self.ncpus)
        for n, cpus in self.buffers.items():
            for cpu, c in enumerate(cpus):
                data = c.finish()
                out += b"\0" * (-len(out) % PAGE)
                struct.pack_into("<QQ", out, tables[n] + 16 * cpu, len(out) if data else 0, len(data))
                out += data
        with open(path, "wb") as f:
            f.write(out)


INT = lambda n: ("int", n, 4)
S64 = lambda n: ("s64", n, 8)
U64 = lambda n: ("u64", n, 8)
STR = lambda n: ("__data_loc char[]", n, 4)
COMM = lambda n: ("char", n, 16)
VECTORS = ["local_timer", "reschedule", "call_function", "call_function_single", "irq_work",
           "x86_platform_ipi", "spurious_apic", "error_apic", "thermal_apic"]


def standard_events(w):
    """The kernel's events as their tracepoints define them, for trace-cmd-like files."""
    e = {}
    e["switch"] = w.event("sched", "sched_switch", [COMM("prev_comm"), ("pid_t", "prev_pid", 4), INT("prev_prio"),
                                                    ("long", "prev_state", 8), COMM("next_comm"),
                                                    ("pid_t", "next_pid", 4), INT("next_prio")],
                          '"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%ld ==> next_comm=%s next_pid=%d '
                          'next_prio=%d", REC->prev_comm, REC->prev_pid, REC->prev_prio, REC->prev_state, '
                          'REC->next_comm, REC->next_pid, REC->next_prio')
    for name in ("sched_waking", "sched_wakeup", "sched_wakeup_new"):
        e[name] = w.event("sched", name, [COMM("comm"), ("pid_t", "pid", 4), INT("prio"), INT("target_cpu")],
                          '"comm=%s pid=%d prio=%d target_cpu=%03d", REC->comm, REC->pid, REC->prio, REC->target_cpu')
    e["migrate"] = w.event("sched", "sched_migrate_task", [COMM("comm"), ("pid_t", "pid", 4), INT("prio"),
                                                            INT("orig_cpu"), INT("dest_cpu")],
                           '"comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d", REC->comm, REC->pid, REC->prio, '
                           'REC->orig_cpu, REC->dest_cpu')
    e["exit"] = w.event("sched", "sched_process_exit", [COMM("comm"), ("pid_t", "pid", 4), INT("prio")],
                        '"comm=%s pid=%d prio=%d", REC->comm, REC->pid, REC->prio')
    e["irq_entry"] = w.event("irq", "irq_handler_entry", [INT("irq"), STR("name")],
                             '"irq=%d name=%s", REC->irq, __get_str(name)')
    e["irq_exit"] = w.event("irq", "irq_handler_exit", [INT("irq"), INT("ret")],
                            '"irq=%d ret=%s", REC->irq, REC->ret ? "handled" : "unhandled"')
    for name in ("softirq_entry", "softirq_exit"):
        e[name] = w.event("irq", name, [("unsigned int", "vec", 4)], '"vec=%u", REC->vec')
    for k, vec in enumerate(VECTORS):
        for end in ("entry", "exit"):
            e[(k, end)] = w.event("irq_vectors", f"{vec}_{end}", [INT("vector")], '"vector=%d", REC->vector')
    e["hrt_entry"] = w.event("timer", "hrtimer_expire_entry", [U64("hrtimer"), S64("now"), U64("function")],
                             '"hrtimer=%p function=%ps now=%llu", REC->hrtimer, REC->function, REC->now')
    e["hrt_exit"] = w.event("timer", "hrtimer_expire_exit", [U64("hrtimer")], '"hrtimer=%p", REC->hrtimer')
    e["nmi"] = w.event("nmi", "nmi_handler", [U64("handler"), S64("delta_ns"), INT("handled")],
                       '"%ps() delta_ns: %lld handled: %d", REC->handler, REC->delta_ns, REC->handled')
    return e

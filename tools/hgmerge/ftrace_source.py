"""ftrace_source - a trace.dat recorded by trace-cmd with the x86-tsc clock,
as the ground truth instead of hgtrace.ko's recording, for users who cannot
load the module.

trace-cmd (libtracecmd and libtraceevent underneath) decodes the file; its
events are turned into the records of kmod/uapi/hgtrace.h, so the sweep is
the same for both sources. Events trace-cmd reports dropped become LOST
records, so gaps that overlap them are unexplainable, as with the module.
"""
import struct

from ftrace_text import FtraceError, read_report
from hgtrace_file import pack_record as _rec

from . import truth as T

VEC_EVENTS = ["local_timer", "reschedule", "call_function", "call_function_single", "irq_work",
              "x86_platform_ipi", "spurious_apic", "error_apic", "thermal_apic"]


def _int(fields, key, default=0):
    v = fields.get(key, "")
    try:
        return int(v, 0)
    except ValueError:
        return default


class FtraceStream:
    """Iterates like hgtrace_file.HgtStream: (cpu, tsc, typ, flags, aux, arg, buf, pos, ln)."""

    def __init__(self, path):
        self.path = path
        try:
            self.events, self.drops = read_report(path)
        except FtraceError as e:
            raise FtraceError(f"{path}: {e}")
        self.meta = {"clock": "tsc", "source": "trace-cmd"}
        self.stats = {}
        ts = [e["ts"] for e in self.events]
        self.window = (min(ts), max(ts)) if ts else None
        self.complete = True

    def __iter__(self):
        drops = {idx: (cpu, n) for cpu, n, idx in self.drops}
        seen = set()
        for i, e in enumerate(self.events):
            cpu, ts, name, f = e["cpu"], e["ts"], e["event"], e["fields"]
            if i in drops:
                out = [_rec(ts, T.LOST, payload=struct.pack("<Q", drops[i][1]))]
            else:
                out = []
            out += self._convert(ts, name, f, seen)
            for r in out:
                yield (cpu, ts, r[8], r[10], r[11], struct.unpack_from("<I", r, 12)[0], r, 0, len(r))

    def _convert(self, ts, name, f, seen):
        out = []

        def comm(pid, c):
            if pid not in seen and c:
                seen.add(pid)
                out.append(_rec(ts, T.COMM, pid, payload=struct.pack("<II16s", pid, 0, c.encode()[:15])))

        if name == "sched_switch":
            prev, nxt = _int(f, "prev_pid"), _int(f, "next_pid")
            comm(prev, f.get("prev_comm"))
            comm(nxt, f.get("next_comm"))
            state = _int(f, "prev_state")
            out.append(_rec(ts, T.SWITCH, nxt, payload=struct.pack("<IIhhI", prev, state, _int(f, "prev_prio"),
                                                                    _int(f, "next_prio"), 0)))
        elif name in ("sched_waking", "sched_wakeup", "sched_wakeup_new"):
            pid = _int(f, "pid")
            comm(pid, f.get("comm"))
            typ = {"sched_waking": T.WAKING, "sched_wakeup": T.WAKEUP}.get(name, T.WAKEUP_NEW)
            out.append(_rec(ts, typ, pid, payload=struct.pack("<HhI", _int(f, "target_cpu"), _int(f, "prio"), 0)))
        elif name == "sched_migrate_task":
            out.append(_rec(ts, T.MIGRATE, _int(f, "pid"),
                            payload=struct.pack("<HHI", _int(f, "orig_cpu"), _int(f, "dest_cpu"), 0)))
        elif name == "irq_handler_entry":
            irq = _int(f, "irq")
            if ("irq", irq) not in seen and f.get("name"):
                seen.add(("irq", irq))
                out.append(_rec(ts, T.NAME, irq, payload=struct.pack("<32s", f["name"].encode()[:31])))
            out.append(_rec(ts, T.IRQ_ENTRY, irq))
        elif name == "irq_handler_exit":
            out.append(_rec(ts, T.IRQ_EXIT, _int(f, "irq")))
        elif name in ("softirq_entry", "softirq_exit"):
            out.append(_rec(ts, T.SOFTIRQ_ENTRY if name.endswith("entry") else T.SOFTIRQ_EXIT, _int(f, "vec")))
        elif name.endswith("_entry") or name.endswith("_exit"):
            base, _, end = name.rpartition("_")
            if base in VEC_EVENTS:
                out.append(_rec(ts, T.VEC_ENTRY if end == "entry" else T.VEC_EXIT, _int(f, "vector"),
                                flags=VEC_EVENTS.index(base)))
            elif name == "hrtimer_expire_entry":
                out.append(_rec(ts, T.HRTIMER_ENTRY, 0, payload=b"\0" * 8))
            elif name == "hrtimer_expire_exit":
                out.append(_rec(ts, T.HRTIMER_EXIT, 0))
        elif name == "nmi_handler":
            out.append(_rec(ts, T.NMI, 0, payload=struct.pack("<II", _int(f, "delta_ns"), _int(f, "handled"))))
        return out

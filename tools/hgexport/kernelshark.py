"""kernelshark - one trace.dat with the kernel's ground truth as standard
events (top buffer) and hourglass's own events (buffer "hourglass"): its
intervals, every gap with its inferred and actual cause, job releases,
completions and deadline misses, and timer wake-ups with their lateness.

Time is the TSC, rebased to the start of the recording, with TSC2NSEC from
hourglass's measured frequency, so trace-cmd and KernelShark show seconds.
KernelShark's sched_events plugin draws task graphs from the standard
sched_switch/sched_waking fields, which the ground truth keeps.
"""
import os
import struct

import hourglass_trace as H
from hgmerge import load, progress, report
from hgmerge import truth as T

from . import kssession
from .tracedat import TraceDat

INT = lambda n: ("int", n, 4)
U32 = lambda n: ("u32", n, 4)
S64 = lambda n: ("s64", n, 8)
U64 = lambda n: ("u64", n, 8)
STR = lambda n: ("__data_loc char[]", n, 4)
COMM = lambda n: ("char", n, 16)


def _events(w, hg_buffer="hourglass"):
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
    for k, vec in enumerate(T.VECTORS):
        for end in ("entry", "exit"):
            e[(k, end)] = w.event("irq_vectors", f"{vec}_{end}", [INT("vector")], '"vector=%d", REC->vector')
    e["hrt_entry"] = w.event("timer", "hrtimer_expire_entry", [U64("hrtimer"), S64("now"), U64("function")],
                             '"hrtimer=%p function=%ps now=%llu", REC->hrtimer, REC->function, REC->now')
    e["hrt_exit"] = w.event("timer", "hrtimer_expire_exit", [U64("hrtimer")], '"hrtimer=%p", REC->hrtimer')
    e["nmi"] = w.event("nmi", "nmi_handler", [U64("handler"), S64("delta_ns"), INT("handled")],
                       '"%ps() delta_ns: %lld handled: %d", REC->handler, REC->delta_ns, REC->handled')
    w.buffer(hg_buffer)
    e["iv_start"] = w.event("hourglass", "interval_start", [U32("thread")], '"thread=%u", REC->thread')
    e["iv_end"] = w.event("hourglass", "interval_end", [U32("thread"), U64("duration_ns"), STR("ended_by")],
                          '"thread=%u duration_ns=%llu ended_by=%s", REC->thread, REC->duration_ns, '
                          '__get_str(ended_by)')
    e["gap"] = w.event("hourglass", "gap", [U32("thread"), INT("next_thread"), U64("length_ns"), INT("agree"),
                                            STR("inferred"), STR("actual"), STR("cause")],
                       '"thread=%u next_thread=%d length_ns=%llu agree=%d inferred=%s actual=%s cause=%s", '
                       'REC->thread, REC->next_thread, REC->length_ns, REC->agree, __get_str(inferred), '
                       '__get_str(actual), __get_str(cause)')
    e["release"] = w.event("hourglass", "job_release", [U32("thread"), U64("deadline_ns")],
                           '"thread=%u deadline_ns=%llu", REC->thread, REC->deadline_ns')
    e["done"] = w.event("hourglass", "job_done", [U32("thread"), U64("response_ns")],
                        '"thread=%u response_ns=%llu", REC->thread, REC->response_ns')
    e["miss"] = w.event("hourglass", "deadline_miss", [U32("thread")], '"thread=%u", REC->thread')
    e["wake"] = w.event("hourglass", "wakeup", [U32("thread"), S64("lateness_ns"), STR("timer")],
                        '"thread=%u lateness_ns=%lld timer=%s", REC->thread, REC->lateness_ns, __get_str(timer)')
    return e


def export(dir_, out, kernel=None, merged=None, session=None):
    """Merge DIR (or take @merged, report.merge_run's result) and write OUT
    (must end in .dat: KernelShark opens nothing else). With @session, also a
    KernelShark session that opens it on the first wrong inference, and the
    companion file OUT-hourglass.dat it needs (kssession)."""
    if not out.endswith(".dat"):
        raise load.RunError(f"{out}: KernelShark opens only files named *.dat")
    run, res, kinfo = merged or report.merge_run(dir_, kernel)
    names = kinfo["names"]
    hz = run.hz
    ns = lambda c: int(c * 1e9 / hz)
    stream = load.kernel_stream(run)        # a second pass over the kernel's events
    hg = run.hg.records
    cpus = 1 + max([r.cpu for r in hg] + [c for c in kinfo["stats"]] + [g.cpu0 for g in run.gaps] + [0])
    ktimes = [kinfo["window"][0]] if kinfo["window"] else []
    base = min([r.t0 for r in hg if r.t0] + ktimes) - int(hz * 1e-6)     # every stamp >= 1 us
    meta = kinfo["meta"] or {}
    w = TraceDat(cpus=cpus, tsc_hz=hz, uname=meta.get("kernel", ""), version="hourglass export")
    ev = _events(w)
    tid_name = {t["tid"]: f"hg-thread-{t['thread']}" for t in run.threads if t.get("tid")}
    cur = {}
    nev = {"": 0, "hourglass": 0}
    kitems = []

    def comm(pid):
        return tid_name.get(pid) or names.comm.get(pid, "")

    for cpu, tsc, typ, flags, aux, arg, buf, pos, ln in progress.over_stream(stream, f"writing {out}"):
        if tsc < base:
            continue
        ts = tsc - base
        pid = cur.get(cpu, 0)
        p = pos + 16
        if typ in (T.COMM, T.NAME):
            continue            # the merge's sweep has read every name already
        if typ == T.LOST:
            w.lost("", cpu, struct.unpack_from("<Q", buf, p)[0])
            continue
        if typ == T.SWITCH:
            prev, state, pp, np_ = struct.unpack_from("<IIhh", buf, p)
            e, v = ev["switch"], dict(prev_comm=comm(prev), prev_pid=prev, prev_prio=pp, prev_state=state,
                                      next_comm=comm(arg), next_pid=arg, next_prio=np_)
            pid = prev
            cur[cpu] = arg
        elif typ in (T.WAKING, T.WAKEUP, T.WAKEUP_NEW):
            tcpu, prio = struct.unpack_from("<Hh", buf, p)
            e = ev[{T.WAKING: "sched_waking", T.WAKEUP: "sched_wakeup"}.get(typ, "sched_wakeup_new")]
            v = dict(comm=comm(arg), pid=arg, prio=prio, target_cpu=tcpu)
        elif typ == T.MIGRATE:
            o, d = struct.unpack_from("<HH", buf, p)
            e, v = ev["migrate"], dict(comm=comm(arg), pid=arg, orig_cpu=o, dest_cpu=d)
        elif typ == T.EXIT:
            e, v = ev["exit"], dict(comm=comm(arg), pid=arg)
        elif typ == T.IRQ_ENTRY:
            e, v = ev["irq_entry"], dict(irq=arg, name=names.irq.get(arg, ""))
        elif typ == T.IRQ_EXIT:
            e, v = ev["irq_exit"], dict(irq=arg, ret=flags)
        elif typ in (T.SOFTIRQ_ENTRY, T.SOFTIRQ_EXIT):
            e, v = ev["softirq_entry" if typ == T.SOFTIRQ_ENTRY else "softirq_exit"], dict(vec=arg)
        elif typ in (T.VEC_ENTRY, T.VEC_EXIT):
            if flags >= len(T.VECTORS):
                continue
            e, v = ev[(flags, "entry" if typ == T.VEC_ENTRY else "exit")], dict(vector=arg)
        elif typ == T.HRTIMER_ENTRY:
            e, v = ev["hrt_entry"], dict(hrtimer=arg, function=struct.unpack_from("<I", buf, p)[0])
        elif typ == T.HRTIMER_EXIT:
            e, v = ev["hrt_exit"], dict(hrtimer=arg)
        elif typ == T.NMI:
            d, h = struct.unpack_from("<II", buf, p)
            e, v = ev["nmi"], dict(handler=arg, delta_ns=d, handled=h)
        else:
            continue
        kitems.append((cpu, ts, len(kitems), e, pid, v))
    # A probe interrupted between stamping and writing its record lets the
    # interrupt's record in first: the stream is in order only nearly.
    kitems.sort(key=lambda i: (i[0], i[1], i[2]))
    # with a session, every entry's time: its markers are rows of all entries
    stamps = [ts for _c, ts, *_ in kitems] if session else None
    for cpu, ts, _n, e, pid, v in kitems:
        w.add("", cpu, ts, e, pid, v)
        nev[""] += 1
    del kitems
    for pid, c in names.comm.items():
        w.cmdlines[pid] = c
    w.cmdlines.update(tid_name)

    # hourglass's side: per CPU, in time order
    items = []
    tid = {t["thread"]: t.get("tid", 0) for t in run.threads}
    for r in hg:
        if r.type == H.INTERVAL:
            ended = "yield" if r.flags & H.IV_YIELD else "sleep" if r.flags & H.IV_SLEEP else \
                "end of run" if r.flags & H.IV_LAST else "gap"
            items.append((r.cpu, r.t0, 0, ev["iv_start"], r.thread, dict(thread=r.thread)))
            items.append((r.cpu, r.t1, 1, ev["iv_end"], r.thread,
                          dict(thread=r.thread, duration_ns=ns(r.t1 - r.t0), ended_by=ended)))
        elif r.type == H.JOB:
            items.append((r.cpu, r.t0, 0, ev["release"], r.thread, dict(thread=r.thread, deadline_ns=ns(r.t2 - r.t0))))
            if r.flags & H.JOB_MISSED:
                items.append((r.cpu, r.t2, 2, ev["miss"], r.thread, dict(thread=r.thread)))
            elif r.t1:
                items.append((r.cpu, r.t1, 2, ev["done"], r.thread, dict(thread=r.thread, response_ns=ns(r.t1 - r.t0))))
        elif r.type == H.WAKE:
            timer = ["?", "NATIVE", "HR", "RTC", "TIMERFD", "POSIX"][min(r.flags & 0xf, 5)]
            items.append((r.cpu, r.t1, 0, ev["wake"], r.thread,
                          dict(thread=r.thread, lateness_ns=r.lateness_ns, timer=timer)))
    for g in run.gaps:
        tr = g.truth
        cause = T.component_name(tr["primary"], names) if tr and tr["primary"] else (tr["kind"] if tr else "")
        actual = tr["class"] if tr else "unknown"
        items.append((g.cpu0, g.g0, 2, ev["gap"], g.thread,
                      dict(thread=g.thread, next_thread=g.next_thread, length_ns=ns(g.length),
                           agree=int(g.inferred == actual), inferred=g.inferred or "voluntary", actual=actual,
                           cause=cause)))
    items.sort(key=lambda i: (i[0], i[1], i[2]))
    w2 = None
    if session:
        # the same events in the top buffer of a file of their own; event ids
        # are given in the same order, so w's events pack for w2 too
        w2 = TraceDat(cpus=cpus, tsc_hz=hz, uname=meta.get("kernel", ""), version="hourglass export")
        _events(w2, hg_buffer="")
        w2.cmdlines = w.cmdlines
    for cpu, tsc, _o, e, k, v in items:
        if tsc < base:
            continue
        w.add("hourglass", cpu, tsc - base, e, tid.get(k, 0), v)
        if w2:
            w2.add("", cpu, tsc - base, e, tid.get(k, 0), v)
            stamps.append(tsc - base)
        nev["hourglass"] += 1
    w.write(out)
    r = {"path": out, "kernel_events": nev[""], "hourglass_events": nev["hourglass"], "cpus": cpus,
         "gaps": len(run.gaps)}
    g = kssession.focus_gap(run.gaps) if session else None
    if g is not None:
        companion = os.path.splitext(out)[0] + "-hourglass.dat"
        w2.write(companion)
        # KernelShark's nanoseconds: trace-cmd's TSC2NSEC arithmetic on the rebased stamps
        mult, shift = w.tsc2nsec()
        to_ns = lambda ts: (ts * mult) >> shift
        stamps.sort()
        kssession.write(session, out, companion, [to_ns(t) for t in stamps], to_ns(g.g0 - base),
                        to_ns(g.g1 - base), list(range(cpus)), sorted({r.cpu for r in hg}))
        r.update(session=session, companion=companion,
                 session_gap_ms=(g.g0 - run.hg.info["t0_tsc"]) / hz * 1e3)
    return r

"""perfetto - the merged timeline as Chrome trace-event JSON, which
ui.perfetto.dev (and chrome://tracing) open: one process per side, a track
per CPU for the kernel (tasks running, hard irqs, x86 vectors, softirqs as
nested slices) and a track per hourglass thread (its intervals, and its gaps
named by their actual cause, with the inference and whether it was right).

Times are microseconds from the start of the recording ("ts", "dur").
"""
import json
import os
import struct

import hourglass_trace as H
from hgmerge import load, progress, report
from hgmerge import truth as T

KERNEL_PID, HOURGLASS_PID = 1, 2


def export(dir_, out, kernel=None, merged=None):
    """Merge DIR (or take @merged, report.merge_run's result) and write OUT."""
    run, res, kinfo = merged or report.merge_run(dir_, kernel)
    names = kinfo["names"]
    hz = run.hz
    hg = run.hg.records
    ktimes = [kinfo["window"][0]] if kinfo["window"] else []
    base = min([r.t0 for r in hg if r.t0] + ktimes)
    us = lambda tsc: (tsc - base) * 1e6 / hz
    # events go to the file as they come (a list of them took more memory
    # than the merge itself); into a temporary name, renamed when complete
    tmp = out + ".part"
    f = open(tmp, "w")
    try:
        f.write('{"traceEvents":[')
        count = [0]

        def emit(e):
            f.write(("," if count[0] else "") + json.dumps(e, separators=(",", ":"), default=str))
            count[0] += 1
        meta = lambda pid, tid, what, name: emit(
            {"ph": "M", "pid": pid, "tid": tid, "name": what, "args": {"name": name}})
        meta(KERNEL_PID, 0, "process_name", "kernel (ground truth)")
        meta(HOURGLASS_PID, 0, "process_name", "hourglass")

        # kernel: per CPU, tasks as slices between switches, handlers nested inside
        cur, since, stack, cpus = {}, {}, {}, set()

        def slice_(cpu, name, t0, t1, cat, args=None):
            emit({"ph": "X", "pid": KERNEL_PID, "tid": cpu, "name": name, "cat": cat,
                       "ts": round(us(t0), 3), "dur": round(max(t1 - t0, 0) * 1e6 / hz, 3), **({"args": args} if args else {})})

        for cpu, tsc, typ, flags, aux, arg, buf, pos, ln in progress.over_stream(load.kernel_stream(run), f"writing {out}"):
            if tsc < base:
                continue
            cpus.add(cpu)
            if typ == T.SWITCH:         # (names: the merge's sweep has read them all)
                if cpu in cur:
                    slice_(cpu, names.task(cur[cpu]) if cur[cpu] else "idle", since[cpu], tsc, "task")
                cur[cpu], since[cpu] = arg, tsc
                stack[cpu] = []
            elif typ in (T.IRQ_ENTRY, T.VEC_ENTRY, T.SOFTIRQ_ENTRY):
                key = ("irq", arg) if typ == T.IRQ_ENTRY else ("vec", flags) if typ == T.VEC_ENTRY else ("softirq", arg)
                stack.setdefault(cpu, []).append((key, tsc))
            elif typ in (T.IRQ_EXIT, T.VEC_EXIT, T.SOFTIRQ_EXIT):
                key = ("irq", arg) if typ == T.IRQ_EXIT else ("vec", flags) if typ == T.VEC_EXIT else ("softirq", arg)
                st = stack.get(cpu, [])
                if any(k == key for k, _ in st):
                    while st:
                        k, t0 = st.pop()
                        if k == key:
                            slice_(cpu, T.component_name(k, names), t0, tsc, k[0])
                            break
            elif typ == T.LOST:
                emit({"ph": "i", "s": "t", "pid": KERNEL_PID, "tid": cpu, "name": "events lost",
                           "ts": round(us(tsc), 3), "args": {"count": struct.unpack_from("<Q", buf, pos + 16)[0]}})
        for cpu in sorted(cpus):
            meta(KERNEL_PID, cpu, "thread_name", f"CPU {cpu}")

        # hourglass: per thread, intervals and gaps
        for t in run.threads:
            meta(HOURGLASS_PID, t["thread"], "thread_name", f"thread {t['thread']} (tid {t.get('tid')}, {t.get('workload')})")
        for r in hg:
            if r.type == H.INTERVAL:
                emit({"ph": "X", "pid": HOURGLASS_PID, "tid": r.thread, "name": "running", "cat": "interval",
                           "ts": round(us(r.t0), 3), "dur": round((r.t1 - r.t0) * 1e6 / hz, 3), "args": {"cpu": r.cpu}})
            elif r.type == H.JOB and r.flags & H.JOB_MISSED:
                emit({"ph": "i", "s": "t", "pid": HOURGLASS_PID, "tid": r.thread, "name": "deadline missed",
                           "ts": round(us(r.t2), 3)})
            elif r.type == H.WAKE:
                emit({"ph": "i", "s": "t", "pid": HOURGLASS_PID, "tid": r.thread, "name": "wake-up",
                           "ts": round(us(r.t1), 3), "args": {"lateness_us": r.lateness_ns / 1e3}})
        for g in run.gaps:
            tr = g.truth or {}
            actual = tr.get("class", "unknown")
            right = g.inferred == actual
            cause = T.component_name(tr["primary"], names) if tr.get("primary") else tr.get("kind", "")
            # the name carries the colour (Perfetto colours by name): one per cause, right or wrong
            emit({"ph": "X", "pid": HOURGLASS_PID, "tid": g.thread, "cat": "gap",
                       "name": f"gap: {actual}" + ("" if right or g.voluntary else f" (inferred {g.inferred})"),
                       "ts": round(us(g.g0), 3), "dur": round(g.length * 1e6 / hz, 3),
                       "args": {"cpu": g.cpu0, "next_thread": g.next_thread, "inferred": g.inferred or "voluntary",
                                "actual": actual, "cause": cause, "agree": right}})
        f.write('],"displayTimeUnit":"ns","metadata":' + json.dumps(
            {"source": "hourglass export", "run": res["run"]["command"], "tsc_hz": hz,
             "confusion": res["confusion"]["matrix"]}, separators=(",", ":"), default=str) + "}")
    except BaseException:
        f.close()
        os.unlink(tmp)
        raise
    f.close()
    os.replace(tmp, out)
    return {"path": out, "events": count[0], "gaps": len(run.gaps)}

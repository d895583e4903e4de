"""core - the merge through build/hgmerge-core, the per-gap path in C.

The Python modules (load, infer, truth, judge) are the reference and stay
the engine of the exporters, which need every gap as an object. For the
report, hgmerge-core does the same work in one pass at tens of nanoseconds
an event, and hands back raw figures (cycles, ids, rule codes): this module
turns them into the report's dictionary with the reference's own functions
for every text and every conversion, so that the two engines give the same
report (tests/unit/test_merge.py holds them to it on every timeline).
"""
import json
import os
import subprocess
import tempfile

import hourglass_trace as H

from . import infer, judge, latency, microstates, truth
from .ftrace_source import FtraceStream
from .load import Gap, RunError, Window

PROGRAM = "hgmerge-core"
# hgmerge-core's component kinds (userspace/merger/core.h, enum comp_kind)
_K_SELF, _K_TASK, _K_IRQ, _K_VEC, _K_SOFTIRQ, _K_NMI, _K_KIND, _K_OUT = range(8)


def program():
    """hgmerge-core next to hourglass (HG_BIN) or in the tree's build/; None if not built."""
    here = os.path.dirname(os.path.abspath(__file__))
    for d in (os.path.dirname(os.path.realpath(os.environ["HG_BIN"])) if os.environ.get("HG_BIN") else None,
              os.path.join(here, "..", "..", "build")):
        if d and os.access(os.path.join(d, PROGRAM), os.X_OK):
            return os.path.join(d, PROGRAM)
    return None


def _key(kind, ident):
    """A component key as truth.py writes it."""
    if kind == _K_SELF:
        return ("self",)
    if kind == _K_NMI:
        return ("nmi",)
    if kind == _K_TASK:
        return ("task", None if ident < 0 else ident)
    return ({_K_IRQ: "irq", _K_VEC: "vec", _K_SOFTIRQ: "softirq"}[kind], ident)


def _comps(raw):
    return {_key(k, i): v for k, i, v in raw}


def _thread_arg(t):
    never_blocks = t.get("workload") in ("CPU", "CPU_SCAN", "CPU_PERIODIC")
    never_yields = t.get("workload") in ("CPU", "CPU_SCAN")
    arg = [t.get("tid") or 0, int(t.get("policy") in ("fifo", "rr")), t.get("priority", 0) or 0,
           int(never_blocks), int(never_yields)]
    acc = t.get("accounting")
    if acc and t.get("tid"):
        arg += [acc["tsc0"], acc["tsc1"]]
    return ",".join(str(int(a)) for a in arg)


def run_core(run, stream):
    """Run hgmerge-core on @run (load.load_run(records=False)) and its kernel @stream; its output."""
    prog = program()
    if not prog:
        raise RunError(f"{PROGRAM} is not built (make userspace)")
    fds, kernel = (), run.kernel_path
    if isinstance(stream, FtraceStream):
        # the trace.dat was converted to an unlinked file that the stream holds open
        fds = (stream.f.fileno(),)
        kernel = f"/dev/fd/{fds[0]}"
    margin = int(latency.MARGIN_US * 1e-6 * run.hz)
    cmd = [prog, "--hgl", run.hgl_path, "--kernel", kernel, "--name", run.kernel_path,
           "--hz", repr(run.hz), "--margin", str(margin)]
    for t in run.threads:
        cmd += ["--thread", _thread_arg(t)]
    with tempfile.TemporaryFile() as out:
        p = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE, text=True, pass_fds=fds)
        if p.returncode == 3:
            raise RunError(p.stderr.strip().removeprefix(f"{PROGRAM}: "))
        if p.returncode != 0:
            raise RuntimeError(f"{PROGRAM} failed (exit {p.returncode}): {p.stderr.strip()}")
        out.seek(0)
        return json.load(out)


def _names(c):
    names = truth.Names()
    dec = lambda h: bytes.fromhex(h).split(b"\0")[0].decode(errors="replace")
    names.comm.update({int(k): dec(v) for k, v in c["comm"].items()})
    names.irq.update({int(k): dec(v) for k, v in c["irq"].items()})
    return names


def _calibration(run, c):
    cal = c["calibration"]
    ticks = {t["cpu"]: (t["p"] or None, t["score"], t["floor"]) for t in cal["ticks"]}
    return infer.calibration(run.hz, cal["switch_limit"], infer.BASES[cal["basis"]], ticks,
                             cal["hidden_limit"], cal["switch_gaps"])


def _named(agg, names):
    """hgmerge-core's aggregates in the reference's order (of their first gap), with names."""
    out = []
    for a in sorted(agg, key=lambda a: tuple(a["first"])):
        kind, ident = a["key"]
        if kind == _K_OUT:
            name = f"switched to {names.task(ident)}"
        elif kind == _K_KIND:
            name = truth.KINDS[ident]
        else:
            name = truth.component_name(_key(kind, ident), names)
        out.append((name, a))
    return out


def _disagreement(run, d, cal, periods, names):
    """One wrong gap as the reference's judge.gap_record writes it; @cal is hgmerge-core's
    raw calibration, @periods its tick period per CPU."""
    g = Gap(d["thread"], 0, d["g0"], d["g1"], d["cpu"], d["cpu"], "", d["next_thread"])
    g.inferred = d["inferred"]
    g.why = infer.why(d["rule"], run.hz, g, period=periods.get(d["cpu"]), hidden_limit=cal["hidden_limit"],
                      limit=cal["switch_limit"], basis=infer.BASES[cal["basis"]])
    out = d["out"] and (d["out"][0], "preempted" if d["out"][1] else "blocked", d["out"][2], d["out"][3])
    g.truth = {"comp": _comps(d["comp"]), "events": [tuple(e) for e in d["events"]],
               "n_events": d["n_events"], "class": d["class"], "kind": d["kind"],
               "primary": _key(*d["primary"]) if d["primary"] else None,
               "why": truth.why_switched(out) if d["why"] == truth.WHY_OUT else truth.WHY[d["why"]]}
    return judge.gap_record(run, g, names)


def _windows(run, c):
    wins = []
    for w in sorted(c["windows"], key=lambda w: w["seq"]):
        t0, t1, t2, flags, typ = w["rec"]
        rec = H.Record(t0, t1, t2, w["thread"], typ, flags, w["cpu"])
        win = Window(w["kind"], w["thread"], w["tid"], w["g0"], w["g1"], w["cpu"], rec)
        win.truth = {"comp": _comps(w["comp"]), "woken": w["woken"], "in": w["in"],
                     "ticks": [] if w["irq"] is None else [w["irq"]]}
        wins.append(win)
    return wins


def merge(run, stream):
    """The report's dictionary (without the run's provenance) and the kernel's side (kinfo-like)."""
    c = run_core(run, stream)
    names = _names(c)
    calib = _calibration(run, c)
    m = {a: {i: 0 for i in judge.INFERRED} for a in judge.ACTUAL}
    for a, row in c["confusion"].items():
        m[a] = dict(zip(judge.INFERRED, row))
    causes = judge.cause_rows(run, [(name, a["n"], a["sum"], a["median"]) for name, a in _named(c["causes"], names)])
    durations = judge.duration_rows(run, [(name, a["n"], a["median"], a["median_b"])
                                          for name, a in _named(c["interrupt_durations"], names)])
    cs = c["context_switch"]
    if cs["switches"]:
        confirmed = cs["confirmed"]
        cs = judge.context_switch(run, cs["switches"], cs["shortest"], cs["median"], confirmed,
                                  cs["handler_median"] if confirmed else None,
                                  cs["only_median"] if confirmed else None, cs["only_shortest"],
                                  cs["pre"], cs["ticked"], cs["resched"])
    else:
        cs = None
    ux = c["unexplainable"]
    why = {truth.WHY[1]: ux["window"], truth.WHY[2]: ux["lost"]}
    periods = {t["cpu"]: t["p"] for t in c["calibration"]["ticks"]}
    dis = [_disagreement(run, d, c["calibration"], periods, names)
           for d in sorted(c["disagreements"], key=lambda d: (d["cpu"], d["g0"]))]
    res = {"confusion": judge.confusion_table(m), "causes": causes, "classes": c["classes"], "context_switch": cs,
           "interrupt_durations": durations,
           "migrations": judge.migrations(c["migrations"]["inferred"], c["migrations"]["confirmed"],
                                          c["migrations"]["kernel"]),
           "unexplainable": {"gaps": ux["window"] + ux["lost"], "why": {k: v for k, v in why.items() if v}},
           "scored": c["scored"], "voluntary": c["voluntary"], "disagreements": dis, "calibration": calib}
    wins = _windows(run, c)
    res["latency"] = latency.decompose(run, wins, names)
    res["missed_deadlines"] = latency.misses(run, wins, names)
    threads = c["threads"]
    res["microstates"] = microstates.table(
        run, {k: t["handlers"] for k, t in enumerate(threads)},
        lambda t, acc: (threads[t["thread"]]["on_cpu"], threads[t["thread"]]["switches_in"]))
    stats = {int(cpu): dict(zip(("produced", "written", "refused", "overwritten", "read", "reader_fault"), v))
             for cpu, v in c["stats"].items()}
    kinfo = {"events": c["events"], "names": names, "stats": stats, "window": c["window"] and tuple(c["window"]),
             "meta": stream.meta, "gaps": c["gaps"], "warnings": c["warnings"], "backwards": c["backwards"]}
    return res, kinfo

"""report_text - the text report of `hourglass report`, from the merger's
report JSON (v2): every figure is the merger's, this only lays it out.

A run that hourglass -b stopped opens with the sample that passed the
threshold and what the kernel says of it, the gaps that led there after it
(what cyclictest -b and rtla -T users look at first). The three summary
lines come next, then the run and its warnings, then each section the
report has; a section the merger left null (nothing to
say: no scored gaps, no wake-ups...) is not printed at all. Times are
`t=S.ssssss s` on the report's one base, the clock trace-cmd and Perfetto
show on the exports; threads are hg-thread-K.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, TextIO

from . import analysis
from .learn import limits_text
from .report_json import Report, disagreement_counts, disagreement_of, lat_threads, loads_by_name, loads_head
from .report_json import migrations_text, pct, run_whole, section, t, thread_name
from .report_json import classes as report_classes, stages as report_stages


def render(rep: Report, out: TextIO, max_dis: int = 20) -> None:
    """Write @rep as text to @out, at most @max_dis disagreements and missed deadlines listed."""
    w = out.write
    if rep.get("breaktrace"):
        breaktrace(rep, w)
        w("\n")
    for line in rep.get("summary") or []:
        w(line + "\n")
    w("\n")
    _run(rep, w)
    if rep.get("ground_truth") == "none":
        # hourglass alone (record --no-kernel): what it inferred, and how far to trust it
        _inferred_alone(rep, w)
        return
    for part in (_gaps, _causes, _time_lost, _inference, _context_switch, _interrupts, _migrations,
                 _loads, _microstates, _latency):
        part(rep, w)
    _missed(rep, w, max_dis)
    _disagreements(rep, w, max_dis)
    _analysis(rep, w)


def _analysis(rep: Report, w: Writer) -> None:
    """The worst samples' automatic analysis last, where rtla timerlat -a prints its own."""
    lines = analysis.report_lines(rep)
    if lines:
        w("\nautomatic analysis of the worst samples:\n")
        for line in lines:
            w(f"  {line}\n" if line else "\n")


def _inferred_alone(rep: Report, w: Writer) -> None:
    """A run without ground truth: each class inferred, with the profile's precision and recall
    on the runs it was not fitted on (what to expect of those figures here), and the rules."""
    inf = section(rep, "inference") or {}
    got = inf.get("inferred_all") or {}
    prof = rep.get("profile") or {}
    held = (prof.get("held_out") or {}).get("classes") or {}
    built = (prof.get("held_out_builtin") or {}).get("classes") or {}
    n = sum(got.values())
    w(f"\nno kernel recording: {n} involuntary gaps inferred from hourglass alone, none judged\n")
    if prof:
        w(f"expected precision and recall: the profile's on {prof.get('learned_runs')} run(s) of this machine "
          "it was not fitted on (the built-in rules' beside them)\n")
    elif n:
        w("how far to trust them: learn a profile on runs of this machine with ground truth (hourglass "
          "learn), then hourglass report --profile (docs/profile.md)\n")
    w(f"  {'class':14s} {'inferred':>9s}" + (f" {'precision':>10s} {'recall':>8s}   built-in: {'precision':>9s}"
                                              f" {'recall':>8s}" if prof else "") + "\n")
    for c, k in got.items():
        if not k and not held.get(c):
            continue
        line = f"  {c:14s} {k:9d}"
        if prof:
            h, b = held.get(c) or {}, built.get(c) or {}
            line += (f" {pct(h.get('precision')):>10s} {pct(h.get('recall')):>8s}             "
                     f"{pct(b.get('precision')):>9s} {pct(b.get('recall')):>8s}")
        w(line + "\n")
    if prof:
        hp, hb = prof.get("held_out") or {}, prof.get("held_out_builtin") or {}
        if hp:
            w(f"  all gaps with a kernel cause: {pct(hp.get('accuracy'))} right with the profile, "
              f"{pct(hb.get('accuracy'))} with the built-in rules\n")
        else:
            w("  (no held-out figures: the profile was learned from one run)\n")
    _limits(rep, inf, w)


def _limits(rep: Report, inf: Dict[str, Any], w: Writer) -> None:
    """Where the inference's limits came from, and which rule decided how many gaps."""
    _calibration(inf, w)
    _profile_line(rep, w)
    rules = section(inf, "rules")
    if rules:
        w("decided by rule: " + ", ".join(f"{k} {v}" for k, v in rules.items()) + "\n")


Writer = Callable[[str], Any]


def _run(rep: Report, w: Writer) -> None:
    r = rep["run"]
    k = r.get("kernel") or {}
    w(f"hourglass report: {r.get('dir') or (rep.get('kernel_recording') or {}).get('path') or '?'}\n")
    w(f"run: {' '.join(r.get('command') or [])}\n")
    threads = r.get("threads") or []
    dur = r.get("duration_s")
    w(f"     Linux {k.get('release', '?')} (PREEMPT_RT {'yes' if k.get('preempt_rt') else 'no'}), "
      f"TSC {(r.get('tsc_hz') or 0) / 1e6:.3f} MHz, {len(threads)} thread{'s' if len(threads) != 1 else ''}"
      f"{f', {dur:.3f} s' if dur is not None else ''}"
      f"{'' if r.get('hourglass_complete', True) else ' (hourglass trace incomplete)'}\n")
    if r.get("t0") is not None and rep.get("ground_truth") != "none":
        w(f"     times are seconds from the start of the kernel's recording (as in trace-cmd report and "
          f"Perfetto); hourglass's own zero is at {t(r['t0'])}\n")
    for th in threads:
        w(f"  {th.get('name', '?'):14s} tid {th.get('tid', '?'):<7} {th.get('workload', '?'):14s} "
          f"{th.get('policy', '?')} {th.get('priority', '')}, timer {th.get('timer', '?')}"
          f"{', CPUs ' + str(th['affinity']) if th.get('affinity') else ''}"
          f"{', period ' + format(th['period_ms'], 'g') + ' ms' if th.get('period_ms') else ''}\n")
    kr = section(rep, "kernel_recording")
    if kr:
        lost = kr.get("lost_total")
        if lost is None:
            lost = sum((kr.get("lost") or {}).values())
        meta = kr.get("meta") or {}
        win = kr.get("window") or []
        how = ", ".join(x for x in (kr.get("recorder"), f"{meta['mode']} mode" if meta.get("mode") else None) if x)
        w(f"kernel: {kr.get('events', 0)} events from {kr.get('path', '?')}{' (' + how + ')' if how else ''}"
          f"{f', {t(win[0])} to {t(win[1])}' if len(win) == 2 else ''}, {lost} lost"
          f"{' (gaps that overlap a loss are unexplainable, not guessed)' if lost else ''}\n")
    for msg in rep.get("warnings") or []:
        w(f"warning: {msg}\n")


def breaktrace(rep: Report, w: Writer) -> None:
    """The run hourglass -b stopped: the sample, what the kernel says of it, the gaps before it."""
    b = rep.get("breaktrace")
    if not b:
        return
    hz = (rep.get("run") or {}).get("tsc_hz") or 0
    who = thread_name(rep, b.get("thread"))
    if b.get("kind") == "gap":
        w(f"stopped at -b {b['threshold_us']:.3f} us: {who} lost CPU {b.get('cpu', '?')} for "
          f"{b['value_us']:.3f} us, {t(b.get('t'))} to {t(b.get('t_end'))}\n")
        gaps = b.get("gaps") or []
        if not gaps:
            w("  the kernel: no gap of the merge falls in it (outside the kernel's recording?)\n")
        for g in gaps:
            w(f"  the kernel: {_gap_line(rep, g, hz)}\n")
        if b.get("before"):
            w(f"  the last gaps before it on CPU {b.get('cpu', '?')}:\n")
            for g in b["before"]:
                w(f"    {_gap_line(rep, g, hz)}\n")
    else:
        w(f"stopped at -b {b['threshold_us']:.3f} us: {who} woke {b['value_us']:.3f} us late at {t(b.get('t'))} "
          f"on CPU {b.get('cpu', '?')}\n")
        x = b.get("wakeup")
        if x:
            stages = ", ".join(f"{k} {v:.1f}" for k, v in (x.get("stages_us") or {}).items() if v is not None)
            w(f"  the kernel: {x['latency_us']:.1f} us from due to user space: {stages} us; largest stage "
              f"{x.get('largest_stage', '?')}{', blamed on ' + x['blame'] if x.get('blame') else ''}"
              f"{'' if x.get('complete', True) else ' (not every stage was recorded)'}\n")
        else:
            w("  the kernel: this wake-up is not among the merge's decomposed ones (outside the kernel's "
              "recording?)\n")


def _gap_line(rep: Report, g: Dict[str, Any], hz: float) -> str:
    """One merged gap (hgmerge --gaps-json) on a line: when, who, how long, what the kernel says."""
    us = (g["g1"] - g["g0"]) / hz * 1e6 if hz else 0.0
    comps = sorted(((v, k) for k, v in (g.get("components") or {}).items() if v), reverse=True)[:4]
    parts = ", ".join(f"{k} {v / hz * 1e6:.1f} us" for v, k in comps) if hz else ""
    return (f"{t(g.get('t'))} {thread_name(rep, g.get('thread'))}->{thread_name(rep, g.get('next_thread'))} "
            f"{us:.2f} us: {g.get('actual', '?')}, {g.get('cause') or g.get('why') or '-'}"
            f"{' (' + parts + ')' if parts else ''}; inferred {g.get('inferred', '?')}")


def _gaps(rep: Report, w: Writer) -> None:
    g = section(rep, "gaps")
    if not g or not g.get("total"):     # a latency run's threads sleep: no gap to tell of
        return
    n = g.get("total", 0)
    w(f"\ngaps: {n} ({g.get('voluntary', 0)} voluntary, {g.get('scored', 0)} scored, "
      f"{g.get('unexplainable', 0)} unexplainable)\n")
    cl = g.get("classes") or {}
    order = report_classes(rep)
    for c in order + sorted(set(cl) - set(order)):
        if cl.get(c):
            w(f"  {c:14s} {cl[c]:8d}  {cl[c] / max(n, 1) * 100:5.1f}%\n")
    why = {k: v for k, v in (g.get("unexplainable_why") or {}).items() if v}
    if why:
        w("  unexplainable: " + "; ".join(f"{v} {k}" for k, v in why.items()) + "\n")
    st = section(rep, "steal")
    if st and st.get("hidden_gaps"):
        w(f"  hidden: {st['hidden_gaps']} gaps, {st.get('hidden_ms', 0):.3f} ms of {st.get('run_ms', 0):.1f} ms "
          f"(steal {pct(st.get('share'))} of {run_whole(st)})\n")


def _causes(rep: Report, w: Writer) -> None:
    causes = section(rep, "causes")
    if not causes:
        return
    w("\nactual causes, by time lost:\n")
    w(f"  {'cause':40s} {'gaps':>7s} {'total ms':>10s} {'median us':>10s}\n")
    for c in causes[:15]:
        w(f"  {c['cause'][:40]:40s} {c['gaps']:7d} {c['total_ms']:10.3f} {_num(c.get('median_us'), 10, 3)}\n")


def _time_lost(rep: Report, w: Writer) -> None:
    tl = section(rep, "time_lost")
    if not tl:
        return
    w("\ntime lost, each component charged its own time over every gap:\n")
    w(f"  {'kind':14s} {'ms':>10s} {'gaps':>7s}  what\n")
    for x in tl[:15]:
        w(f"  {x.get('kind', ''):14s} {x['ms']:10.3f} {x.get('gaps', 0):7d}  {x['what']}\n")


def _inference(rep: Report, w: Writer) -> None:
    inf = section(rep, "inference")
    if not inf:
        return
    conf = inf["confusion"]
    cols: List[str] = conf["inferred"]
    cls = inf.get("classes") or {}
    width = max(14, max((len(c) for c in cols), default=0) + 2)
    w("\ninferred (columns, from hourglass alone) against actual (rows, from the kernel):\n")
    w(f"  {'':14s}" + "".join(f"{c:>{width}s}" for c in cols) + f"{'recall':>10s}\n")
    for a, row in zip(conf["actual"], conf["matrix"]):
        if not sum(row):
            continue
        w(f"  {a:14s}" + "".join(f"{v:{width}d}" for v in row) + f"{pct(cls.get(a, {}).get('recall')):>10s}\n")
    w(f"  {'precision':14s}" + "".join(f"{pct(cls.get(c, {}).get('precision')):>{width}s}" for c in cols) + "\n")
    h, a = inf.get("headline") or {}, inf.get("all") or {}
    parts = []
    if h:
        parts.append(f"{h['correct']} of {h['gaps']} gaps with a kernel cause ({pct(h.get('accuracy'))})")
    if a:
        parts.append(f"{a['correct']} of {a['gaps']} with the hidden ones ({pct(a.get('accuracy'))})")
    if inf.get("macro_f1") is not None:
        parts.append(f"macro F1 {inf['macro_f1']:.2f}")
    w("accuracy: " + "; ".join(parts) + "; other gaps (kernel activity of no known class) count as wrong\n")
    _limits(rep, inf, w)


def _calibration(inf: Dict[str, Any], w: Writer) -> None:
    cal = section(inf, "calibration")
    if cal:
        bits = []
        if cal.get("switch_limit_us") is not None:
            bits.append(f"switch/interrupt limit {cal['switch_limit_us']:.1f} us"
                        f"{' (' + cal['switch_limit_basis'] + ')' if cal.get('switch_limit_basis') else ''}")
        ticks = ", ".join(f"CPU {c}: {v['period_ms']:.3f} ms" + (f" (gaps over {v['floor_us']:g} us)"
                                                                 if v.get("floor_us") else "")
                          + (" (found past hidden ticks, up to {} periods apart)".format(v["periods_apart"])
                             if (v.get("periods_apart") or 1) > 1 else "")
                          for c, v in (cal.get("tick") or {}).items() if v.get("period_ms"))
        if ticks:
            bits.append("tick " + ticks)
        if cal.get("hidden_limit_us"):
            bits.append(f"below {cal['hidden_limit_us']:.2f} us hidden "
                        f"({cal.get('hidden_limit_basis') or 'half the cheapest tick'})")
        if cal.get("hrtick"):
            slice_ms = cal.get("slice_ms")
            bits.append("the scheduler's own timer (HRTICK) beside the tick: "
                        + (f"within {slice_ms:g} ms of a switch" if slice_ms else "slice unknown, anywhere")
                        + (f", below {cal['hidden_limit_in_slice_us']:.2f} us hidden there"
                           if cal.get("hidden_limit_in_slice_us") else "")
                        + (f", {cal['hrtick_gaps']} gaps" if cal.get("hrtick_gaps") is not None else ""))
        if bits:
            w("calibrated on this run: " + "; ".join(bits) + "\n")
        for note in cal.get("notes") or []:
            w(f"  note: {note}\n")


def _profile_line(rep: Report, w: Writer) -> None:
    prof = rep.get("profile")
    if prof:
        lim = prof.get("limits_us") or {}
        held, built = prof.get("held_out") or {}, prof.get("held_out_builtin") or {}
        w(f"{'limits and model' if prof.get('model') else 'limits'} from the profile {prof.get('path')} (hourglass learn, {prof.get('learned_runs')} run(s) of "
          f"{(prof.get('machine') or {}).get('kernel')}): {limits_text(lim)}; "
          + (f"on runs it was not fitted on {held.get('correct')} of {held.get('gaps')} right, the built-in "
             f"rules {built.get('correct')}" if held else "no held-out figures (learned from one run)")
          + (f"; learned on another machine: {'; '.join(prof['mismatch'])}" if prof.get("mismatch") else "")
          + "\n")
        if prof.get("model"):
            w("the profile's model decided every gap it names (rule model; --explain gives each one's path):\n"
              + "".join(f"  {line}\n" for line in prof["model"]))


def _context_switch(rep: Report, w: Writer) -> None:
    cs = section(rep, "context_switch")
    if not cs:
        return
    w(f"\ncontext switch between hourglass threads (paper 5.1): {cs['switches']} switches, "
      f"inferred shortest {_us(cs.get('inferred_shortest_us'))}, median {_us(cs.get('inferred_median_us'))};\n"
      f"  kernel: {cs.get('kernel_confirmed', 0)} confirmed, handlers inside them median "
      f"{_us(cs.get('kernel_handler_median_us'))}, the switch alone median "
      f"{_us(cs.get('kernel_switch_only_median_us'))} (shortest {_us(cs.get('kernel_switch_only_shortest_us'))})\n")
    p = cs.get("preemptions_between_cpu_bound")
    if p:
        w(f"  'a preemption between threads that never yield implies a clock interrupt' (paper 4): "
          f"{cs.get('with_tick_in_gap', 0)} of {p} had the tick in the gap, {cs.get('with_resched_ipi', 0)} a "
          f"reschedule IPI\n")


def _interrupts(rep: Report, w: Writer) -> None:
    ints = section(rep, "interrupt_durations")
    if not ints:
        return
    w("\ninterrupt durations, inferred (the gap) against the handlers' own time:\n")
    w(f"  {'source':32s} {'gaps':>7s} {'gap median us':>14s} {'handler median us':>18s}\n")
    for d in ints[:10]:
        w(f"  {d['source'][:32]:32s} {d['gaps']:7d} {_num(d.get('inferred_median_us'), 14, 2)} "
          f"{_num(d.get('handler_median_us'), 18, 2)}\n")


def _migrations(rep: Report, w: Writer) -> None:
    line = migrations_text(rep)
    if line:
        w(f"\n{line}\n")


def _loads(rep: Report, w: Writer) -> None:
    """The loads that ran beside hourglass (record --load, or named with --label): each by name,
    with what it caused and took in hourglass's gaps ('-': a figure its labels' do not add up to)."""
    loads = loads_by_name(rep)
    if not loads:
        return
    w(f"\n{loads_head(rep)}\n")
    if not (section(rep, "gaps") or {}).get("total"):
        return
    w(f"  {'load':20s} {'gaps caused':>11s} {'caused ms':>10s} {'median us':>10s} {'gaps in':>8s} "
      f"{'charged ms':>11s}\n")
    for ld in loads:
        w(f"  {ld['label'][:20]:20s} {ld['gaps_caused']:11d} {ld['caused_ms']:10.3f} "
          f"{_num(ld['caused_median_us'] if ld['gaps_caused'] else None, 10, 1)} "
          f"{'-' if ld['gaps_touched'] is None else ld['gaps_touched']:>8} {ld['charged_ms']:11.3f}\n")


def _microstates(rep: Report, w: Writer) -> None:
    ms = section(rep, "microstates")
    if not ms:
        return
    w("\nCPU time per thread, five ways over the same window (ms; % against the kernel's switches):\n")
    w(f"  {'thread':14s} {'kernel':>10s} {'handlers':>9s} {'intervals':>17s} {'cputime':>17s} "
      f"{'schedstat':>17s} {'rusage':>17s}\n")

    def way(m: Dict[str, Any], k: str) -> str:
        v = m.get(f"{k}_vs_kernel")
        return f"{(m.get(k + '_ns') or 0) / 1e6:9.3f}" + f"{'' if v is None else f' ({v * 100:+.1f}%)':>8s}"
    for m in ms:
        w(f"  {m.get('name') or thread_name(rep, m.get('thread')):14s} {(m.get('kernel_ns') or 0) / 1e6:10.3f} "
          f"{(m.get('handlers_ns') or 0) / 1e6:9.3f} {way(m, 'intervals')} {way(m, 'cputime')} "
          f"{way(m, 'schedstat')} {way(m, 'rusage')}\n")


def _latency(rep: Report, w: Writer) -> None:
    lat = section(rep, "latency")
    threads = lat_threads(rep)
    if not lat or not threads:
        return
    w("\nwake-up latency, decomposed (intended expiry -> timer irq -> waking -> switch -> user), us:\n")
    for k, s in threads:
        w(f"  {s.get('name') or thread_name(rep, k)}: {s.get('wakeups', 0)} wake-ups, "
          f"{s.get('decomposed', 0)} decomposed\n")
        w(f"    {'stage':8s} {'min':>9s} {'median':>9s} {'avg':>9s} {'p99':>9s} {'max':>9s}\n")
        for st in report_stages(rep) + ["latency"]:
            v = s.get(st)
            if not v:
                continue
            w(f"    {'total' if st == 'latency' else st:8s}" +
              "".join(f" {_num(v.get(f), 9, 1)}" for f in ("min_us", "median_us", "avg_us", "p99_us", "max_us")) +
              "\n")
        _histogram(s.get("hist"), w)
    wst = lat.get("worst")
    if wst:
        stages = ", ".join(f"{k} {v:.1f}" for k, v in (wst.get("stages_us") or {}).items() if v is not None)
        w(f"  worst: {wst['latency_us']:.1f} us at {t(wst.get('t'))} on CPU {wst.get('cpu', '?')} "
          f"({thread_name(rep, wst.get('thread'))}): {stages} us; largest stage {wst.get('largest_stage', '?')}"
          f"{', blamed on ' + wst['blame'] if wst.get('blame') else ''}"
          f"{'' if wst.get('complete', True) else ' (not every stage was recorded)'}\n")


def _histogram(h: Any, w: Writer) -> None:
    """A text histogram of the whole latency, as cyclictest -h and rtla timerlat hist print one:
    the buckets that hold wake-ups, each with its range in us, its count and a bar."""
    if not isinstance(h, dict):
        return
    edges, counts = h.get("edges_us") or [], h.get("counts") or []
    if len(edges) != len(counts) + 1 or not any(counts):
        return
    top = max(counts)
    w(f"    {'from us':>9s} {'to us':>9s} {'wake-ups':>9s}\n")
    for lo, hi, n in zip(edges, edges[1:], counts):
        if n:
            bar = "#" * max(1, round(30 * n / top))
            w(f"    {_num(lo, 9, 1)} {_num(hi, 9, 1)} {n:9d} {bar}\n")


def _missed(rep: Report, w: Writer, max_dis: int) -> None:
    md = section(rep, "missed_deadlines")
    if not md or not md.get("count"):
        return
    listed = md.get("listed") or []
    w(f"\nmissed deadlines: {md['count']}" + (f" (first {max_dis})" if len(listed) > max_dis else "") + "\n")
    for m in listed[:max_dis]:
        inst = ", ".join(f"{i['what']} {i['ms']:.2f} ms" for i in m.get("instead") or []) or \
            "nothing the kernel recorded"
        w(f"  {t(m.get('t'))} {thread_name(rep, m.get('thread'))} CPU {m.get('cpu', '?')}: ran "
          f"{m.get('thread_ran_ms', 0):.2f} of {m.get('period_ms', 0):.2f} ms; instead: {inst}\n")


def _disagreements(rep: Report, w: Writer, max_dis: int) -> None:
    dis = section(rep, "disagreements")
    if not dis or section(rep, "inference") is None:
        return
    listed = dis.get("listed") or []
    n = dis.get("count", len(listed))
    dc = disagreement_counts(rep)
    w(f"\ndisagreements: {n}" + (f" (first {max_dis})" if n > max_dis else "")
      + f"; {dc['explained']} wrong inference{'s' if dc['explained'] != 1 else ''} on gaps the kernel gives a cause, "
      f"{dc['hidden']} hidden gap{'s' if dc['hidden'] != 1 else ''} inferred as something else\n")
    for d in listed[:max_dis]:
        w(f"  {t(d.get('t'))} CPU {d.get('cpu', '?')} {thread_name(rep, d.get('thread'))}->"
          f"{thread_name(rep, d.get('next_thread'))} {d.get('length_us', 0):.2f} us: inferred {d['inferred']}"
          f"{' (' + d['inferred_why'] + ')' if d.get('inferred_why') else ''}; actual {d['actual']}"
          f"{' (' + (d.get('cause') or d['primary']) + ')' if d.get('cause') or d.get('primary') else ''}"
          f"{': ' + d['actual_why'] if d.get('actual_why') else ''}\n")
        # its composition: what the kernel says each part of it went to (report 2.6's parts)
        parts = sorted(((v, k) for k, v in (d.get("components_us") or {}).items() if v), reverse=True)
        if parts:
            w("      made of: " + ", ".join(f"{'nothing recorded' if k == 'self' else k} {v:.1f} us"
                                         for v, k in parts) + "\n")
        if d.get("events"):
            w("      " + "; ".join(d["events"]) + "\n")


def _us(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.2f} us"


def _num(v: Optional[float], width: int, prec: int) -> str:
    return f"{'-':>{width}s}" if v is None else f"{v:{width}.{prec}f}"


def explain_head(rep: Report, out: TextIO) -> None:
    """What --explain prints before the gaps: which run, and its command."""
    r = rep.get("run") or {}
    out.write(f"hourglass report: {r.get('dir') or (rep.get('kernel_recording') or {}).get('path') or '?'}\n"
              f"run: {' '.join(r.get('command') or [])}\n")


def explain(rep: Report, gaps: List[Dict[str, Any]], out: TextIO, when: str) -> None:
    """hourglass report --explain: the rule that decided each gap @when selects ('all', a time T
    in seconds on the report's clock: the gaps over it, else the nearest on each CPU, or T1:T2),
    in its own words with the limits it used, and the kernel's verdict beside it when known:
    what ran in the gap (its components) and, for a wrong one, the kernel's events in it as the
    disagreements list them."""
    w = out.write
    invol = [g for g in gaps if not g.get("vol")]
    hz = (rep.get("run") or {}).get("tsc_hz") or 0
    chosen = _select(invol, when, 1 / hz if hz else 0.0)
    truth = rep.get("ground_truth") != "none"
    listed = (section(rep, "disagreements") or {}).get("listed") or []
    w(f"\nexplained: {len(chosen)} of {len(invol)} involuntary gaps ({'every one' if when == 'all' else when}); "
      "each the rule that decided it (docs/merge.md, \"The inferences\")"
      + (", then what the kernel says" if truth else "") + "\n")
    for g in chosen:
        us = (g["g1"] - g["g0"]) / hz * 1e6 if hz else 0.0
        line = (f"  {t(g.get('t'))} CPU {g.get('cpu')} {thread_name(rep, g.get('thread'))}->"
                f"{thread_name(rep, g.get('next_thread'))} {us:.2f} us: {g.get('inferred')}, "
                f"{g.get('why_inferred') or '-'}")
        if truth and g.get("actual") not in (None, "unexplainable"):
            ok = g["actual"] == g.get("inferred")
            line += (f"; kernel: {g['actual']}, {g.get('cause') or g.get('why') or '-'}"
                     f" {'(right)' if ok else '(WRONG)'}")
        elif truth:
            line += f"; kernel: unexplainable ({g.get('why') or '-'})"
        w(line + "\n")
        if not truth or not hz:
            continue
        comps = sorted(((v, k) for k, v in (g.get("components") or {}).items() if v), reverse=True)
        if comps:
            w("      in it: " + ", ".join(f"{k} {v / hz * 1e6:.1f} us" for v, k in comps) + "\n")
        i = disagreement_of(rep, int(g.get("thread") or 0), float(g["t"]), float(g["t"]) + us / 1e6) \
            if g.get("actual") != g.get("inferred") else None
        if i is not None and listed[i].get("events"):
            w("      events: " + "; ".join(listed[i]["events"]) + "\n")


def _select(gaps: List[Dict[str, Any]], when: str, spc: float) -> List[Dict[str, Any]]:
    """The gaps @when names (explain's), @spc seconds a TSC cycle."""
    def end(g: Dict[str, Any]) -> float:
        return float(g["t"]) + float(g["g1"] - g["g0"]) * spc
    if when == "all":
        return gaps
    lo_s, _, hi_s = when.partition(":")
    lo = float(lo_s)
    if hi_s:
        hi = float(hi_s)
        return [g for g in gaps if g["t"] <= hi and end(g) >= lo]
    over = [g for g in gaps if g["t"] <= lo <= end(g)]
    if over:
        return over
    nearest: Dict[int, Dict[str, Any]] = {}
    for g in gaps:
        d = min(abs(g["t"] - lo), abs(end(g) - lo))
        k = g.get("cpu", 0)
        if k not in nearest or d < min(abs(nearest[k]["t"] - lo), abs(end(nearest[k]) - lo)):
            nearest[k] = g
    return sorted(nearest.values(), key=lambda g: g["t"])

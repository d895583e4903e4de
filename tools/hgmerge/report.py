"""report - merge a run directory and print what the kernel says about every
gap and how the user-space inferences fared. Text for people, JSON for tools.

    python3 -m hgmerge DIR [--json FILE] [--kernel FILE] [--disagreements N]
"""
import argparse
import gc
import json
import os
import sys
import time

from hgtrace_file import HgtFormatError

from . import core, infer, judge, latency, load, microstates, truth

REPORT_VERSION = 1


ENGINES = ("auto", "core", "python")


def engine_of(engine=None):
    """Which engine merges: hgmerge-core (C) when built, unless HG_MERGE_ENGINE=python says otherwise."""
    engine = engine or os.environ.get("HG_MERGE_ENGINE") or "auto"
    if engine not in ENGINES:
        raise load.RunError(f"HG_MERGE_ENGINE={engine}: not one of {', '.join(ENGINES)}")
    if engine == "auto":
        engine = "core" if core.program() else "python"
    return engine


def merge(dir_, kernel=None, engine=None):
    """Everything the report needs, as one dictionary."""
    if engine_of(engine) == "python":
        return merge_run(dir_, kernel)[1]
    t = time.monotonic()
    run = load.load_run(dir_, kernel, records=False)
    n_load = len(run.warnings)          # hourglass's own; the kernel file's come next
    stream = load.kernel_stream(run)
    try:
        res, kinfo = core.merge(run, stream)
    finally:
        stream.f.close()
    run.warnings[n_load:n_load] = kinfo["warnings"]
    if kinfo["backwards"]:
        run.warnings.append(f"{run.kernel_path}: {kinfo['backwards']} kernel events went back in time on their CPU")
    return _finish(dir_, run, res, kinfo, time.monotonic() - t, "core", kinfo["gaps"])


def engines_differ(dir_, kernel=None):
    """Merge @dir_ with both engines; the report keys whose contents differ (none, if all is well),
    and the seconds each took."""
    ref = merge(dir_, kernel, engine="python")
    fast = merge(dir_, kernel, engine="core")
    secs = {"python": ref.pop("merge_seconds"), "core": fast.pop("merge_seconds")}
    ref.pop("merge_engine"), fast.pop("merge_engine")
    ref, fast = (json.loads(json.dumps(r, default=str)) for r in (ref, fast))
    return sorted(k for k in ref.keys() | fast.keys() if ref.get(k) != fast.get(k)), secs


def merge_run(dir_, kernel=None):
    """The merged run (load.Run, its gaps judged), the report's dictionary, and
    what the sweep learnt (names, switches...)."""
    t = time.monotonic()
    # millions of small objects that live until the end: the cyclic
    # collector would walk them again and again for nothing
    gc.disable()
    try:
        return _merge(dir_, kernel, t)
    finally:
        gc.enable()


def _merge(dir_, kernel, t):
    run = load.load_run(dir_, kernel)
    stream = load.kernel_stream(run)
    calib = infer.infer(run)        # hourglass's data only: before the kernel's is read
    wins = latency.windows(run)
    try:
        kinfo = truth.sweep(run, stream, wins)
    except HgtFormatError as e:
        raise load.RunError(str(e))
    t_sweep = time.monotonic() - t
    res = judge.judge(run, kinfo, calib)
    res["latency"] = latency.decompose(run, wins, kinfo["names"])
    res["missed_deadlines"] = latency.misses(run, wins, kinfo["names"])
    res["microstates"] = microstates.compare(run, kinfo)
    return run, _finish(dir_, run, res, kinfo, t_sweep, "python", len(run.gaps)), kinfo


def _finish(dir_, run, res, kinfo, seconds, engine, ngaps):
    """The run's provenance and the kernel recording's figures, into @res."""
    info = run.hg.info
    res["report_version"] = REPORT_VERSION
    res["run"] = {"dir": os.path.abspath(dir_), "command": info.get("command"),
                  "kernel": info.get("kernel"), "tsc_hz": run.hz, "duration_ns": info.get("duration_ns"),
                  "threads": [{k: t.get(k) for k in ("thread", "tid", "workload", "policy", "priority",
                                                     "timer", "affinity")} for t in run.threads],
                  "hourglass_complete": run.hg.complete}
    res["kernel_recording"] = {"path": run.kernel_path, "events": kinfo["events"],
                               "window": kinfo["window"], "lost": {
                                   str(c): st.get("refused", 0) + st.get("overwritten", 0)
                                   for c, st in kinfo["stats"].items()},
                               "meta": {k: kinfo["meta"].get(k) for k in ("kernel", "tsc_khz", "mode")}}
    res["gaps_total"] = ngaps
    res["warnings"] = run.warnings
    res["merge_seconds"] = seconds
    res["merge_engine"] = engine
    return res


def _pct(x):
    return "-" if x is None else f"{x * 100:.1f}%"


def text(res, out, max_dis=20):
    w = out.write
    r = res["run"]
    k = r["kernel"] or {}
    w(f"hourglass report: {r['dir']}\n")
    w(f"run: {' '.join(r['command'] or [])}\n")
    w(f"     Linux {k.get('release', '?')} (PREEMPT_RT {'yes' if k.get('preempt_rt') else 'no'}), "
      f"TSC {r['tsc_hz'] / 1e6:.3f} MHz, {len(r['threads'])} threads, {r['duration_ns'] / 1e9:.3f} s\n")
    kr = res["kernel_recording"]
    lost = sum(kr["lost"].values())
    w(f"kernel: {kr['events']} events from {kr['path']}, {lost} lost"
      f"{' (gaps that overlap a loss are unexplainable, not guessed)' if lost else ''}\n")
    for msg in res["warnings"]:
        w(f"warning: {msg}\n")
    cl = res["classes"]
    n = res["gaps_total"]
    w(f"\ngaps: {n} ({res['voluntary']} voluntary, {res['scored']} scored, "
      f"{res['unexplainable']['gaps']} unexplainable)\n")
    for c in ("switch_hg", "switch_other", "timer", "interrupt", "hidden", "other", "unexplainable"):
        if cl.get(c):
            w(f"  {c:14s} {cl[c]:8d}  {cl[c] / n * 100:5.1f}%\n")
    w("\nactual causes, by time lost:\n")
    w(f"  {'cause':40s} {'gaps':>7s} {'total ms':>10s} {'median us':>10s}\n")
    for c in res["causes"][:15]:
        w(f"  {c['cause'][:40]:40s} {c['gaps']:7d} {c['total_ms']:10.3f} {c['median_us']:10.3f}\n")

    conf = res["confusion"]
    cols = judge.INFERRED
    w("\ninferred (columns, from hourglass alone) against actual (rows, from the kernel):\n")
    w(f"  {'':14s}" + "".join(f"{c:>14s}" for c in cols) + f"{'recall':>10s}\n")
    for a in judge.ACTUAL:
        row = conf["matrix"][a]
        if not conf["rows"][a]["n"]:
            continue
        w(f"  {a:14s}" + "".join(f"{row[c]:14d}" for c in cols) + f"{_pct(conf['rows'][a]['recall']):>10s}\n")
    w(f"  {'precision':14s}" + "".join(f"{_pct(conf['cols'][c]['precision']):>14s}" for c in cols) + "\n")
    w(f"accuracy: {conf['correct']} of {conf['total']} gaps ({_pct(conf['accuracy'])}); "
      "other gaps (kernel activity of no known class) count as wrong\n")
    cal = res["calibration"]
    ticks = ", ".join(f"CPU {c}: {v['period_ms']:.3f} ms" + (f" (gaps over {v['floor_us']:g} us)" if v["floor_us"] else "")
                      for c, v in cal["tick"].items() if v["period_ms"])
    hid = cal.get("hidden_limit_us") or 0
    w(f"calibrated on this run: switch/interrupt limit {cal['switch_limit_us']:.1f} us "
      f"({cal['switch_limit_basis']}); tick {ticks or 'not found'}; "
      + (f"below {hid:.2f} us hidden (half the cheapest tick)\n" if hid else "no hidden floor (no tick)\n"))

    cs = res["context_switch"]
    if cs:
        w(f"\ncontext switch between hourglass threads (paper 5.1): {cs['switches']} switches, "
          f"inferred shortest {cs['inferred_shortest_us']:.2f} us, median {cs['inferred_median_us']:.2f} us;\n"
          f"  kernel: {cs['kernel_confirmed']} confirmed, handlers inside them median "
          f"{cs['kernel_handler_median_us']:.2f} us, the switch alone median "
          f"{cs['kernel_switch_only_median_us']:.2f} us (shortest {cs['kernel_switch_only_shortest_us']:.2f} us)\n")
        if cs.get("preemptions_between_cpu_bound"):
            p = cs["preemptions_between_cpu_bound"]
            w(f"  'a preemption between threads that never yield implies a clock interrupt' (paper 4): "
              f"{cs['with_tick_in_gap']} of {p} had the tick in the gap, {cs['with_resched_ipi']} a "
              f"reschedule IPI\n")
    if res["interrupt_durations"]:
        w("\ninterrupt durations, inferred (the gap) against the handlers' own time:\n")
        w(f"  {'source':32s} {'gaps':>7s} {'gap median us':>14s} {'handler median us':>18s}\n")
        for d in res["interrupt_durations"][:10]:
            w(f"  {d['source'][:32]:32s} {d['gaps']:7d} {d['inferred_median_us']:14.2f} "
              f"{d['handler_median_us']:18.2f}\n")
    m = res["migrations"]
    w(f"\nmigrations: {m['inferred']} inferred from interval CPUs, {m['confirmed']} confirmed by the "
      f"kernel ({m['kernel_migrations_of_hourglass_threads']} kernel migrations of hourglass threads)\n")
    if res["unexplainable"]["gaps"]:
        w("unexplainable gaps: " + "; ".join(f"{v} {k}" for k, v in res["unexplainable"]["why"].items()) + "\n")
    ms = res["microstates"]
    if ms:
        w("\nCPU time per thread, five ways over the same window (ms; % against the kernel's switches):\n")
        w(f"  {'thread':>6s} {'kernel':>10s} {'handlers':>9s} {'intervals':>17s} {'cputime':>17s} "
          f"{'schedstat':>17s} {'rusage':>17s}\n")
        pct = lambda v: "" if v is None else f" ({v * 100:+.1f}%)"
        for m in ms:
            w(f"  {m['thread']:6d} {m['kernel_ns'] / 1e6:10.3f} {m['handlers_ns'] / 1e6:9.3f} "
              f"{m['intervals_ns'] / 1e6:9.3f}{pct(m['intervals_vs_kernel']):>8s} "
              f"{m['cputime_ns'] / 1e6:9.3f}{pct(m['cputime_vs_kernel']):>8s} "
              f"{m['schedstat_ns'] / 1e6:9.3f}{pct(m['schedstat_vs_kernel']):>8s} "
              f"{m['rusage_ns'] / 1e6:9.3f}{pct(m['rusage_vs_kernel']):>8s}\n")
    lat = res["latency"]
    if lat["threads"]:
        w("\nwake-up latency, decomposed (intended expiry -> timer irq -> waking -> switch -> user):\n")
        w(f"  {'thread':>6s} {'wakeups':>8s} {'timer':>14s} {'irq':>14s} {'sched':>14s} {'return':>14s} "
          f"{'total':>14s}   (median/max us)\n")
        for k, s in sorted(lat["threads"].items()):
            cell = lambda st: (f"{s[st]['median_us']:.1f}/{s[st]['max_us']:.1f}" if st in s else "-")
            w(f"  {k:6d} {s['wakeups']:8d} {cell('timer'):>14s} {cell('irq'):>14s} {cell('sched'):>14s} "
              f"{cell('return'):>14s} {s['latency']['median_us']:.1f}/{s['latency']['max_us']:.1f}\n")
        wst = lat["worst"]
        st = ", ".join(f"{k} {v:.1f}" for k, v in wst["stages_us"].items() if v is not None)
        w(f"  worst: {wst['latency_us']:.1f} us at {wst['t_ms']:.3f} ms on CPU {wst['cpu']} (thread "
          f"{wst['thread']}): {st} us; largest stage {wst['largest_stage']}"
          f"{', during it ' + wst['blame'] if wst['blame'] else ''}\n")
    md = res["missed_deadlines"]
    if md:
        w(f"\nmissed deadlines: {len(md)}\n")
        for m in md[:max_dis]:
            inst = ", ".join(f"{i['what']} {i['ms']:.2f} ms" for i in m["instead"]) or "nothing the kernel recorded"
            w(f"  {m['t_ms']:.3f} ms thread {m['thread']} CPU {m['cpu']}: ran {m['thread_ran_ms']:.2f} of "
              f"{m['period_ms']:.2f} ms; instead: {inst}\n")
    dis = res["disagreements"]
    w(f"\ndisagreements: {len(dis)}" + (f" (first {max_dis})" if len(dis) > max_dis else "") + "\n")
    for d in dis[:max_dis]:
        w(f"  {d['t_ms']:.6f} ms CPU {d['cpu']} thread {d['thread']}->{d['next_thread']} "
          f"{d['length_us']:.2f} us: inferred {d['inferred']} ({d['inferred_why']}); actual {d['actual']}"
          f"{' (' + d['primary'] + ')' if d['primary'] else ''}{': ' + d['actual_why'] if d['actual_why'] else ''}\n")
        if d["events"]:
            w("      " + "; ".join(d["events"]) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="hourglass report",
                                 description="Merge an hourglass run with the kernel's recording: explain "
                                             "every gap and score the user-space inferences.",
                                 epilog="The merge runs in build/hgmerge-core (C) when built, else in the "
                                        "Python reference; HG_MERGE_ENGINE=core|python|auto chooses. With the "
                                        "reference, a progress line on a terminal shows how far the sweep is "
                                        "(HG_PROGRESS=1 forces it, HG_PROGRESS=0 silences it). Exit status: 0 "
                                        "reported, 2 bad usage, 3 bad input (named: truncated or corrupt "
                                        "file, unfinished run, another clock). See docs/merge.md.")
    ap.add_argument("dir", help="run directory: hourglass.hgl and kernel.hgt")
    ap.add_argument("--kernel", metavar="FILE",
                    help="the ground truth: an hgtrace recording (.hgt) or a trace-cmd trace.dat "
                         "recorded with -C x86-tsc (default DIR/kernel.hgt, else DIR/trace.dat)")
    ap.add_argument("--json", metavar="FILE", help="also write the report as JSON ('-' for stdout only)")
    ap.add_argument("--disagreements", type=int, default=20, metavar="N",
                    help="disagreements listed in the text (default 20; all are in the JSON)")
    a = ap.parse_args(argv)
    try:
        res = merge(a.dir, a.kernel)
    except load.RunError as e:
        print(f"hourglass report: {e}", file=sys.stderr)
        return 3
    if a.json == "-":
        json.dump(res, sys.stdout, indent=1, default=str)
        sys.stdout.write("\n")
        return 0
    try:
        text(res, sys.stdout, a.disagreements)
        sys.stdout.flush()
    except BrokenPipeError:         # `hourglass report DIR | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1, default=str)
    return 0

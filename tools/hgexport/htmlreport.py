"""htmlreport - one self-contained page (no script, no external file): for
each run its provenance, the confusion matrix, the causes, the execution
map (the paper's Fig. 3, gaps coloured by their actual cause and wrong
inferences marked), context-switch times (Fig. 4), wake-up latency
histogram, CDF and decomposition, and the lower and upper supply-bound
functions of each thread (seed 001). Several runs go side by side at the
top (for example 6.1 against 6.1 PREEMPT_RT). The charts can also be
written as SVG files, and as PNG files through rsvg-convert."""
import bisect
import os
import subprocess

from hgmerge import judge, report

from . import svg
from .svg import COLORS, esc

MAP_MS = 40.0           # the execution map shows this much of the run


def _table(head, rows):
    out = ["<table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr>"]
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>")
    return "".join(out) + "</table>"


def _pct(x):
    return "-" if x is None else f"{x * 100:.1f}%"


def supply_bounds(ivs, hz, t_start, t_end, points=28, ds=None):
    """Lower and upper supply-bound functions: the least and most CPU time a
    thread received in any window of length d, for d on a log grid (ms)."""
    if not ivs or t_end <= t_start:
        return [], []
    starts = [r.t0 for r in ivs]
    ends = [r.t1 for r in ivs]
    cum = [0]
    for r in ivs:
        cum.append(cum[-1] + r.t1 - r.t0)

    def supply(a, b):
        """CPU received in [a, b]."""
        def upto(t):
            i = bisect.bisect_right(starts, t)
            if i == 0:
                return 0
            r = ivs[i - 1]
            return cum[i - 1] + min(t, r.t1) - r.t0
        return upto(b) - upto(a)
    span = t_end - t_start
    step = max(1, len(ivs) // 3000)
    lo_d, hi_d = 10e-6 * hz, span / 2
    lower, upper = [], []
    grid = ds or [lo_d * (hi_d / lo_d) ** (k / (points - 1)) if hi_d > lo_d else lo_d for k in range(points)]
    for d in grid:
        # the worst windows start where the thread stops, the best where it starts
        cand_lo = [e for e in ends[::step] if e + d <= t_end] or [t_start]
        cand_hi = [s for s in starts[::step] if s + d <= t_end] or [t_start]
        lower.append((d / hz * 1e3, min(supply(a, a + d) for a in cand_lo) / hz * 1e3))
        upper.append((d / hz * 1e3, max(supply(a, a + d) for a in cand_hi) / hz * 1e3))
    return lower, upper


def run_section(d, out_svg=None, out_png=None, merged=None):
    run, res, kinfo = merged or report.merge_run(d)
    hz, t0 = run.hz, run.hg.info["t0_tsc"]
    ms = lambda c: (c - t0) / hz * 1e3
    charts = {}
    # the execution map, the paper's Fig. 3
    rows = []
    gaps_of = {}
    for g in run.gaps:
        gaps_of.setdefault(g.thread, []).append(g)
    for t in run.threads:
        k = t["thread"]
        rects = [(ms(r.t0), ms(r.t1), COLORS["interval"], False) for r in run.intervals[k]]
        for g in gaps_of.get(k, []):
            c = g.truth["class"] if g.truth else "unexplainable"
            rects.append((ms(g.g0), ms(g.g1), COLORS.get(c, "#000"), bool(g.inferred) and g.inferred != c
                          and not g.voluntary))
        rows.append((f"thread {k}", rects))
    span = min(MAP_MS, run.hg.info.get("duration_ns", 0) / 1e6 or MAP_MS)
    legend = [("running", COLORS["interval"])] + [(c, COLORS[c]) for c in judge.ACTUAL] + \
             [("unexplainable", COLORS["unexplainable"])]
    charts["map"] = svg.timeline(rows, 0, span, f"execution map, first {span:.0f} ms: gaps coloured by their actual "
                                 "cause; red ticks mark wrong inferences", legend)
    sw = [g.length / hz * 1e6 for g in run.gaps if g.inferred == "switch_hg"]
    conf = res["confusion"]
    charts["matrix"] = svg.matrix(conf["matrix"], [a for a in judge.ACTUAL if conf["rows"][a]["n"]],
                                  judge.INFERRED, "inferred against actual: gaps")
    charts["switch"] = svg.histogram(sw, "context switches between hourglass threads (gap length)", "us")
    lat = res["latency"]["threads"]
    allv = [v for s in lat.values() for v in s.get("all_us", [])]
    if allv:
        charts["latency"] = svg.histogram(allv, "wake-up latency", "us")
        charts["cdf"] = svg.curves([(f"thread {k}", ["#4e79a7", "#e15759", "#59a14f", "#f28e2b"][i % 4],
                                     [(v, (j + 1) / len(s["all_us"])) for j, v in enumerate(s["all_us"])])
                                    for i, (k, s) in enumerate(sorted(lat.items()))],
                                   "wake-up latency CDF", "us", "fraction", log_x=True)
        stage_rows = []
        colors = {"timer": "#59a14f", "irq": "#e15759", "sched": "#f28e2b", "return": "#4e79a7"}
        for k, s in sorted(lat.items()):
            x, rects = 0.0, []
            for st in ("timer", "irq", "sched", "return"):
                v = s.get(st, {}).get("median_us") or 0
                rects.append((x, x + v, colors[st], False))
                x += v
            stage_rows.append((f"thread {k}", rects))
        top = max((r[-1][1] for _, r in stage_rows), default=1) or 1
        charts["stages"] = svg.timeline(stage_rows, 0, top, "median wake-up latency by stage",
                                        list(colors.items()), xlabel="us")
    series = []
    palette = ["#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#b07aa1", "#76b7b2"]
    for t in run.threads:
        ivs = run.intervals[t["thread"]]
        if not ivs:
            continue
        lo, hi = supply_bounds(ivs, hz, ivs[0].t0, ivs[-1].t1)
        c = palette[t["thread"] % len(palette)]
        series += [(f"thread {t['thread']} lower", c, lo), (f"thread {t['thread']} upper", c, hi)]
    charts["sbf"] = svg.curves(series, "supply-bound functions: least and most CPU in any window", "window (ms)",
                               "CPU (ms)", log_x=True)
    for fmt, where in (("svg", out_svg), ("png", out_png)):
        if where:
            write_charts(charts, where, os.path.basename(os.path.abspath(d)), fmt)
    return run, res, charts


def write_charts(charts, where, prefix, fmt):
    """Each chart as PREFIX-NAME.svg, or .png through rsvg-convert (librsvg)."""
    os.makedirs(where, exist_ok=True)
    for name, body in charts.items():
        if not body.startswith("<svg"):
            continue
        path = os.path.join(where, f"{prefix}-{name}.{fmt}")
        if fmt == "svg":
            with open(path, "w") as f:
                f.write(body)
            continue
        try:
            p = subprocess.run(["rsvg-convert", "--format", "png", "--background-color", "white",
                                "--output", path], input=body.encode(), capture_output=True)
        except FileNotFoundError:
            raise ValueError("--png needs rsvg-convert (Debian: apt-get install librsvg2-bin)")
        if p.returncode != 0:
            raise ValueError(f"rsvg-convert failed on {path}: {p.stderr.decode(errors='replace')[-300:]}")


def render(dirs, out, svg_dir=None, png_dir=None, merged=None):
    """The page for @dirs; @merged, if given, is the first one's merge."""
    parts, summary = [], []
    for i, d in enumerate(dirs):
        run, res, charts = run_section(d, svg_dir, png_dir, merged if i == 0 else None)
        r, conf = res["run"], res["confusion"]
        k = r["kernel"] or {}
        wst = res["latency"]["worst"]
        n = res["gaps_total"]
        cl = res["classes"]
        expl = n - cl.get("hidden", 0) - cl.get("other", 0) - cl.get("unexplainable", 0)
        summary.append([os.path.basename(os.path.abspath(d)), k.get("release", "?").split()[0],
                        "yes" if k.get("preempt_rt") else "no", n, f"{expl} ({expl / max(n, 1) * 100:.1f}%)",
                        _pct(conf["accuracy"]), f"{wst['latency_us']:.1f} us" if wst else "-",
                        (wst["blame"] or wst["largest_stage"]) if wst else "-"])
        sec = [f"<h2>{esc(d)}</h2><p><code>{esc(' '.join(r['command'] or []))}</code><br>"
               f"Linux {esc(k.get('release', '?'))}, PREEMPT_RT {'yes' if k.get('preempt_rt') else 'no'}, "
               f"TSC {r['tsc_hz'] / 1e6:.3f} MHz, {len(r['threads'])} threads</p>"]
        for w in res["warnings"]:
            sec.append(f"<p class=warn>warning: {esc(w)}</p>")
        sec.append("<h3>Inferred against actual</h3>")
        head = ["actual \\ inferred"] + judge.INFERRED + ["recall"]
        rows = [[a] + [conf["matrix"][a][i] for i in judge.INFERRED] + [_pct(conf["rows"][a]["recall"])]
                for a in judge.ACTUAL if conf["rows"][a]["n"]]
        rows.append(["precision"] + [_pct(conf["cols"][i]["precision"]) for i in judge.INFERRED] + [""])
        sec.append(_table(head, rows))
        sec.append(f"<p>accuracy {conf['correct']} of {conf['total']} ({_pct(conf['accuracy'])})</p>")
        sec.append(charts["matrix"])
        sec.append(charts["map"])
        sec.append("<h3>Causes</h3>" + _table(["cause", "gaps", "total ms", "median us"],
                                               [[c["cause"], c["gaps"], c["total_ms"], c["median_us"]]
                                                for c in res["causes"][:15]]))
        sec.append(charts["switch"])
        for key in ("latency", "cdf", "stages"):
            if key in charts:
                sec.append(charts[key])
        sec.append(charts["sbf"])
        if res["missed_deadlines"]:
            sec.append("<h3>Missed deadlines</h3>" + _table(
                ["ms", "thread", "ran ms", "period ms", "instead"],
                [[m["t_ms"], m["thread"], f"{m['thread_ran_ms']:.2f}", f"{m['period_ms']:.2f}",
                  ", ".join(f"{i['what']} {i['ms']:.2f} ms" for i in m["instead"])]
                 for m in res["missed_deadlines"][:30]]))
        sec.append("<h3>Disagreements (first 30)</h3>" + _table(
            ["ms", "CPU", "threads", "us", "inferred", "actual", "cause"],
            [[d_["t_ms"], d_["cpu"], f"{d_['thread']}->{d_['next_thread']}", d_["length_us"], d_["inferred"],
              d_["actual"], d_["primary"] or d_["actual_why"]] for d_ in res["disagreements"][:30]]))
        parts.append("".join(sec))
    page = ["<!DOCTYPE html><html><head><meta charset=utf-8><title>hourglass report</title><style>",
            "body{font-family:sans-serif;margin:20px;max-width:960px}table{border-collapse:collapse;margin:8px 0}"
            "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#eee}"
            ".warn{color:#a40}svg{display:block;margin:12px 0}code{font-size:12px}",
            "</style></head><body><h1>hourglass: inferred against actual</h1>",
            _table(["run", "kernel", "PREEMPT_RT", "gaps", "explained by the kernel", "inference accuracy",
                    "worst latency", "its cause"], summary)]
    page += parts
    page.append("</body></html>")
    with open(out, "w") as f:
        f.write("".join(page))
    return {"path": out, "runs": len(dirs)}

#!/usr/bin/env python3
"""check_screens - what users see: trace-cmd's filters on the demo's merged
traces, a real KernelShark window on the merged trace.dat (under Xvfb), the
sessions that open it on a wrong inference and on the worst wake-up (from
copies of the runs), and the HTML report in headless Chromium, each captured
as a PNG and checked by its pixels.

    python3 tests/demo/check_screens.py [DEMO_DIR] [--save DIR]

DEMO_DIR defaults to out/demo (what `make demo` leaves). The screenshots go
to DEMO_DIR/screens/; --save also copies them to DIR (docs/img holds the
ones the docs show). Prints TAP; exits 1 on any failure. Needs Xvfb,
kernelshark, imagemagick (import, convert) and chromium-headless-shell:
scripts/setup.sh installs them; without one it exits 2, naming them.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import testpath  # noqa: F401  (pytest.ini's folders on the import path: tests/helpers, hgtools)
import kscheck
import ksshot
from ksshot import SCREEN, dark_fraction, kernelshark_shot  # noqa: F401 (scripts/paper-check)

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))

SHOTS = ("kernelshark.png", "kernelshark-gap.png", "kernelshark-latency.png", "report.png")


def colours(png):
    p = subprocess.run(["identify", "-format", "%k %w %h", png], capture_output=True, text=True, check=True)
    k, w, h = map(int, p.stdout.split())
    return k, w, h


def chromium_shot(page, shot, tmp):
    """Load @page in headless Chromium: its DOM as Chromium parsed it, and a screenshot."""
    exe = shutil.which("chromium-headless-shell") or shutil.which("chromium")
    base = [exe, "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--user-data-dir={tmp}/chromium"]
    url = "file://" + os.path.abspath(page)
    dom = subprocess.run(base + ["--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
    subprocess.run(base + ["--window-size=1280,1800", f"--screenshot={shot}", url], capture_output=True,
                   timeout=120, check=True)
    return dom


# ---- trace-cmd on the merged traces ----

def doc_filters():
    """Every filter the docs show with `trace-cmd report -F 'FILTER'` (README.md, docs/*.md)."""
    found = set()
    docs = [os.path.join(TOP, "README.md")] + [os.path.join(TOP, "docs", f)
                                              for f in sorted(os.listdir(os.path.join(TOP, "docs")))
                                              if f.endswith(".md")]
    for path in docs:
        found |= set(re.findall(r"trace-cmd report\b[^`\n]*?-F\s+'([^']+)'", open(path).read()))
    return sorted(found | {"sched/sched_switch", "hourglass/gap"})


def event_lines(text):
    return [l.strip() for l in text.splitlines() if re.search(r"\[\d+\]\s+[\d.]+: ", l)]


def trace_cmd(*args):
    return subprocess.run(["trace-cmd", "report", *args], capture_output=True, text=True, errors="replace")


def trace_cmd_checks(d):
    """Each -F filter the docs show, on each run's merged.dat: exit 0, and every event the same
    filter finds in merged-hourglass.dat (hourglass's events alone) or, for the kernel's, the
    unfiltered report; the wrong inferences as many as the report's disagreements."""
    for run in ("three", "lat"):
        dat, hg = os.path.join(d, run, "merged.dat"), os.path.join(d, run, "merged-hourglass.dat")
        whole = None
        for flt in doc_filters():
            p = trace_cmd("-F", flt, dat)
            got = event_lines(p.stdout)
            system, _, rest = flt.partition("/")
            event, _, cond = rest.partition(":")
            if system == "hourglass":
                want = event_lines(trace_cmd("-F", flt, hg).stdout)
            elif not cond.strip():
                whole = whole if whole is not None else event_lines(trace_cmd(dat).stdout)
                want = [l for l in whole if re.search(rf": {event}:\s", l)]
            else:
                want = None     # no reference for a condition on the kernel's events
            yield (f"{run}/merged.dat: trace-cmd report -F '{flt}' exits 0 and prints every match "
                   f"({len(got)} events)", p.returncode == 0 and want is not None and got == want)
            if flt == "hourglass/gap: agree==0":
                n = json.load(open(os.path.join(d, run, "report.json")))["disagreements"]["count"]
                yield f"{run}: as many wrong inferences as the report's disagreements ({n})", len(got) == n


# ---- KernelShark ----

def gap_event(hg_dat, ts_ns):
    """The gap event of merged-hourglass.dat at @ts_ns: (cpu, inferred, actual, agree)."""
    for l in trace_cmd("-t", "-F", "hourglass/gap", hg_dat).stdout.splitlines():
        m = re.search(r"\[(\d+)\]\s+(\d+)\.(\d+): gap:.* agree=(\d) inferred=(\S+) actual=(\S+)", l)
        if m and int(m.group(2)) * 10**9 + int(m.group(3)) == ts_ns:
            return int(m.group(1)), m.group(5), m.group(6), int(m.group(4))
    return None


def right_gap(hg_dat):
    """The longest gap inferred right: (cpu, start ns, class)."""
    best = None
    for l in trace_cmd("-t", "-F", "hourglass/gap: agree==1", hg_dat).stdout.splitlines():
        m = re.search(r"\[(\d+)\]\s+(\d+)\.(\d+): gap:.* length_ns=(\d+) agree=1 inferred=(\S+) actual=(\S+)", l)
        if m and (best is None or int(m.group(4)) > best[0]):
            best = (int(m.group(4)), int(m.group(1)), int(m.group(2)) * 10**9 + int(m.group(3)), m.group(6))
    return best and best[1:]


def session_on_gap(session, out, cpu, t0):
    """A copy of @session moved to the gap of CPU @cpu that starts at @t0 (ns): range and
    markers on its interval events, as File > Sessions would save it."""
    rows = kscheck.session_entries(session)
    a = [r for r in rows if r[1] == 1 and r[2] == "hourglass/interval_end" and r[3] == cpu and r[4] == t0]
    b = [r for r in rows if r[1] == 1 and r[2] == "hourglass/interval_start" and r[3] == cpu and r[4] > t0]
    if not a or not b:
        return False
    t1 = b[0][4]
    doc = json.load(open(session))
    doc["Model"]["range"] = [t0 - (t1 - t0), t1 + (t1 - t0)]
    doc["Markers"]["markA"]["row"], doc["Markers"]["markB"]["row"] = a[0][0], b[0][0]
    doc["ViewTop"] = 0
    with open(out, "w") as f:
        json.dump(doc, f)
    return True


def look(args, png, tmp, cwd):
    log, dark = kernelshark_shot(args, png, tmp, ready=lambda log: True, cwd=cwd)
    s = ksshot.Shot(png)
    return log, dark, s, ksshot.markers(s), ksshot.label_boxes(s)


def clean(log):
    return "ERROR" not in log and "Failed" not in log and "Unable to find" not in log and "mismatch" not in log


def kernelshark_checks(d, screens, tmp):
    from hgtools.charts import CLASS_COLORS
    rgb = {k: ksshot.hex_rgb(v) for k, v in CLASS_COLORS.items()}

    dat = os.path.abspath(os.path.join(d, "three", "merged.dat"))
    ks_png = os.path.join(screens, "kernelshark.png")
    log, dark = kernelshark_shot([dat], ks_png, tmp)
    yield "KernelShark logs loading the merged trace.dat", f'Loading  "{dat}"' in log or f'Loading "{dat}"' in log
    yield "KernelShark reports no error", "ERROR" not in log
    yield "KernelShark screenshot taken", os.path.exists(ks_png) and colours(ks_png)[1:] == SCREEN
    yield f"KernelShark draws the trace (graph {dark:.1%} dark, an empty window 0.6%)", dark > 0.02

    # the session of the three-thread run, from a copy of the run (its files' times kept, as cp -a)
    three = os.path.join(tmp, "copied", "three")
    shutil.copytree(os.path.join(d, "three"), three)
    ses = os.path.join(three, "kernelshark-session.json")
    gap_png = os.path.join(screens, "kernelshark-gap.png")
    log, dark, s, (xa, xb), boxes = look(["-s", "kernelshark-session.json"], gap_png, tmp, three)
    names = [st["data"]["file"] for st in json.load(open(ses))["data streams"]]
    yield f"the session names its files from its own folder ({', '.join(names)})", \
        names == ["merged.dat", "merged-hourglass.dat"]
    yield "a copied run's session opens without an error", clean(log) and dark > 0.02
    yield "the session loads the hourglass plugin", 'loading plugin "hourglass"' in log
    marks = kscheck.load_session(ses)["marks"]
    ev = gap_event(os.path.join(three, "merged-hourglass.dat"), marks.get("markA", (None, -1))[1])
    yield "the session opens on a wrong inference (the gap event at marker A)", ev is not None and ev[3] == 0
    if ev and xa is not None and xb is not None and boxes:
        w = ksshot.gap_marks(s, xa, xb, boxes[-1])
        yield (f"at the wrong gap ({ev[1]} for {ev[2]}): actual's colour below, inferred's above, red mark "
               f"({w['lower']}, {w['upper']}, {w['wrong']})"), \
            (w["lower"], w["upper"], w["wrong"]) == (rgb.get(ev[2]), rgb.get(ev[1]), True)
        yield "hourglass's CPU plot labelled apart from the kernel's", \
            ksshot.label_glyphs(s, boxes[-1]) != ksshot.label_glyphs(s, boxes[ev[0]])
    else:
        yield f"the markers and plots found on the screenshot (A {xa}, B {xb}, {len(boxes)} plots)", False
        w = None
    # the same session moved to the longest gap inferred right
    rg = right_gap(os.path.join(three, "merged-hourglass.dat"))
    moved = rg is not None and session_on_gap(ses, os.path.join(three, "right.json"), rg[0], rg[1])
    yield "a right inference to look at", moved
    if moved:
        log, dark, s, (xa, xb), boxes = look(["-s", "right.json"], os.path.join(screens, "kernelshark-right.png"),
                                             tmp, three)
        r = ksshot.gap_marks(s, xa, xb, boxes[-1]) if xa is not None and xb is not None and boxes else {}
        yield (f"at a right gap ({rg[2]}): one colour, no mark ({r.get('lower')}, {r.get('upper')}, "
               f"{r.get('wrong')})"), (r.get("lower"), r.get("upper"), r.get("wrong")) == (rgb.get(rg[2]),) * 2 + (
                   False,)
        yield "the wrong gap's marks differ from the right gap's", w is not None and \
            (w["lower"], w["upper"], w["wrong"]) != (r.get("lower"), r.get("upper"), r.get("wrong"))

    # the latency run's session: on the worst wake-up
    lat = os.path.join(tmp, "copied", "lat")
    shutil.copytree(os.path.join(d, "lat"), lat)
    lat_png = os.path.join(screens, "kernelshark-latency.png")
    log, dark, s, (xa, xb), boxes = look(["-s", "kernelshark-session.json"], lat_png, tmp, lat)
    yield "the latency run's session opens without an error", clean(log) and dark > 0.02
    worst = json.load(open(os.path.join(lat, "report.json")))["latency"]["threads"]["0"]["worst"][0]
    marks = kscheck.load_session(os.path.join(lat, "kernelshark-session.json"))["marks"]
    b = marks.get("markB", ("", 0, 0))
    t0 = round(worst["t"] * 1e9)
    yield (f"the latency session's marker B on the worst wake-up ({worst['latency_us']} us from "
           f"t={worst['t']} s)"), b[0] == "hourglass/wakeup" and \
        abs(b[1] - t0 - worst["latency_us"] * 1000) <= 1000
    share = ksshot.late_bar(s, xa, xb, boxes[-1]) if xa is not None and xb is not None and boxes else 0
    yield f"the worst wake-up's lateness drawn between the markers ({share:.0%} of the columns)", share > 0.9


def checks(d, tmp):
    screens = os.path.join(d, "screens")
    os.makedirs(screens, exist_ok=True)
    yield from trace_cmd_checks(d)
    yield from kernelshark_checks(d, screens, tmp)
    html_png = os.path.join(screens, "report.png")
    dom = chromium_shot(os.path.join(d, "report.html"), html_png, tmp)
    yield "Chromium parses report.html: title, both runs, charts", \
        "hourglass: inferred against actual" in dom and dom.count("<h2>") == 2 and dom.count("<svg") >= 5
    k, w, h = colours(html_png) if os.path.exists(html_png) else (0, 0, 0)
    yield f"Chromium screenshot of report.html ({k} colours)", (w, h) == (1280, 1800) and k > 100
    yield "the page is drawn, not blank", dark_fraction(html_png) > 0.01 if k else False


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", nargs="?", default=os.path.join(TOP, "out", "demo"))
    ap.add_argument("--save", metavar="DIR", help="also copy the screenshots to DIR")
    a = ap.parse_args()
    missing = ksshot.missing_tools() + [t for t in ("trace-cmd",) if not shutil.which(t)]
    if not (shutil.which("chromium-headless-shell") or shutil.which("chromium")):
        missing.append("chromium-headless-shell")
    if missing:
        print(f"check_screens: missing {', '.join(missing)}: run scripts/setup.sh", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        results = list(checks(a.dir, tmp))
    print(f"1..{len(results)}")
    for i, (name, ok) in enumerate(results, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {name}")
    if a.save:
        os.makedirs(a.save, exist_ok=True)
        for f in SHOTS:
            shutil.copy(os.path.join(a.dir, "screens", f), a.save)
    return 0 if all(ok for _, ok in results) else 1


if __name__ == "__main__":
    sys.exit(main())

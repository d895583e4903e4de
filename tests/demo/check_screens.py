#!/usr/bin/env python3
"""check_screens - what users see: a real KernelShark window on the demo's
merged trace.dat (under Xvfb), the same through the session that opens it on
a wrong inference, and the HTML report in headless Chromium, each captured
as a PNG and checked.

    python3 tests/demo/check_screens.py [DEMO_DIR] [--save DIR]

DEMO_DIR defaults to out/demo (what `make demo` leaves). The screenshots go
to DEMO_DIR/screens/; --save also copies them to DIR (docs/img holds the
ones the docs show). Prints TAP; exits 1 on any failure. Needs Xvfb,
kernelshark, imagemagick (import, convert) and chromium-headless-shell:
scripts/setup.sh installs them; without one it exits 2, naming them.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
SCREEN = (1600, 1000)
# where KernelShark 2.2 draws its plots with -geometry 1580x980+0+0: below
# the marker buttons, above the search bar; empty, that box is all white
GRAPH_BOX = (20, 130, 1540, 170)        # x, y, width, height
KS_WAIT_S = 120                         # the emulated CI machine can be slow to draw


def dark_fraction(png, box=None):
    """Share of pixels darker than mid-grey, in @box (x, y, w, h) or the whole image."""
    args = ["convert", png]
    if box:
        args += ["-crop", f"{box[2]}x{box[3]}+{box[0]}+{box[1]}", "+repage"]
    args += ["-colorspace", "gray", "-threshold", "50%", "-format", "%[fx:mean]", "info:"]
    p = subprocess.run(args, capture_output=True, text=True, check=True)
    return 1.0 - float(p.stdout.strip())


def colours(png):
    p = subprocess.run(["identify", "-format", "%k %w %h", png], capture_output=True, text=True, check=True)
    k, w, h = map(int, p.stdout.split())
    return k, w, h


def start_xvfb():
    """Xvfb on the first free display (it picks and tells us through -displayfd)."""
    r, w = os.pipe()
    xv = subprocess.Popen(["Xvfb", "-displayfd", str(w), "-screen", "0", f"{SCREEN[0]}x{SCREEN[1]}x24",
                           "-nolisten", "tcp"], pass_fds=(w,), stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    os.close(w)
    with os.fdopen(r) as f:
        num = f.readline().strip()
    if not num:
        xv.kill()
        raise RuntimeError("Xvfb did not start")
    return xv, f":{num}"


def kernelshark_shot(args, shot, tmp, ready=lambda log: "Loading" in log):
    """Run KernelShark with @args on a virtual screen, wait until @ready(its
    log) and the plots are drawn; return (log, last screenshot's graph darkness)."""
    cache = os.path.join(tmp, "ks-cache")
    os.makedirs(cache, exist_ok=True)
    with open(os.path.join(cache, "setting.ini"), "w") as f:
        # as root KernelShark otherwise opens a modal warning over the trace
        f.write("[General]\nnoRootWarn=true\n")
    xv, disp = start_xvfb()
    env = dict(os.environ, DISPLAY=disp, KS_USER_CACHE_DIR=cache, XDG_RUNTIME_DIR=tmp)
    log_path = os.path.join(tmp, os.path.basename(shot) + ".log")
    dark = 0.0
    try:
        with open(log_path, "w") as log:
            ks = subprocess.Popen(["kernelshark", "-geometry", "1580x980+0+0", *args], env=env,
                                  stdout=log, stderr=subprocess.STDOUT)
        try:
            t_end = time.monotonic() + KS_WAIT_S
            last = None
            while time.monotonic() < t_end and ks.poll() is None:
                time.sleep(2)
                if not ready(open(log_path).read()):
                    continue
                subprocess.run(["import", "-display", disp, "-window", "root", shot], check=True,
                               capture_output=True)
                dark = dark_fraction(shot, GRAPH_BOX)
                # drawn, and the same on two looks in a row: done
                if dark > 0.02 and last is not None and abs(dark - last) < 0.005:
                    break
                last = dark
        finally:
            ks.terminate()
            try:
                ks.wait(10)
            except subprocess.TimeoutExpired:
                ks.kill()
    finally:
        xv.terminate()
        xv.wait(10)
    return open(log_path).read(), dark


def chromium_shot(page, shot, tmp):
    """Load @page in headless Chromium: its DOM as Chromium parsed it, and a screenshot."""
    exe = shutil.which("chromium-headless-shell") or shutil.which("chromium")
    base = [exe, "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--user-data-dir={tmp}/chromium"]
    url = "file://" + os.path.abspath(page)
    dom = subprocess.run(base + ["--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
    subprocess.run(base + ["--window-size=1280,1800", f"--screenshot={shot}", url], capture_output=True,
                   timeout=120, check=True)
    return dom


def checks(d, tmp):
    screens = os.path.join(d, "screens")
    os.makedirs(screens, exist_ok=True)
    dat = os.path.abspath(os.path.join(d, "three", "merged.dat"))
    ks_png = os.path.join(screens, "kernelshark.png")
    log, dark = kernelshark_shot([dat], ks_png, tmp)
    yield "KernelShark logs loading the merged trace.dat", f'Loading  "{dat}"' in log or f'Loading "{dat}"' in log
    yield "KernelShark reports no error", "ERROR" not in log
    yield "KernelShark screenshot taken", os.path.exists(ks_png) and colours(ks_png)[1:] == SCREEN
    yield f"KernelShark draws the trace (graph {dark:.1%} dark, an empty window 0.6%)", dark > 0.02
    # the session (hourglass export --ks-session): zoomed on a gap, markers at its ends
    gap_png = os.path.join(screens, "kernelshark-gap.png")
    log, dark = kernelshark_shot(["-s", os.path.join(d, "three", "kernelshark-session.json")], gap_png, tmp,
                                 ready=lambda log: True)
    yield "KernelShark opens the session without an error", "ERROR" not in log and "Failed" not in log
    yield f"KernelShark draws the session's zoomed view (graph {dark:.1%} dark)", dark > 0.02
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
    missing = [t for t in ("Xvfb", "kernelshark", "import", "convert", "identify") if not shutil.which(t)]
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
        for f in ("kernelshark.png", "kernelshark-gap.png", "report.png"):
            shutil.copy(os.path.join(a.dir, "screens", f), a.save)
    return 0 if all(ok for _, ok in results) else 1


if __name__ == "__main__":
    sys.exit(main())

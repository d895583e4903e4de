"""ksshot - a test helper: KernelShark in a real window on a virtual screen
(Xvfb), captured (ImageMagick's import), and the capture read by its pixels
(ImageMagick's convert: no Python imaging library), to check what the
hourglass plugin (userspace/export/ks-plugin) draws where.

    log, dark = kernelshark_shot(["-s", "session.json"], "shot.png", tmp, cwd=run_dir)
    s = Shot("shot.png"); xa, xb = markers(s); row = label_boxes(s)[-1]
    gap_marks(s, xa, xb, row)    # {"lower": actual's colour, "upper": inferred's, "wrong": red mark}

KernelShark 2.2 with -geometry 1580x980+0+0 on a 1600x1000 screen: the plots in
a white frame below the marker buttons, one label box per plot at its left;
the markers as vertical lines (A darkGreen, B darkCyan) across them.
"""
import os
import shutil
import subprocess
import time

SCREEN = (1600, 1000)
# where KernelShark 2.2 draws its first plots with -geometry 1580x980+0+0: below the marker
# buttons; empty, that box is all white
GRAPH_BOX = (20, 130, 1540, 170)        # x, y, width, height
KS_WAIT_S = 120                         # the emulated CI machine can be slow to draw
TOOLS = ("Xvfb", "kernelshark", "import", "convert", "identify")


def missing_tools():
    return [t for t in TOOLS if not shutil.which(t)]


def dark_fraction(png, box=None):
    """Share of pixels darker than mid-grey, in @box (x, y, w, h) or the whole image."""
    args = ["convert", png]
    if box:
        args += ["-crop", f"{box[2]}x{box[3]}+{box[0]}+{box[1]}", "+repage"]
    args += ["-colorspace", "gray", "-threshold", "50%", "-format", "%[fx:mean]", "info:"]
    p = subprocess.run(args, capture_output=True, text=True, check=True)
    return 1.0 - float(p.stdout.strip())


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


def kernelshark_shot(args, shot, tmp, ready=lambda log: "Loading" in log, cwd=None):
    """Run KernelShark with @args (from the folder @cwd: a session's data files are named
    from its own folder) on a virtual screen, wait until @ready(its log) and the plots are
    drawn; return (log, last screenshot's graph darkness)."""
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
            # stdbuf: what libkshark printf()s ("loading plugin ...") is in the log when it is read
            ks = subprocess.Popen(["stdbuf", "-oL", "kernelshark", "-geometry", "1580x980+0+0", *args], env=env,
                                  cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
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


def hex_rgb(h):
    """"#1f77b4" -> (31, 119, 180)"""
    return tuple(int(h[i:i + 2], 16) for i in (1, 3, 5))



MARK_A, MARK_B = (0, 128, 0), (0, 128, 128)     # KsDualMarker: Qt::darkGreen, Qt::darkCyan
WHITE = (255, 255, 255)
RED = (255, 0, 0)                               # the plugin's mark of a wrong inference


class Shot:
    """A PNG's pixels: px(x, y) -> (r, g, b)."""

    def __init__(self, png):
        self.w, self.h = map(int, subprocess.run(["identify", "-format", "%w %h", png], capture_output=True,
                                                 text=True, check=True).stdout.split())
        self.raw = subprocess.run(["convert", png, "-depth", "8", "rgb:-"], capture_output=True, check=True).stdout

    def px(self, x, y):
        i = 3 * (y * self.w + x)
        return tuple(self.raw[i:i + 3])


def markers(shot):
    """The columns of KernelShark's markers A and B in the graph (each a vertical line of
    its colour across the plots), or None where one is not drawn."""
    _, top, bottom = graph_area(shot)
    cols = {}
    for x in range(shot.w):
        for name, rgb in (("A", MARK_A), ("B", MARK_B)):
            if sum(shot.px(x, y) == rgb for y in range(top, bottom, 2)) >= (bottom - top) // 4:
                cols.setdefault(name, x)
    return cols.get("A"), cols.get("B")


def graph_area(shot):
    """(left, top, bottom) of the white frame KernelShark draws its plots in: the first white
    column from the left edge a quarter down, and its first row that is not white below the
    marker buttons (the splitter's grey band, over the table)."""
    y = shot.h // 4
    left = next(x for x in range(shot.w) if shot.px(x, y) == WHITE and shot.px(x + 1, y) == WHITE) + 4
    top = 100
    bottom = next(y for y in range(top + 20, shot.h) if shot.px(left, y) != WHITE)
    return left, top, bottom


def label_boxes(shot):
    """The plots' labels, top to bottom, as (top, bottom) rows: runs taller than 15 pixels of
    one colour in the first column of the frame that has them (the labels' left edge, before
    their text)."""
    left, top, bottom = graph_area(shot)
    for x in range(left, left + 80):
        boxes, start = [], None
        for y in range(top, bottom + 1):
            c = shot.px(x, y) if y < bottom else WHITE
            if start is not None and c == colour:
                continue
            if start is not None and y - start > 15:
                boxes.append((start, y - 1))
            start, colour = (y, c) if c != WHITE else (None, None)
        if boxes:
            return boxes
    return []


def column_runs(shot, x, top, bottom, min_len=2):
    """The runs of one colour (not white) in column @x from @bottom up to @top:
    [(colour, length)], lowest first."""
    runs = []
    for y in range(bottom, top - 1, -1):
        c = shot.px(x, y)
        if runs and runs[-1][0] == c:
            runs[-1][1] += 1
        else:
            runs.append([c, 1])
    return [(c, n) for c, n in runs if c != WHITE and n >= min_len]


def label_glyphs(shot, box):
    """The dark pixels of a label box's text, relative to the box: two labels that read the
    same have the same set."""
    left, _, _ = graph_area(shot)
    x0 = next(x for x in range(left, left + 80) if shot.px(x, box[0] + 2) != WHITE)
    return {(x - x0, y - box[0]) for y in range(box[0], box[1] + 1) for x in range(x0, x0 + 200)
            if sum(shot.px(x, y)) < 200}


def gap_marks(shot, xa, xb, row):
    """What the hourglass plugin drew between the markers' columns on the plot @row (a label
    box's (top, bottom)): {"lower", "upper": colours, "wrong": a red mark above, "runs"}. A box
    of one colour (a right inference) has the same lower and upper colour."""
    x = (xa + xb) // 2
    top, bottom = row
    runs = column_runs(shot, x, top, bottom)
    # a half box is a third of the plot's height: longer than the marker's foot on the base
    boxes = [(c, n) for c, n in runs if c not in (RED, MARK_A, MARK_B) and n >= 4]
    wrong = any(shot.px(x + dx, y) == RED for dx in range(-2, 3) for y in range(top, bottom))
    if not boxes:
        return {"lower": None, "upper": None, "wrong": wrong, "runs": runs}
    # the tallest runs: a box of two halves, or one of one colour (twice as tall)
    lower = boxes[0][0]
    upper = boxes[1][0] if len(boxes) > 1 and boxes[1][1] >= 3 else lower
    return {"lower": lower, "upper": upper, "wrong": wrong, "runs": runs, "x": x}


def late_bar(shot, xa, xb, row, colour=(40, 40, 40)):
    """The share of the columns between the markers where the plugin's wake-up lateness bar
    (a dark band at the top of the plot @row) is drawn."""
    top, bottom = row
    cols = range(xa + 2, xb - 1)
    return sum(any(shot.px(x, y) == colour for y in range(top, bottom)) for x in cols) / max(len(cols), 1)

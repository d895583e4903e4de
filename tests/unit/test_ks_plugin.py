"""The hourglass KernelShark plugin (userspace/export/ks-plugin) in a real
KernelShark window on a virtual screen (Xvfb), on export_synth's run
(userspace/export/tests/export_synth.c), the run moved elsewhere first:
the session the export wrote opens from there, names the plugin, and
KernelShark draws each gap by its classes: at a wrong inference a box of two
colours (actual below, inferred above) under a red mark, at a right one a box
of one colour and no mark; the hourglass plots are labelled apart from the
kernel's. Read by the screenshot's pixels (tests/helpers/ksshot.py).

The run's gaps used: CPU 1, 9.0 to 9.9 us, an IPI inferred switch_hg (wrong:
the session's); CPU 0, 11 to 20 us, a switch to stress:555 inferred
switch_other (right)."""
import json
import os
import shutil
import subprocess

import pytest

from hgtools.charts import CLASS_COLORS
from helpers import kscheck, ksshot

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
PLUGIN = os.path.join(TOP, "build", "kernelshark", "plugin-hourglass.so")


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    subprocess.run(["make", "-s", "-C", os.path.join(TOP, "userspace", "export"), "tests"], check=True)
    d = tmp_path_factory.mktemp("ksrun")
    p = subprocess.run([os.path.join(TOP, "build", "export", "export_synth"), str(d)], capture_output=True,
                       text=True, env=dict(os.environ, HG_KS_PLUGIN=PLUGIN))
    assert p.returncode == 0, p.stderr
    return d, json.loads(p.stdout)


def need_plugin():
    if not os.path.exists(PLUGIN):
        pytest.skip(f"no {PLUGIN}: make builds it where KernelShark's headers are (make says why it skipped it)")


def test_session_names_the_plugin(synth, tmp_path):
    """By absolute path with its time (KernelShark checks it), registered on the hourglass
    stream; without one (HG_KS_PLUGIN empty) the session names none and still opens."""
    need_plugin()
    d, r = synth
    doc = json.load(open(d / "session.json"))
    assert r["ks"]["session_plugin"] == 1
    assert doc["User Plugins"]["obj. files"] == [{"type": "kshark.config.library", "file": os.path.realpath(PLUGIN),
                                                  "name": "hourglass", "time": int(os.stat(PLUGIN).st_mtime)}]
    assert doc["data streams"][1]["plugins"]["registered"] == [["hourglass", True]]
    p = subprocess.run([os.path.join(TOP, "build", "export", "export_synth"), str(tmp_path)], capture_output=True,
                       text=True, env=dict(os.environ, HG_KS_PLUGIN=""))
    assert p.returncode == 0 and json.loads(p.stdout)["ks"]["session_plugin"] == 0, p.stderr
    doc = json.load(open(tmp_path / "session.json"))
    assert doc["User Plugins"]["obj. files"] == [] and doc["data streams"][1]["plugins"]["registered"] == []
    assert kscheck.load_session(str(tmp_path / "session.json"))["streams"] == 2


def session_at(session, out, t0, t1, cpu):
    """A copy of @session opened on the gap of CPU @cpu from @t0 to @t1 (ns): range and
    markers moved there, as File > Sessions would save it."""
    rows = kscheck.session_entries(session)
    a = [r for r in rows if r[1] == 1 and r[2] == "hourglass/interval_end" and r[3] == cpu and r[4] == t0]
    b = [r for r in rows if r[1] == 1 and r[2] == "hourglass/interval_start" and r[3] == cpu and r[4] == t1]
    assert len(a) == 1 and len(b) == 1, (a, b)
    doc = json.load(open(session))
    doc["Model"]["range"] = [t0 - (t1 - t0), t1 + (t1 - t0)]
    doc["Markers"]["markA"]["row"], doc["Markers"]["markB"]["row"] = a[0][0], b[0][0]
    doc["ViewTop"] = 0
    with open(out, "w") as f:
        json.dump(doc, f)


def look(args, cwd, tmp, name):
    """KernelShark's window on @args from @cwd: its log, the screenshot, markers A and B's
    columns, the plots' label boxes."""
    png = os.path.join(tmp, name + ".png")
    log, dark = ksshot.kernelshark_shot(args, png, tmp, ready=lambda log: True, cwd=cwd)
    s = ksshot.Shot(png)
    return log, s, ksshot.markers(s), ksshot.label_boxes(s)


def test_wrong_and_right_gaps_drawn_apart(synth, tmp_path):
    need_plugin()
    if ksshot.missing_tools():
        pytest.skip(f"KernelShark on a virtual screen needs {', '.join(ksshot.missing_tools())}: scripts/setup.sh")
    # a run exported in one folder, then moved (its files' times kept: KernelShark checks them)
    os.mkdir(tmp_path / "exported")
    p = subprocess.run([os.path.join(TOP, "build", "export", "export_synth"), str(tmp_path / "exported")],
                       capture_output=True, text=True, env=dict(os.environ, HG_KS_PLUGIN=PLUGIN))
    assert p.returncode == 0, p.stderr
    run = tmp_path / "moved" / "run"
    os.mkdir(tmp_path / "moved")
    shutil.move(tmp_path / "exported", run)
    rgb = {k: ksshot.hex_rgb(v) for k, v in CLASS_COLORS.items()}

    # the session the export wrote, from the run's new folder: the wrong inference
    log, s, (xa, xb), boxes = look(["-s", "session.json"], run, str(tmp_path), "wrong")
    assert "ERROR" not in log and "Unable to find" not in log and "Failed" not in log, log[-2000:]
    assert 'loading plugin "hourglass"' in log, log[-2000:]
    assert xa is not None and xb is not None and xa <= xb, (xa, xb)
    # CPU 0..2, the gap's thread as the kernel saw it, then hourglass's CPUs 0 and 1
    assert len(boxes) == 6, boxes
    wrong = ksshot.gap_marks(s, xa, xb, boxes[-1])
    assert (wrong["lower"], wrong["upper"], wrong["wrong"]) == (rgb["interrupt"], rgb["switch_hg"], True), wrong
    # hourglass's CPU 1 is labelled apart from the kernel's CPU 1
    assert ksshot.label_glyphs(s, boxes[-1]) != ksshot.label_glyphs(s, boxes[1])

    # a right inference: the same session moved to it
    session_at(run / "session.json", run / "right.json", 11000, 20000, 0)
    log, s, (xa, xb), boxes = look(["-s", "right.json"], run, str(tmp_path), "right")
    assert xa is not None and xb is not None and xa < xb, (xa, xb)
    right = ksshot.gap_marks(s, xa, xb, boxes[-2])      # hourglass's CPU 0
    assert (right["lower"], right["upper"], right["wrong"]) == (rgb["switch_other"], rgb["switch_other"], False), \
        right
    assert (wrong["lower"], wrong["upper"], wrong["wrong"]) != (right["lower"], right["upper"], right["wrong"])

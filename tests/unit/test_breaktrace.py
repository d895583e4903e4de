"""`hourglass report` of a run that hourglass -b stopped opens with the sample
that passed the threshold and what the kernel says of it (issue 19, point 8):
constructed runs (1 GHz, thread 0 is tid 100, as in test_merge.py) merged by
the real build/hgmerge, with the hourglass.json that -b writes beside them."""
import json
import os
import subprocess
import tempfile

import pytest

from conftest import TOP, chunk, hgt_file, rec
from hgtools import cli
from test_merge import HRT_E, META, VEC_E, VEC_X, WAKING, comm, hgl, iv, switch


def run_dir(d, records, kernel, breaktrace, threads=1):
    (d / "hourglass.hgl").write_bytes(hgl(records, threads))
    (d / "kernel.hgt").write_bytes(hgt_file(kernel, meta=META, window=(0, 10**12)))
    (d / "hourglass.json").write_text(json.dumps({"breaktrace": breaktrace}))
    return d


def report(capsys, d, *args):
    rc = cli.main(["report", str(d), *args])
    out, err = capsys.readouterr()
    return rc, out, err


def trip(kind, t0, t1, value_ns, threshold_ns, thread=0, cpu=0):
    return {"threshold_ns": threshold_ns, "thread": thread, "kind": kind, "value_ns": value_ns, "t0_tsc": t0,
            "t1_tsc": t1, "cpu": cpu, "trace_marker": False, "recorder_pid": 42}


# three short ticks, then an intruder takes CPU 0 from 31000 to 80000: -b 20 us trips on it
TICKS = [(10100 + 10000 * k, 10400 + 10000 * k) for k in range(3)]   # inside the gaps 10000..10500, ...
IVS = [iv(1000, 10000, 0, 0), iv(10500, 20000, 0, 0), iv(20500, 30000, 0, 0), iv(30500, 31000, 0, 0),
       iv(80000, 81000, 0, 0)]


def tsc_order(records):
    """A CPU's records as the module writes them: by TSC (each record's first 8 bytes)."""
    return sorted(records, key=lambda r: int.from_bytes(r[:8], "little"))


KERNEL = [chunk(0, tsc_order([rec(a, VEC_E, 236) for a, _ in TICKS] + [rec(b, VEC_X, 236) for _, b in TICKS]
                             + [comm(31000, 555, "intruder"), switch(31100, 100, 555), switch(79900, 555, 100)]))]


def test_a_gap_trip_opens_the_report_with_its_kernel_cause(tmp_path, capsys):
    d = run_dir(tmp_path, IVS, KERNEL, trip("gap", 31000, 80000, 49000, 20000))
    rc, out, err = report(capsys, d, "--json", str(tmp_path / "r.json"))
    assert rc == 0, err
    lines = out.splitlines()
    # first, before the summary lines: the sample, on the report's time base, and its cause
    assert lines[0] == ("stopped at -b 20.000 us: hg-thread-0 lost CPU 0 for 49.000 us, t=0.000031 s to "
                        "t=0.000080 s"), out
    assert lines[1].startswith("  the kernel: t=0.000031 s hg-thread-0->hg-thread-0 49.00 us: switch_other, "
                               "switched to intruder:555 (task intruder:555 48.8 us"), lines[1]
    # then the stretch that led there: the three ticks, oldest first
    assert lines[2] == "  the last gaps before it on CPU 0:"
    assert [l.split()[0] for l in lines[3:6]] == ["t=0.000010", "t=0.000020", "t=0.000030"], lines[3:6]
    assert all("local_timer" in l for l in lines[3:6]), lines[3:6]
    summary = json.loads((tmp_path / "r.json").read_text())["summary"]
    assert lines[7:7 + len(summary)] == summary
    b = json.loads((tmp_path / "r.json").read_text())["breaktrace"]
    assert (b["kind"], b["thread"], b["cpu"], b["threshold_us"], b["value_us"]) == ("gap", 0, 0, 20.0, 49.0)
    assert [g["cause"] for g in b["gaps"]] == ["switched to intruder:555"] and len(b["before"]) == 3


def test_export_draws_the_trip_while_the_trace_files_are_finished(tmp_path, capsys):
    """hourglass export --html --kernelshark: the page is drawn from the report as soon as
    it is whole (hgmerge --ready-fd), when the gap stream the trip's explanation reads is
    still at its .partial name; the page opens with the same explanation."""
    pytest.importorskip("matplotlib")
    d = run_dir(tmp_path, IVS, KERNEL, trip("gap", 31000, 80000, 49000, 20000))
    rc = cli.main(["export", str(d), "--html", str(tmp_path / "r.html"), "--kernelshark", str(tmp_path / "m.dat"),
                   "--json", str(tmp_path / "r.json")])
    out, err = capsys.readouterr()
    assert rc == 0, err
    b = json.loads((tmp_path / "r.json").read_text())["breaktrace"]
    assert [g["cause"] for g in b["gaps"]] == ["switched to intruder:555"] and len(b["before"]) == 3
    page = (tmp_path / "r.html").read_text()
    assert "stopped at -b 20.000 us: hg-thread-0 lost CPU 0 for 49.000 us" in page
    assert "switched to intruder:555" in page


PROTOCOL_HGMERGE = r'''#!/usr/bin/env python3
"""hgmerge's --ready-fd protocol (docs/hgmerge.md), played out with the files of a real merge
(REAL_REPORT, REAL_GAPS): the report and the gap stream whole at their .partial names, the
line said, then held until HOLD_MARK exists (30 s at most), then both named."""
import os, shutil, sys, time
args = sys.argv[1:]
opt = lambda name: args[args.index(name) + 1]
report, gaps = opt("--report"), opt("--gaps-json")
shutil.copy(os.environ["REAL_REPORT"], report + ".partial")
shutil.copy(os.environ["REAL_GAPS"], gaps + ".partial")
fd = int(opt("--ready-fd"))
os.write(fd, b"report\n")
os.close(fd)
t = time.monotonic()
while not os.path.exists(os.environ["HOLD_MARK"]) and time.monotonic() - t < 30:
    time.sleep(0.01)
open(opt("--kernelshark"), "w").write("x")
os.rename(gaps + ".partial", gaps)
os.rename(report + ".partial", report)
'''


def test_the_early_report_explains_the_trip_from_the_partial_gap_stream(tmp_path, monkeypatch):
    """engine.merge(on_report=...) gets the report when hgmerge says it is whole, REPORT and
    the gap stream still at their .partial names (hgmerge --ready-fd, played here by a stand-in
    with a real merge's files): the trip's explanation is read from the partial gap stream,
    and that report is the one merge() returns."""
    from hgtools import engine
    d = run_dir(tmp_path, IVS, KERNEL, trip("gap", 31000, 80000, 49000, 20000))
    real = tmp_path / "real"
    real.mkdir()
    subprocess.run([os.path.join(TOP, "build", "hgmerge"), "--hgl", str(d / "hourglass.hgl"), "--kernel",
                    str(d / "kernel.hgt"), "--report", str(real / "r.json"), "--gaps-json", str(real / "g.jsonl")],
                   check=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "hgmerge").write_text(PROTOCOL_HGMERGE)
    (bin_dir / "hgmerge").chmod(0o755)
    mark = tmp_path / "seen"
    scratch = tmp_path / "scratch"         # engine.merge's temporary folder goes here
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setenv("HG_BIN", str(bin_dir / "hourglass"))
    monkeypatch.setenv("REAL_REPORT", str(real / "r.json"))
    monkeypatch.setenv("REAL_GAPS", str(real / "g.jsonl"))
    monkeypatch.setenv("HOLD_MARK", str(mark))
    seen = []

    def on_report(rep):
        try:
            (tmp,) = os.listdir(scratch)
            seen.append((rep, sorted(os.listdir(scratch / tmp))))
        finally:
            mark.write_text("")

    rep = engine.merge(str(d), exports=engine.Exports(kernelshark=str(tmp_path / "m.dat")), on_report=on_report,
                       show_progress=False)
    (early, names), = seen
    assert names == ["gaps.jsonl.partial", "report.json.partial"], names
    assert [g["cause"] for g in early["breaktrace"]["gaps"]] == ["switched to intruder:555"]
    assert rep is early and (tmp_path / "m.dat").read_text() == "x"


def test_a_late_wakeup_trip_is_decomposed(tmp_path, capsys):
    """The wake-up of test_merge's decomposition: due at 100000, in user space
    at 103400; a task hog:777 ran until the switch at 103000."""
    wake = (100000, 103400, 3400, 0, 3, 0x10 | 2, 0)
    kernel = [chunk(0, [comm(99000, 777, "hog"), switch(99500, 0, 777), rec(100500, VEC_E, 236),
                        rec(100600, HRT_E, 1, payload=b"\0" * 8), rec(100800, WAKING, 100, payload=b"\0" * 8),
                        rec(100900, VEC_X, 236), switch(103000, 777, 100)])]
    d = run_dir(tmp_path, [wake, iv(103400, 150000, 0, 0)], kernel, trip("lateness", 100000, 103400, 3400, 3000))
    rc, out, err = report(capsys, d)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "stopped at -b 3.000 us: hg-thread-0 woke 3.400 us late at t=0.000100 s on CPU 0", out
    assert lines[1] == ("  the kernel: 3.4 us from due to user space: timer 0.5, irq 0.3, sched 2.2, return 0.4 us; "
                        "largest stage sched, blamed on task hog:777"), lines[1]


def test_a_run_without_b_has_no_such_block(tmp_path, capsys):
    d = run_dir(tmp_path, IVS[:2], [chunk(0, [rec(10000, VEC_E, 236), rec(10500, VEC_X, 236)])], None)
    rc, out, err = report(capsys, d, "--json", "-")
    assert rc == 0 and "breaktrace" not in json.loads(out), err


@pytest.mark.parametrize("bad, says", [
    ({"kind": "gap"}, "breaktrace.threshold_ns is missing"),
    (dict(trip("gap", 5, 1, 1, 1)), "neither a gap nor a lateness with its start before its end"),
    (dict(trip("gap", 1, 5, 1, 1), cpu="0"), "breaktrace.cpu is missing or not an integer"),
])
def test_a_wrong_breaktrace_is_bad_input(tmp_path, capsys, bad, says):
    d = run_dir(tmp_path, IVS[:2], [chunk(0, [rec(10000, VEC_E, 236), rec(10500, VEC_X, 236)])], bad)
    rc, out, err = report(capsys, d)
    assert rc == 3 and says in err and "hourglass.json" in err and len(err.splitlines()) == 1, err


def test_the_page_opens_the_run_with_the_same_lines(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from hgtools import html
    d = run_dir(tmp_path, IVS, KERNEL, trip("gap", 31000, 80000, 49000, 20000))
    rc, out, err = report(capsys, d, "--json", "-")
    assert rc == 0, err
    rep = json.loads(out)
    sec = html.run_section(rep, "break", {}, "r0")
    box = sec[sec.index("<pre class=break>"):sec.index("</pre>")]
    assert sec.index("<pre class=break>") < sec.index("<ul class=summary>")
    assert "switched to intruder:555" in box and box.count("local_timer (") == 3, box
    assert "stopped at hourglass -b" in html.lead([rep])


def test_only_the_last_gaps_before_the_trip_are_kept_in_time_order(tmp_path):
    """The per-gap stream of a -b run with -a holds hundreds of thousands of
    gaps; the report keeps the BEFORE latest that ended before the sample (and
    no more: keeping all took 900 MB), whatever order the stream gives them in."""
    from hgtools import breaktrace
    starts = list(range(0, 100_000, 10))
    starts = starts[1::2] + starts[::2]          # not in time order
    lines = [json.dumps({"cpu": 1, "g0": s, "g1": s + 5}) for s in starts]
    lines += [json.dumps({"cpu": 0, "g0": 100_010, "g1": 100_015}),       # another CPU, later
              json.dumps({"cpu": 1, "g0": 100_050, "g1": 100_400})]       # inside the sample
    p = tmp_path / "gaps.jsonl"
    p.write_text("\n".join(lines) + "\n")
    inside, before = breaktrace._gaps_near(str(p), trip("gap", 100_100, 100_300, 200, 100, cpu=1))
    assert [g["g0"] for g in inside] == [100_050]
    assert [g["g0"] for g in before] == [99_950, 99_960, 99_970, 99_980, 99_990]
    assert len(before) == breaktrace.BEFORE

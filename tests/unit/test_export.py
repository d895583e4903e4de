"""The KernelShark export: a merged trace.dat that trace-cmd reports and
libkshark (KernelShark's own library) loads, with both streams."""
import re
import subprocess

import pytest

from test_merge import IRQ_E, IRQ_X, VEC_E, VEC_X, chunk, comm, hgl, iv, rec, switch, META, hgt_file
from hgexport import kernelshark, kscheck
from hgexport.tracedat import TraceDat
from hgmerge.load import RunError


def make_run(tmp_path):
    recs = [iv(10000, 11000, 0, 0), iv(20000, 21000, 0, 0), iv(21500, 30000, 1, 0), iv(31000, 32000, 0, 0),
            iv(40000, 50000, 1, 1)]
    (tmp_path / "hourglass.hgl").write_bytes(hgl(recs))
    (tmp_path / "kernel.hgt").write_bytes(hgt_file(
        [chunk(0, [comm(11000, 555, "stress"), rec(11100, VEC_E, 236), rec(11500, VEC_X, 236),
                   switch(11600, 100, 555), switch(19800, 555, 100), switch(21200, 100, 101),
                   rec(30100, IRQ_E, 30), rec(30500, IRQ_X, 30), switch(30600, 101, 100)])], meta=META))
    return tmp_path


def report(path):
    p = subprocess.run(["trace-cmd", "report", str(path)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_export_trace_cmd_and_kernelshark(tmp_path):
    d = make_run(tmp_path)
    out = tmp_path / "merged.dat"
    r = kernelshark.export(str(d), str(out))
    assert r["gaps"] == 3 and r["kernel_events"] == 8
    text = report(out)
    assert len(re.findall(r" sched_switch: ", text)) == 4
    assert "stress:555" in text and "local_timer_entry" in text and "irq_handler_entry" in text
    gaps = [l for l in text.splitlines() if l.startswith("hourglass:") and " gap: " in l]
    assert len(gaps) == 3
    assert any("inferred=switch_hg actual=switch_hg" in g and "agree=1" in g for g in gaps)
    assert any("actual=switch_other cause=task stress:555" in g for g in gaps), gaps
    assert len([l for l in text.splitlines() if "interval_start:" in l]) == 5
    assert "hg-thread-0-100" in text, "hourglass threads are named"
    ks = kscheck.load(str(out))
    assert ks["streams"] == 2 and ks["unnamed"] == 0
    assert ks["events"]["sched/sched_switch"] == 4 and ks["events"]["hourglass/gap"] == 3
    assert ks["entries"] == r["kernel_events"] + r["hourglass_events"]
    assert ks["ts_min"] >= 1, "KernelShark reads a zero timestamp as unset"


def test_kernelshark_session_opens_on_a_gap(tmp_path):
    """--ks-session: KernelShark's library imports the session's two files
    and its markers sit on the chosen gap's ends."""
    import json
    import os
    d = make_run(tmp_path)
    out, ses = tmp_path / "merged.dat", tmp_path / "ks.json"
    r = kernelshark.export(str(d), str(out), session=str(ses))
    assert r["companion"] == str(tmp_path / "merged-hourglass.dat") and os.path.exists(r["companion"])
    doc = json.load(open(ses))
    files = [s["data"]["file"] for s in doc["data streams"]]
    assert files == [str(out), r["companion"]]
    assert all(s["data"]["time"] == int(os.stat(f).st_mtime) for s, f in zip(doc["data streams"], files))
    ks = kscheck.load_session(str(ses))
    assert ks["streams"] == 2 and ks["entries"] == r["kernel_events"] + r["hourglass_events"]
    # no wrong inference here: the first gap the kernel explains (11000..20000, stress ran)
    a, b = ks["marks"]["markA"], ks["marks"]["markB"]
    assert a[0] == "hourglass/interval_end" and b[0] == "hourglass/interval_start"
    assert b[1] - a[1] == 9000, (a, b)
    lo, hi = doc["Model"]["range"]
    assert lo <= a[1] < b[1] <= hi


def test_export_refuses_other_names(tmp_path):
    with pytest.raises(RunError):
        kernelshark.export(str(make_run(tmp_path)), str(tmp_path / "merged.trace"))


def test_writer_time_extend_and_lost_events(tmp_path):
    w = TraceDat(cpus=1, tsc_hz=1e9)
    ev = w.event("test", "tick", [("u32", "n", 4)], '"n=%u", REC->n')
    w.add("", 0, 1000, ev, 1, {"n": 1})
    w.add("", 0, 1000 + 3 * 10**9, ev, 1, {"n": 2})        # 3 s later: needs a time extend
    w.lost("", 0, 42)
    w.add("", 0, 1000 + 3 * 10**9 + 5, ev, 1, {"n": 3})
    with pytest.raises(ValueError):
        w.add("", 0, 10, ev, 1, {"n": 4})                     # back in time on one CPU
    w.write(str(tmp_path / "w.dat"))
    text = report(tmp_path / "w.dat")
    assert re.search(r"3\.000001: tick:\s+n=2", text), text
    assert "[42 EVENTS DROPPED]" in text
    ks = kscheck.load(str(tmp_path / "w.dat"))
    assert ks["events"] == {"test/tick": 3, "missed_events": 1}


def test_perfetto_trace_event_format(tmp_path):
    """Chrome trace-event JSON as ui.perfetto.dev reads it: phases, microsecond
    times, pid/tid tracks named by metadata events."""
    import json
    from hgexport import perfetto
    d = make_run(tmp_path)
    r = perfetto.export(str(d), str(tmp_path / "t.json"))
    doc = json.loads((tmp_path / "t.json").read_text())
    evs = doc["traceEvents"]
    assert r["events"] == len(evs)
    for e in evs:
        assert e["ph"] in ("X", "i", "M") and isinstance(e["pid"], int) and isinstance(e["tid"], int)
        assert isinstance(e["name"], str) and e["name"]
        if e["ph"] == "X":
            assert e["ts"] >= 0 and e["dur"] >= 0
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names[(1, 0)] == "CPU 0" and names[(2, 1)].startswith("thread 1 (tid 101")
    gaps = [e for e in evs if e.get("cat") == "gap"]
    assert len(gaps) == 3 and all(e["pid"] == 2 for e in gaps)
    sw = [e for e in gaps if e["args"]["actual"] == "switch_other"][0]
    assert sw["args"]["cause"] == "task stress:555" and sw["dur"] == pytest.approx(9.0)
    assert len([e for e in evs if e.get("cat") == "interval"]) == 5
    tick = [e for e in evs if e.get("cat") == "vec"]
    assert len(tick) == 1 and tick[0]["name"] == "local_timer" and tick[0]["dur"] == pytest.approx(0.4)


def test_html_report_side_by_side(tmp_path):
    """One self-contained page: a summary row per run, tables, inline charts."""
    import shutil
    from hgexport import htmlreport
    a = make_run(tmp_path / "a") if (tmp_path / "a").mkdir() is None else None
    b = tmp_path / "b"
    shutil.copytree(a, b)
    out = tmp_path / "r.html"
    r = htmlreport.render([str(a), str(b)], str(out), str(tmp_path / "svg"))
    page = out.read_text()
    assert r["runs"] == 2 and page.startswith("<!DOCTYPE html>")
    assert page.count("<svg") >= 6 and "execution map" in page and "supply-bound" in page
    assert "inferred against actual" in page.lower() and "precision" in page
    assert "<script" not in page and "src=" not in page and "href=" not in page, "self-contained"
    summary = page[:page.index("<h2>")]
    assert summary.count("<tr>") == 3, "a header and one row per run"
    svgs = sorted(p.name for p in (tmp_path / "svg").iterdir())
    assert "a-map.svg" in svgs and "b-sbf.svg" in svgs


def test_supply_bounds():
    """A thread that runs 1 ms of every 4 ms (1 MHz: a cycle is a microsecond)."""
    from hgexport.htmlreport import supply_bounds
    from test_merge import iv
    import hourglass_trace as Hm
    ivs = [Hm.Record(*iv(4000 * k, 4000 * k + 1000, 0, 0)) for k in range(100)]
    lo, hi = supply_bounds(ivs, 1e6, 0, 400000, ds=[1000, 3000, 4000, 5000])
    assert [round(v, 6) for _, v in lo] == [0, 0, 1, 1]          # ms, least in any window
    assert [round(v, 6) for _, v in hi] == [1, 1, 1, 2]          # ms, most in any window


def test_session_gap_is_the_first_wrong_inference_the_kernel_explains():
    from types import SimpleNamespace as G
    from hgexport.kssession import focus_gap
    gap = lambda n, inferred, actual, vol="": G(n=n, voluntary=vol, inferred=inferred, truth={"class": actual})
    gaps = [gap(0, "interrupt", "hidden"), gap(1, "timer", "timer"), gap(2, "timer", "unexplainable"),
            gap(3, "switch_other", "timer"), gap(4, None, "switch_other", vol="sleep")]
    assert focus_gap(gaps).n == 3
    assert focus_gap(gaps[:3]).n == 1            # none wrong: the first the kernel explains
    assert focus_gap(gaps[:1]).n == 0            # none explained: the first gap
    assert focus_gap([]) is None

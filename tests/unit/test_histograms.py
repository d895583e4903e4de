"""hourglass results --histograms: several runs' latency and gap histograms on one chart each
(one line per run, log counts, as cyclictest's and OSADL's plots), and per run a KernelShark
session that opens at its worst wake-up (issue 52, beyond)."""
import copy
import json
import os
import re

import pytest

pytest.importorskip("matplotlib", reason="the charts need matplotlib (make setup installs it)")
from hgtools import cli, engine, report_json  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), "data")


def fixture(name):
    with open(os.path.join(DATA, f"report-{name}.json")) as f:
        return json.load(f)


def make_run(d, rep, exported=True):
    """A run directory whose report.json is newer than its trace (results reads it, no merge)."""
    os.makedirs(d)
    for f in ("hourglass.hgl", "hourglass.json"):
        with open(os.path.join(d, f), "w") as fh:
            fh.write("{}")
    rep = copy.deepcopy(rep)
    rep["run"]["dir"] = d
    rep["report_minor"] = report_json.REPORT_MINOR      # judged by today's truth: read, not merged
    with open(os.path.join(d, "report.json"), "w") as f:
        json.dump(rep, f)
    os.utime(os.path.join(d, "hourglass.hgl"), (1, 1))
    if exported:
        for f in ("merged.dat", "merged-hourglass.dat", "trace.perfetto-trace"):
            open(os.path.join(d, f), "w").close()
        with open(os.path.join(d, "kernelshark-session.json"), "w") as f:
            json.dump({"type": "kshark.config.session", "Model": {"type": "kshark.config.model",
                                                                   "range": [1, 2], "bins": 1468},
                       "data streams": [{"data": {"file": "merged.dat"}},
                                        {"data": {"file": "merged-hourglass.dat"}}],
                       "Markers": {"markA": {"isSet": True, "row": 5}}, "ViewTop": 5}, f)
    return rep


def test_runs_side_by_side_and_a_session_at_each_worst(tmp_path, capsys, monkeypatch):
    # the runs are reports only: the check that a saved report's run still merges
    # (engine.check, tests/unit/test_wrong_recording.py) is not this test's subject
    monkeypatch.setattr(engine, "check", lambda run: None)
    lat = fixture("lat")
    slower = copy.deepcopy(lat)
    th = slower["latency"]["threads"]["0"]
    th["hist"]["counts"] = [c * 3 for c in th["hist"]["counts"]]
    slower["latency"]["worst"] = dict(slower["latency"]["worst"], t=2.5, latency_us=900.0)
    three = fixture("three")
    runs = tmp_path / "runs"
    a = make_run(str(runs / "a"), lat)
    b = make_run(str(runs / "b"), slower, exported=False)
    c = make_run(str(runs / "c"), three)
    out = tmp_path / "page" / "h.html"
    out.parent.mkdir()
    rc = cli.main(["results", str(runs), "--histograms", str(out)])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert err.strip() == f"hourglass results: {out}: 3 runs, 1 KernelShark session(s) at the worst wake-up"
    page = out.read_text()
    lat_fig = re.search(r"<figure id=h-latency>(.*?)</figure>", page, re.S).group(1)
    gap_fig = re.search(r"<figure id=h-gaps>(.*?)</figure>", page, re.S).group(1)
    n_a = sum(a["latency"]["threads"]["0"]["hist"]["counts"])
    # one line per run with wake-ups, named with its count; the count axis logarithmic
    assert f">a ({n_a})<" in lat_fig and f">b ({3 * n_a})<" in lat_fig and ">c (" not in lat_fig
    assert "wake-ups (log scale)" in lat_fig
    n_c = sum(sum(v) for v in c["charts"]["gap_hist"]["classes"].values())
    assert f">c ({n_c})<" in gap_fig and "gaps (log scale)" in gap_fig
    # a's session: the export's own, its span the worst wake-up's, its files from the run
    ses = json.load(open(tmp_path / "page" / "sessions" / "a.json"))
    w = a["latency"]["worst"]
    assert ses["Model"]["range"] == [int((w["t"] - 0.0005) * 1e9), int((w["t"] + w["latency_us"] / 1e6 + 0.0005) * 1e9)]
    assert [s["data"]["file"] for s in ses["data streams"]] == [os.path.join(str(runs / "a"), f)
                                                                 for f in ("merged.dat", "merged-hourglass.dat")]
    assert ses["Markers"]["markA"] == {"isSet": False} and "ViewTop" not in ses
    rows = {m.group(1): m.group(0) for m in re.finditer(r"<tr><td>(\w+)</td>.*?</tr>", page)}
    assert "kernelshark -s sessions/a.json" in rows["a"] and f"at {w['t']:.6f} s" in rows["a"]
    assert "not exported: hourglass export" in rows["b"] and "900.0 us" in rows["b"]
    assert not (tmp_path / "page" / "sessions" / "b.json").exists()
    assert rows["c"].count("<td>-</td>") == 4


def test_histograms_refuse_a_table(tmp_path, capsys):
    (tmp_path / "t.parquet").write_text("")
    rc = cli.main(["results", str(tmp_path / "t.parquet"), "--histograms", str(tmp_path / "h.html")])
    assert rc == 1 and "a Parquet table holds no histograms" in capsys.readouterr().err

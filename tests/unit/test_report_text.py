"""The text report, from hand-written report JSON v2 fixtures (tests/unit/data,
following docs/report-json.md): summary first, warnings shown, sections the
merger left null not printed, times in seconds on the one base, hg-thread-K."""
import io
import json
import os
import re

import pytest

from hgtools import report_text

DATA = os.path.join(os.path.dirname(__file__), "data")


def load(name):
    with open(os.path.join(DATA, f"report-{name}.json")) as f:
        return json.load(f)


def text(name, **kw):
    out = io.StringIO()
    report_text.render(load(name), out, **kw)
    return out.getvalue()


@pytest.mark.parametrize("name", ["three", "lat", "deadlines"])
def test_the_three_summary_lines_come_first(name):
    lines = text(name).splitlines()
    assert lines[:3] == load(name)["summary"]
    assert lines[3] == "" and lines[4].startswith("hourglass report: ")


def test_three_threads_with_inference():
    t = text("three")
    assert "inferred (columns, from hourglass alone) against actual (rows, from the kernel):" in t
    matrix = t[t.index("inferred (columns"):]
    row = next(l for l in matrix.splitlines() if l.strip().startswith("timer "))
    assert row.split()[1:6] == ["0", "3", "4080", "17", "0"] and row.endswith("99.5%")
    assert "accuracy: 4740 of 4811 gaps with a kernel cause (98.5%); 4774 of 4849 with the hidden ones" in t
    assert "tick CPU 1: 4.000 ms (gaps over 16 us)" in t
    assert "156 of 156 had the tick in the gap" in t
    assert "warning:" not in t, "no warnings in this run"
    # the empty 'other' row of the matrix is not printed
    assert not re.search(r"^  other\s+0\s+0", t, re.M)
    assert "disagreements: 75 (first 20)" in t
    assert len(re.findall(r"^  t=\d+\.\d{6} s CPU 1 hg-thread-2->hg-thread-2 ", t, re.M)) == 20


def test_disagreements_listed_as_asked():
    t = text("three", max_dis=3)
    assert "disagreements: 75 (first 3)" in t
    assert len(re.findall(r"^  t=\d+\.\d{6} s CPU", t, re.M)) == 3


def test_times_are_seconds_on_the_one_base_and_threads_are_named():
    t = text("deadlines")
    assert " ms thread " not in t and "thread 1" not in t and "t_ms" not in t
    assert "t=2.145007 s hg-thread-1 CPU 0: ran 15.90 of 33.00 ms; instead: hg-thread-0 12.00 ms, irq 24 eth0 1.10 ms" in t
    assert "worst: 4102.5 us at t=7.731140 s on CPU 0 (hg-thread-1)" in t
    assert "hourglass's own zero is at t=0.212031 s" in t
    assert "hg-thread-0    tid 412" in t


def test_a_latency_only_run_has_no_empty_section():
    t = text("lat")
    for absent in ("inferred (columns", "accuracy", "precision", "recall", "tick", "calibrated", "context switch",
                   "disagreements", "interrupt durations", "migrations", "CPU time per thread", "-100.0%",
                   "actual causes", "time lost", "missed deadlines", "0 of 0"):
        assert absent not in t, absent
    assert "gaps: 2000 (2000 voluntary, 0 scored, 0 unexplainable)" in t
    assert re.search(r"^    total +2\.6 +6\.0 +9\.5 +10\.7 +6680\.2$", t, re.M), t
    assert "worst: 6680.2 us at t=1.204512 s on CPU 1 (hg-thread-0): timer 2.1, irq 6650.3, sched 21.0, " \
           "return 6.8 us; largest stage irq, blamed on irq 11 virtio0" in t


def test_warnings_and_losses_are_shown():
    rep = load("deadlines")
    t = text("deadlines")
    for w in rep["warnings"]:
        assert f"warning: {w}\n" in t
    assert "12 lost (gaps that overlap a loss are unexplainable, not guessed)" in t
    assert "unexplainable: 2 the recorder lost events on this CPU during the gap" in t
    assert "missed deadlines: 3" in t


def test_per_stage_statistics_like_rtla():
    t = text("deadlines")
    block = t[t.index("hg-thread-1: 303 wake-ups"):]
    assert re.search(r"^    sched +[\d.]+ +[\d.]+ +[\d.]+ +[\d.]+ +[\d.]+$", block, re.M)


def test_the_scheduler_timer_and_the_calibrations_notes_are_said():
    """With HRTICK on, the calibration line says the scheduler's own timer, its slice and its floor;
    each note of the calibration (an unknown feature, a slice not read) gets a line."""
    rep = load("three")
    cal = rep["inference"]["calibration"]
    cal.update({"hrtick": True, "slice_ms": 0.7, "hidden_limit_in_slice_us": 4.717, "hrtick_gaps": 1667,
                "notes": ["the scheduler's features were not readable: the tick is taken as the only timer"]})
    out = io.StringIO()
    report_text.render(rep, out)
    t = out.getvalue()
    assert ("the scheduler's own timer (HRTICK) beside the tick: within 0.7 ms of a switch, below 4.72 us "
            "hidden there, 1667 gaps") in t
    assert "  note: the scheduler's features were not readable: the tick is taken as the only timer\n" in t
    cal.update({"hrtick": False, "notes": []})
    out = io.StringIO()
    report_text.render(rep, out)
    assert "HRTICK" not in out.getvalue() and "note:" not in out.getvalue()

"""bench/peers.py and bench/lttng.py on the host: how LTTng's own outputs are read
(events lost, events counted) and how the side-by-side figures are derived from
the timed runs. The runs themselves need a guest (make bench-icount)."""
import importlib
import importlib.util
import os
import sys

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BENCH = os.path.join(TOP, "bench")


def _from_bench(name):
    """bench/NAME.py, loaded from its file: bench/ stays off the import path, whose run.py is
    not tests/guest's (pytest.ini)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(BENCH, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


lttng = _from_bench("lttng")

# `lttng list SESSION` of lttng-tools 2.13, after `lttng stop`, cut to a channel
DISCARD_LISTING = """Recording session hgbench: [inactive]
    Trace output: /tmp/hg-peers/peer-lttng-0

=== Domain: Linux kernel ===

Channels:
-------------
- ch: [enabled]

    Attributes:
      Event-loss mode:  discard
      Sub-buffer size:  524288 bytes

    Statistics:
      Discarded events: 17

    Recording event rules:
      sched_switch (loglevel: TRACE_EMERG (0)) (type: tracepoint) [enabled]
"""
OVERWRITE_LISTING = DISCARD_LISTING.replace("discard", "overwrite").replace(
    "Discarded events: 17", "Lost packets:     3")

# babeltrace2 -c sink.utils.counter: a block as it goes, the last one the total
COUNTER = """
          20002 Event messages
              0 Discarded event messages
          20010 messages (TOTAL)

          31381 Event messages
              2 Stream beginning messages
              5 Discarded event messages
          31395 messages (TOTAL)
"""


def test_losses_discard_mode_counts_events():
    assert lttng.parse_losses(DISCARD_LISTING) == (17, 0)


def test_losses_overwrite_mode_counts_packets():
    assert lttng.parse_losses(OVERWRITE_LISTING) == (0, 3)


def test_a_listing_without_statistics_is_an_error_not_no_loss():
    with pytest.raises(SystemExit, match="no loss statistics"):
        lttng.parse_losses("Recording session hgbench: [inactive]\n")


def test_counter_takes_the_total_block():
    assert lttng.parse_counter(COUNTER) == (31381, 5)


def test_counter_without_events_is_an_error():
    with pytest.raises(SystemExit, match="no event count"):
        lttng.parse_counter("0 messages (TOTAL)\n")


def test_the_shared_event_set_leaves_out_what_lttng_lacks():
    names = [e for g in lttng.GROUPS for e in lttng.EVENTS[g]]
    assert "sched_switch" in names and "timer_hrtimer_expire_entry" in names
    assert not any("vector" in e or "nmi" in e for e in names)


@pytest.fixture
def peers(monkeypatch, tmp_path):
    monkeypatch.setenv("HGT_KO", "/nonexistent/hgtrace.ko")    # run.py reads it at import
    monkeypatch.setenv("HGT_BENCH_REC_DIR", str(tmp_path))    # peers.py sets a default otherwise
    # bench/ first, for this test only: peers imports run and lttng as bench's scripts do; and
    # the path as it was afterwards, which run.py changes (the guest tests' folders first)
    monkeypatch.syspath_prepend(BENCH)
    for name in ("peers", "run"):
        sys.modules.pop(name, None)
    yield importlib.import_module("peers")
    for name in ("peers", "run"):
        sys.modules.pop(name, None)


def test_ratios_against_trace_cmd_and_lttng_in_the_same_mode(peers):
    times = {"none": [100.0, 100.0, 101.0], "hgtrace stop": [120.0, 120.0, 120.5],
             "hgtrace overwrite": [121.0, 121.0, 121.0], "trace-cmd": [140.0, 140.0, 140.0],
             "lttng discard": [150.0, 150.0, 150.0], "lttng overwrite": [151.0, 151.0, 151.0],
             "hgtrace, nothing stored": [110.0, 110.0, 110.0]}
    run = lambda ev, by, **kw: dict(events=ev, lost=0, bytes=by, **kw)
    info = {"hgtrace stop": [run(1000, 26000, packed_bytes=3000)] * 3,
            "hgtrace overwrite": [run(1000, 26000, packed_bytes=3000)] * 3,
            "trace-cmd": [run(1000, 8000, data_bytes=None)] * 3,
            "lttng discard": [run(1000, 40000, lost_packets=0)] * 3,
            "lttng overwrite": [run(1000, 40000, lost_packets=0)] * 3}
    med, rows = peers.summarize(times, info)
    assert med["none"] == 100.0
    assert rows["hgtrace stop"]["overhead"] == pytest.approx(0.20)
    assert rows["hgtrace stop"]["of_trace_cmd"] == pytest.approx(0.5)
    assert rows["hgtrace stop"]["of_lttng"] == pytest.approx(0.4)
    assert rows["hgtrace overwrite"]["of_lttng"] == pytest.approx(0.21 / 0.51)
    assert rows["hgtrace stop"]["packed_per_event"] == pytest.approx(3.0)
    assert rows["lttng discard"]["bytes_per_event"] == pytest.approx(40.0)
    # timed only: no events, no bytes, still a ratio to trace-cmd
    assert rows["hgtrace, nothing stored"] == pytest.approx(dict(median=110.0, overhead=0.1, of_trace_cmd=0.25))


def test_hgtrace_alone_prints_without_the_others(peers, capsys):
    """HGT_PEERS_VARIANTS without trace-cmd and LTTng: no ratio to them, '-' in their columns."""
    times = {"none": [100.0] * 3, "hgtrace stop": [120.0] * 3, "hgtrace, nothing stored": [108.0] * 3}
    info = {"hgtrace stop": [dict(events=1000, lost=0, bytes=26000, packed_bytes=300)] * 3}
    med, rows = peers.summarize(times, info)
    assert "of_trace_cmd" not in rows["hgtrace stop"] and "of_lttng" not in rows["hgtrace stop"]
    assert rows["hgtrace, nothing stored"] == pytest.approx(dict(median=108.0, overhead=0.08))
    peers.print_table(dict(kernel="k", icount=True, lttng_modules=None, repeats=3, workload="w",
                           events="sched", median=med, rows=rows))
    out = capsys.readouterr().out
    assert "+20.0%" in out and "+8.0%" in out and "targets" not in out


def test_help_needs_no_guest():
    import subprocess
    p = subprocess.run([sys.executable, os.path.join(TOP, "bench", "peers.py"), "--help"], capture_output=True,
                       text=True, env={k: v for k, v in os.environ.items() if k != "HGT_KO"})
    assert p.returncode == 0 and "LTTng" in p.stdout

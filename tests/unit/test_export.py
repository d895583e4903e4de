"""The exporters in C (userspace/export, export.h): a synthetic run fed
through their hooks by userspace/export/tests/export_synth.c, then read
back as users would: trace-cmd report, KernelShark's own library (as the
GUI loads a file and a session), a JSON parser for Perfetto's file.

The run (export_synth.c says it in full): TSC at 1 GHz so that a cycle is a
nanosecond, base_tsc 1000000, three CPUs, hourglass threads 0 (tid 101,
CPU 0) and 1 (tid 102, CPU 1)."""
import json
import os
import re
import subprocess
from collections import Counter

import pytest

from helpers import kscheck

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
BUILD = os.path.join(TOP, "build", "export")


@pytest.fixture(scope="module")
def bins():
    subprocess.run(["make", "-s", "-C", os.path.join(TOP, "userspace", "export"), "tests"], check=True)
    return os.path.join(BUILD, "export_synth"), os.path.join(BUILD, "export_units")


def synth(bins, d, *args):
    """Run the driver into @d; its JSON (what it fed, both summaries)."""
    p = subprocess.run([bins[0], *args, str(d)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.fixture(scope="module")
def run(bins, tmp_path_factory):
    d = tmp_path_factory.mktemp("export")
    return d, synth(bins, d)


def report(path, *opts):
    p = subprocess.run(["trace-cmd", "report", *opts, str(path)], capture_output=True)
    assert p.returncode == 0, p.stderr
    return p.stdout.decode(errors="replace")     # one task's name is not UTF-8


def lines_of(text):
    """(buffer, cpu, seconds, event, rest) of each event line of trace-cmd report."""
    out = []
    for line in text.splitlines():
        m = re.match(r"(hourglass:)?\s*.*?\[(\d+)\]\s+([\d.]+): (\w+):\s+(.*)$", line)
        if m:
            out.append(("hourglass" if m.group(1) else "", int(m.group(2)), m.group(3), m.group(4), m.group(5)))
    return out


def test_units(bins, tmp_path):
    """The reorder window, JSON escaping and numbers, trace-cmd's TSC arithmetic, the page writer."""
    p = subprocess.run([bins[1], str(tmp_path)], capture_output=True, text=True)
    assert p.returncode == 0 and "not ok" not in p.stdout, p.stdout
    assert re.search(r"^1\.\.(\d+)$", p.stdout, re.M) and p.stdout.count("\nok ") >= 20
    assert "[7 EVENTS DROPPED]" in report(tmp_path / "units.dat")


def test_trace_cmd_reads_every_event(run):
    d, r = run
    ks = r["ks"]
    text = report(d / "merged.dat")
    ev = lines_of(text)
    counts = Counter(e[3] for e in ev)
    fed = r["fed"]
    assert {k: counts[k] for k in fed} == fed, (counts, fed)
    assert sum(1 for e in ev if e[0] == "") == ks["kernel_events"]
    assert sum(1 for e in ev if e[0] == "hourglass") == ks["hourglass_events"]
    assert ks["cpus"] == 3 and ks["gaps"] == 8 and ks["lost_events"] == 42
    # every CPU's times go forward, in each buffer
    last = {}
    for b, cpu, t, *_ in ev:
        assert float(t) >= last.get((b, cpu), 0), (b, cpu, t)
        last[(b, cpu)] = float(t)
    assert "CPU:1 [42 EVENTS DROPPED]" in text


def test_fields_names_and_times(run):
    d, _ = run
    text = report(d / "merged.dat", "-t")
    # hourglass's threads are hg-thread-K in comms and cmdlines; other tasks keep their names
    assert "hg-thread-0-101" in text and "hg-thread-1-102" in text
    assert re.search(r"sched_switch: +hg-thread-0:101 \[120\] R ==> stress:555", text)
    assert "stress-555" in text and "kworker/1:0-556" in text
    # TSC2NSEC and the time base: t = (tsc - base_tsc) / tsc_hz, to the nanosecond
    assert re.search(r"\[000\]\s+0\.000030520: softirq_entry:\s+vec=3", text)
    assert re.search(r"\[002\]\s+3\.500000000: local_timer_entry:\s+vector=236", text), "a time extend"
    assert re.search(r"irq_handler_entry:\s+irq=30 name=virtio0-input.0", text)
    # function names through the kallsyms section; an id without a name prints as its number
    assert re.search(r"hrtimer_expire_entry:.* function=tick_nohz_handler", text)
    assert re.search(r"nmi_handler:\s+perf_event_nmi_handler\(\) delta_ns: 2000", text)
    assert "0x22222222()" in text and "0x675a4f97" not in text
    # the gap events: inferred, actual, cause, agreement
    gaps = [l for l in text.splitlines() if l.startswith("hourglass:") and " gap: " in l]
    assert len(gaps) == 8
    assert any("length_ns=9000 agree=1 inferred=switch_other actual=switch_other cause=switched to stress:555"
               in g for g in gaps), gaps
    assert any("agree=0 inferred=switch_hg actual=interrupt cause=reschedule" in g for g in gaps)
    assert any("inferred=voluntary actual=switch_other" in g and "agree=0" in g for g in gaps)
    # a cause over 112 bytes of payload: an entry with a length word
    assert any("cause=hidden: no kernel event at all on this CPU (hypervisor, emulator or SMI)" in g for g in gaps)
    assert re.search(r"interval_end:\s+thread=0 duration_ns=5000 ended_by=sleep", text)
    assert re.search(r"wakeup:\s+thread=1 lateness_ns=-50 timer=POSIX", text)
    assert re.search(r"0\.000023000: deadline_miss:\s+thread=1", text)
    assert re.search(r"0\.000008000: job_done:\s+thread=1 response_ns=5000", text)


def test_late_records_put_back_or_clamped(run):
    """Records up to 2 ms late keep their place; older ones are written at the last
    time already written on their CPU, and counted."""
    d, r = run
    ev = [e for e in lines_of(report(d / "merged.dat", "-t")) if e[0] == "" and e[1] == 0]
    names = [(e[2], e[3]) for e in ev if "0.00006" in e[2]]
    assert names[:4] == [("0.000065100", "irq_handler_entry"), ("0.000065200", "irq_handler_exit"),
                         ("0.000065300", "softirq_entry"), ("0.000065400", "softirq_exit")], names
    assert r["ks"]["reordered"] >= 2 and r["ks"]["clamped"] == 1
    cpu2 = [e for e in lines_of(report(d / "merged.dat", "-t")) if e[0] == "" and e[1] == 2]
    assert ("0.001000000", "softirq_entry") in [(e[2], e[3]) for e in cpu2], "the clamped one"
    # hourglass's side: jobs arrive when they end, up to a period late
    assert r["ks"]["hg_reordered"] >= 1 and r["ks"]["hg_clamped"] == 0
    assert r["pf"]["reordered"] == r["ks"]["reordered"] and r["pf"]["clamped"] == 1


def test_kernelshark_loads_it(run):
    d, r = run
    ks = kscheck.load(str(d / "merged.dat"))
    assert ks["streams"] == 2 and ks["extra_buffers"] == 1 and ks["unnamed"] == 0
    fed = r["fed"]
    hg = {"interval_start", "interval_end", "gap", "job_release", "job_done", "deadline_miss", "wakeup"}
    for name, n in fed.items():
        key = [k for k in ks["events"] if k.endswith("/" + name)]
        assert len(key) == 1 and ks["events"][key[0]] == n, (name, key, ks["events"])
        assert key[0].startswith("hourglass/") == (name in hg)
    assert ks["events"]["missed_events"] == 1
    assert ks["entries"] == r["ks"]["kernel_events"] + r["ks"]["hourglass_events"] + 1
    assert ks["ts_min"] >= 1, "KernelShark reads a zero timestamp as unset"
    assert ks["ts_max"] == 3500000500


def test_session_opens_on_the_earliest_wrong_inference(run):
    """The gaps come per CPU: CPU 0's wrong one (30 us) first, CPU 1's (9 us) later;
    the session opens on the earlier, markers A and B on its rows."""
    d, r = run
    ks = r["ks"]
    assert ks["session_written"] == 1 and ks["companion"] == str(d / "merged-hourglass.dat")
    assert ks["session_gap_s"] == pytest.approx(9e-6, abs=1e-9)
    doc = json.load(open(d / "session.json"))
    files = [s["data"]["file"] for s in doc["data streams"]]
    assert files == [str(d / "merged.dat"), ks["companion"]]
    assert all(s["data"]["time"] == int(os.stat(f).st_mtime) for s, f in zip(doc["data streams"], files))
    assert doc["data streams"][0]["CPUPlots"] == [0, 1, 2] and doc["data streams"][1]["CPUPlots"] == [0, 1]
    s = kscheck.load_session(str(d / "session.json"))
    assert s["streams"] == 2
    assert s["entries"] == ks["kernel_events"] + 1 + ks["hourglass_events"], "with the missed-events entry"
    a, b = s["marks"]["markA"], s["marks"]["markB"]
    assert a[:2] == ("hourglass/interval_end", 9000) and a[2] == 1, a
    assert b[:2] == ("hourglass/interval_start", 9900) and b[2] == 1, b
    lo, hi = doc["Model"]["range"]
    assert lo <= a[1] < b[1] <= hi


def test_session_rows_count_lost_marks(bins, tmp_path):
    """Only the gaps from 45 us: none explained, so the session opens on the earliest
    (the sleep at 50 us), after CPU 1's missed-events entry (40.2 us): the rows count
    it, as KernelShark's table has it."""
    r = synth(bins, tmp_path, "--gaps-from", "45000", "--many", "3000")
    assert r["ks"]["gaps"] == 2 and r["ks"]["session_gap_s"] == pytest.approx(50e-6, abs=1e-9)
    s = kscheck.load_session(str(tmp_path / "session.json"))
    assert s["entries"] == r["ks"]["kernel_events"] + 1 + r["ks"]["hourglass_events"]
    assert s["marks"]["markA"][:2] == ("hourglass/interval_end", 50000), s["marks"]
    assert s["marks"]["markB"][:2] == ("hourglass/interval_start", 60000), s["marks"]


def test_many_pages(bins, tmp_path):
    """60,000 more events on CPU 2: many pages, chunks written and copied, all read back."""
    r = synth(bins, tmp_path, "--no-gaps", "--many", "30000")
    assert r["fed"]["softirq_entry"] == 30005 and r["ks"]["session_written"] == 0
    assert not (tmp_path / "session.json").exists() and not (tmp_path / "merged-hourglass.dat").exists()
    ks = kscheck.load(str(tmp_path / "merged.dat"))
    assert ks["events"]["irq/softirq_entry"] == 30005 and ks["events"]["irq/softirq_exit"] == 30004
    assert ks["entries"] == r["ks"]["kernel_events"] + r["ks"]["hourglass_events"] + 1
    assert os.path.getsize(tmp_path / "merged.dat") > 40 * 4096
    counts = Counter(e[3] for e in lines_of(report(tmp_path / "merged.dat")))
    assert counts["softirq_entry"] == 30005
    pf = json.load(open(tmp_path / "trace.json"))
    assert len([e for e in pf["traceEvents"] if e.get("name") == "softirq SCHED"]) == 30000


def test_perfetto_trace_event_format(run):
    """Chrome trace-event JSON as ui.perfetto.dev reads it: phases, microsecond times
    from base_tsc, pid/tid tracks named by metadata events, slices nested on CPUs."""
    d, r = run
    doc = json.loads((d / "trace.json").read_text())
    evs = doc["traceEvents"]
    assert r["pf"]["events"] == len(evs) and r["pf"]["gaps"] == 8
    for e in evs:
        assert e["ph"] in ("X", "i", "M") and isinstance(e["pid"], int) and isinstance(e["tid"], int)
        assert isinstance(e["name"], str) and e["name"]
        if e["ph"] == "X":
            assert e["ts"] >= 0 and e["dur"] >= 0
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names[(1, 0)] == "CPU 0" and names[(1, 2)] == "CPU 2"
    assert names[(2, 1)] == "hg-thread-1 (tid 102, PERIODIC)"
    gaps = [e for e in evs if e.get("cat") == "gap"]
    assert len(gaps) == 8 and all(e["pid"] == 2 for e in gaps)
    sw = [e for e in gaps if e["args"]["cause"] == "switched to stress:555"][0]
    assert sw["name"] == "gap: switch_other" and sw["dur"] == pytest.approx(9.0) and sw["args"]["agree"] is True
    wrong = [e for e in gaps if not e["args"]["agree"] and e["args"]["inferred"] != "voluntary"]
    assert sorted(e["name"] for e in wrong) == ["gap: interrupt (inferred switch_hg)",
                                                "gap: interrupt (inferred timer)",
                                                "gap: unexplainable (inferred hidden)"]
    assert len([e for e in evs if e.get("cat") == "interval"]) == 10
    tick = [e for e in evs if e.get("cat") == "vec" and e["tid"] == 0]
    assert len(tick) == 1 and tick[0]["name"] == "local_timer" and tick[0]["dur"] == pytest.approx(4.1)
    assert tick[0]["ts"] == pytest.approx(40.1)
    irq31 = [e for e in evs if e["name"] == "irq 31"]
    assert len(irq31) == 1 and irq31[0]["ts"] == pytest.approx(65.1), "put back in order before its slice"
    lost = [e for e in evs if e["name"] == "events lost"]
    assert len(lost) == 1 and lost[0]["args"]["count"] == 42 and lost[0]["tid"] == 1
    # names escaped: quotes, backslashes, bytes that are not UTF-8
    tasks = {e["name"] for e in evs if e.get("cat") == "task"}
    assert 'say "hi"\\:777' in tasks and "bad\ufffd\x01name:778" in tasks and "idle" in tasks
    assert "hg-thread-0" in tasks
    # handlers nest inside the task slices of their CPU
    for h in (e for e in evs if e.get("cat") in ("irq", "vec", "softirq")):
        inside = [t for t in evs if t.get("cat") == "task" and t["tid"] == h["tid"] and
                  t["ts"] <= h["ts"] and h["ts"] + h["dur"] <= t["ts"] + t["dur"] + 1e-9]
        assert inside, h
    misses = [e for e in evs if e["name"] == "deadline missed"]
    assert len(misses) == 1 and misses[0]["ts"] == pytest.approx(23)
    wakes = sorted(e["args"]["lateness_us"] for e in evs if e["name"] == "wake-up")
    assert wakes == [-0.05, 0.1]
    meta = doc["metadata"]
    assert meta["run"] == 'hourglass -n 2 -d 1 "quoted"' and meta["tsc_hz"] == 1e9
    assert meta["confusion"]["interrupt"]["timer"] == 1 and meta["confusion"]["switch_other"]["switch_other"] == 2


@pytest.mark.parametrize("args,msg", [
    (["--bad-cpu"], "but the run has 3 CPUs"),
    (["--name", "merged.trace"], "KernelShark opens only files named *.dat"),
])
def test_refusals_leave_nothing(bins, tmp_path, args, msg):
    p = subprocess.run([bins[0], *args, str(tmp_path)], capture_output=True, text=True)
    assert p.returncode == 3 and msg in p.stderr, p.stderr
    assert os.listdir(tmp_path) == [], "no output, no temporary file"


def test_abort_leaves_nothing(bins, tmp_path):
    r = synth(bins, tmp_path, "--abort")
    assert r["aborted"] > 0 and os.listdir(tmp_path) == []


def test_unwritable_folder(bins, tmp_path):
    if os.geteuid() == 0:
        # root writes anywhere: a folder that does not exist instead
        p = subprocess.run([bins[0], str(tmp_path / "no" / "such")], capture_output=True, text=True)
        assert p.returncode == 3 and "cannot create a file in its folder" in p.stderr, p.stderr
        return
    os.chmod(tmp_path, 0o500)
    try:
        p = subprocess.run([bins[0], str(tmp_path)], capture_output=True, text=True)
        assert p.returncode == 3 and "cannot create a file in its folder" in p.stderr, p.stderr
    finally:
        os.chmod(tmp_path, 0o700)


# The HTML report is still Python's (tools/hgexport/htmlreport.py): its tests stay here.

def make_run(tmp_path):
    from test_merge import hgl, hgt_file, chunk, comm, iv, rec, switch, META, IRQ_E, IRQ_X, VEC_E, VEC_X
    recs = [iv(10000, 11000, 0, 0), iv(20000, 21000, 0, 0), iv(21500, 30000, 1, 0), iv(31000, 32000, 0, 0),
            iv(40000, 50000, 1, 1)]
    (tmp_path / "hourglass.hgl").write_bytes(hgl(recs))
    (tmp_path / "kernel.hgt").write_bytes(hgt_file(
        [chunk(0, [comm(11000, 555, "stress"), rec(11100, VEC_E, 236), rec(11500, VEC_X, 236),
                   switch(11600, 100, 555), switch(19800, 555, 100), switch(21200, 100, 101),
                   rec(30100, IRQ_E, 30), rec(30500, IRQ_X, 30), switch(30600, 101, 100)])], meta=META))
    return tmp_path



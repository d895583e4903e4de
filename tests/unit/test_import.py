"""hgtrace-import on trace.dat files: a good one converts; one whose format
text names a huge event id is refused (exit 3, a message, no output), with
memory bounded, never a table sized by the id nor a wrong answer with exit 0."""
import os
import re
import resource
import subprocess

import pytest

from conftest import TOP
from hgtools.recordings import read_hgt

IMPORT = os.path.join(TOP, "build", "hgtrace-import")


@pytest.fixture(scope="module")
def importer(hgtrace_bin):
    if not os.access(IMPORT, os.X_OK):
        pytest.skip("hgtrace-import is not built (it needs libtracecmd-dev)")
    return IMPORT


def trace_dat(path, switch_id=None, late=None):
    """A small trace.dat as trace-cmd writes it (tests/helpers/tracedat.py); with
    @switch_id, sched_switch's format text names that id, its records keep theirs;
    with @late, one more switch on CPU 1 stamped so, after a lost event."""
    from helpers.tracedat import TraceDat, standard_events
    w = TraceDat(cpus=2, tsc_hz=1e9)
    ev = standard_events(w)
    sw = dict(prev_comm="a", prev_pid=7, prev_prio=120, prev_state=0, next_comm="b", next_pid=8, next_prio=120)
    w.add("", 0, 100, ev["switch"], 7, sw)
    w.add("", 0, 200, ev["irq_entry"], 0, dict(irq=30, name="eth0"))
    w.add("", 0, 300, ev["irq_exit"], 0, dict(irq=30, ret=1))
    w.add("", 1, 150, ev["softirq_entry"], 0, dict(vec=3))
    w.add("", 1, 250, ev["softirq_exit"], 0, dict(vec=3))
    if late is not None:
        w.lost("", 1, 1)        # a new page, whose header holds the whole stamp
        w.add("", 1, late, ev["switch"], 8, dict(sw, prev_pid=8, next_pid=7))
    if switch_id is not None:
        ev["switch"].format = re.sub(r"\nID: \d+\n", f"\nID: {switch_id}\n", ev["switch"].format, count=1)
    w.write(str(path))
    return path.read_bytes()


def limited(cmd):
    """Run @cmd with 1 GiB of address space: a table sized by a huge id cannot hide."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    return subprocess.run(cmd, capture_output=True, text=True, preexec_fn=limit)


def test_good_trace_dat(tmp_path, importer):
    dat, out = tmp_path / "t.dat", tmp_path / "k.hgt"
    trace_dat(dat)
    p = limited([importer, str(dat), "-o", str(out)])
    assert p.returncode == 0, p.stderr
    assert "events=5" in p.stdout and "first_ts=100 last_ts=300" in p.stdout
    r = read_hgt(str(out))
    assert r.meta["source"] == "trace-cmd" and r.meta["nr_cpu_ids"] == "2" and r.window == (100, 300)
    assert [(e.cpu, e.kind) for e in r.events if e.kind not in ("comm", "name")] == [
        (0, "switch"), (0, "irq_entry"), (0, "irq_exit"), (1, "softirq_entry"), (1, "softirq_exit")]


def test_imported_recording_is_merged(tmp_path, importer):
    """The recording names no clock (trace-cmd's file does not say which; the merger checks
    that its events cover the run), so the merger and hgtrace dump take it: it said
    "clock: as recorded (...)", which both refuse as not the TSC (issue 37)."""
    from helpers.files import hgl, iv
    dat, out = tmp_path / "t.dat", tmp_path / "kernel.hgt"
    trace_dat(dat)
    assert limited([importer, str(dat), "-o", str(out)]).returncode == 0
    assert "clock" not in read_hgt(str(out)).meta
    (tmp_path / "hourglass.hgl").write_bytes(hgl([iv(90, 120, 0, 0), iv(140, 260, 0, 0)], threads=1, t0=90))
    p = subprocess.run([os.path.join(TOP, "build", "hgmerge"), "--hgl", str(tmp_path / "hourglass.hgl"),
                        "--kernel", str(out), "--report", str(tmp_path / "r.json")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("reported,state,flags", [(0x100, 0, 1), (0x1, 0x1, 0), (0x2, 0x2, 0), (0x80, 0x402, 0),
                                                   (0x10, 0x80, 0), (0x20, 0x80, 0)])
def test_switch_state_as_the_module_records_it(tmp_path, importer, reported, state, flags):
    """sched_switch's prev_state as the tracepoint reports it (0x100 preempted, 0x80
    TASK_IDLE, 0x10/0x20 exiting; __trace_sched_switch_state) becomes what the module
    records: the preempt flag and state 0, TASK_IDLE's bits, the dying task's 0x80.
    hgtrace-import copied 0x100 as it was until 2026-11-28, and the merger read every
    preemption in an imported trace.dat as a task that blocked. next_prio 120 and 50:
    the policy (aux) is what the priority tells, fair and real-time."""
    from helpers.tracedat import TraceDat, standard_events
    dat, out = tmp_path / "t.dat", tmp_path / "k.hgt"
    w = TraceDat(cpus=1, tsc_hz=1e9)
    ev = standard_events(w)
    sw = dict(prev_comm="a", prev_pid=7, prev_prio=120, prev_state=reported, next_comm="b", next_pid=8, next_prio=120)
    w.add("", 0, 100, ev["switch"], 7, sw)
    w.add("", 0, 200, ev["switch"], 8, dict(sw, prev_pid=8, next_pid=7, next_prio=50))
    w.write(str(dat))
    p = limited([importer, str(dat), "-o", str(out)])
    assert p.returncode == 0, p.stderr
    sws = [e for e in read_hgt(str(out)).events if e.kind == "switch"]
    assert [(e.fields["prev_state"], e.flags) for e in sws] == [(state, flags)] * 2
    assert [e.aux for e in sws] == [0, 1]


@pytest.mark.parametrize("new_id", [2147483647, 50000000, 65535])
def test_huge_event_id_refused(tmp_path, importer, new_id):
    """The format text of sched_switch names another id than its records carry."""
    dat, out = tmp_path / "t.dat", tmp_path / "k.hgt"
    trace_dat(dat, switch_id=new_id)
    assert b"ID: %d" % new_id in dat.read_bytes()
    p = limited([importer, str(dat), "-o", str(out)])
    assert p.returncode == 3, (p.returncode, p.stdout, p.stderr)
    assert str(dat) in p.stderr and "none of the file's formats describes" in p.stderr, p.stderr
    assert "crashed" not in p.stderr and not out.exists()


def test_stamp_beyond_2_63_refused(tmp_path, importer):
    """A stamp no reader takes (the merger holds TSCs as int64): refused, not written
    into a .hgt the reader would refuse (found by fuzz_import)."""
    dat, out = tmp_path / "t.dat", tmp_path / "k.hgt"
    trace_dat(dat, late=(1 << 63) + 400)
    p = limited([importer, str(dat), "-o", str(out)])
    assert p.returncode == 3, (p.returncode, p.stdout, p.stderr)
    assert str(dat) in p.stderr and "1 records stamped beyond 2^63 (the first: 9223372036854776208)" in p.stderr
    assert not out.exists()


def test_a_crash_inside_libtracecmd_is_a_bad_file(tmp_path, importer):
    """One byte changed in a real trace.dat (found by fuzzing) makes libtracecmd 3.1 crash in
    tracecmd_open(): exit 3 naming the file, nothing written, and the crash put where it
    was, in libtracecmd, not in hgtrace-import's own code."""
    seed = os.path.join(os.path.dirname(__file__), "..", "fuzz", "corpus", "dat", "real-few.dat")
    data = bytearray(open(seed, "rb").read())
    data[8203] = 167
    dat, out = tmp_path / "t.dat", tmp_path / "k.hgt"
    dat.write_bytes(bytes(data))
    p = limited([importer, str(dat), "-o", str(out)])
    assert p.returncode == 3, (p.returncode, p.stderr)
    assert str(dat) in p.stderr and "its own code" not in p.stderr and not out.exists(), p.stderr
    # a newer libtracecmd may refuse the file instead of crashing on it
    assert "libtracecmd crashed reading" in p.stderr or "not a trace.dat that libtracecmd can open" in p.stderr


def test_unwritable_output(tmp_path, importer):
    dat = tmp_path / "t.dat"
    trace_dat(dat)
    p = subprocess.run([importer, str(dat), "-o", str(tmp_path / "no" / "k.hgt")], capture_output=True, text=True)
    assert p.returncode == 2 and "cannot create it" in p.stderr   # docs/exit-status.md


def test_no_events_refused(tmp_path, importer):
    """A trace.dat whose data libtracecmd cannot find gives no events: not a ground truth."""
    from helpers.tracedat import TraceDat
    dat, out = tmp_path / "t.dat", tmp_path / "k.hgt"
    TraceDat(cpus=2, tsc_hz=1e9).write(str(dat))
    p = limited([importer, str(dat), "-o", str(out)])
    assert p.returncode == 3 and "no events" in p.stderr and not out.exists(), p.stderr

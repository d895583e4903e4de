"""hourglass record --load, against stand-ins for hgtrace and hourglass: the
loads start after the recorder and before hourglass, run until hourglass has
ended, are stopped (SIGTERM, then SIGKILL) whatever happens, Ctrl-C
included, and record.json says what they were; report and export name them
to hgmerge with --label."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from hgtools import engine, loads

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))

# logs what happened when, as one JSON object a line, to $FAKE_LOG
FAKE_HGTRACE = r'''#!/usr/bin/env python3
import json, os, signal, subprocess, sys, time
def log(**kw):
    with open(os.environ["FAKE_LOG"], "a") as f:
        f.write(json.dumps(dict(kw, t=time.time())) + "\n")
a = sys.argv[1:]
if a[0] == "stat":
    print("fake module")
    sys.exit(0)
assert a[0] == "record"
out, cmd = a[a.index("-o") + 1], a[a.index("--") + 1:]
log(event="recorder-start", argv=a)
open(out, "w").write("HGTRACE\n")
child = subprocess.Popen(cmd, close_fds=False)
signal.signal(signal.SIGINT, lambda *_: (log(event="recorder-sigint"), child.terminate()))
while True:
    try:
        rc = child.wait()
        break
    except InterruptedError:
        pass
log(event="recorder-end", child=rc)
if rc:
    print(f"hgtrace: the command exited with status {rc}", file=sys.stderr)
'''

FAKE_HOURGLASS = r'''#!/usr/bin/env python3
import json, os, sys, time
a = sys.argv[1:]
if "--dry-run" in a:
    print("{}")
    sys.exit(0)
def log(**kw):
    with open(os.environ["FAKE_LOG"], "a") as f:
        f.write(json.dumps(dict(kw, t=time.time())) + "\n")
log(event="hourglass-start", pid=os.getpid(), fds=sorted(int(x) for x in os.listdir("/proc/self/fd")))
time.sleep(float(os.environ.get("FAKE_HG_SECONDS", "0.6")))
for opt in ("--trace", "--json", "-o"):
    open(a[a.index(opt) + 1], "w").write("x")
log(event="hourglass-end")
sys.exit(int(os.environ.get("FAKE_HG_RC", "0")))
'''


@pytest.fixture
def fakes(tmp_path, monkeypatch):
    d = tmp_path / "bin"
    d.mkdir()
    for name, text in (("hgtrace", FAKE_HGTRACE), ("hourglass", FAKE_HOURGLASS)):
        (d / name).write_text(text)
        (d / name).chmod(0o755)
    # a worker with a comm of its own, as a load's forked children have
    shutil.copy(shutil.which("sleep"), d / WORKER)
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "events.log"))
    return d


def record(fakes, tmp_path, *args, env=None, **kw):
    e = dict(os.environ, HG_BIN=str(fakes / "hourglass"), PYTHONPATH=os.path.join(TOP, "tools"),
             PATH=f"{fakes}:{os.environ['PATH']}", **(env or {}))
    return subprocess.Popen([sys.executable, "-m", "hgtools", "record", "-o", str(tmp_path / "run"), *args,
                             "--", "-n", "1", "-d", "1s"], env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kw)


def events(tmp_path):
    with open(tmp_path / "events.log") as f:
        return [json.loads(line) for line in f]


def when(evs, name):
    (t,) = [e["t"] for e in evs if e["event"] == name]
    return t


def gone(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] in ("Z", "X")
    except OSError:
        return True


# the fake worker's comm, this test process's own: pytest's other worker runs these tests too,
# and record names a comm only when no task outside the loads has it (loads.labels)
WORKER = f"lw{os.getpid() % 100000:05d}"


def load_cmd(tag, workers=1, ignore_term=False):
    """A shell that logs its start and its SIGTERM, with @workers WORKER children."""
    trap = "trap '' TERM" if ignore_term else \
        f"trap 'echo \"{{\\\"event\\\": \\\"{tag}-term\\\", \\\"t\\\": $(date +%s.%N)}}\" >> $FAKE_LOG; exit 0' TERM"
    spawn = " ".join([f"{WORKER} 100 &"] * (workers - 1))
    return (f"echo \"{{\\\"event\\\": \\\"{tag}-start\\\", \\\"t\\\": $(date +%s.%N), \\\"dir\\\": \\\"$HOURGLASS_RUN_DIR\\\", "
            f"\\\"n\\\": $HOURGLASS_LOAD}}\" >> $FAKE_LOG; {trap}; {spawn} {WORKER} 100 & wait")


def test_loads_start_after_the_recorder_and_stop_after_hourglass(fakes, tmp_path):
    p = record(fakes, tmp_path, "--load", load_cmd("a", workers=2), "--load", load_cmd("b"),
               "--load-settle", "300ms", "--label", "irq:24=disk")
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    evs = events(tmp_path)
    assert when(evs, "recorder-start") < when(evs, "a-start") < when(evs, "hourglass-start")
    assert when(evs, "hourglass-start") - when(evs, "b-start") >= 0.25, "the loads settle first"
    assert when(evs, "hourglass-end") < when(evs, "a-term") and when(evs, "hourglass-end") < when(evs, "b-term")
    starts = {e["event"]: e for e in evs}
    assert starts["a-start"]["dir"] == str(tmp_path / "run") and starts["b-start"]["n"] == 1
    # hourglass inherits none of the gate's pipes
    assert starts["hourglass-start"]["fds"] == [0, 1, 2, 3], starts["hourglass-start"]
    meta = json.load(open(tmp_path / "run" / "record.json"))
    assert meta["status"] == "complete" and not os.path.exists(tmp_path / "run" / "INCOMPLETE")
    la, lb = meta["loads"]
    assert la["command"] == load_cmd("a", workers=2) and la["ended"] == "SIGTERM" and la["exit"] == 0
    assert sorted(t["comm"] for t in la["tasks"]) == [WORKER, WORKER, "sh"]
    assert la["name"] == WORKER and lb["name"] == f"{WORKER}-2"
    for t in la["tasks"] + lb["tasks"]:
        assert gone(t["tid"]), f"{t} still runs after record"
        assert f"{t['tid']}={la['name'] if t in la['tasks'] else lb['name']}" in meta["labels"]
    # the comm names the workers a sample missed; 'sh' is too common to name anything
    assert f"comm:{WORKER}={WORKER}" in meta["labels"] and not any(x.startswith("comm:sh=") for x in meta["labels"])
    assert meta["labels"][-1] == "irq:24=disk"
    for k in ("counters_before", "counters_after"):
        c = meta[k]
        assert c["interrupts"]["cpus"] and c["monotonic_ns"] > 0
    assert meta["counters_after"]["monotonic_ns"] - meta["counters_before"]["monotonic_ns"] >= 0.5e9
    assert set(la["sched_before"]) == {str(t["tid"]) for t in la["tasks"]}
    assert "nr_switches" in next(iter(la["sched_after"].values()))
    assert (tmp_path / "run" / "load-0.log").exists()


def test_a_load_that_ignores_sigterm_is_killed(fakes, tmp_path):
    p = record(fakes, tmp_path, "--load", load_cmd("a", ignore_term=True), "--load-settle", "100ms",
               "--load-grace", "300ms")
    _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    (ld,) = json.load(open(tmp_path / "run" / "record.json"))["loads"]
    assert ld["ended"] == "SIGKILL" and ld["exit"] == -signal.SIGKILL
    assert all(gone(t["tid"]) for t in ld["tasks"])


def test_a_load_that_fails_at_once_stops_the_recording(fakes, tmp_path):
    p = record(fakes, tmp_path, "--load", "echo no such thing >&2; exit 7", "--load-settle", "200ms")
    _, err = p.communicate(timeout=60)
    assert p.returncode == 2
    assert "load 0 (echo no such thing >&2; exit 7) exited with status 7 before hourglass started" in err
    assert not any(e["event"] == "hourglass-start" for e in events(tmp_path)), "hourglass never ran"
    assert "exited with status 7" in open(tmp_path / "run" / "INCOMPLETE").read()
    assert "no such thing" in open(tmp_path / "run" / "load-0.log").read()


def test_ctrl_c_stops_the_loads_too(fakes, tmp_path):
    # as a terminal does: SIGINT to the whole foreground process group
    p = record(fakes, tmp_path, "--load", load_cmd("a"), "--load-settle", "100ms",
               env={"FAKE_HG_SECONDS": "30"}, start_new_session=True)
    for _ in range(300):
        if os.path.exists(tmp_path / "events.log") and any(e["event"] == "hourglass-start" for e in events(tmp_path)):
            break
        time.sleep(0.05)
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    meta = json.load(open(tmp_path / "run" / "record.json"))
    (ld,) = meta["loads"]
    assert ld["ended"] in ("SIGTERM", "SIGKILL") and all(gone(t["tid"]) for t in ld["tasks"])
    assert "interrupted" in open(tmp_path / "run" / "INCOMPLETE").read()


def test_bad_load_options(fakes, tmp_path):
    for args, msg in ((["--load"], "--load needs a value"), (["--label", "x=y"], "--label x=y: not PID=NAME"),
                      (["--load-settle", "soon"], "--load-settle soon: not a time"),
                      (["--reader-cpu", "9999"], "--reader-cpu 9999: not one of the CPUs this command may use"),
                      (["--reader-cpu", "-1"], "--reader-cpu -1: not one of the CPUs"),
                      (["--reader-interval", "1h"], "--reader-interval 1h: not a time from 1ms to 60s"),
                      (["--reader-interval", "61s"], "--reader-interval 61s: not a time")):
        p = record(fakes, tmp_path, *args[:-1], args[-1]) if len(args) > 1 else \
            subprocess.run([sys.executable, "-m", "hgtools", "record", "-o", str(tmp_path / "r"), "--load"],
                           env=dict(os.environ, PYTHONPATH=os.path.join(TOP, "tools")), capture_output=True, text=True)
        if isinstance(p, subprocess.Popen):
            _, err = p.communicate(timeout=30)
            rc = p.returncode
        else:
            err, rc = p.stderr, p.returncode
        assert rc == 1 and msg in err, err


def test_reader_cpu_goes_to_the_recorder(fakes, tmp_path):
    """--reader-cpu N: the recorder is told -C N (before its --), and record.json says N."""
    cpu = max(os.sched_getaffinity(0))
    p = record(fakes, tmp_path, "--reader-cpu", str(cpu))
    _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    (start,) = [e for e in events(tmp_path) if e["event"] == "recorder-start"]
    argv = start["argv"]
    assert argv[argv.index("-C") + 1] == str(cpu) and argv.index("-C") < argv.index("--"), argv
    with open(tmp_path / "run" / "record.json") as f:
        assert json.load(f)["reader_cpu"] == cpu


def test_reader_interval_goes_to_the_recorder(fakes, tmp_path):
    """--reader-interval T: the recorder is told -i T (before its --), and record.json says T."""
    p = record(fakes, tmp_path, "--reader-interval", "10s")
    _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    (start,) = [e for e in events(tmp_path) if e["event"] == "recorder-start"]
    argv = start["argv"]
    assert argv[argv.index("-i") + 1] == "10s" and argv.index("-i") < argv.index("--"), argv
    with open(tmp_path / "run" / "record.json") as f:
        assert json.load(f)["reader_interval"] == "10s"


def test_labels_name_pids_and_comms_no_one_else_has():
    a, b = loads.Load(0, "x"), loads.Load(1, "y")
    a.name, b.name = "stress", "pinger"
    a.tasks = {10: {"pid": 10, "comm": "sh"}, 11: {"pid": 11, "comm": "stress-ng-cpu"}}
    b.tasks = {20: {"pid": 20, "comm": "ping"}}
    out = loads.labels([a, b], {1: "init", 30: "pingd"})
    assert out == ["10=stress", "11=stress", "comm:stress-ng-cpu=stress", "20=pinger"]
    assert all(engine.LABEL_RE.match(x) for x in out)


def test_a_load_is_named_by_what_the_latest_sample_found_running():
    """A sample taken while the shell ran its command's first steps caught a child gone a
    moment later (a busy host, 2026-12-07: a load named `echo`): the next sample names it."""
    ld = loads.Load(1, "y")
    ld.tasks = {10: {"pid": 10, "comm": "sh"}, 11: {"pid": 11, "comm": "echo"}}
    ld.last_seen = {10, 11}
    assert ld.main_comm() == "echo"
    ld.tasks[12] = {"pid": 12, "comm": "lab-worker"}
    ld.last_seen = {10, 12}
    assert ld.main_comm() == "lab-worker"
    ld.last_seen = set()            # nothing left at the end: what was seen before
    assert ld.main_comm() == "echo"


@pytest.mark.parametrize("cmd,name", [("taskset -c 1 stress-ng --cpu 1", "stress-ng"),
                                      ("FOO=1 /usr/bin/lab-periodic 7ms 400us", "lab-periodic"),
                                      ("exec chrt -f 50 cyclictest -q", "cyclictest"), ("'", "load")])
def test_a_load_is_named_by_what_it_runs_until_its_comm_is_known(cmd, name):
    assert loads.default_name(cmd) == name


def test_counters_are_read_per_cpu():
    text = ("           CPU0       CPU1\n  0:         44          0   IO-APIC   2-edge      timer\n"
            "LOC:     123456      65432   Local timer interrupts\nERR:          0\n")
    t = loads.irq_table(text)
    assert t["cpus"] == [0, 1]
    assert t["rows"]["0"] == {"counts": [44, 0], "name": "IO-APIC 2-edge timer"}
    assert t["rows"]["LOC"]["counts"] == [123456, 65432] and t["rows"]["ERR"]["counts"] == [0]


FAKE_HGMERGE = r'''#!/usr/bin/env python3
import json, os, shutil, sys
args = sys.argv[1:]
with open(os.path.join(os.path.dirname(__file__), "argv.log"), "a") as f:
    f.write(json.dumps(args) + "\n")
shutil.copy(os.environ["FAKE_REPORT"], args[args.index("--report") + 1])
'''


@pytest.fixture
def merge_run(tmp_path, monkeypatch):
    d = tmp_path / "bin"
    d.mkdir()
    (d / "hgmerge").write_text(FAKE_HGMERGE)
    (d / "hgmerge").chmod(0o755)
    (d / "hourglass").write_text("#!/bin/sh\n")
    (d / "hourglass").chmod(0o755)
    monkeypatch.setenv("HG_BIN", str(d / "hourglass"))
    monkeypatch.setenv("FAKE_REPORT", os.path.join(os.path.dirname(__file__), "data", "report-three.json"))
    monkeypatch.setenv("HG_PROGRESS", "0")
    r = tmp_path / "run"
    r.mkdir()
    (r / "hourglass.hgl").write_bytes(b"HGLASS\n\0")
    (r / "kernel.hgt").write_bytes(b"HGTRACE\n")
    return d, r


def merged_labels(d):
    with open(d / "argv.log") as f:
        argv = json.loads(f.readlines()[-1])
    return [argv[i + 1] for i, a in enumerate(argv) if a == "--label"]


def test_report_and_export_name_the_recorded_loads(merge_run, capsys, tmp_path):
    from hgtools import cli
    d, r = merge_run
    (r / "record.json").write_text(json.dumps({"labels": ["245=periodic", "comm:stress-ng=stress"]}))
    assert cli.main(["report", str(r), "--label", "irq:11=disk"]) == 0
    assert merged_labels(d) == ["245=periodic", "comm:stress-ng=stress", "irq:11=disk"]
    assert cli.main(["export", str(r), "--perfetto", str(tmp_path / "p.json")]) == 0
    assert merged_labels(d) == ["245=periodic", "comm:stress-ng=stress"]
    capsys.readouterr()


def test_no_record_json_no_labels_and_a_bad_one_is_named(merge_run, capsys):
    from hgtools import cli
    d, r = merge_run
    assert cli.main(["report", str(r)]) == 0 and merged_labels(d) == []
    (r / "record.json").write_text(json.dumps({"labels": ["245 periodic"]}))
    assert cli.main(["report", str(r)]) == 3
    assert f"{r}/record.json: \"labels\" must be a list of PID=NAME" in capsys.readouterr().err
    (r / "record.json").write_text("{")
    assert cli.main(["report", str(r)]) == 3
    assert f"{r}/record.json: not JSON" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        cli.main(["report", str(r), "--label", "245"])
    assert e.value.code == 1 and "--label 245: not PID=NAME" in capsys.readouterr().err


def test_the_gate_waits_for_its_line_or_a_signal_without_a_timeout(monkeypatch):
    """_Gate.wait_line waits in one select, with no timeout (a wake-up every 100 ms there
    was a gap in hourglass's run): a line ends it, and so does a signal (its wake-up
    pipe), after which it sees the handler's mark; the process's wake-up fd is put back."""
    from hgtools import record
    timeouts = []
    real_select = record.select.select

    def spy(r, w, x, timeout=None):
        timeouts.append(timeout)
        return real_select(r, w, x, timeout)
    monkeypatch.setattr(record.select, "select", spy)
    gate = record._Gate()
    interrupted = []
    old = signal.signal(signal.SIGALRM, lambda sig, _f: interrupted.append(sig))
    try:
        os.write(gate.up_w, b"ready\n")
        assert gate.wait_line(None, interrupted) == "ready"
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        # were the signal missed, this line would end the wait (and fail the test), not a hang
        import threading
        late = threading.Timer(10, lambda: os.write(gate.up_w, b"missed\n"))
        late.start()
        try:
            got = gate.wait_line(None, interrupted)
        finally:
            late.cancel()
        assert got is None and interrupted == [signal.SIGALRM], got
        assert signal.set_wakeup_fd(-1) == -1, "the wake-up fd was not put back"
        interrupted.clear()
        os.close(gate.up_w)
        gate.up_w = -1
        assert gate.wait_line(None, interrupted) is None, "the gate's end is the end of its lines"
        assert timeouts and set(timeouts) == {None}, f"waits with a timeout: {timeouts}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        gate.close()

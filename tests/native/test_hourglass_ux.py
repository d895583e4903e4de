"""What an RT engineer meets in the first hour, on this machine (no guest):
Ctrl-C keeps what was measured, -q, --hist, --smp, /dev/cpu_dma_latency,
-b (stop on a threshold), and the warnings that now reach stderr.

No assertion here is on the machine's speed: a run is stopped by a signal
once its threads exist, and what is asserted is what the run wrote."""
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time

import pytest

import hgtools.recordings as H
# not `from conftest import`: with tests/unit collected in the same session that name is ambiguous
HOURGLASS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "hourglass")

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="real-time policies and mlockall need root")

DROP = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups")


def start(args, tmp_path, **kw):
    """hourglass in the background with -o, --json and --trace into tmp_path."""
    out = {k: tmp_path / f"run.{k}" for k in ("txt", "json", "hgl")}
    cmd = [HOURGLASS, *args.split(), "-o", str(out["txt"]), "--json", str(out["json"]), "--trace", str(out["hgl"])]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw), out


def wait_running(p, nthreads):
    """Until the workload threads exist (the main thread plus nthreads), then a little more."""
    task = f"/proc/{p.pid}/task"
    for _ in range(600):
        if p.poll() is not None:
            raise AssertionError(f"hourglass ended early: {p.returncode} {p.stderr.read()}")
        try:
            if len(os.listdir(task)) >= nthreads + 1:
                break
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    time.sleep(0.5)     # into the run itself (threads start 50 ms after they exist)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_keeps_what_was_measured(hourglass_bin, tmp_path, sig):
    """Ctrl-C (or a SIGTERM) in a 60 s run: exit 130, and the text, the JSON and
    the trace hold what the threads measured until then, marked incomplete; the
    trace has no END section (the format's 'incomplete'), so a reader takes it
    only when asked to."""
    p, out = start("-n 3 -d 60s -t 0 -p RTHIGH -w LAT 1ms -i HR -t 1 -w CPU -t 2 -w PERIODIC 3ms 8ms -i HR",
                   tmp_path)
    wait_running(p, 3)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    name = signal.Signals(sig).name
    assert p.returncode == 130, err
    assert f"interrupted by {'Ctrl-C (SIGINT)' if sig == signal.SIGINT else name}" in err, err
    # the summary on stderr: one line per thread, as the live line has them
    assert sum(1 for l in err.splitlines() if l.startswith("T:")) == 3, err
    text = out["txt"].read_text()
    assert f"stopped_by {name}" in text and "complete no" in text
    assert any(l.startswith(f"error: interrupted by {name}") for l in text.splitlines())
    assert len([l for l in text.splitlines() if l.startswith("summary: thread")]) == 3
    js = json.loads(out["json"].read_text())
    assert js["complete"] is False and js["interrupted"] == name and js["stopped_by"] == name
    assert 0 < js["duration_ns"] < js["duration_asked_ns"] == 60_000_000_000
    assert js["end_tsc"] - js["t0_tsc"] == pytest.approx(js["duration_ns"] * js["tsc"]["hz"] / 1e9, rel=1e-6)
    with pytest.raises(H.HglFormatError, match="no END section"):
        H.read_hgl(str(out["hgl"]))
    tr = H.read_hgl(str(out["hgl"]), allow_incomplete=True)
    assert not tr.complete and tr.info["interrupted"] == name
    assert len(tr.records) == js["records"]["used"] > 0
    t = js["threads"]
    d = t[2]["deadlines"]
    assert t[0]["lateness_ns"]["count"] > 0 and t[1]["intervals"] > 0 and d["hit"] + d["missed"] > 0
    # every record lies inside the run as it was cut
    end = js["end_tsc"] + js["tsc"]["hz"] * 0.05
    assert all(r.t0 <= end for r in tr.records)


def test_a_signal_wakes_threads_that_sleep(hourglass_bin, tmp_path):
    """A thread that starts 50 s in (-s) and one on a 30 s LAT period sleep
    through the whole stop: the monitor's kick wakes them, and the process
    ends long before its minute."""
    p, out = start("-n 2 -d 60s -t 0 -s 50s -t 1 -w LAT 30s -i HR", tmp_path)
    wait_running(p, 2)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=20)
    assert p.returncode == 130, err
    js = json.loads(out["json"].read_text())
    assert js["threads"][0]["intervals"] == 0, "it never started"
    assert "lateness_ns" not in js["threads"][1], "an interrupted sleep is not a wake-up"


def test_interrupted_before_the_run(hourglass_bin, tmp_path):
    """SIGINT while hourglass calibrates: nothing measured, said so, files written."""
    p, out = start("-n 1 -d 60s", tmp_path)
    # once SIGINT is blocked (SigBlk bit 1), hourglass has taken charge of it
    for _ in range(1000):
        with open(f"/proc/{p.pid}/status") as f:
            blk = [l for l in f if l.startswith("SigBlk:")]
        if blk and int(blk[0].split()[1], 16) & (1 << (signal.SIGINT - 1)):
            break
        time.sleep(0.001)
    assert not os.path.exists(f"/proc/{p.pid}/task") or len(os.listdir(f"/proc/{p.pid}/task")) == 1
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    js = json.loads(out["json"].read_text())
    assert js["interrupted"] == "SIGINT" and js["duration_ns"] < js["duration_asked_ns"]


def test_quiet_prints_the_summary_only(hg):
    full = hg("-n 1 -d 300ms -a -w CPU")
    quiet = hg("-n 1 -d 300ms -a -w CPU -q")
    assert full.intervals and not quiet.intervals
    assert all(l.split(":")[0] in ("info", "summary", "warning") for l in quiet.stdout.splitlines()), quiet.stdout
    assert len(quiet.lines("summary:")) == 2
    assert quiet.json["threads"][0]["intervals"] > 0, "-q changes the text only"
    lat = hg("-n 1 -d 300ms -a -p RTHIGH -w LAT 1ms -i HR -q")
    assert not lat.lines("latlate:") and lat.json["threads"][0]["lateness_ns"]["count"] > 0


def test_hist_counts_every_wake_up(hg):
    """--hist 50 (cyclictest -h 50): 1 us buckets to 50 us, over/count/min/avg/p99/max
    rows per thread that woke up; the buckets and the overflow add up to the count."""
    r = hg("-n 3 -d 500ms -t 0 -p RTHIGH -w LAT 1ms -i HR -t 1 -w CPU -t 2 -p RTMED -w LAT 2ms -i HR "
           "--hist 50 -q")
    rows = {}
    buckets = []
    for l in r.lines("hist:"):
        f = l.split()[1:]
        if f[0] == "Index":
            assert f[1:] == ["Thr-000", "Thr-002"], l
        elif f[0] in ("under", "over", "count", "min", "avg", "p99", "max"):
            rows[f[0]] = [float(x) for x in f[1:]]
        elif f[0] != "#":
            assert 0 <= float(f[0]) < 50
            buckets.append([int(x) for x in f[1:]])
    for col, k in enumerate((0, 2)):
        lat = r.json["threads"][k]["lateness_ns"]
        assert rows["count"][col] == lat["count"] > 0
        assert sum(b[col] for b in buckets) + rows["over"][col] + rows.get("under", [0, 0])[col] == lat["count"]
        assert rows["max"][col] == pytest.approx(lat["max"] / 1e3, abs=1e-3)
        assert rows["min"][col] == pytest.approx(lat["min"] / 1e3, abs=1e-3)
        assert rows["p99"][col] == pytest.approx(lat["p99"] / 1e3, abs=1e-3)
        wakes = [x.lateness_ns for x in r.trace.records if x.type == H.WAKE and x.thread == k]
        assert rows["over"][col] == sum(1 for x in wakes if x >= 50_000)


def test_smp_runs_a_copy_on_every_cpu(hg):
    cpus = sorted(os.sched_getaffinity(0))
    r = hg("-n 1 -d 300ms -a -w CPU --smp")
    assert len(r.json["threads"]) == len(cpus)
    for k, cpu in enumerate(cpus):
        assert {iv[5] for iv in r.intervals if iv[0] == k} == {cpu}
        assert r.json["threads"][k]["copy_of"] == 0


def test_cpu_dma_latency_held_at_zero_during_latency_runs(hourglass_bin, tmp_path):
    """As cyclictest: a LAT run holds /dev/cpu_dma_latency at 0 while it runs
    (the kernel's PM QoS request lasts while the file is open); --dma-latency
    off leaves it alone; a CPU-only run does not touch it."""
    if not os.path.exists("/dev/cpu_dma_latency"):
        pytest.skip("no /dev/cpu_dma_latency on this kernel")
    p, out = start("-n 1 -d 60s -a -p RTHIGH -w LAT 1ms -i HR", tmp_path)
    wait_running(p, 1)
    with open("/dev/cpu_dma_latency", "rb") as f:
        during = struct.unpack("i", f.read(4))[0]
    held = [os.readlink(f"/proc/{p.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{p.pid}/fd")]
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=60)
    assert during == 0
    assert "/dev/cpu_dma_latency" in held
    assert json.loads(out["json"].read_text())["cpu_dma_latency_us"] == 0
    for args in ("-n 1 -d 60s -a -p RTHIGH -w LAT 1ms -i HR --dma-latency off", "-n 1 -d 60s -a -w CPU"):
        (tmp_path / "run.json").unlink()
        p, out = start(args, tmp_path)
        wait_running(p, 1)
        held = [os.readlink(f"/proc/{p.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{p.pid}/fd")]
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=60)
        assert "/dev/cpu_dma_latency" not in held, args
        assert json.loads(out["json"].read_text())["cpu_dma_latency_us"] is None


def test_breaktrace_on_a_late_wake_up(hg):
    """-b 1: no wake-up on any machine comes within 1 us, so the first one
    stops the run: exit 5, the sample named in text, JSON and on stderr; the
    trace is complete (the run ended by its own rule, not cut off)."""
    r = hg("-n 1 -d 60s -t 0 -p RTHIGH -w LAT 1ms -i HR -b 1", expect=5)
    b = r.json["breaktrace"]
    assert b["kind"] == "lateness" and b["thread"] == 0 and b["value_ns"] > 1000 and b["threshold_ns"] == 1000
    assert r.json["stopped_by"] == "breaktrace" and r.json["complete"] is True and r.trace.complete
    assert r.json["duration_ns"] < r.json["duration_asked_ns"]
    assert r.json["threads"][0]["lateness_ns"]["max"] == b["value_ns"]
    line = r.lines("break:")
    assert len(line) == 1 and line[0].startswith("break: thread 0 lateness ")
    assert "-b 1.000 us passed: thread 0 woke up late by" in r.stderr
    wake = [x for x in r.trace.records if x.type == H.WAKE and x.lateness_ns == b["value_ns"]]
    assert len(wake) == 1 and (wake[0].t0, wake[0].t1) == (b["t0_tsc"], b["t1_tsc"])


def test_breaktrace_on_a_gap(hg):
    """-b 1 on a CPU thread: the first interrupt (a tick) is a gap of more
    than 1 us; the gap named is one of the trace's, between two intervals."""
    r = hg("-n 1 -d 60s -a -w CPU -b 1", expect=5)
    b = r.json["breaktrace"]
    # a gap trips above -b made into cycles (rounding down) and reads back in ns rounding
    # down: one cycle above 1 us reads 1000 ns, so the threshold itself is a value it may have
    assert b["kind"] == "gap" and b["value_ns"] >= 1000
    ivs = sorted((x.t0, x.t1) for x in r.trace.records if x.type == H.INTERVAL)
    assert any(a[1] == b["t0_tsc"] and c[0] == b["t1_tsc"] for a, c in zip(ivs, ivs[1:])), b


def test_breaktrace_freezes_the_recorder_above(hourglass_bin, tmp_path):
    """Under hgtrace record (here a stand-in of that name: the real one needs
    the module), -b sends SIGUSR1 to the pid in HGTRACE_RECORD_PID, which
    freezes the kernel's recording. A pid that is not an hgtrace above us is
    never signalled (SIGUSR1 would kill it)."""
    fake = tmp_path / "hgtrace"
    fake.write_text(f"""#!{sys.executable}
import os, signal, subprocess, sys
got = []
signal.signal(signal.SIGUSR1, lambda *_: got.append(1))
env = dict(os.environ, HGTRACE_RECORD_PID=str(os.getpid()))
rc = subprocess.call(sys.argv[1:], env=env)
open(os.environ["FROZEN"], "w").write(f"{{len(got)}} {{rc}}")
""")
    fake.chmod(0o755)
    frozen = tmp_path / "frozen"
    args = [HOURGLASS, "-n", "1", "-d", "60s", "-a", "-p", "RTHIGH", "-w", "LAT", "1ms", "-i", "HR", "-b", "1", "-q",
            "--json", str(tmp_path / "run.json")]
    p = subprocess.run([str(fake), *args], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, FROZEN=str(frozen)))
    assert frozen.read_text() == "1 5", (frozen.read_text(), p.stderr)
    js = json.loads((tmp_path / "run.json").read_text())
    assert js["breaktrace"]["recorder_pid"] > 0
    assert "hgtrace record was told to freeze" in p.stderr
    # a stale pid, not an ancestor: left alone
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, HGTRACE_RECORD_PID=str(bystander.pid)))
        assert p.returncode == 5 and bystander.poll() is None
        assert json.loads((tmp_path / "run.json").read_text())["breaktrace"]["recorder_pid"] == 0
    finally:
        bystander.kill()
        bystander.wait()


def test_fallback_and_timer_slack_say_so_on_stderr(hg):
    """--fallback -o FILE: the thread that ran as SCHED_OTHER is named on stderr
    too, before the run; LAT on NATIVE at a time-sharing priority warns that
    the timer slack is in the figures and names -i HR."""
    assert shutil.which("setpriv"), "setpriv (util-linux) is needed to drop privileges"
    r = hg("-n 1 -d 200ms -t 0 -p RTHIGH --fallback", trace=False, prefix=DROP)
    assert "hourglass: warning: thread 0: -p RTHIGH (SCHED_FIFO priority 80) refused" in r.stderr, r.stderr
    assert "running as SCHED_OTHER nice 0 instead" in r.stderr
    r = hg("-n 1 -d 200ms -a -w LAT 1ms -q")
    assert "-w LAT on the NATIVE timer" in r.stderr and "-i HR" in r.stderr, r.stderr
    assert r.lines("warning: thread 0: -w LAT on the NATIVE timer")
    for quiet in ("-n 1 -d 200ms -a -w LAT 1ms -i HR -q", "-n 1 -d 200ms -a -p RTLOW -w LAT 1ms -q"):
        assert "NATIVE timer" not in hg(quiet).stderr, quiet

"""test_record_loads - `hourglass record --load` with the real module: the load
runs beside hourglass and is stopped after it, the report names what it did,
and Ctrl-C stops it too.

The load is the lab's periodic SCHED_FIFO task (tools/hgtools/lab/progs/lab-periodic,
built into build/lab by make userspace on the host: the guest sees the
tree read-only) on hourglass's CPU: each of its jobs preempts hourglass
once.
"""
import json
import os
import shutil
import signal
import subprocess
import time

from depth import once
from harness import TOP, load, run, unload

HOURGLASS = os.path.join(TOP, "build", "hourglass")
PERIODIC = os.path.join(TOP, "build", "lab", "lab-periodic")


def _periodic():
    assert os.path.exists(PERIODIC), f"{PERIODIC} missing: make userspace (on the host) builds it"
    return PERIODIC


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def _tasks_of(comm):
    """How many tasks (threads included) of processes named @comm are alive."""
    n = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() != comm:
                    continue
            n += len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            pass
    return n


def _wait_for(cond, proc, timeout_s):
    """Until @cond holds (True) or @proc has ended or @timeout_s passed (False)."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end and proc.poll() is None:
        if cond():
            return True
        time.sleep(0.05)
    return False


@once(35)
def test_record_with_a_load(ctx):
    """A periodic task (FIFO 90, 300 us every 10 ms) beside hourglass on the last CPU for 2 s:
    record.json says what ran, the task is gone afterwards, and the report names its
    preemptions after it, about as many as its own stamps say."""
    load()
    cpu = os.cpu_count() - 1
    d = ctx.path("load")
    shutil.rmtree(d, ignore_errors=True)
    cmd = f"exec {_periodic()} -p 10ms -b 300us -P 90 -c {cpu} -o $HOURGLASS_RUN_DIR/stamps-0.txt"
    p = run([HOURGLASS, "record", "--dir", d, "--load", cmd, "--load-settle", "500ms", "--",
             "-n", "1", "-d", "2s", "-e", "2000000", "-t", "0", "-p", "NORMAL", "--affinity", str(cpu)], timeout=300)
    unload()
    with open(os.path.join(d, "record.json")) as f:
        meta = json.load(f)
    (ld,) = meta["loads"]
    assert ld["name"] == "lab-periodic" and ld["ended"] == "SIGTERM" and ld["exit"] == 0, ld
    assert [t["comm"] for t in ld["tasks"]] == ["lab-periodic"], ld["tasks"]
    assert f"{ld['pid']}=lab-periodic" in meta["labels"], meta["labels"]
    assert not _alive(ld["pid"]), "the load outlived record"
    assert len(meta["counters_before"]["interrupts"]["cpus"]) == os.cpu_count()
    with open(os.path.join(d, "stamps-0.txt")) as f:
        jobs = sum(1 for line in f if not line.startswith("#"))
    with open(os.path.join(d, "hourglass.json")) as f:
        th = json.load(f)["threads"][0]
    with open(os.path.join(d, "stamps-0.txt")) as f:
        inside = sum(1 for line in f if not line.startswith("#")
                     and th["first_tsc"] <= int(line.split()[0]) and int(line.split()[1]) <= th["last_tsc"])
    js = os.path.join(d, "report.json")
    r = run([HOURGLASS, "report", d, "--json", js], timeout=300)
    with open(js) as f:
        rep = json.load(f)
    caused = sum(x["gaps_caused"] for x in rep["loads"] if x["label"] == "lab-periodic")
    touched = sum(x["gaps_touched"] for x in rep["loads"] if x["label"] == "lab-periodic")
    assert "[lab-periodic]" in r.stdout, r.stdout[:3000]
    # each job the load ran inside hourglass's run is in a gap of its thread (the load is pinned
    # to its CPU); under the 2-vCPU guest's steal two jobs can fall in one gap: never more gaps
    # than jobs. The gaps it is named after are fewer the busier the host: a gap whose emulator
    # stall outlasts the job is hidden, with the load a part (the gap composition, issue 50;
    # 102 of 195 with three guests on the host's two cores, 2026-12-07), so the load's presence
    # is judged, not the name
    assert 0.8 * inside <= touched <= inside and caused <= touched, (caused, touched, inside, jobs)
    ctx.note(f"{jobs} jobs, {inside} inside hourglass's run, in {touched} gaps, {caused} named after the load; "
             f"record said: {p.stderr.strip().splitlines()[-1]}")


@once(40)
def test_ctrl_c_stops_the_loads(ctx):
    """Ctrl-C (SIGINT to the foreground group) while hourglass runs beside a stress-ng load that
    forks a worker: record exits 130, the directory is marked INCOMPLETE, every task of the
    load is gone and the module is left stopped."""
    load()
    d = ctx.path("interrupted")
    shutil.rmtree(d, ignore_errors=True)
    p = subprocess.Popen([HOURGLASS, "record", "--dir", d, "--load", "exec stress-ng --cpu 1 --temp-path /tmp --quiet",
                          "--load-settle", "500ms", "--", "-n", "1", "-d", "30s"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    # Ctrl-C once hourglass's threads run and the load has forked its worker, not after a fixed
    # time: a slow boot (6.1-rt under TCG beside another guest) took 8 s to reach hourglass's
    # calibration, before stress-ng had forked, and the load had one task to stop
    ran = _wait_for(lambda: _tasks_of("hourglass") >= 2 and _tasks_of("stress-ng-cpu") >= 1, p, 120)
    assert ran, f"hourglass and the load's worker not seen running in 120 s (record exited {p.poll()})"
    time.sleep(2)
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130, (p.returncode, err[-1500:])
    assert open(os.path.join(d, "INCOMPLETE")).read().startswith("interrupted")
    with open(os.path.join(d, "record.json")) as f:
        (ld,) = json.load(f)["loads"]
    assert len(ld["tasks"]) >= 2, ld["tasks"]          # stress-ng and its worker
    left = [t for t in ld["tasks"] if _alive(t["tid"])]
    assert not left, f"still running after record: {left}"
    assert ld["ended"] in ("SIGTERM", "SIGKILL"), ld
    st = run([os.path.join(TOP, "build", "hgtrace"), "stat"]).stdout
    assert "stopped" in st, st
    unload()


TESTS = [test_record_with_a_load, test_ctrl_c_stops_the_loads]

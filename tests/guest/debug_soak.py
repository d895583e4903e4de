#!/usr/bin/env python3
"""debug_soak - hgtrace.ko under load, for the debug kernel's checkers to watch (make check-debug).

    scripts/vm -k debug -m 4G -- tests/guest/debug_soak.py [NAME...]

Each stage is a test of the guest harness (tests/guest/harness.py), so each is judged
as every guest test is: the kernel log of its window (lockdep, KASAN, KFENCE, UBSAN,
SLUB, RCU stalls, soft lockups, hung tasks, the module's own messages), the taint flags,
and an unload that must succeed. The stages:

  - the biggest buffers the module takes (buffer_kb=1048576: 1 GiB a CPU) and the
    largest microstate table, recording 400 hackbench tasks;
  - hackbench at 400 tasks (10 groups of 20 senders and 20 receivers) recorded in stop
    and in overwrite mode;
  - stress-ng's cpu, timer, switch, fork and io stressors recorded in both modes;
  - Ctrl-C at every stage of a recording of 400 hackbench tasks: before the command
    starts, while the recorder sets up, while it records, while it drains, while it packs;
  - load and unload cycles while stress-ng runs: plain, recording, unloading while a
    recording runs (refused: the recorder holds the device), in both modes;
  - at the end, lockdep still on (it turns itself off after its first report).

What a stage measures (how long the recorder took to end after its Ctrl-C, how long
rmmod took) is printed under it. HGT_SOAK_SCALE (default 1) multiplies the loads.
Every wait is bounded (LIMIT_S) so that a stall fails the stage instead of the boot.
"""
import os
import re
import signal
import subprocess
import sys
import time

import harness  # beside this script; it puts the rest of the tree on the path (testpath)
import health
from harness import HGTRACE, KO, load, module_loaded, run, unload

SCALE = int(os.environ.get("HGT_SOAK_SCALE", "1"))
# 10 groups x (20 senders + 20 receivers): the 400 workers of the stall (docs/testing.md)
HACKBENCH_400 = ("hackbench", "-g", "10", "-f", "20")
STRESS = ("stress-ng", "--cpu", "2", "--timer", "2", "--switch", "2", "--fork", "2", "--io", "1")
# a recording's end, an rmmod: past this the stage fails (the checkers report a stall
# sooner: RCU after 10 s, hung tasks after 30 s); only so that a stall cannot hang the boot
LIMIT_S = 600


def status():
    with open("/proc/hgtrace/status") as f:
        return dict(line.split(" ", 1) for line in f.read().splitlines() if " " in line)


def running():
    return module_loaded() and status().get("state") == "running"


def kill_group(proc):
    """SIGKILL what is left of @proc's process group (a load's orphaned workers)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def group_left(pgid):
    """Pids still in process group @pgid."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        state, _ppid, pgrp = stat[stat.rfind(")") + 2:].split()[:3]
        if int(pgrp) == pgid and state not in ("Z", "X"):     # a zombie has ended
            out.append(int(pid))
    return out


def wait_until(cond, proc, limit=LIMIT_S):
    """Poll @cond every 5 ms while @proc runs: True once it held, False if @proc ended first."""
    t = time.monotonic()
    while proc.poll() is None:
        if cond():
            return True
        assert time.monotonic() - t < limit, f"waited {limit} s for the recorder to get there"
        time.sleep(0.005)
    return False


def record(ctx, name, args, cmd, interrupt=None):
    """hgtrace record -o NAME.hgt ARGS -- CMD in a process group of its own, as a shell's
    foreground job; @interrupt(proc, out), if given, waits for its moment and returns what
    it was, then the group gets SIGINT. Returns (what, seconds from the SIGINT or the
    start to the recorder's end, exit status, stderr). The recorder must end within
    LIMIT_S, leave the module stopped, and nothing of its group behind for long."""
    out = ctx.path(f"{name}.hgt")
    errf = open(ctx.path(f"{name}.err"), "w+")
    proc = subprocess.Popen([HGTRACE, "record", "-o", out, *args, *(("--", *cmd) if cmd else ())],
                            start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=errf)
    t0 = time.monotonic()
    what = "to the end"
    if interrupt:
        what = interrupt(proc, out)
        if proc.poll() is None:
            t0 = time.monotonic()
            os.killpg(proc.pid, signal.SIGINT)
    try:
        rc = proc.wait(timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        proc.wait()
        raise AssertionError(f"{name}: the recorder had not ended {LIMIT_S} s after "
                             f"{'its Ctrl-C' if interrupt else 'it started'} ({what})")
    took = time.monotonic() - t0
    # the command's workers end on their own once the recorder's Ctrl-C reached them
    t = time.monotonic()
    while group_left(proc.pid) and time.monotonic() - t < LIMIT_S:
        time.sleep(0.1)
    left = group_left(proc.pid)
    kill_group(proc)
    errf.seek(0)
    err = errf.read()
    assert not left, f"{name}: {len(left)} processes of the recorder's group still there {LIMIT_S} s later"
    assert rc == 0, f"{name}: hgtrace record exited {rc} ({what}):\n{err[-2000:]}"
    assert not os.path.exists(out + ".packing"), f"{name}: {out}.packing left behind"
    assert status()["state"] == "stopped", f"{name}: the module was left {status()['state']}"
    if os.path.exists(out):
        p = run([HGTRACE, "dump", out], check=False, timeout=LIMIT_S, stdout=subprocess.DEVNULL)
        assert p.returncode == 0, f"{name}: hgtrace dump {out} exited {p.returncode}: {p.stderr[-1000:]}"
    return what, took, rc, err


def lost_line(err):
    """The recorder's summary of losses (its last lines), for the notes."""
    m = re.search(r"^.*lost.*$", err, re.M | re.I)
    return m.group(0).strip() if m else "no losses reported"


def test_soak_biggest_buffers(ctx):
    load("buffer_kb=1048576", "msa_threads=65536")
    st = status()
    ctx.note(f"loaded with 1 GiB a CPU: {st.get('buffer', st.get('store', '?'))}")
    _, took, _, err = record(ctx, "biggest", ["-m", "stop"], (*HACKBENCH_400, "-l", str(10 * SCALE)))
    ctx.note(f"400 hackbench tasks recorded in {took:.1f} s; {lost_line(err)}")
    t = time.monotonic()
    unload()
    ctx.note(f"rmmod of 2 GiB of rings: {time.monotonic() - t:.1f} s")


def _hackbench(ctx, mode):
    load()
    _, took, _, err = record(ctx, f"hackbench-{mode}", ["-m", mode, "-b", "8192"],
                             (*HACKBENCH_400, "-l", str(20 * SCALE)))
    ctx.note(f"{mode} mode: 400 tasks, {took:.1f} s; {lost_line(err)}")


def test_soak_hackbench_400_stop(ctx):
    _hackbench(ctx, "stop")


def test_soak_hackbench_400_overwrite(ctx):
    _hackbench(ctx, "overwrite")


def _stress(ctx, mode):
    load()
    _, took, _, err = record(ctx, f"stress-{mode}", ["-m", mode, "-b", "4096", "-e", "all"],
                             (*STRESS, "-t", f"{20 * SCALE}s"))
    ctx.note(f"{mode} mode, syscalls too: stress-ng {20 * SCALE} s took {took:.1f} s; {lost_line(err)}")


def test_soak_stress_ng_stop(ctx):
    _stress(ctx, "stop")


def test_soak_stress_ng_overwrite(ctx):
    _stress(ctx, "overwrite")


def _device_open(pid):
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}") == "/dev/hgtrace" for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return False


def test_soak_ctrl_c_every_stage(ctx):
    load("buffer_kb=8192")
    load_cmd = (*HACKBENCH_400, "-l", str(1000 * SCALE))
    stages = []

    def at_once(proc, out):
        return "at once"

    def setting_up(delay):
        def when(proc, out):
            wait_until(lambda: _device_open(proc.pid), proc)
            time.sleep(delay)
            return f"device open +{delay * 1000:.0f} ms"
        return when

    def recording(delay):
        def when(proc, out):
            wait_until(running, proc)
            time.sleep(delay)
            return f"recording +{delay * 1000:.0f} ms"
        return when

    def draining(proc, out):
        wait_until(running, proc)
        time.sleep(2)
        os.killpg(proc.pid, signal.SIGINT)     # the first ends the recording ...
        wait_until(lambda: not running(), proc)
        return "draining"                      # ... the second lands in the final drain

    def packing(proc, out):
        got = wait_until(lambda: os.path.exists(out + ".packing"), proc)
        return "packing" if got else "after packing"

    points = [("at-once", [], at_once)]
    points += [(f"setup-{d}", [], setting_up(d)) for d in (0, 0.005, 0.02, 0.08)]
    points += [(f"rec-{d}", [], recording(d)) for d in (0, 0.05, 0.3, 1.0, 3.0)]
    points += [("drain", ["-b", "65536", "-i", "10s"], draining)]
    for name, args, when in points:
        what, took, _, _ = record(ctx, f"int-{name}", args, load_cmd, when)
        stages.append(f"{what}: {took:.1f} s")
    # packing: a command that ends by itself, then Ctrl-C as the file is packed
    what, took, _, _ = record(ctx, "int-pack", ["-z"], (*HACKBENCH_400, "-l", str(20 * SCALE)), packing)
    stages.append(f"{what}: {took:.1f} s")
    ctx.note("Ctrl-C to the recorder's end, under 400 hackbench tasks: " + "; ".join(stages))
    assert any(s.startswith("recording") for s in stages), stages


def test_soak_load_unload_under_load(ctx):
    bg = subprocess.Popen([*STRESS, "-t", "3600s"], start_new_session=True,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rmmods = []
    try:
        time.sleep(2)
        for i in range(8 * SCALE):
            mode = ("stop", "overwrite")[i % 2]
            load(f"buffer_kb={(64, 1024, 8192)[i % 3]}", f"overwrite={i % 2}")
            if i % 4 == 1:
                record(ctx, f"cycle-{i}", ["-m", mode, "-d", "2s"], ())
            elif i % 4 == 2:
                # rmmod while a recording runs: refused (the recorder holds the device),
                # then the recording ends as usual and the module unloads
                def refused(proc, out):
                    wait_until(running, proc)
                    p = run(["rmmod", "hgtrace"], check=False)
                    assert p.returncode != 0 and module_loaded(), \
                        f"rmmod while recording was not refused ({p.returncode}): {p.stderr}"
                    return "rmmod refused while recording"
                record(ctx, f"cycle-{i}", ["-m", mode], ("sleep", "3"), refused)
            t = time.monotonic()
            unload()
            rmmods.append(time.monotonic() - t)
    finally:
        kill_group(bg)
        bg.wait()
    ctx.note(f"{len(rmmods)} load/unload cycles under stress-ng; rmmod took {min(rmmods):.2f} "
             f"to {max(rmmods):.2f} s")


def test_soak_lockdep_still_on(ctx):
    configured, live = health.lockdep_live()
    if not configured:
        raise harness.NotHere("this kernel has no lockdep (/proc/lockdep_stats)")
    assert live, "lockdep turned itself off during the soak (debug_locks 0): a report came first, " \
        "or one of its tables ran full (/proc/lockdep_stats)"
    ctx.note("debug_locks 1: lockdep watched to the end")


TESTS = [test_soak_biggest_buffers, test_soak_hackbench_400_stop, test_soak_hackbench_400_overwrite,
         test_soak_stress_ng_stop, test_soak_stress_ng_overwrite, test_soak_ctrl_c_every_stage,
         test_soak_load_unload_under_load, test_soak_lockdep_still_on]

if __name__ == "__main__":
    if os.geteuid() != 0 or not os.path.exists("/proc/modules") or not os.path.isfile(KO):
        print("1..0 # SKIP needs root in a kernel that loads modules (run through scripts/vm)")
        sys.exit(4)
    wanted = sys.argv[1:]
    sys.exit(harness.main([t for t in TESTS if not wanted or any(w in t.__name__ for w in wanted)]))

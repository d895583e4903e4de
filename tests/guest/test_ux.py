"""test_ux - the first hour of an RT engineer, with the module: stop on a
threshold (hourglass -b under hourglass record), and Ctrl-C at several
points of `hourglass record`.

-b is a flight recorder (cyclictest -b, rtla -T): the module overwrites its
oldest events, and hourglass freezes it at the sample that passed the
threshold. A known intruder (a FIFO 90 busy loop started on hourglass's CPU
once it runs) makes a gap far longer than the emulator's own; the saved
recording must hold the intruder's switch, and end there: the events of
hourglass's exit, which come after, must not be in it (a recording that was
not frozen has them, which a second run checks). `hourglass report` of the
frozen run opens with the trip, the intruder named as its cause.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import time

from depth import once
from harness import TOP, load, run, unload
from hgtools.recordings import read_hgl, read_hgt

HOURGLASS = os.path.join(TOP, "build", "hourglass")
HGTRACE = os.path.join(TOP, "build", "hgtrace")
# the emulator's own gaps reach tens of ms (TCG runs every vCPU on one host
# thread); the intruder's is ten times the threshold, which is ten times those
BREAK_US = 150_000
# long enough to trip -b, short enough that the flight recorder's ring still holds the
# switch into the intruder at the gap's start: on 6.1-rt, 1.5 s of ticks and threaded
# irqs on CPU 1 overwrote it
BUSY_S = 0.4
INTRUDER = f"import time\nt = time.monotonic() + {BUSY_S}\nwhile time.monotonic() < t:\n    pass\n"


def hourglass_tasks():
    """Pids of running hourglass processes (the workload, not record's Python). A zombie
    has exited and is only waiting for its parent (init, once orphaned) to reap it: not
    running, and not counted."""
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            # pid (comm) state ...: comm may hold spaces and parentheses, the state follows the last ')'
            comm = stat[stat.find("(") + 1:stat.rfind(")")]
            state = stat[stat.rfind(")") + 2:stat.rfind(")") + 3]
            if comm == "hourglass" and state not in ("Z", "X"):
                out.append(int(pid))
    return out


def describe(pids):
    """Each pid's state, parent and command line: who left it, when a check finds one."""
    out = []
    for pid in sorted(pids):
        try:
            with open(f"/proc/{pid}/stat") as f:
                st = f.read()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            out.append(f"{pid} (gone)")
            continue
        fields = st[st.rfind(")") + 2:].split()
        out.append(f"{pid} state {fields[0]} ppid {fields[1]}: {cmd}")
    return "; ".join(out)


def wait_for_threads(n, timeout=120, proc=None):
    """Until an hourglass process has its n workload threads (and its main thread);
    None if proc (the record that runs it) ended first."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            return None
        for pid in hourglass_tasks():
            try:
                if len(os.listdir(f"/proc/{pid}/task")) >= n + 1:
                    return pid
            except OSError:
                pass
        time.sleep(0.1)
    raise AssertionError("hourglass's threads never appeared")


def exits_of(rec, pid):
    return [e for e in rec.events if e.kind == "exit" and (e.arg == pid or e.fields.get("pid") == pid)]


def start_breaktrace_run(ctx, d):
    """hourglass under record with -b, and the intruder on its CPU once it runs.

    The emulator's own gaps stay well under BREAK_US on a quiet host, but a busy
    host can stall a TCG vCPU longer: then hourglass trips before the intruder
    starts, a trip this test is not about. Such a run is noted and run again.

    This process and the recorder stay on CPU 0 (the caller pins this process;
    record's --reader-cpu the recorder): on PREEMPT_RT a SCHED_OTHER task's
    sleep ends in a soft hrtimer, run by ktimers/N at FIFO 1, which hourglass's
    FIFO 20 thread starves on CPU 1 for its whole run; a poller or a recorder
    whose timer was queued there slept through it (6.1-rt: the recorder did not
    drain for 60 s and this process never saw the threads).
    """
    for attempt in range(3):
        load()
        shutil.rmtree(d, ignore_errors=True)
        p = subprocess.Popen([HOURGLASS, "record", "--dir", d, "--reader-cpu", "0", "--", "-n", "1", "-d", "60s",
                              "-a", "-p", "RTLOW", "--affinity", "1", "-b", str(BREAK_US), "-q"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        hg_pid = None
        try:
            hg_pid = wait_for_threads(1, proc=p)
            if hg_pid is not None:
                time.sleep(1)
            if hg_pid is not None and p.poll() is None:
                intruder = subprocess.Popen(["chrt", "-f", "90", "taskset", "-c", "1", "python3", "-c", INTRUDER])
                return p, intruder, hg_pid
            _, err = p.communicate(timeout=300)
        finally:
            if p.poll() is None and hg_pid is None:
                p.kill()
        assert p.returncode == 5, ("record ended before hourglass's threads ran", p.returncode, err[-2000:])
        unload()
        ctx.note(f"run {attempt + 1}: the emulator tripped -b before the intruder started; run again")
    raise AssertionError("three runs tripped -b before the intruder: the emulator's gaps exceed "
                         f"{BREAK_US} us on this host")


@once(40)
def test_breaktrace_freezes_the_recording_at_the_intruder(ctx):
    d = ctx.path("break")
    mask = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {0})
    try:
        p, intruder, hg_pid = start_breaktrace_run(ctx, d)
        try:
            _, err = p.communicate(timeout=300)
        finally:
            if p.poll() is None:
                p.kill()
            intruder.wait(timeout=60)
    finally:
        os.sched_setaffinity(0, mask)
    assert p.returncode == 5, (p.returncode, err[-2000:])
    assert not os.path.exists(os.path.join(d, "INCOMPLETE")), os.listdir(d)
    with open(os.path.join(d, "record.json")) as f:
        meta = json.load(f)
    assert meta["breaktrace_ns"] == BREAK_US * 1000 and "overwrite" in meta["recorder_command"], meta
    with open(os.path.join(d, "hgtrace.log")) as f:
        log = f.read()
    assert "frozen by SIGUSR1" in log, log[-1500:]
    hg = json.load(open(os.path.join(d, "hourglass.json")))
    b = hg["breaktrace"]
    # -b made into cycles and the gap's cycles read back in ns both round down: a gap one
    # cycle above the threshold reads the threshold itself
    assert b["kind"] == "gap" and b["value_ns"] >= BREAK_US * 1000 and b["recorder_pid"] > 0, b
    unload()
    # the same recording without -b runs until hourglass has exited
    load()
    d2 = ctx.path("nobreak")
    shutil.rmtree(d2, ignore_errors=True)
    run([HOURGLASS, "record", "--dir", d2, "--", "-n", "1", "-d", "1s", "-a", "-p", "RTLOW", "--affinity", "1",
         "-q"], timeout=300)
    unload()
    ctx.on_host(breaktrace_checked, d, d2, intruder.pid, hg_pid)


def breaktrace_checked(ctx, d, d2, intruder, hg_pid):
    """test_breaktrace_freezes_the_recording_at_the_intruder's host half: the frozen
    recording, its report, and the unfrozen one; @intruder, @hg_pid: the pids."""
    hg = json.load(open(os.path.join(d, "hourglass.json")))
    b = hg["breaktrace"]
    tid = hg["threads"][0]["tid"]
    rec = read_hgt(os.path.join(d, "kernel.hgt"))
    assert rec.meta.get("mode") == "overwrite", rec.meta
    # the intruder ran on CPU 1 inside the gap that tripped: switched in from hourglass's
    # thread, or on PREEMPT_RT from the irq or timer thread that preempted it first
    taken = [e for e in rec.events if e.kind == "switch" and e.cpu == 1
             and e.fields["next_pid"] == intruder and b["t0_tsc"] <= e.tsc <= b["t1_tsc"]]
    assert taken, (f"no switch from hourglass {tid} or another to the intruder {intruder} in the gap "
                   f"{b['t0_tsc']}..{b['t1_tsc']}; switches on CPU 1 near it: "
                   f"{[(e.tsc, e.fields) for e in rec.events if e.kind == 'switch' and e.cpu == 1][-5:]}")
    # frozen at the trip: hourglass wrote its files and exited later, unrecorded
    assert not exits_of(rec, hg_pid), "the recording went on past the trip: not frozen"
    # a finished directory: the report reads it, and opens with the trip and its cause, the intruder
    r = run([HOURGLASS, "report", d, "--json", os.path.join(d, "report.json")], check=False, timeout=300)
    assert r.returncode == 0, (r.returncode, r.stderr[-1500:])
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"stopped at -b {BREAK_US:.3f} us: hg-thread-0 lost CPU 1 for "), lines[:3]
    kernel_says = [l for l in lines[1:] if l.startswith("  the kernel: ")]
    # by pid: its name is the one the module saw first (the forking harness's, or chrt's, or python3's)
    # on PREEMPT_RT the gap may be named after the irq thread that ran first, the intruder its largest part
    assert any(re.search(rf"(switched to|task) \S+:{intruder}\b", l) for l in kernel_says), (intruder, lines[:8])
    with open(os.path.join(d, "report.json")) as f:
        rb = json.load(f)["breaktrace"]
    assert rb["kind"] == "gap" and rb["value_us"] == b["value_ns"] / 1e3 and rb["gaps"], rb
    # how long the freeze took: the recorder's wake-up (SIGUSR1), and the module's last event
    ms = hg["tsc"]["hz"] / 1e3
    woke = [e.tsc for e in rec.events if e.kind in ("waking", "wakeup") and e.arg == b["recorder_pid"]
            and e.tsc >= b["t1_tsc"]]
    last = max(e.tsc for e in rec.events)
    ctx.note(f"tripped on a {b['value_ns'] / 1e6:.1f} ms gap; the recorder woken "
             f"{(min(woke) - b['t1_tsc']) / ms if woke else float('nan'):.3f} ms after it, the last event "
             f"{(last - b['t1_tsc']) / ms:.3f} ms after it "
             f"({sum(1 for e in rec.events if e.tsc > b['t1_tsc'])} events); {len(rec.events)} events kept")
    # the same recording without -b ran until hourglass had exited
    tid2 = json.load(open(os.path.join(d2, "hourglass.json")))["threads"][0]["tid"]
    rec2 = read_hgt(os.path.join(d2, "kernel.hgt"))
    comm = [e for e in rec2.events if e.kind == "comm" and e.arg == tid2]
    tgid = comm[0].fields.get("tgid") if comm else None
    assert tgid and exits_of(rec2, tgid), "an unfrozen recording holds hourglass's exit"


def workload_pid():
    """The hourglass that runs under hgtrace record (its command line has --trace), or None."""
    for pid in hourglass_tasks():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"--trace" in f.read():
                    return pid
        except OSError:
            pass
    return None


def interrupt_record(ctx, name, when):
    """hourglass record of a 60 s run, SIGINT to its process group (a
    terminal's Ctrl-C) at @when: 'start' (0.2 s in: Python starting, the dry
    run, hgtrace stat, the directory), 'setup' (hourglass under the recorder,
    calibrating, no thread yet), 'run' (hourglass's threads running)."""
    d = ctx.path(name)
    shutil.rmtree(d, ignore_errors=True)
    p = subprocess.Popen([HOURGLASS, "record", "--dir", d, "--", "-n", "2", "-d", "60s", "-t", "0", "-w", "LAT",
                          "1ms", "-i", "HR", "-t", "1", "-w", "CPU"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    if when == "start":
        time.sleep(0.2)
    elif when == "setup":
        end = time.monotonic() + 120
        while not workload_pid() and time.monotonic() < end:
            time.sleep(0.01)
    else:
        if wait_for_threads(2, proc=p) is None:
            raise AssertionError(("record ended before hourglass's threads ran", p.returncode,
                                  p.communicate()[1][-2000:]))
        time.sleep(1)
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=180)
    return d, p.returncode, err


@once(75)
def test_ctrl_c_anywhere_in_record(ctx):
    """Whenever it comes, Ctrl-C ends `hourglass record` with 130, leaves no
    hgtrace or hourglass running, the module stopped, the directory (if made)
    marked INCOMPLETE; once hourglass ran, its trace holds what it measured
    and says it was interrupted (no END section: readers take it when asked)."""
    for when in ("start", "setup", "run"):
        load()
        # hourglass processes from before this record (an earlier test's, still exiting) are
        # not this record's to stop: named in the notes, and left out of the check
        before = set(hourglass_tasks())
        if before:
            ctx.note(f"{when}: hourglass running before the record: {describe(before)}")
        d, rc, err = interrupt_record(ctx, f"ctrlc-{when}", when)
        # before Python has its handlers, the conventional end: killed by SIGINT (the shell's 130)
        assert rc == 130 or (when == "start" and rc == -signal.SIGINT), (when, rc, err[-1500:])
        assert "Traceback" not in err, (when, err[-1500:])
        left = set(hourglass_tasks()) - before
        assert not left, f"{when}: hourglass left running: {describe(left)}"
        left = run(["pgrep", "-x", "hgtrace"], check=False).stdout.split()
        assert not left, f"{when}: hgtrace record left running: {left}"
        st = run([HGTRACE, "stat"]).stdout
        assert "running" not in st, f"{when}: the module is still recording:\n{st}"
        if os.path.exists(d):
            with open(os.path.join(d, "INCOMPLETE")) as f:
                assert f.read().startswith("interrupted"), (when, os.listdir(d))
            with open(os.path.join(d, "record.json")) as f:
                assert json.load(f)["status"].startswith("interrupted"), when
        hgl = os.path.join(d, "hourglass.hgl")
        if when == "setup" and os.path.exists(hgl):
            tr = read_hgl(hgl, allow_incomplete=True)
            assert tr.info["interrupted"] == "SIGINT", tr.info.get("interrupted")
        if when == "run":
            tr = read_hgl(hgl, allow_incomplete=True)
            assert not tr.complete and tr.info["interrupted"] == "SIGINT", tr.info.get("interrupted")
            assert tr.records, "what hourglass measured before Ctrl-C is kept"
            r = run([HOURGLASS, "report", d], check=False)
            assert r.returncode == 3 and "interrupted" in r.stderr, r.stderr
        ctx.note(f"Ctrl-C at {when}: exit {rc}; files {sorted(os.listdir(d)) if os.path.exists(d) else 'none'}")
        unload()


TESTS = [test_breaktrace_freezes_the_recording_at_the_intruder, test_ctrl_c_anywhere_in_record]

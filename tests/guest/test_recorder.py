"""test_recorder - hgtrace.ko and its recorder, checked inside a real kernel.

Run by run.py in a guest booted with scripts/vm. Every test asserts; figures
worth keeping are printed as notes under the TAP line.
"""
import os
import statistics
import subprocess
import time

from depth import sized
from harness import HGTRACE, KO, TESTBIN, load, module_loaded, run, sched_clock_stable, unload
from hgtools.recordings import read_hgt  # (the library's reader, through hgtrace dump)
from helpers import ftrace_text  # (moved from tools/ to tests/helpers/)
import matching

KO_ABI99 = os.environ.get("HGT_KO_ABI99", "")
HACKBENCH = "hackbench -l 60 -g 2"
# the agreement's load: 52 000 events at full size; when quick, with an eighth of the dd,
# 6 500 (6.1) to 16 500 (6.12-rt) pairs on 2026-11-29 (2000 a side are needed; reading
# and pairing them, most of the test's time in the guest, is now its host half's)
AGREE_LOAD = sized(HACKBENCH, "hackbench -l 6 -g 2")
# -c 0's load: when quick, a few thousand records on CPU 0 are plenty (-l 60 gave 42 000 to
# 59 000 on 2026-11-29); CPU 1 must be busy too, so that dropping its events is checked
FILTER_LOAD = sized(HACKBENCH, "hackbench -l 10 -g 2")


def hgtrace(*args, check=True, **kw):
    return run([HGTRACE, *args], check=check, **kw)


def data_records(rec, cpu=None):
    return [e for e in rec.events if e.kind != "lost" and (cpu is None or e.cpu == cpu)]


def test_load_and_tracepoints(ctx):
    load()
    status = open("/proc/hgtrace/status").read()
    assert "abi 1." in status and "state stopped" in status, status
    missing = [l.split()[1] for l in status.splitlines() if l.startswith("tracepoint") and "missing" in l]
    found = [l.split()[1] for l in status.splitlines() if l.startswith("tracepoint") and " found" in l]
    for tp in ("sched_switch", "sched_waking", "irq_handler_entry", "softirq_entry",
               "local_timer_entry", "hrtimer_expire_entry"):
        assert tp in found, f"{tp} not found on this kernel:\n{status}"
    ctx.note(f"{len(found)} tracepoints found" + (f", missing: {' '.join(missing)}" if missing else ", none missing"))
    unload()
    p = run(["insmod", KO, "buffer_kb=2"], check=False)
    assert p.returncode != 0 and not module_loaded(), "a 2 KiB buffer was accepted"
    load()
    p = hgtrace("stat")
    assert "abi: 1." in p.stdout and "stopped" in p.stdout, p.stdout


def test_ftrace_agreement(ctx):
    """Every sched_switch, irq and softirq event of each recorder has its partner in the other."""
    load()
    dat, hgt = ctx.path("ftrace.dat"), ctx.path("hgtrace.hgt")
    run("trace-cmd reset")
    run(["trace-cmd", "start", "-C", "x86-tsc", "-b", "30000",
         "-e", "sched:sched_switch", "-e", "irq:irq_handler_entry", "-e", "irq:irq_handler_exit",
         "-e", "irq:softirq_entry", "-e", "irq:softirq_exit"])
    try:
        workload = (f"{AGREE_LOAD}; dd if=/dev/zero of={ctx.path('io')} bs=64k count={sized(200, 25)} conv=fsync "
                    "2>/dev/null; sleep 0.3")
        hgtrace("record", "-q", "-o", hgt, "--", "sh", "-c", workload)
    finally:
        run("trace-cmd stop")
        run(["trace-cmd", "extract", "-o", dat])
        run("trace-cmd reset")
        os.path.exists(ctx.path("io")) and os.remove(ctx.path("io"))
    ctx.on_host(ftrace_agreement_checked, hgt, dat)


def ftrace_agreement_checked(ctx, hgt, dat):
    """test_ftrace_agreement's host half: read both files back and pair them."""
    rec = read_hgt(hgt)
    fev, drops = ftrace_text.read_report(dat)
    # Pair in order within 200 us, then what is left within 50 ms. Under
    # emulation a vCPU can stall between the two probes of one tracepoint
    # (seen up to 3.4 ms with single-threaded TCG, which runs one vCPU at a
    # time). The window only decides which events pair: a missing event still
    # leaves one unmatched, where it was (matching.py). Agreement of the
    # stamps is asserted separately on the distribution.
    # stamp order is write order on each CPU (kmod/probes.c, HGT_IRQS_OFF)
    last, back = {}, []
    for e in rec.events:
        if e.tsc < last.get(e.cpu, (0, None))[0]:
            back.append((e.cpu, last[e.cpu][1], e.kind, last[e.cpu][0] - e.tsc))
        last[e.cpu] = (e.tsc, e.kind)
    assert not back, f"{len(back)} records went back in time on their CPU: {back[:5]}"
    tol = rec.tsc_khz * 50                   # 50 ms in cycles
    res = matching.match(rec.events, fev, drops, rec.window, tol)
    total = res["ftrace"] + res["hgtrace"]
    assert res["ftrace"] > 2000 and res["hgtrace"] > 2000, f"too few events to compare: {res['ftrace']}, {res['hgtrace']}"
    dts = sorted(abs(d) * 1000 / rec.tsc_khz for d in res["dts"])
    ctx.note(f"matched {res['matched']} pairs; ftrace {res['ftrace']} events, hgtrace {res['hgtrace']}; "
             f"{res['excluded']} excluded by reported losses ({len(drops)} ftrace drops, "
             f"{sum(1 for e in rec.events if e.kind == 'lost')} hgtrace LOST markers)")
    ctx.note(f"match rate {2 * res['matched'] / total * 100:.3f}% of uncovered events; "
             f"|dt| median {statistics.median(dts):.2f} us, p95 {dts[int(len(dts) * .95)]:.2f} us, p99 {dts[int(len(dts) * .99)]:.2f} us, max {dts[-1]:.2f} us")
    slow = sum(1 for d in dts if d > 20)
    ctx.note(f"{slow} pairs ({slow / max(len(dts), 1) * 100:.3f}%) more than 20 us apart")
    # The stamps' agreement: the median is the probes' own distance (the first
    # probe's run on the tracepoint, in the guest's TSC, which is the host's
    # time: it stretches when the host is busy), 4.67 and 5.38 us on 6.1-rt and
    # 6.1 in one make check of 2026-11-26, so held to 10 us until 2026-12-02 (below), which a stamp from
    # another clock or a misplaced record would still exceed by far. A kind, or
    # one CPU's events of it, stamped elsewhere shows in its own median, held to
    # 20 us until 2026-12-02 (1.8 to 9.1 us in the 11 runs of the four kernels stored on
    # 2026-11-29, the largest an irq's entry on 6.1-rt). The tail is the emulator's (a TCG time slice, or the host
    # preempting QEMU between the two probes) and grows with the host's load
    # and speed: p95 was 5 to 18 us until 2026-11-29 and 27 us on 6.1 that day,
    # so no bound on it could tell a slow host from a fault. What only a stall
    # or a wrong stamp does is to put a pair beyond the first pass's 200 us
    # (matching.match's near): 0.04 to 0.19% of the pairs that day, held to 1%.
    # 2026-12-02, a fresh-clone run on a host slow enough to double make check's guest stage:
    # 10.01 us on 6.1-rt and 10.59 us on 7.3-rt, the host's speed, not a fault: held to 20 us
    # (the kinds' to 40), still far below what a stamp of another clock or a misplaced record
    # gives (milliseconds)
    assert statistics.median(dts) <= 20, "stamps of paired events disagree by more than 20 us at the median"
    meds = {f"CPU {cpu} {kind}": statistics.median(abs(d) for d in v) * 1000 / rec.tsc_khz
            for (cpu, kind), v in res["dts_by"].items() if len(v) >= 50}
    most = max(meds, key=meds.get)
    ctx.note(f"each kind's |dt| median on each CPU: {min(meds.values()):.2f} to {meds[most]:.2f} us ({most})")
    wide = sorted(f"{k}: {m:.1f} us" for k, m in meds.items() if m > 40)
    assert not wide, f"a kind's stamps disagree by more than 40 us at its median: {wide}"
    far = sum(1 for d in dts if d > 200)
    assert far <= len(dts) / 100, f"{far} of {len(dts)} pairs more than 200 us apart (over 1%)"
    stalled = matching.frozen(res, rec.events, fev)     # both copies of one event, a frozen CPU between
    if stalled:
        ctx.note(f"{len(stalled)} pairs beyond 50 ms with nothing between them on their CPU, up to "
                 f"{max(tf - th for th, tf, _c in stalled) * 1000 / rec.tsc_khz:.0f} us apart: paired")
    assert not res["only_ftrace"] and not res["only_hgtrace"], (
        f"unmatched: {len(res['only_ftrace'])} only in ftrace, {len(res['only_hgtrace'])} only in hgtrace\n"
        + _unmatched_context(rec, fev, res))
    # packed (what record -z leaves), the same records, against trace-cmd's file of the same run
    packed = ctx.path("packed.hgt")
    hgtrace("pack", hgt, "-o", packed)
    back = read_hgt(packed)
    key = lambda e: (e.cpu, e.tsc, e.kind, e.arg, e.flags, e.aux, sorted(e.fields.items()))
    for cpu in rec.stats:
        assert [key(e) for e in back.events if e.cpu == cpu] == [key(e) for e in rec.events if e.cpu == cpu]
    n = len(rec.events)
    ctx.note(f"packed: {os.path.getsize(packed) / n:.2f} bytes/event against {os.path.getsize(hgt) / n:.2f} "
             f"plain and trace-cmd's trace.dat {os.path.getsize(dat) / n:.2f} (ratio "
             f"{os.path.getsize(packed) / os.path.getsize(dat):.3f})")
    os.remove(packed)


def _unmatched_context(rec, fev, res, us=300):
    """Where each unmatched event lies (ms after the start, before the stop)
    and both recorders' events on its CPU within 300 us: what a missing
    event's neighbours were says more than its stamp."""
    cyc = rec.tsc_khz / 1000
    out = []
    for side in ("only_ftrace", "only_hgtrace"):
        for (cpu, kind, key), ts in res[side][:3]:
            out.append(f"{side} cpu {cpu} {kind} {key} at {ts}: +{(ts - rec.window[0]) / rec.tsc_khz:.1f} ms "
                       f"after the start, -{(rec.window[1] - ts) / rec.tsc_khz:.1f} ms before the stop")
            near = [(e["ts"], "ftrace ", e["event"], e["fields"]) for e in fev
                    if e["cpu"] == cpu and abs(e["ts"] - ts) <= us * cyc]
            near += [(e.tsc, "hgtrace", e.kind, e.fields) for e in rec.events
                     if e.cpu == cpu and abs(e.tsc - ts) <= us * cyc]
            out += [f"  {(t - ts) / cyc:+9.2f} us {who} {what} {fields}" for t, who, what, fields in sorted(near, key=lambda x: x[0])]
    return "\n".join(out)


def _loss_check(ctx, mode):
    load()
    path = ctx.path(f"{mode}.hgt")
    # a tiny buffer drained once a second under hackbench must overflow
    hgtrace("record", "-q", "-b", "8", "-i", "1s", "-m", mode, "-o", path, "--", "sh", "-c", HACKBENCH)
    # both modes write to hgtrace's own ring; the recorder puts the module back as it found it
    status = dict(l.split(" ", 1) for l in open("/proc/hgtrace/status").read().splitlines() if " " in l)
    assert (status["mode"], status["store"], status["buffer_bytes_per_cpu"]) == \
        ("stop", "hgtrace ring", "2097152"), status
    ctx.on_host(losses_checked, path, mode)


def losses_checked(ctx, path, mode):
    """The losses tests' host half: every record delivered or counted lost."""
    rec = read_hgt(path)
    assert rec.stats, "no final counters in the file"
    assert (rec.meta["mode"], rec.meta["buffer_bytes_per_cpu"]) == (mode, "8192"), rec.meta
    tot_lost = 0
    for cpu, st in sorted(rec.stats.items()):
        delivered = len(data_records(rec, cpu))
        lost = sum(e.fields["count"] for e in rec.events if e.kind == "lost" and e.cpu == cpu)
        tot_lost += lost
        assert delivered + lost == st["produced"], (
            f"cpu {cpu}: delivered {delivered} + lost {lost} != produced {st['produced']} ({st})")
        assert st["produced"] == st["written"] + st["refused"], f"cpu {cpu}: {st}"
        assert st["written"] == st["read"] + st["overwritten"] + st["reader_fault"], f"cpu {cpu}: {st}"
        assert delivered == st["read"], f"cpu {cpu}: file has {delivered}, module says read {st['read']}"
        ctx.note(f"{mode} cpu{cpu}: produced {st['produced']} = delivered {delivered} + lost {lost} "
                 f"(refused {st['refused']}, overwritten {st['overwritten']})")
    assert tot_lost > 0, "the test did not overflow the buffer, so it checked nothing"
    if mode == "overwrite":
        assert sum(st["overwritten"] for st in rec.stats.values()) > 0, "nothing was overwritten"


def test_losses_stop_mode(ctx):
    _loss_check(ctx, "stop")


def test_losses_overwrite_mode(ctx):
    _loss_check(ctx, "overwrite")


def test_filters(ctx):
    """A pid filter keeps task events of those pids only; a CPU mask keeps those CPUs only."""
    load()
    path = ctx.path("pid.hgt")
    hgtrace("record", "-q", "-F", "-o", path, "--", "sh", "-c", "sleep 0.05; sleep 0.05; sleep 0.05")
    cpu0 = ctx.path("cpu0.hgt")
    hgtrace("record", "-q", "-c", "0", "-o", cpu0, "--", "sh", "-c", FILTER_LOAD)
    ctx.on_host(filters_checked, path, cpu0)


def filters_checked(ctx, path, cpu0):
    """test_filters' host half: what each filter kept."""
    rec = read_hgt(path)
    comms = {e.fields["pid"]: e.fields for e in rec.events if e.kind == "comm"}
    root = int(rec.meta["filter"].split()[0])
    task_kinds = {"switch", "waking", "wakeup", "wakeup_new", "migrate", "exit"}
    n = 0
    for e in rec.events:
        if e.kind == "switch":
            pids = (e.fields["prev_pid"], e.fields["next_pid"])
        elif e.kind in task_kinds:
            pids = (e.fields["pid"],)
        else:
            continue
        n += 1
        assert any(comms.get(p, {}).get("tgid") == root or p == root for p in pids), \
            f"task event of untraced pids {pids}: {e}"
    assert n > 5, f"only {n} task events for the traced command"
    assert any(e.kind in ("vec_entry", "softirq_entry", "irq_entry") for e in rec.events), \
        "CPU events must be kept with a pid filter"
    rec = read_hgt(cpu0)
    cpus = {e.cpu for e in rec.events}
    assert cpus == {0}, f"events from CPUs {cpus} with -c 0"
    ctx.note(f"pid filter: {n} task events, all of the traced process; -c 0: {len(rec.events)} events, all on CPU 0")


def test_control_interface(ctx):
    """Bad commands and arguments, non-root users, another ABI: clear refusals."""
    load()
    p = run([os.path.join(TESTBIN, "ctl_abuse"), "check"], check=False)
    open(ctx.path("ctl_abuse.txt"), "w").write(p.stdout + p.stderr)
    assert p.returncode == 0, p.stdout + p.stderr
    ctx.note(f"{p.stdout.count(chr(10)) - 1} refusals checked by ctl_abuse")

    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    p = run(nobody + [os.path.join(TESTBIN, "ctl_abuse"), "open"], check=False)
    assert p.returncode != 0 and "EACCES" in p.stdout, f"non-root open: {p.stdout} {p.stderr}"
    p = run(nobody + [HGTRACE, "stat"], check=False)
    assert p.returncode == 2 and "needs root" in p.stderr, f"non-root hgtrace stat: {p.returncode} {p.stderr}"
    os.chmod("/dev/hgtrace", 0o666)      # even with the file mode open, CAP_SYS_ADMIN is required
    try:
        p = run(nobody + [os.path.join(TESTBIN, "ctl_abuse"), "open"], check=False)
        assert p.returncode != 0 and "EPERM" in p.stdout, f"non-root open of a 0666 node: {p.stdout}"
    finally:
        os.chmod("/dev/hgtrace", 0o600)

    _second_recorder_refused(ctx)

    p = hgtrace("record", "--mode", "sideways", check=False)
    assert p.returncode == 1 and "bad mode" in p.stderr, p.stderr
    p = hgtrace("record", "-e", "sched,bogus", check=False)
    assert p.returncode == 1 and "unknown event group 'bogus'" in p.stderr, p.stderr

    unload()
    p = hgtrace("stat", check=False)
    assert p.returncode == 2 and "not loaded" in p.stderr, p.stderr
    assert KO_ABI99 and os.path.exists(KO_ABI99), "the ABI-99 test module was not built"
    run(["insmod", KO_ABI99])
    try:
        p = hgtrace("stat", check=False)
        assert p.returncode == 2 and "ABI 99." in p.stderr and "ABI 1." in p.stderr, p.stderr
        p = hgtrace("record", "-d", "10ms", "-o", ctx.path("x.hgt"), check=False)
        assert p.returncode == 2 and "ABI 99." in p.stderr, p.stderr
        ctx.note("wrong ABI: " + p.stderr.strip().splitlines()[0])
    finally:
        unload()


def _status():
    return dict(l.split(" ", 1) for l in open("/proc/hgtrace/status").read().splitlines()
                if " " in l and not l.startswith("#"))


def _second_recorder_refused(ctx):
    """ABI 1.4: while one hgtrace record holds the module, a second one and `hgtrace stop`
    are refused, naming it, and its recording goes on to the end of its command."""
    first = subprocess.Popen([HGTRACE, "record", "-q", "-o", ctx.path("first.hgt"), "--", "sleep", "4"],
                             stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(1200):
            if _status().get("state") == "running":
                break
            time.sleep(0.05)
        st = _status()
        assert st.get("state") == "running" and st.get("owner") == str(first.pid), st
        p = hgtrace("record", "-q", "-o", ctx.path("second.hgt"), "--", "true", check=False)
        assert p.returncode == 2 and f"belongs to process {first.pid}" in p.stderr, (p.returncode, p.stderr)
        p = hgtrace("stop", check=False)
        assert p.returncode == 2 and f"belongs to process {first.pid}" in p.stderr, (p.returncode, p.stderr)
        st = _status()
        assert st.get("state") == "running" and first.poll() is None, \
            f"the first recording did not survive the second recorder: {st}, exit {first.poll()}"
        err = first.communicate(timeout=300)[1]
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode == 0 and not err.strip(), f"first recorder: exit {first.returncode}: {err}"
    st = _status()
    assert st.get("owner") == "0" and st.get("state") == "stopped" and st.get("probes") == "detached", st
    p = hgtrace("dump", "-s", ctx.path("first.hgt"), check=False)
    assert p.returncode == 0, f"the first recording is not complete: {p.stderr}"
    ctx.note(f"a second recorder and hgtrace stop refused while pid {first.pid} recorded; its file complete")


# make check-full runs 24 cycles (6 of each kind), make check 4 (one of each); make soak runs 100
LOAD_CYCLES = int(os.environ.get("HGT_LOAD_CYCLES", sized("24", "4")))


def test_load_unload_cycles(ctx):
    """Load/unload cycles under hackbench, with readers open, recordings running."""
    # the load at nice 19: it runs whenever insmod, rmmod and the recorder wait (the
    # module attaches and detaches among its switches and wake-ups, which each cycle's
    # recording shows), but no longer takes two thirds of the guest's CPU from them: the
    # same cycles in a third of the time under TCG (7.3, 2026-12-02: insmod 2.1 s at nice
    # 0, 0.7 s at 19)
    # Long rounds (-l 2000: a minute and more under TCG), so that its 40 tasks are there at
    # every cycle: with -l 20 a round could end, and the next one still be forking at nice 19,
    # during the 100 ms recording (6.12-rt, 2026-12-02: no hackbench task in it)
    load_proc = subprocess.Popen("while :; do nice -n 19 hackbench -l 2000 -g 2 >/dev/null 2>&1; done",
                                 shell=True, start_new_session=True)
    refused = 0
    loaded = []
    try:
        # the load running before the first cycle (hackbench's 40 tasks take a while to fork at
        # nice 19 under TCG: 6.1's first recordings saw none of them)
        for _ in range(600):
            if len(run(["pgrep", "-x", "hackbench"], check=False).stdout.split()) >= 10:
                break
            time.sleep(0.1)
        log = open(ctx.path("progress.txt"), "w")
        for i in range(LOAD_CYCLES):
            print(f"cycle {i} variant {i % 4}", file=log, flush=True)
            run(["insmod", KO], timeout=60)
            v = i % 4
            if v == 1:
                hgtrace("record", "-q", "-d", "100ms", "-o", ctx.path("c.hgt"))
                dump = hgtrace("dump", ctx.path("c.hgt")).stdout
                loaded.append(sum(1 for l in dump.splitlines() if " comm " in l and "comm=hackbench" in l))
            elif v == 2:
                holder = subprocess.Popen([os.path.join(TESTBIN, "ctl_abuse"), "hold"],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                assert holder.stdout.readline().strip() == "holding"
                p = run(["rmmod", "hgtrace"], check=False, timeout=60)
                assert p.returncode != 0 and module_loaded(), "rmmod succeeded with a reader open"
                refused += 1
                holder.stdin.close()
                holder.wait(timeout=30)
            elif v == 3:
                run([os.path.join(TESTBIN, "ctl_abuse"), "start"], timeout=60)   # leaves it recording
            run(["rmmod", "hgtrace"], timeout=60)
            assert not module_loaded()
    finally:
        os.killpg(load_proc.pid, 9)
        load_proc.wait()
    assert loaded and all(n > 0 for n in loaded), f"hackbench tasks in each cycle's recording: {loaded}"
    ctx.note(f"{LOAD_CYCLES} cycles; rmmod refused {refused} times while a reader was open; "
             f"{(LOAD_CYCLES + 0) // 4} unloads while recording; hackbench tasks seen in each recording: {loaded}")


def test_microstates(ctx):
    """Per thread, states add up to its wall time and on-CPU time agrees with schedstat."""
    load()
    # The module places each side of a switch at the scheduler's clock read,
    # as schedstat does (kmod/msa.c, msa_sched_at). Where that clock is the
    # TSC, the 1% per thread holds (16 rounds, beside two other
    # guests: -0.01%..+0.54% over 42 threads; before the module took back the
    # irq time the third msa line counts, msa_set_side, +0.15%..+1.02%). Where the
    # clock is filtered, a host stall can hold it back between the scheduler's
    # read and the probe's, and time moves between threads at that switch: up
    # to 1.5% seen under QEMU 7.2, but under QEMU 10 (2026-12-02, 6.1-rt) one
    # thread +9.35% and the three +2.6%, in 1 of 2 fresh-clone runs: that boot
    # measures the emulator's stalls, held to 15% per thread and 5% over the three
    # (a gross error still fails). The 1% is held where the clock is the
    # TSC: scripts/check-kernels runs this test again in a boot with tsc=reliable
    # whenever the default boot's clock was filtered.
    stable = sched_clock_stable()
    per_thread, overall = (0.01, 0.01) if stable else (0.15, 0.05)
    ctx.note(f"scheduler's clock {'stable (the TSC)' if stable else 'filtered (TSC unstable)'}: "
             f"limits {per_thread:.0%} per thread, {overall:.1%} over the three")
    # -F selects the command's own process, so msa_check runs directly, not under sh
    rounds = int(os.environ.get("HGT_MSA_ROUNDS", "16"))
    p = hgtrace("record", "-q", "-F", "-o", ctx.path("msa.hgt"), "--", os.path.join(TESTBIN, "msa_check"), str(rounds))
    open(ctx.path("msa.txt"), "w").write(p.stdout)
    lines = [l.split() for l in p.stdout.splitlines() if l.strip()]
    # the module's own counters first, so that a failure below shows them: where each side of a
    # switch was placed, and how many sides fell back to the tracepoint (a stale clock)
    msa = open("/proc/hgtrace/msa").read()
    open(ctx.path("msa-table.txt"), "w").write(msa)
    assert msa.startswith("# hgtrace microstates") and len(msa.splitlines()) >= 6, msa[:500]
    lag, before = msa.splitlines()[1:3]
    assert lag.startswith("# switch sides placed at the scheduler's clock: "), lag
    assert before.startswith("# switch sides before the thread's last transition: "), before
    ctx.note(lag[2:])
    ctx.note(before[2:])
    tot_msa = tot_sched = 0
    assert len(lines) == 3 and all(len(l) == 10 for l in lines), f"msa_check printed {lines}; stderr: {p.stderr}"
    for tid, wall_max, wall_min, total, oncpu, intr, sched, runnable, sleep, switches in lines:
        wall_max, wall_min, total, oncpu, intr, sched = map(int, (wall_max, wall_min, total, oncpu, intr, sched))
        ctx.note(f"tid {tid}: wall {wall_min / 1e6:.2f}..{wall_max / 1e6:.2f} ms, msa total {total / 1e6:.2f} ms, "
                 f"on-CPU {oncpu / 1e6:.2f} + interrupted {intr / 1e6:.2f} ms, schedstat {sched / 1e6:.2f} ms "
                 f"({(oncpu + intr - sched) / sched * 100:+.2f}%), "
                 f"runnable {int(runnable) / 1e6:.2f} ms, sleep {int(sleep) / 1e6:.2f} ms, {switches} switches")
        # the thread was born somewhere inside pthread_create(): its age is in [wall_min, wall_max]
        assert 0.99 * wall_min <= total <= 1.01 * wall_max, \
            f"tid {tid}: states sum to {total} ns, its age is {wall_min}..{wall_max} ns"
        # schedstat's sum_exec_runtime includes time in interrupts (none of the
        # four kernels has CONFIG_IRQ_TIME_ACCOUNTING)
        assert abs(oncpu + intr - sched) <= per_thread * sched, \
            f"tid {tid}: on-CPU {oncpu} + interrupted {intr} ns vs schedstat {sched} ns (limit {per_thread:.0%})"
        tot_msa += oncpu + intr
        tot_sched += sched
        # ROUNDS nanosleeps of 25 ms, which never return early. The switch
        # count was once 15 where 16 was expected (in and out of 8 sleeps):
        # the sleep time is the sound check, the count only a floor.
        assert int(sleep) >= rounds * 24.4e6 and int(switches) >= rounds, \
            f"tid {tid}: the worker slept {rounds} times 25 ms: sleep {int(sleep) / 1e6:.2f} ms, {switches} switches"
    ctx.note(f"all threads: on-CPU + interrupted {tot_msa / 1e6:.2f} ms, schedstat {tot_sched / 1e6:.2f} ms "
             f"({(tot_msa - tot_sched) / tot_sched * 100:+.2f}%)")
    assert abs(tot_msa - tot_sched) <= overall * tot_sched, \
        f"all threads: on-CPU + interrupted {tot_msa} ns vs schedstat {tot_sched} ns (limit {overall:.1%})"


def test_discard_stores_nothing(ctx):
    """The benchmarks' discard parameter: probes count, nothing is stored, the recorder says so."""
    load()
    param = "/sys/module/hgtrace/parameters/discard"
    path = ctx.path("discard.hgt")
    with open(param, "w") as f:
        f.write("1")
    try:
        p = hgtrace("record", "-o", path, "--", "sh", "-c", HACKBENCH)
    finally:
        with open(param, "w") as f:
            f.write("0")
    rec = read_hgt(path)
    produced = sum(st["produced"] for st in rec.stats.values())
    assert produced > 1000 and not data_records(rec), f"produced {produced}, stored {len(data_records(rec))}"
    assert all(st["refused"] == st["produced"] and st["written"] == 0 for st in rec.stats.values()), rec.stats
    assert f"{produced} lost" in p.stderr, p.stderr
    # and the next recording stores again
    hgtrace("record", "-q", "-o", path, "--", "sleep", "0.2")
    assert data_records(read_hgt(path)), "after discard, nothing was stored"
    ctx.note(f"discard: {produced} events produced, none stored, all reported lost")


TESTS = [test_load_and_tracepoints, test_ftrace_agreement, test_losses_stop_mode,
         test_losses_overwrite_mode, test_filters, test_control_interface,
         test_load_unload_cycles, test_microstates, test_discard_stores_nothing]

"""test_kmod - hgtrace.ko's own interface: ABI versions, names, hostile callers, scale.

Run by run.py in a guest booted with scripts/vm. Every test asserts; the
harness unloads the module after each test and fails it on a bad kernel log.
"""
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import time

from depth import once, sized
from harness import HGTRACE, KO, TESTBIN, TOP, NotHere, load, module_loaded, run, sched_clock_stable, unload
from hgtools.recordings import read_hgl, read_hgt  # the library's reader, through hgtrace dump


def _abi():
    """This tree's ABI, "MAJOR.MINOR", as the header says."""
    with open(os.path.join(TOP, "kmod", "uapi", "hgtrace.h")) as f:
        hdr = f.read()
    return ".".join(hdr.split(f"#define HGT_ABI_{k}")[1].split()[0] for k in ("MAJOR", "MINOR"))


ABI = _abi()

# ABI 1.0's module and recorder, built by scripts/vm from the last commit of ABI 1.0
OLD_KO = os.environ.get("HGT_KO_ABI_1_0", "")
OLD_HGTRACE = os.environ.get("HGT_HGTRACE_ABI_1_0", "")
# the abi, CPU-set and after-the-abuse recordings' load: 35 000 records at full size, 12 000 quick
HACKBENCH = sized("hackbench -l 30 -g 2", "hackbench -l 10 -g 2")


OLD_KO_WHY = os.environ.get("HGT_KO_ABI_1_0_WHY", "")
# the kernels ABI 1.0's module was written for: there it must build, and its test run
OLD_KO_KERNELS = re.compile(r"^6\.(1|12)\.")


def _need_old_side(module=True):
    assert OLD_HGTRACE and os.path.exists(OLD_HGTRACE), (
        "ABI 1.0's recorder was not built: scripts/vm builds it from the commit "
        f"HGT_ABI_1_0_REF (default e8b658a), which this clone must have (got {OLD_HGTRACE!r})")
    if not module:
        return
    if not OLD_KO and OLD_KO_WHY and not OLD_KO_KERNELS.match(os.uname().release):
        # 1.0's probes predate later kernels' tracepoint prototypes (kmod/compat.h): a
        # module that does not build there cannot be loaded to be driven
        raise NotHere(OLD_KO_WHY)
    assert OLD_KO and os.path.exists(OLD_KO), (
        f"ABI 1.0's module was not built for this kernel: {OLD_KO_WHY or 'scripts/vm builds it'} (got {OLD_KO!r})")


def _status():
    return dict(l.split(" ", 1) for l in open("/proc/hgtrace/status").read().splitlines() if " " in l)


def _check_accounting(path, what):
    """Per CPU, records in the file plus the LOST markers' counts = what the module produced."""
    rec = read_hgt(path)
    assert rec.stats, f"{what}: no final counters in {path}"
    for cpu, st in rec.stats.items():
        delivered = sum(1 for e in rec.events if e.cpu == cpu and e.kind != "lost")
        lost = sum(e.fields["count"] for e in rec.events if e.cpu == cpu and e.kind == "lost")
        assert delivered + lost == st["produced"], f"{what}: cpu {cpu}: {delivered} + {lost} != {st}"
        assert delivered == st["read"], f"{what}: cpu {cpu}: file {delivered}, module read {st['read']}"
    return rec


def test_abi_old_recorder_new_module(ctx):
    """ABI 1.0's recorder, built from git, records through this module as it did through its own."""
    _need_old_side(module=False)
    load()
    p = run([OLD_HGTRACE, "stat"])
    assert f"abi: {ABI}" in p.stdout, p.stdout
    path = ctx.path("old-recorder.hgt")
    run([OLD_HGTRACE, "record", "-q", "-c", "0", "-o", path, "--", "sh", "-c", HACKBENCH])
    st = _status()
    assert st["state"] == "stopped" and st["cpus"] == "0", st
    # its CONFIG with no CPU named selects them all again
    run([OLD_HGTRACE, "record", "-q", "-d", "50ms", "-o", ctx.path("old-all.hgt")])
    every = f"0-{os.cpu_count() - 1}" if os.cpu_count() > 1 else "0"
    assert _status()["cpus"] == every, _status()["cpus"]
    ctx.on_host(old_recorder_checked, path)


def old_recorder_checked(ctx, path):
    """test_abi_old_recorder_new_module's host half: 1.0's file from this module."""
    rec = _check_accounting(path, "1.0 recorder")
    assert rec.meta["abi"] == ABI, rec.meta["abi"]
    assert {e.cpu for e in rec.events} == {0}, "1.0's CPU mask (-c 0) was not applied"
    assert len(rec.events) > 500, len(rec.events)
    ctx.note(f"1.0 recorder on the {ABI} module: {len(rec.events)} records on CPU 0, accounting exact")


def test_abi_new_recorder_old_module(ctx):
    """This recorder drives ABI 1.0's module (from git) in 1.0's terms."""
    _need_old_side()
    run(["insmod", OLD_KO])
    p = run([HGTRACE, "stat"])
    assert "abi: 1.0" in p.stdout, p.stdout
    path = ctx.path("new-recorder.hgt")
    last = os.cpu_count() - 1
    run([HGTRACE, "record", "-q", "-c", str(last), "-o", path, "--", "sh", "-c", HACKBENCH])
    # microstates through 1.0's MSA ioctl: the traced shell asks for its own
    p = run([HGTRACE, "record", "-q", "-F", "-o", ctx.path("msa.hgt"), "--",
             "sh", "-c", f"sleep 0.05; {HGTRACE} msa $$"])
    rows = [l.split() for l in p.stdout.splitlines() if l and not l.startswith("#")]
    assert len(rows) == 1 and int(rows[0][-1]) > 0 and int(rows[0][3]) > 0, f"hgtrace msa: {p.stdout} {p.stderr}"
    p = run([HGTRACE, "record", "-q", "-c", "300", "-d", "10ms", "-o", ctx.path("x.hgt")], check=False)
    assert p.returncode == 2 and "CPU 300 does not exist" in p.stderr, p.stderr
    ctx.on_host(new_recorder_checked, path, last)


def new_recorder_checked(ctx, path, last):
    """test_abi_new_recorder_old_module's host half: this recorder's file from 1.0's module."""
    rec = _check_accounting(path, "1.1 recorder on a 1.0 module")
    assert rec.meta["abi"] == "1.0", rec.meta["abi"]
    assert {e.cpu for e in rec.events} == {last}, f"-c {last} gave CPUs {({e.cpu for e in rec.events})}"
    mask = int(rec.meta["cpumask"], 16)
    assert mask == 1 << last and len(rec.meta["cpumask"]) == 64, rec.meta["cpumask"]
    ctx.note(f"{ABI} recorder on the 1.0 module: {len(rec.events)} records on CPU {last}, accounting exact")


def test_cpu_set_any_size(ctx):
    """-c takes the last CPU through the run-time sized set; a CPU that does not exist is refused."""
    load()
    last = os.cpu_count() - 1
    path = ctx.path("last.hgt")
    run([HGTRACE, "record", "-q", "-c", str(last), "-o", path, "--", "sh", "-c", HACKBENCH])
    for bad in ("4000", "8191"):
        p = run([HGTRACE, "record", "-q", "-c", bad, "-d", "10ms", "-o", ctx.path("x.hgt")], check=False)
        assert p.returncode == 2 and f"CPU {bad} does not exist" in p.stderr, p.stderr
    p = run([HGTRACE, "record", "-q", "-c", "8192", "-d", "10ms", "-o", ctx.path("x.hgt")], check=False)
    assert p.returncode == 1 and "bad CPU list" in p.stderr, p.stderr
    assert _status()["state"] == "stopped"
    ctx.on_host(cpu_set_checked, path, last)


def cpu_set_checked(ctx, path, last):
    """test_cpu_set_any_size's host half: only the CPU named, in the file and its mask."""
    rec = _check_accounting(path, f"-c {last}")
    assert {e.cpu for e in rec.events} == {last}, {e.cpu for e in rec.events}
    assert int(rec.meta["cpumask"], 16) == 1 << last, rec.meta["cpumask"]
    ctx.note(f"-c {last}: {len(rec.events)} records, all on CPU {last}")


def test_callback_names(ctx):
    """hrtimer callbacks are named in the stream (by the reader, not the probe), never by address."""
    load()
    path = ctx.path("names.hgt")
    run([HGTRACE, "record", "-q", "-o", path, "--", "sh", "-c", "for i in 1 2 3 4 5; do sleep 0.02; done"])
    assert int(_status()["funcs_unnamed"]) == 0
    ctx.on_host(callback_names_checked, path)


def callback_names_checked(ctx, path):
    """test_callback_names' host half: every callback in the file has its NAME record."""
    rec = _check_accounting(path, "names")
    funcs = {e.fields["id"]: e.fields["name"] for e in rec.events if e.kind == "name" and e.fields["name_kind"] == "func"}
    used = {e.fields["func"] for e in rec.events if e.kind == "hrtimer_entry"}
    assert used, "no hrtimer expired in the recording"
    assert used <= set(funcs), f"callbacks without a NAME record: {sorted(used - set(funcs))[:5]}"
    names = set(funcs.values())
    assert all(n and not n.startswith("0x") for n in names), names
    assert "hrtimer_wakeup" in names, f"nanosleep's callback not among {sorted(names)}"
    ctx.note(f"{len(funcs)} callbacks named: {', '.join(sorted(names))}")


FUZZ = os.path.join(TESTBIN, "ctl_fuzz")
# quick: 10 000 calls (1 300 of them succeed as root), a new seed each run
FUZZ_CALLS = int(os.environ.get("HGT_FUZZ_CALLS", sized("100000", "10000")))
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def _fuzz_seed():
    """A new seed each run (printed, so a finding can be replayed), or HGT_FUZZ_SEED."""
    return int(os.environ.get("HGT_FUZZ_SEED") or int.from_bytes(os.urandom(4), "little"))


def _fuzz(ctx, mode, calls, seed, prefix=(), name=None):
    p = run([*prefix, FUZZ, mode, str(calls), str(seed)], check=False, timeout=7200)
    open(ctx.path(f"{name or mode}.txt"), "w").write(p.stdout + p.stderr)
    summary = [l for l in p.stdout.splitlines() if " calls as uid " in l]
    assert p.returncode == 0 and summary, f"ctl_fuzz {mode} {calls} {seed}: exit {p.returncode}\n" + \
        p.stdout[-3000:] + p.stderr[-1000:]
    hist = ", ".join(f"{l.split()[0]} {l.split()[1]}" for l in p.stdout.splitlines() if l.startswith("  "))
    ctx.note(f"{name or mode} (seed {seed}): {summary[0]}; {hist}")


def _module_still_works(ctx):
    """After the abuse: stopped, discard off, and a recording with exact accounting."""
    run([HGTRACE, "stop"])
    with open("/sys/module/hgtrace/parameters/discard", "w") as f:
        f.write("0")
    path = ctx.path("after.hgt")
    run([HGTRACE, "record", "-q", "-o", path, "--", "sh", "-c", HACKBENCH])
    ctx.on_host(still_works_checked, path)


def still_works_checked(ctx, path):
    """The hostile-call tests' host half: the recording after the abuse, accounting exact."""
    rec = _check_accounting(path, "after the abuse")
    assert len(rec.events) > 500, len(rec.events)


def test_hostile_calls_root(ctx):
    """Random ioctls, reads and /proc writes as root: only documented errors, the kernel unharmed."""
    load()
    _fuzz(ctx, "root", FUZZ_CALLS, _fuzz_seed())
    _module_still_works(ctx)


def test_hostile_calls_user(ctx):
    """The same as uid 65534, on a file root opened and on fresh opens: refused every time."""
    load()
    seed = _fuzz_seed()
    _fuzz(ctx, "user", FUZZ_CALLS, seed)
    os.chmod("/dev/hgtrace", 0o666)      # even with the file mode open, CAP_SYS_ADMIN is required
    try:
        _fuzz(ctx, "user", FUZZ_CALLS // 10, seed + 1, name="user-0666")
        p = run(NOBODY + [os.path.join(TESTBIN, "ctl_abuse"), "open"], check=False)
        assert p.returncode != 0 and "EPERM" in p.stdout, p.stdout
    finally:
        os.chmod("/dev/hgtrace", 0o600)
    p = run(NOBODY + [os.path.join(TESTBIN, "ctl_abuse"), "open"], check=False)
    assert p.returncode != 0 and "EACCES" in p.stdout, p.stdout
    _module_still_works(ctx)


def test_all_cpus_accounting(ctx):
    """hackbench on every CPU with the module as loaded (2 MiB a CPU, drained every 100 ms):
    every CPU records, delivered + lost = produced on each, and nothing is lost.
    The 8-CPU figure: scripts/vm -c 8 -- tests/guest/run.py test_all_cpus_accounting."""
    load()
    ncpu = os.cpu_count()
    path = ctx.path("all.hgt")
    p = run([HGTRACE, "record", "-o", path, "--", "hackbench", "-g", str(2 * ncpu), "-l", sized("40", "10")], timeout=1800)
    drains = "; ".join(l for l in p.stderr.splitlines() if " events, " in l or "final drain" in l)
    ctx.on_host(all_cpus_checked, path, ncpu, drains)


def all_cpus_checked(ctx, path, ncpu, drains):
    """test_all_cpus_accounting's host half: each of the guest's @ncpu CPUs recorded, none lost;
    @drains: what the recorder said of its drains."""
    rec = _check_accounting(path, f"{ncpu} CPUs")
    assert sorted(rec.stats) == list(range(ncpu)), f"stats for CPUs {sorted(rec.stats)}, the guest has {ncpu}"
    for cpu, st in sorted(rec.stats.items()):
        assert st["refused"] == st["overwritten"] == st["reader_fault"] == 0, f"cpu {cpu} lost events: {st}"
        assert st["produced"] > 1000, f"cpu {cpu} produced only {st['produced']}: hackbench did not reach it"
    span = (rec.window[1] - rec.window[0]) / rec.tsc_khz / 1000
    rates = [st["produced"] / span for _, st in sorted(rec.stats.items())]
    ctx.note(f"{ncpu} CPUs, {span:.1f} s: produced per CPU {' '.join(str(st['produced']) for _, st in sorted(rec.stats.items()))}, "
             f"none lost; {min(rates) / 1e3:.1f} to {max(rates) / 1e3:.1f} k events/s a CPU")
    ctx.note(drains)


@once(15)
def test_full_disk(ctx):
    """A recording whose disk fills: exit 2 with the write error, the file said to be
    unfinished (and refused as incomplete by hgtrace dump, what it holds still printed),
    the module put back (stopped, probes detached) and the command reaped."""
    load()
    mnt = ctx.path("small")
    os.makedirs(mnt, exist_ok=True)
    # 256 KiB: hackbench's recording is megabytes, so the writes fail within its first drains
    run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt])
    try:
        path = os.path.join(mnt, "full.hgt")
        p = run([HGTRACE, "record", "-o", path, "--", "hackbench", "-l", "20"], check=False, timeout=600)
        assert p.returncode == 2, f"exit {p.returncode}: {p.stderr[-2000:]}"
        assert "No space left on device" in p.stderr, p.stderr[-2000:]
        assert f"{path} is unfinished (no END)" in p.stderr, p.stderr[-2000:]
        assert "the file is complete" not in p.stderr, p.stderr[-2000:]
        st = _status()
        assert st["state"] == "stopped" and st["probes"] == "detached", st
        assert not subprocess.run(["pgrep", "-x", "hackbench"], capture_output=True).stdout, "hackbench left running"
        if os.path.exists(path):
            d = run([HGTRACE, "dump", path], check=False)
            assert d.returncode == 3, f"hgtrace dump of the unfinished file: exit {d.returncode}: {d.stderr[-500:]}"
            ctx.note(f"{os.path.getsize(path)} bytes kept; dump: {d.stderr.strip().splitlines()[-1][:200]}")
    finally:
        run(["umount", mnt], check=False)


REC_BYTES = dict(switch=32, waking=24, wakeup=24, wakeup_new=24, migrate=24, exit=16, irq_entry=16, irq_exit=16,
                 softirq_entry=16, softirq_exit=16, vec_entry=16, vec_exit=16, nmi=24, hrtimer_entry=24,
                 hrtimer_exit=16, sys_enter=16, sys_exit=16, comm=40, name=48, lost=24)


def _stream_sound(rec, what):
    """Per CPU: stamps never go back, no data record twice (a record read both
    before and after a writer freed it would show up twice)."""
    seen, last = set(), {}
    for e in rec.events:
        assert e.tsc >= last.get(e.cpu, 0), f"{what}: cpu {e.cpu}: {e.kind} at {e.tsc} after {last[e.cpu]}"
        last[e.cpu] = e.tsc
        if e.kind != "lost":
            key = (e.cpu, e.tsc, e.kind, e.arg, tuple(sorted(e.fields.items())))
            assert key not in seen, f"{what}: {key} twice"
            seen.add(key)


def test_overwrite_ring(ctx):
    """Overwrite mode on hgtrace's own ring: each record delivered or counted overwritten,
    the stream in order and intact, with a reader racing the writers and as a flight
    recorder read only at the end (the newest records kept, one LOST marker first)."""
    load()
    path = ctx.path("live.hgt")
    run([HGTRACE, "record", "-q", "-m", "overwrite", "-b", "8", "-i", "10ms", "-o", path, "--",
         "sh", "-c", sized("hackbench -l 100 -g 2", "hackbench -l 50 -g 2")])
    st = _status()
    assert st["store"] == "hgtrace ring", st
    # drained every 60 s (the longest period hgtrace takes), by a workload of 1 to 3 s:
    # read once, when it ends. At 10 s a loaded 6.1-rt guest drained mid-run in one CI
    # run, and the file held 170648 bytes from two reads of the 64 KiB ring.
    flight = ctx.path("flight.hgt")
    run([HGTRACE, "record", "-q", "-m", "overwrite", "-b", "64", "-i", "60s", "-o", flight, "--",
         "sh", "-c", "hackbench -l 40 -g 2"])
    ctx.on_host(overwrite_ring_checked, path, flight, st["reader_overtaken"])


def overwrite_ring_checked(ctx, path, flight, overtaken):
    """test_overwrite_ring's host half: both files' accounting and streams."""
    rec = _check_accounting(path, "overwrite, live reader")
    _stream_sound(rec, "overwrite, live reader")
    assert rec.meta["mode"] == "overwrite", rec.meta["mode"]
    for cpu, x in rec.stats.items():
        assert x["produced"] == x["written"] + x["refused"], f"cpu {cpu}: {x}"
        assert x["written"] == x["read"] + x["overwritten"] + x["reader_fault"], f"cpu {cpu}: {x}"
    ovw = sum(x["overwritten"] for x in rec.stats.values())
    assert ovw > 0, "an 8 KiB ring drained every 10 ms under hackbench overwrote nothing: nothing was checked"
    ctx.note(f"live reader, 8 KiB: produced {sum(x['produced'] for x in rec.stats.values())}, overwritten {ovw}, "
             f"delivered {sum(x['read'] for x in rec.stats.values())}; reads overtaken by a writer: "
             f"{overtaken}")
    rec = _check_accounting(flight, "flight recorder")
    _stream_sound(rec, "flight recorder")
    for cpu, x in rec.stats.items():
        evs = [e for e in rec.events if e.cpu == cpu]
        if not x["overwritten"]:
            continue
        assert evs[0].kind == "lost" and evs[0].fields["by"] == "overwrite", f"cpu {cpu} begins with {evs[0]}"
        held = sum(REC_BYTES[e.kind] for e in evs[1:])
        # full to within a record or two: a writer frees only what it needs
        markers = sum(1 for e in evs if e.kind == "lost")
        assert markers == 1, f"cpu {cpu}: {markers} LOST markers: the ring was read before the workload ended"
        assert 64 * 1024 - 2 * 48 < held <= 64 * 1024, f"cpu {cpu}: {held} bytes kept of a 64 KiB ring"
        ctx.note(f"flight recorder cpu{cpu}: the newest {x['read']} records kept ({held} bytes of 65536), "
                 f"{x['overwritten']} overwritten, reported by one marker of {evs[0].fields['count']}")


def _abuse(what):
    return run([os.path.join(TESTBIN, "ctl_abuse"), what]).stdout


def _wait_for(cond, proc, limit=120):
    """Poll cond() every 5 ms while proc runs; True once it held (never a timed assertion:
    the limit only stops a test that would otherwise wait forever, and fails it)."""
    t = time.monotonic()
    while proc.poll() is None:
        if cond():
            return True
        if time.monotonic() - t > limit:
            raise AssertionError(f"waited {limit} s for the recorder to get there")
        time.sleep(0.005)
    return False


def _has_device_open(pid):
    """Has process pid opened /dev/hgtrace (so its signal handlers are in place)?"""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except FileNotFoundError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == "/dev/hgtrace":
                return True
        except OSError:
            pass
    return False


def _interrupt(ctx, n, args, when):
    """Run `hgtrace record` in its own process group (as a shell's foreground job),
    send the group SIGINT where when(proc, out) says, and check what is left:
    the module as found, the file finished or absent with a message, no temp file."""
    out = ctx.path(f"int-{n}.hgt")
    for f in (out, out + ".packing"):
        os.path.exists(f) and os.remove(f)
    before = _abuse("state")
    # stderr to a file: a command's orphans (hackbench's workers) may keep a pipe open
    errf = open(ctx.path(f"int-{n}.err"), "w+")
    proc = subprocess.Popen([HGTRACE, "record", "-o", out, *args], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=errf)
    hit = when(proc, out)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
    proc.wait(timeout=600)
    try:
        os.killpg(proc.pid, signal.SIGKILL)     # what the command left behind in its group
    except ProcessLookupError:
        pass
    errf.seek(0)
    err = errf.read()
    after = _abuse("state")
    assert after == before, f"point {n}: the module was left\n{after}\nnot as found\n{before}\n{err}"
    assert not os.path.exists(out + ".packing"), f"point {n}: {out}.packing left behind"
    if not os.path.exists(out):
        # killed before main() could take the signal (the module untouched, checked above),
        # or interrupted before it changed anything
        assert proc.returncode == -signal.SIGINT or (proc.returncode == 2 and "no file written" in err), \
            f"point {n}: no file, exit {proc.returncode}: {err}"
        return ("killed before main()" if proc.returncode < 0 else "no file"), None, err
    assert proc.returncode == 0, f"point {n}: exit {proc.returncode}: {err}"
    kind = ("empty" if "holds no events" in err else "packed" if "packed" in err and "-z" in args else
            "interrupted" if "interrupted" in err else "finished")
    return f"{hit}: {kind}", out, err


def interrupted_files_checked(ctx, points):
    """test_ctrl_c_anywhere's host half: each point's file (what, path or None, the
    recorder's stderr) dumps, is finished, and its accounting is exact."""
    for n, (what, out, err) in enumerate(points):
        if out is None:
            ctx.note(f"point {n}: {what}")
            continue
        p = run([HGTRACE, "dump", out], check=False, timeout=600)
        assert p.returncode == 0, f"point {n}: hgtrace dump failed ({p.returncode}): {p.stderr[-500:]}"
        rec = _check_accounting(out, f"point {n}")
        assert rec.complete, f"point {n}: the file has no END marker: {err}"
        ctx.note(f"point {n}: {what}, {len(rec.events)} records")


# The interrupted command's load: hackbench's ten groups (400 workers). Narrowed to two
# groups until 2026-12-07: a Ctrl-C landing between the recorder's fork and hackbench's exec
# was caught by the recorder's handler in the child and lost, hackbench then started all 400
# workers, and 7.3's scheduler left its main process preempted inside an RCU read-side
# section for tens of seconds (RCU stall warnings), while the recorder's stop waited for that
# grace period (docs/testing.md, "The hackbench stall under recording";
# test_stop_under_load.py repeats the Ctrl-C as the 400 start).
CTRL_C_LOAD = ("hackbench", "-l", "100000")


@once(55)
def test_ctrl_c_anywhere(ctx):
    """Ctrl-C before the command starts, while recording, while draining, while packing:
    the module is put back as found (stopped, settings, CPUs, filter) and the file is finished."""
    load("buffer_kb=1024", "overwrite=1", "msa_threads=512")
    _abuse("setup")                  # CPU 0 only, a pid filter: what no recorder leaves behind
    running = lambda: _status()["state"] == "running"
    results = []
    n = 0
    # before the command starts: right away (before main() can take the signal), then
    # from the moment the recorder has the device open (its handler in place) on into
    # the set-up: reading the state, configuring, creating the file, starting
    for delay in sized((None, 0, 0.002, 0.005, 0.01, 0.02, 0.04, 0.08), (None, 0, 0.005, 0.02, 0.08)):
        def early(proc, out, delay=delay):
            if delay is None:
                return "at once"
            _wait_for(lambda: _has_device_open(proc.pid), proc)
            time.sleep(delay)
            return f"device open +{delay * 1000:.0f} ms"
        results.append(_interrupt(ctx, n, ["--", "sleep", "3"], early))
        n += 1
    # while recording
    for delay in sized((0, 0.05, 0.3), (0, 0.3)):
        def during(proc, out, delay=delay):
            _wait_for(running, proc)
            time.sleep(delay)
            return f"recording +{delay * 1000:.0f} ms"
        results.append(_interrupt(ctx, n, ["-c", f"0-{os.cpu_count() - 1}", "--", *CTRL_C_LOAD],
                                  during))
        n += 1
    # while draining: a big buffer drained only at the end; a first Ctrl-C ends the
    # recording, a second lands in the final drain
    for delay in sized((0, 0.02), (0.02,)):
        def draining(proc, out, delay=delay):
            _wait_for(running, proc)
            time.sleep(1.5)
            os.killpg(proc.pid, signal.SIGINT)
            got = _wait_for(lambda: not running(), proc)
            time.sleep(delay)
            return "draining" if got and proc.poll() is None else "after the drain"
        results.append(_interrupt(ctx, n, ["-b", "32768", "-i", "10s", "--", *CTRL_C_LOAD],
                                  draining))
        n += 1
    # while packing
    # packing: 590 000 records at full size (minutes to check under TCG), about 100 000 when quick
    for delay in sized((0, 0.05), (0,)):
        def packing(proc, out, delay=delay):
            got = _wait_for(lambda: os.path.exists(out + ".packing"), proc)
            time.sleep(delay)
            return "packing" if got and proc.poll() is None else "after packing"
        results.append(_interrupt(ctx, n, ["-z", "--", "hackbench", "-l", sized("300", "100"), "-g", sized("2", "1")], packing))
        n += 1
    hit = " ".join(what for what, _out, _err in results)
    assert "recording" in hit, "no interruption landed while recording"
    ctx.on_host(interrupted_files_checked, results)


def _on_cpu_ms(rec, tid, t0, t1, lags):
    """A thread's time on CPU over [t0, t1] from the switches in a recording:
    running at t0 (hourglass reads its accounting from the thread itself);
    each side at the tracepoint, or where the scheduler switched it (the
    lags, when known)."""
    on, since = 0, t0
    for e in sorted((e for e in rec.events if e.kind == "switch"), key=lambda e: e.tsc):
        prev_lag, next_lag = struct.unpack_from("<HH", e.raw, 28)
        f = e.fields
        for side, lag in (("out", prev_lag), ("in", next_lag)):
            if f["prev_pid" if side == "out" else "next_pid"] != tid:
                continue
            at = e.tsc - ((lag & 0xfff) << (lag >> 12) if lags and lag != 0xffff else 0)
            if not t0 <= at <= t1:
                continue
            if side == "out" and since is not None:
                on += at - since
                since = None
            elif side == "in":
                since = at
    if since is not None:
        on += t1 - since
    return on / rec.tsc_khz


def _lag_facts(rec, tid, t0, t1):
    """The thread's switch sides in [t0, t1] whose lag is unknown (stale, or beyond the
    code's range: placed at the tracepoint), and the largest known lag in ms: what
    to read first when the sum and schedstat part (a host stall between the pick and
    the tracepoint moves that much time)."""
    unknown, largest = 0, 0
    for e in rec.events:
        if e.kind != "switch" or not t0 <= e.tsc <= t1:
            continue
        prev_lag, next_lag = struct.unpack_from("<HH", e.raw, 28)
        for pid, lag in ((e.fields["prev_pid"], prev_lag), (e.fields["next_pid"], next_lag)):
            if pid != tid:
                continue
            if lag == 0xffff:
                unknown += 1
            else:
                largest = max(largest, (lag & 0xfff) << (lag >> 12))
    return unknown, largest / rec.tsc_khz


def test_lat_on_cpu_time_is_schedstat(ctx):
    """The make demo's LAT thread (1 ms sleeps, FIFO): its time on CPU summed from its
    switches, each side taken where the scheduler switched it (ABI 1.2's lags), is
    /proc/<pid>/task/<tid>/schedstat's and the thread CPU clock's over the same window,
    within 2% (and 0.5 ms).
    Taken at the tracepoints alone it falls short: sched_switch fires tens of us after
    the scheduler started charging the woken thread (printed, not asserted)."""
    load()
    d = ctx.path("lat")
    shutil.rmtree(d, ignore_errors=True)
    run([os.path.join(TOP, "build", "hourglass"), "record", "-o", d, "--", "-n", "1", "-d", "3s", "-e", "2000000",
         "-t", "0", "-p", "RTHIGH", "-w", "LAT", "1ms", "-i", "HR", "--affinity", "1"], timeout=300)
    ctx.on_host(lat_on_cpu_checked, d, sched_clock_stable())


def lat_on_cpu_checked(ctx, d, stable):
    """test_lat_on_cpu_time_is_schedstat's host half: the run's report, and the
    recording's switches summed; @stable: the guest's scheduler's clock was the TSC."""
    run([os.path.join(TOP, "build", "hourglass"), "report", d, "--json", os.path.join(d, "report.json")],
        timeout=300)
    with open(os.path.join(d, "report.json")) as f:
        [m] = json.load(f)["microstates"]
    rec = read_hgt(os.path.join(d, "kernel.hgt"), raw=True)
    assert rec.meta["abi"] == ABI, rec.meta["abi"]
    acct = read_hgl(os.path.join(d, "hourglass.hgl"), records=False).info["threads"][0]["accounting"]
    sched = m["schedstat_ns"] / 1e6
    kern = m["kernel_ns"] / 1e6
    at_tp = _on_cpu_ms(rec, m["tid"], acct["tsc0"], acct["tsc1"], lags=False)
    with_lags = _on_cpu_ms(rec, m["tid"], acct["tsc0"], acct["tsc1"], lags=True)
    unknown, largest = _lag_facts(rec, m["tid"], acct["tsc0"], acct["tsc1"])
    lag_facts = f"{unknown} sides with the lag unknown, the largest known lag {largest:.3f} ms"
    ctx.note(f"LAT thread on CPU, ms: schedstat {sched:.1f}, cputime {m['cputime_ns'] / 1e6:.1f}, "
             f"the report (switches with lags) {kern:.1f}, the file with lags {with_lags:.1f}, "
             f"at the tracepoints {at_tp:.1f}; {m['kernel_switches_in']} switches in; {lag_facts}")
    assert abs(with_lags - kern) <= 0.001 * kern + 0.01, (with_lags, kern)
    # schedstat and the thread's CPU clock are the same sum (se.sum_exec_runtime), the
    # clock with the running slice added; hourglass reads both at the window's ends with
    # the schedstat file opened in the thread's set-up. Read through an fopen there,
    # schedstat fell 0.7% to 6.8% short of the clock and the switches in 14 runs, the
    # time of that first fopen (userspace/hourglass/acct.c); the clock was within 0.35%.
    # Where the scheduler's clock is filtered (the 6.1 guests unless booted with
    # tsc=reliable, as scripts/check-kernels does again for this test), each read is
    # held within a tick of the wall clock: a host stall while the thread runs is
    # counted by the TSC and cut from the scheduler's clock, which may then only fall
    # short of the switches, held to 15%
    over = 0.02 if stable else 0.15
    cpu = m["cputime_ns"] / 1e6
    for name, v in (("schedstat", sched), ("the thread's CPU clock", cpu)):
        assert -0.02 * v - 0.5 <= kern - v <= over * v + 0.5, \
            (f"kernel {kern:.1f} ms against {name} {v:.1f} ms (scheduler's clock "
             f"{'stable' if stable else 'filtered'}: -2% to +{over:.0%}, and 0.5 ms; {lag_facts})")


TESTS = [test_abi_old_recorder_new_module, test_abi_new_recorder_old_module, test_cpu_set_any_size,
         test_callback_names, test_all_cpus_accounting, test_overwrite_ring, test_hostile_calls_root,
         test_hostile_calls_user, test_ctrl_c_anywhere, test_lat_on_cpu_time_is_schedstat, test_full_disk]

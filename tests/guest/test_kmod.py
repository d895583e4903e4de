"""test_kmod - hgtrace.ko's own interface: ABI versions, names, hostile callers, scale.

Run by run.py in a guest booted with scripts/vm. Every test asserts; the
harness unloads the module after each test and fails it on a bad kernel log.
"""
import os
import re

from harness import HGTRACE, KO, TESTBIN, load, module_loaded, run, unload
from hgtrace_file import read_hgt

# ABI 1.0's module and recorder, built by scripts/vm from the last commit of ABI 1.0
OLD_KO = os.environ.get("HGT_KO_ABI_1_0", "")
OLD_HGTRACE = os.environ.get("HGT_HGTRACE_ABI_1_0", "")
HACKBENCH = "hackbench -l 30 -g 2"


def _need_old_side():
    assert OLD_KO and os.path.exists(OLD_KO) and OLD_HGTRACE and os.path.exists(OLD_HGTRACE), (
        "ABI 1.0's module and recorder were not built: scripts/vm builds them from the commit "
        f"HGT_ABI_1_0_REF (default e8b658a), which this clone must have (got {OLD_KO!r}, {OLD_HGTRACE!r})")


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
    _need_old_side()
    load()
    p = run([OLD_HGTRACE, "stat"])
    assert "abi: 1.1" in p.stdout, p.stdout
    path = ctx.path("old-recorder.hgt")
    run([OLD_HGTRACE, "record", "-q", "-c", "0", "-o", path, "--", "sh", "-c", HACKBENCH])
    rec = _check_accounting(path, "1.0 recorder")
    assert rec.meta["abi"] == "1.1", rec.meta["abi"]
    assert {e.cpu for e in rec.events} == {0}, "1.0's CPU mask (-c 0) was not applied"
    assert len(rec.events) > 500, len(rec.events)
    st = _status()
    assert st["state"] == "stopped" and st["cpus"] == "0", st
    # its CONFIG with no CPU named selects them all again
    run([OLD_HGTRACE, "record", "-q", "-d", "50ms", "-o", ctx.path("old-all.hgt")])
    every = f"0-{os.cpu_count() - 1}" if os.cpu_count() > 1 else "0"
    assert _status()["cpus"] == every, _status()["cpus"]
    ctx.note(f"1.0 recorder on the 1.1 module: {len(rec.events)} records on CPU 0, accounting exact")


def test_abi_new_recorder_old_module(ctx):
    """This recorder drives ABI 1.0's module (from git) in 1.0's terms."""
    _need_old_side()
    run(["insmod", OLD_KO])
    p = run([HGTRACE, "stat"])
    assert "abi: 1.0" in p.stdout, p.stdout
    path = ctx.path("new-recorder.hgt")
    last = os.cpu_count() - 1
    run([HGTRACE, "record", "-q", "-c", str(last), "-o", path, "--", "sh", "-c", HACKBENCH])
    rec = _check_accounting(path, "1.1 recorder on a 1.0 module")
    assert rec.meta["abi"] == "1.0", rec.meta["abi"]
    assert {e.cpu for e in rec.events} == {last}, f"-c {last} gave CPUs {({e.cpu for e in rec.events})}"
    mask = int(rec.meta["cpumask"], 16)
    assert mask == 1 << last and len(rec.meta["cpumask"]) == 64, rec.meta["cpumask"]
    # microstates through 1.0's MSA ioctl: the traced shell asks for its own
    p = run([HGTRACE, "record", "-q", "-F", "-o", ctx.path("msa.hgt"), "--",
             "sh", "-c", f"sleep 0.05; {HGTRACE} msa $$"])
    rows = [l.split() for l in p.stdout.splitlines() if l and not l.startswith("#")]
    assert len(rows) == 1 and int(rows[0][-1]) > 0 and int(rows[0][3]) > 0, f"hgtrace msa: {p.stdout} {p.stderr}"
    p = run([HGTRACE, "record", "-q", "-c", "300", "-d", "10ms", "-o", ctx.path("x.hgt")], check=False)
    assert p.returncode == 2 and "CPU 300 does not exist" in p.stderr, p.stderr
    ctx.note(f"1.1 recorder on the 1.0 module: {len(rec.events)} records on CPU {last}, accounting exact")


def test_cpu_set_any_size(ctx):
    """-c takes the last CPU through the run-time sized set; a CPU that does not exist is refused."""
    load()
    last = os.cpu_count() - 1
    path = ctx.path("last.hgt")
    run([HGTRACE, "record", "-q", "-c", str(last), "-o", path, "--", "sh", "-c", HACKBENCH])
    rec = _check_accounting(path, f"-c {last}")
    assert {e.cpu for e in rec.events} == {last}, {e.cpu for e in rec.events}
    assert int(rec.meta["cpumask"], 16) == 1 << last, rec.meta["cpumask"]
    for bad in ("4000", "8191"):
        p = run([HGTRACE, "record", "-q", "-c", bad, "-d", "10ms", "-o", ctx.path("x.hgt")], check=False)
        assert p.returncode == 2 and f"CPU {bad} does not exist" in p.stderr, p.stderr
    p = run([HGTRACE, "record", "-q", "-c", "8192", "-d", "10ms", "-o", ctx.path("x.hgt")], check=False)
    assert p.returncode == 1 and "bad CPU list" in p.stderr, p.stderr
    assert _status()["state"] == "stopped"
    ctx.note(f"-c {last}: {len(rec.events)} records, all on CPU {last}")


def test_callback_names(ctx):
    """hrtimer callbacks are named in the stream (by the reader, not the probe), never by address."""
    load()
    path = ctx.path("names.hgt")
    run([HGTRACE, "record", "-q", "-o", path, "--", "sh", "-c", "for i in 1 2 3 4 5; do sleep 0.02; done"])
    rec = _check_accounting(path, "names")
    funcs = {e.fields["id"]: e.fields["name"] for e in rec.events if e.kind == "name" and e.fields["name_kind"] == "func"}
    used = {e.fields["func"] for e in rec.events if e.kind == "hrtimer_entry"}
    assert used, "no hrtimer expired in the recording"
    assert used <= set(funcs), f"callbacks without a NAME record: {sorted(used - set(funcs))[:5]}"
    names = set(funcs.values())
    assert all(n and not n.startswith("0x") for n in names), names
    assert "hrtimer_wakeup" in names, f"nanosleep's callback not among {sorted(names)}"
    assert int(_status()["funcs_unnamed"]) == 0
    ctx.note(f"{len(funcs)} callbacks named: {', '.join(sorted(names))}")


TESTS = [test_abi_old_recorder_new_module, test_abi_new_recorder_old_module, test_cpu_set_any_size,
         test_callback_names]

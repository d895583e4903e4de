"""tests/guest/health.py, the guest harness's judge of the kernel, on constructed input:
records of /dev/kmsg, gaps in their sequence numbers, taint flags, each checker's report,
and hgtrace.ko's own messages (every pr_err and pr_warn in kmod/ is either trouble or the
answer to bad input a test gives on purpose)."""
import glob
import os
import re

import pytest

TOP = os.path.join(os.path.dirname(__file__), "..", "..")
import health  # tests/guest (pytest.ini)


def test_a_kmsg_record_parses_with_its_sequence_number():
    r = health.parse_record(b"4,1234,5678901,-,caller=T12;hgtrace: loaded\n SUBSYSTEM=x\n")
    assert (r.seq, r.prio, r.usec, r.text) == (1234, 4, 5678901, "hgtrace: loaded")
    assert r.line() == "#1234 [    5.678901] hgtrace: loaded"
    assert health.parse_record(b"no header here") is None
    assert health.parse_record(b"x,y,z;text") is None


def test_records_the_ring_lost_are_named_by_sequence_number():
    log = health.KernelLog(path=None)
    for seq in (10, 11, 15, 16, 20):
        log.take(health.Record(seq, 6, seq * 1000, f"r{seq}"))
    assert [r.text for r in log.records_since(11)] == ["r15", "r16", "r20"]
    assert log.lost_since(9) == [(12, 14), (17, 19)]
    assert log.lost_since(16) == [(17, 19)]
    assert log.lost_since(20) == []
    assert log.first_seq() == 10


def test_taint_flags_are_named_and_only_the_modules_are_allowed():
    assert health.taint_names(0) == "none"
    assert health.taint_names(1 << 12 | 1 << 13) == "O (out-of-tree module), E (unsigned module)"
    assert health.taint_names(1 << 9) == "W (kernel warning)"
    assert health.taint_names(1 << 25) == "bit 25 (unknown)"
    assert health.MODULE_TAINTS == 1 << health.taint_letter("O") | 1 << health.taint_letter("E")
    assert health.taint_letter("U") == 6 and health.taint_letter("L") == 14


# one line of each checker's report, as the kernel words it (its format strings)
REPORTS = [
    "WARNING: possible circular locking dependency detected",
    "WARNING: suspicious RCU usage",
    "WARNING: possible recursive locking detected",
    "WARNING: inconsistent lock state",
    "BUG: sleeping function called from invalid context at kernel/locking/mutex.c:283",
    "BUG: using smp_processor_id() in preemptible [00000000] code: hackbench/77",
    "BUG: KASAN: slab-out-of-bounds in hgt_ring_write+0x1a/0x90 [hgtrace]",
    "BUG: KASAN: vmalloc-out-of-bounds in hgt_ring_write+0x1a/0x90 [hgtrace]",
    "BUG: KFENCE: use-after-free read in hgt_stop+0x3c/0x80 [hgtrace]",
    "UBSAN: array-index-out-of-bounds in /work/kmod/probes.c:120:9",
    "UBSAN: shift-out-of-bounds in /work/kmod/msa.c:88:20",
    "BUG kmalloc-64 (Tainted: G           O      ): Redzone overwritten",
    "BUG kmalloc-128 (Not tainted): Poison overwritten",
    "list_del corruption. prev->next should be ffff888004b8e000, but was 0000000000000000",
    "rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:",
    "rcu: INFO: rcu_preempt self-detected stall on CPU",
    "watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [hackbench:401]",
    "INFO: task hgtrace:355 blocked for more than 30 seconds.",
    "BUG: workqueue lockup - pool cpus=0 node=0 flags=0x0 nice=0 stuck for 31s!",
    "BUG: Bad page state in process hackbench  pfn:1234",
    "Kernel panic - not syncing: corrupted stack end detected inside scheduler",
    "hgtrace: CPU 1's ring held a record of impossible length; its buffer is dropped",
    "hgtrace: cannot attach to sched_switch: -22",
]
HEALTHY = [
    "hgtrace: loaded (ABI 2.3)",
    "hgt-harness: test_health_catches_a_taint begins",
    "hgtrace: buffer_kb=4 is outside 8..1048576",
    "kasan: KernelAddressSanitizer initialized",
    "kfence: initialized - using 2097152 bytes for 255 objects at 0x(____ptrval____)",
    "clocksource: Switched to clocksource tsc",
]


@pytest.mark.parametrize("line", REPORTS)
def test_each_checkers_report_is_trouble(line):
    assert health.trouble([f"#9 [    1.000000] {line}"]), line


def test_a_healthy_kernels_lines_are_not():
    assert health.trouble(HEALTHY) == []


# pr_err("hgtrace: ..."), pr_warn_ratelimited(HGT_NAME ": ..." "..." ...), ...
PR = re.compile(r"\bpr_(err|warn|crit|alert|emerg)(?:_ratelimited|_once)?\s*\(\s*((?:HGT_NAME\s*)?"
                r"(?:\"(?:[^\"\\]|\\.)*\"\s*)+)", re.S)


def module_messages():
    """Each message of trouble kmod/ can print, as a sample line ('%d' -> 1, '%s' -> x)."""
    out = []
    for path in sorted(glob.glob(os.path.join(TOP, "kmod", "*.c"))):
        for m in PR.finditer(open(path).read()):
            fmt = "".join(re.findall(r"\"((?:[^\"\\]|\\.)*)\"", m.group(2)))
            if m.group(2).lstrip().startswith("HGT_NAME"):
                fmt = "hgtrace" + fmt
            sample = re.sub(r"%[-+ #0]*\d*(?:l{0,2}|z|h)[diuxXps]", "1", fmt).replace("\\n", "")
            out.append((os.path.basename(path), sample))
    return out


def test_every_message_of_trouble_the_module_prints_is_matched():
    msgs = module_messages()
    assert len(msgs) >= 3, msgs             # the parse found kmod/'s messages
    for where, line in msgs:
        refusal = any(re.search(p, line) for p in health.MODULE_REFUSALS)
        matched = bool(health.trouble([line]))
        assert matched != refusal, \
            (f"kmod/{where}: '{line}' is {'both trouble and a refusal' if matched else 'neither'}: "
             "add it to tools/hgtools/lab/kernel.py MODULE_TROUBLE (or MODULE_REFUSALS, if tests provoke it)")


def test_checkers_are_read_from_the_config():
    cfg = {"CONFIG_PROVE_LOCKING": "y", "CONFIG_PROVE_RCU": "y", "CONFIG_KASAN": "y",
           "CONFIG_KASAN_GENERIC": "y", "CONFIG_KASAN_VMALLOC": "y", "CONFIG_UBSAN": "y",
           "CONFIG_UBSAN_BOUNDS": "y", "CONFIG_UBSAN_SHIFT": "y", "CONFIG_DEBUG_PREEMPT": "y"}
    on = health.checkers(cfg)
    assert on[0].startswith("lockdep (PROVE_LOCKING")
    assert "PROVE_RCU" in on and "DEBUG_PREEMPT" in on
    assert "KASAN (generic, vmalloc)" in on and "UBSAN (bounds, shift)" in on
    assert health.checkers({}) == []

"""kernel - what the lab asks of the kernel it runs on, in a guest of scripts/vm or on a farm's
device: its CONFIG_HZ, debugfs mounted as a typical system has it, and the words its log uses
for trouble. The guest suite (tests/guest/harness.py, health.py) judges kernels by the same
patterns and takes them from here.
"""
from __future__ import annotations

import os
import re
import subprocess
from typing import Optional

# The kernel's own words for trouble: each checker's report opens with one of these.
# "BUG" alone would match harmless firmware chatter ("... report a bug"), so the patterns
# are the kernel's own prefixes. Lockdep's reports are WARNINGs ("possible circular
# locking dependency detected", "suspicious RCU usage") or BUGs ("sleeping function called
# from invalid context", "using smp_processor_id() in preemptible"); KASAN's and KFENCE's
# open with "BUG: KASAN:" and "BUG: KFENCE:", UBSAN's with "UBSAN:", SLUB debugging's with
# "BUG <cache> (Tainted: ...)" or "(Not tainted)".
KERNEL_TROUBLE = (
    r"WARNING:|BUG:|kernel BUG at|Oops|general protection fault|Call Trace:|Kernel panic|"
    r"soft lockup|hard LOCKUP|self-detected stall|detected stall|rcu: INFO:|"
    r"hung_task|blocked for more than|workqueue lockup|"
    r"list_\w+ corruption|refcount_t:|(?-i:UBSAN:|KASAN:|KFENCE:)|"
    r"\bBUG [\w.:-]+ \((Not t|T)ainted|Redzone overwritten|Poison overwritten|Object padding overwritten|"
    r"Freepointer corrupt|Bad page (state|map)|pagealloc: (memory corruption|single bit error)|"
    r"stack is corrupted|corrupted stack end|stack guard page|"
    r"lockdep is turned off|DEBUG_LOCKS_WARN_ON")
# hgtrace.ko's messages of trouble (kmod/: its pr_err and pr_warn; each of them is either
# here or in MODULE_REFUSALS, tests/unit/test_guest_health.py checks): a ring found
# corrupt, a tracepoint it could not attach to, a kernel it cannot record on
MODULE_TROUBLE = (
    r"hgtrace: cannot|hgtrace: .*held a record of impossible length|hgtrace: .*tracepoint not found")
# ... and the one that answers bad input a test gives on purpose (a buffer_kb out of range
# at load), which is the module working: not trouble
MODULE_REFUSALS = (r"hgtrace: buffer_kb=",)
TROUBLE = re.compile(KERNEL_TROUBLE + "|" + MODULE_TROUBLE, re.I)


def config_hz() -> int:
    """This kernel's CONFIG_HZ, 0 if it cannot be read: from its config beside its image
    (/boot/config-RELEASE, Debian 12's kernels) or its modules (/lib/modules/RELEASE/config,
    Debian 13's), or /proc/config.gz."""
    rel = os.uname().release
    for path in (f"/boot/config-{rel}", f"/lib/modules/{rel}/config", "/proc/config.gz"):
        try:
            if path.endswith(".gz"):
                import gzip
                text = gzip.open(path, "rt").read()
            else:
                text = open(path).read()
        except OSError:
            continue
        m = re.search(r"^CONFIG_HZ=(\d+)$", text, re.M)
        if m:
            return int(m.group(1))
    return 0


def mount_debugfs() -> Optional[str]:
    """Mount debugfs at /sys/kernel/debug, as a typical system has it (systemd mounts it;
    virtme-ng's guests do not): hourglass reads the scheduler's features and base slice
    there (kernel.sched_features, docs/hourglass-trace.md), which the merger's inference
    needs (docs/merge.md, rule 2b). Only in a guest of scripts/vm (HGT_VM_CPUS set), as
    root; left mounted, as such a system leaves it. Returns a note when it could not be."""
    if "HGT_VM_CPUS" not in os.environ or os.geteuid() != 0:
        return None
    with open("/proc/mounts") as f:
        if any(m.split()[1:3] == ["/sys/kernel/debug", "debugfs"] for m in f):
            return None
    p = subprocess.run(["mount", "-t", "debugfs", "nodev", "/sys/kernel/debug"], capture_output=True, text=True,
                       timeout=180)
    return None if p.returncode == 0 else f"debugfs could not be mounted ({p.stderr.strip()}): " \
        "hourglass records the scheduler's features as unknown"

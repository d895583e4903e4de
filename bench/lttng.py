"""bench/lttng.py - LTTng's kernel tracer as a peer in the benchmarks.

One LTTng session per measured run, set up as LTTng's documentation advises
for a low-overhead kernel trace: per-CPU ring buffers (the kernel domain's
only kind), a few large sub-buffers (fewer sub-buffer switches), the
consumer's default read timer and splice output, no system calls, no
contexts. The buffers are sized like hgtrace's (its module's 2 MiB a CPU).

LTTng's kernel side is lttng-modules, which Debian packages for DKMS
(scripts/setup-lttng installs it): `available()` says why it cannot record
here when it cannot. Not a module of this project: nothing here builds it.
"""
import os
import re
import shutil
import subprocess
import time

# hgtrace's event groups as LTTng's kernel event names. LTTng has no NMI
# probe, and Debian's DKMS build of lttng-modules leaves out its x86 irq
# vectors probe: lttng-modules builds it only when
# $(srctree)/arch/x86/include/asm/trace/irq_vectors.h exists, and Debian's
# split headers keep that file in the -common package, outside the tree the
# module is built against. So the comparison leaves out vectors and nmi.
EVENTS = {
    "sched": ["sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new",
              "sched_migrate_task", "sched_process_exit"],
    "irq": ["irq_handler_entry", "irq_handler_exit"],
    "softirq": ["irq_softirq_entry", "irq_softirq_exit"],
    "hrtimer": ["timer_hrtimer_expire_entry", "timer_hrtimer_expire_exit"],
}
GROUPS = list(EVENTS)

# LTTng's client keeps its state under $LTTNG_HOME (default $HOME, read-only in a guest)
HOME = "/tmp/hg-lttng-home"
ENV = dict(os.environ, LTTNG_HOME=HOME)


def _run(cmd, check=True):
    p = subprocess.run(cmd, capture_output=True, text=True, env=ENV)
    if check and p.returncode != 0:
        raise SystemExit(f"bench: {' '.join(cmd)} failed ({p.returncode}): {(p.stderr or p.stdout)[-1500:]}")
    return p


def available():
    """None when LTTng can record the kernel here, else why not."""
    for tool in ("lttng", "lttng-sessiond", "babeltrace2"):
        if not shutil.which(tool):
            return f"no {tool} (scripts/setup-lttng installs lttng-tools and babeltrace2)"
    rel = os.uname().release
    p = subprocess.run(["modinfo", "-F", "version", "lttng-tracer"], capture_output=True, text=True)
    if p.returncode != 0:
        return (f"no lttng-modules for {rel} (scripts/setup-lttng installs Debian's lttng-modules-dkms; "
                f"`dkms status lttng-modules` says whether it built for this kernel)")
    return None


def start_sessiond():
    """Start the session daemon (it loads LTTng's modules) and wait until it
    answers; returns lttng-modules' version."""
    os.makedirs(HOME, exist_ok=True)
    _run(["lttng-sessiond", "--daemonize"])
    for _ in range(100):
        if _run(["lttng", "list", "-k"], check=False).returncode == 0:
            break
        time.sleep(0.1)
    else:
        raise SystemExit("bench: lttng-sessiond did not answer `lttng list -k` in 10 s")
    return subprocess.run(["modinfo", "-F", "version", "lttng-tracer"], capture_output=True,
                          text=True).stdout.strip()


def stop_sessiond():
    """Stop the daemon; it unloads LTTng's modules as it leaves."""
    subprocess.run(["pkill", "-TERM", "-x", "lttng-sessiond"])
    for _ in range(100):
        if subprocess.run(["pgrep", "-x", "lttng-sessiond"], capture_output=True).returncode != 0:
            return
        time.sleep(0.1)
    subprocess.run(["pkill", "-KILL", "-x", "lttng-sessiond"])


def record(outdir, cmd, overwrite=False, buffer_kb=2048, subbufs=4, groups=GROUPS):
    """Record @cmd's run into @outdir (a CTF trace); returns (cmd's stdout,
    events lost). Discard mode drops new events when a sub-buffer is full
    (as hgtrace's stop mode); overwrite mode drops the oldest sub-buffer (as
    hgtrace's overwrite mode), which LTTng counts as lost packets."""
    name = "hgbench"
    _run(["lttng", "create", name, f"--output={outdir}"])
    try:
        _run(["lttng", "enable-channel", "-k", "-s", name, f"--subbuf-size={buffer_kb // subbufs}K",
              f"--num-subbuf={subbufs}", *(["--overwrite"] if overwrite else ["--discard"]), "ch"])
        _run(["lttng", "enable-event", "-k", "-s", name, "-c", "ch",
              ",".join(e for g in groups for e in EVENTS[g])])
        _run(["lttng", "start", name])
        p = subprocess.run(cmd, capture_output=True, text=True)
        _run(["lttng", "stop", name])        # waits until the consumer has written everything
        if p.returncode != 0:
            raise SystemExit(f"bench: {cmd} failed ({p.returncode}) under LTTng: {p.stderr[-1500:]}")
        stats = _run(["lttng", "list", name]).stdout
    finally:
        _run(["lttng", "destroy", name], check=False)
    lost, lost_packets = parse_losses(stats)
    return p.stdout, lost, lost_packets


def parse_losses(listing):
    """(events discarded, packets lost) over the channels of `lttng list
    SESSION`: discard mode counts the events it dropped, overwrite mode the
    sub-buffers it overwrote unread. A listing without statistics is an error,
    not no loss."""
    disc = re.findall(r"Discarded events:\s*(\d+)", listing)
    lost = re.findall(r"Lost packets:\s*(\d+)", listing)
    if not disc and not lost:
        raise SystemExit(f"bench: no loss statistics in `lttng list`: {listing[-800:]}")
    return sum(int(n) for n in disc), sum(int(n) for n in lost)


def count_events(outdir):
    """(events, discarded) in a CTF trace, as babeltrace2's counter sink reads
    them: the reader's count, not the tracer's."""
    return parse_counter(_run(["babeltrace2", outdir, "-c", "sink.utils.counter"]).stdout)


def parse_counter(out):
    """(events, discarded) from babeltrace2's counter sink, whose last block is the total."""
    ev = re.findall(r"(\d+)\s+Event messages", out)
    disc = re.findall(r"(\d+)\s+Discarded event messages", out)
    if not ev:
        raise SystemExit(f"bench: babeltrace2's counter printed no event count: {out[-500:]}")
    return int(ev[-1]), int(disc[-1]) if disc else 0


def trace_bytes(outdir):
    """Every byte LTTng wrote: streams, indexes and metadata."""
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(outdir) for f in fs)

"""record - one step to a run directory: the kernel's recording (hgtrace.ko),
hourglass's trace, and with --ftrace hgtrace-ftrace's (the same tracepoints
through ftrace, userspace/ftrace) as a second, independent ground truth;
with --ftrace-only, hgtrace-ftrace's as the only one (no module needed); with
--no-kernel, none: hourglass alone, for a profile to read (docs/profile.md).

    hourglass record --dir DIR [--ftrace | --ftrace-only | --no-kernel] [--force]
                     [--load COMMAND ...] [--label WHAT=NAME ...] <the paper's options>

(--dir was -o, which still works: in a plain run -o is the text output's
file, so record's directory has a name of its own.)

DIR gets hourglass.hgl/.json/.txt, kernel.hgt (the module), ftrace.hgt
(--ftrace, --ftrace-only: the same file format, its metadata naming the
recorder), record.json (what ran, exit statuses, events lost), load-N.log
(--load) and, until everything finished, a file INCOMPLETE saying why: a
directory with INCOMPLETE is readable but the report refuses it.

The recorders nest, each starting its command once it records:
hgtrace-ftrace record -- hgtrace record -- [gate --] hourglass. The ftrace
instance is set up first and removed last; hgtrace record stays hourglass's
parent (or the gate's), which hourglass -b freezes (SIGUSR1 to the hgtrace
above it).

With --load, hourglass runs under a small shell gate (GATE) inside the
recorder: the gate says when recording has started, record starts the loads
and lets them settle, reads the counters, opens the gate; when hourglass
ends the gate says so and waits, record reads the counters again, then lets
the recorder finish and stops the loads (loads.py).

Its own errors are one line `hourglass record: ...`; a file or directory
that cannot be made says which and why.
"""
from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import time

from . import paths
from .errors import EXIT_BREAK, EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_OK, HgError, reason

# What the module-less path imports is what it costs before anything records: in the
# 6.1 guest, under emulation, each module of ours is compiled again at every run (the
# tree is read-only there) and a standard module costs tens of milliseconds. So typing
# is for the type checker alone (the annotations are strings, PEP 563), and loads
# (which brings the merge's engine) is imported only by --load and --label.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence

    from . import loads as loadmod

USAGE = """usage: hourglass record --dir DIR [--ftrace | --ftrace-only | --no-kernel] [--force] [--no-analysis]
                        [--load COMMAND]... [--label WHAT=NAME]... <hourglass options>

Record an hourglass run with the kernel's ground truth (hgtrace.ko must be
loaded, unless --ftrace-only), into one directory that `hourglass report
DIR` reads.

  --dir DIR      the run directory (created; must be empty unless --force);
                 -o DIR is the same, kept for scripts (in a plain hourglass run
                 -o names the text output's file)
  --ftrace       also record the same tracepoints through ftrace (hgtrace-ftrace,
                 an instance of its own, x86-tsc clock) into DIR/ftrace.hgt
  --ftrace-only  record them through ftrace only: for machines that cannot
                 load the module (the report reads ftrace.hgt instead)
  --no-kernel    no ground truth at all: hourglass alone (no module, no tracefs,
                 no root), for a machine where neither can be had; `hourglass
                 report DIR --profile P` then reads its gaps with a profile
                 learned on a machine of the same kind (docs/profile.md)
  --force        reuse a non-empty DIR, deleting the files this command writes
  --no-analysis  for a latency run (a LAT or PERIODIC thread), do not end with the
                 worst wake-up's automatic analysis (which merges the run first)
  --load COMMAND run COMMAND (with /bin/sh -c) beside hourglass: started once
                 recording has started, before hourglass, stopped after it
                 (SIGTERM to its process group, SIGKILL after the grace period);
                 repeatable. Its output goes to DIR/load-N.log; it sees
                 HOURGLASS_RUN_DIR and HOURGLASS_LOAD=N. The report names what
                 it did to each gap.
  --load-settle TIME  how long the loads run before hourglass starts (default 1s)
  --load-grace TIME   how long a load has to end after SIGTERM (default 3s)
  --label WHAT=NAME   also name WHAT in the report (a pid, comm:PREFIX or irq:N),
                 as hgmerge --label; repeatable
  --reader-cpu CPU    run the recorders' draining threads on CPU (their -C), a CPU
                 hourglass's threads do not use (rtla's -H): their drain timer and
                 their runs then stay out of the gaps measured
  --reader-interval TIME  how often the recorders drain (their -i, 1ms to 60s;
                 default 100ms; trace-cmd's -s): where no CPU can be spared, a
                 period longer than the run keeps the drains out of it if the
                 buffers (hgtrace stat) hold the whole run; losses are counted
  -h, --help     this text

With hourglass's -b US (cyclictest -b, rtla -T) the module records in overwrite
mode and the recording freezes where a gap or a wake-up first passed US: the
end of kernel.hgt holds what led to it, hourglass.json names the sample, and
`hourglass report DIR` opens with it and what the kernel says of it.

Exit status (docs/exit-status.md): 0 recorded, 1 bad usage, 2 could not record
(module, tracefs, privileges, a file that cannot be written, a load that ended before
hourglass started), 4 recorded, but hourglass's trace buffer filled (raise -e),
5 recorded, and hourglass stopped at its -b threshold, 130 interrupted (DIR
kept, marked INCOMPLETE; the loads stopped).
"""

# hourglass's statuses for a run that finished, and what the directory then holds
FINISHED = {EXIT_OK: "complete", EXIT_INCOMPLETE: "hourglass's trace buffer filled (records dropped)",
            EXIT_BREAK: "complete: hourglass stopped at its -b threshold"}

# Between the recorder and hourglass when there are loads. Fd W tells record
# that recording has started, then that hourglass ended (with its status); fd
# R holds hourglass until record says go, then the recorder until record has
# read the counters. Hourglass itself inherits neither.
GATE = """echo ready >&{w}
read go <&{r} || exit 125
[ "$go" = go ] || exit 125
"$@" {w}>&- {r}<&-
rc=$?
echo "done $rc" >&{w}
read go <&{r}
exit $rc
"""
GATE_NOT_OPENED = 125

# trace.dat, hourglass.log and trace-cmd.log were --ftrace's before hgtrace-ftrace: --force clears them too
OUR_FILES = ["hourglass.hgl", "hourglass.json", "hourglass.txt", "kernel.hgt", "ftrace.hgt", "trace.dat",
             "record.json", "INCOMPLETE", "hgtrace.log", "hgtrace-ftrace.log", "hourglass.log", "trace-cmd.log"]
# what hgtrace-ftrace's summary says of the events it lost (docs/hgtrace-ftrace.md)
FTRACE_SUMMARY = re.compile(r"^hgtrace-ftrace: (\d+) records, (\d+) events lost", re.M)
LOAD_LOG = "load-{}.log"


def seconds(text: str) -> Optional[float]:
    """'1.5', '1.5s', '500ms', '200us' in seconds; None if it is none of them."""
    m = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)(s|ms|us)?", text.strip())
    if not m:
        return None
    return float(m.group(1)) * {"s": 1.0, "ms": 1e-3, "us": 1e-6, None: 1.0}[m.group(2)]


def fail(msg: str, code: int) -> int:
    print(f"hourglass record: {msg}", file=sys.stderr)
    return code


def _check_run(cmd: List[str]) -> "subprocess.CompletedProcess[str]":
    """Run one of the checks made before the recording (hourglass --dry-run, hgtrace stat), its
    output captured, with SIGINT and SIGTERM held until it has exited and been reaped. A Ctrl-C
    goes to the whole process group: taken by us mid-check (in Popen's fork and exec, or its
    wait) it left the child running after record had returned 130, twice in CI's Ctrl-C test.
    Held, the check finishes (its child inherits the mask: it is quick), and the signal is
    delivered when the mask is restored, as a KeyboardInterrupt with nothing left behind."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def main(argv: Sequence[str]) -> int:
    """`hourglass record ARGS`; the exit status (see USAGE)."""
    try:
        # the C `hourglass` starts us with SIGINT and SIGTERM blocked, so that a Ctrl-C during
        # the interpreter's own start waits for Python's handlers (userspace/hourglass/main.c,
        # run_tool): one that came meanwhile is delivered here, as a KeyboardInterrupt
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
        return _record(list(argv))
    except KeyboardInterrupt:
        # before the recording's own handler is in place: nothing was started
        return fail("interrupted before the recording started: nothing recorded", EXIT_INTERRUPTED)
    except HgError as e:
        return fail(str(e), 2)
    except OSError as e:
        # a file of the run directory that cannot be written: say which and why
        return fail(f"{e.filename or 'the run directory'}: {reason(e)}", 2)


def _cpu_list(cpus: List[int]) -> str:
    """0,2-3 for [0, 2, 3]: the kernel's CPU-list syntax."""
    runs: List[List[int]] = []
    for c in cpus:
        if runs and c == runs[-1][1] + 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def _record(argv: List[str]) -> int:
    out: Optional[str] = None
    ftrace, force = False, False
    rest: List[str] = []
    module = True
    alone = False
    load_cmds: List[str] = []
    extra_labels: List[str] = []
    settle, grace = 1.0, 3.0
    reader_cpu: Optional[int] = None
    reader_interval: Optional[str] = None
    analyse = True
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            sys.stdout.write(USAGE)
            return 0
        if a in ("--dir", "-o") and not out:
            if i + 1 >= len(argv) or (argv[i + 1][:1] == "-" and len(argv[i + 1]) > 1):
                return fail(f"{a} needs a directory" + (f", but '{argv[i + 1]}' that follows it is an option"
                                                        if i + 1 < len(argv) else ""), 1)
            out = argv[i + 1]
            i += 2
            continue
        if a in ("--load", "--label", "--load-settle", "--load-grace", "--reader-cpu",
                 "--reader-interval"):
            if i + 1 >= len(argv):
                return fail(f"{a} needs a value", 1)
            v = argv[i + 1]
            if a == "--load":
                if not v.strip():
                    return fail("--load needs a command", 1)
                load_cmds.append(v)
            elif a == "--reader-cpu":
                allowed = sorted(os.sched_getaffinity(0))
                if not v.isdigit() or int(v) not in allowed:
                    return fail(f"--reader-cpu {v}: not one of the CPUs this command may use "
                                f"({_cpu_list(allowed)})", 1)
                reader_cpu = int(v)
            elif a == "--reader-interval":
                t = seconds(v)
                if t is None or not 0.001 <= t <= 60:
                    return fail(f"--reader-interval {v}: not a time from 1ms to 60s, such as 500ms or 10s", 1)
                reader_interval = v
            elif a == "--label":
                from . import loads as loadmod
                if not loadmod.valid_label(v):
                    return fail(f"--label {v}: not PID=NAME, comm:PREFIX=NAME or irq:N=NAME", 1)
                extra_labels.append(v)
            else:
                t = seconds(v)
                if t is None or t > 3600:
                    return fail(f"{a} {v}: not a time such as 2s or 500ms (at most an hour)", 1)
                if a == "--load-settle":
                    settle = t
                else:
                    grace = t
            i += 2
            continue
        if a == "--":
            rest = argv[i + 1:]
            break
        if a == "--ftrace":
            ftrace = True
        elif a == "--ftrace-only":
            ftrace, module = True, False
        elif a == "--no-kernel":
            alone = True
        elif a == "--force":
            force = True
        elif a == "--no-analysis":
            analyse = False
        else:
            rest = argv[i:]
            break
        i += 1
    if not out:
        sys.stderr.write(USAGE)
        return fail("--dir DIR (or -o DIR) is required", 1)
    if alone and (ftrace or not module):
        return fail("--no-kernel records no ground truth; --ftrace and --ftrace-only record some: one or the other", 1)
    if alone and (reader_cpu is not None or reader_interval is not None):
        return fail("--reader-cpu and --reader-interval place the recorders: --no-kernel has none", 1)
    if alone:
        module = False
    for bad in ("--trace", "--json", "-o", "--output"):
        if bad in rest:
            return fail(f"{bad} is set by record (files go in {out})", 1)
    hg = paths.require("hourglass")
    # the workload's options are checked before anything starts
    p = _check_run([hg, *rest, "--dry-run"])
    if p.returncode:
        sys.stderr.write(p.stderr)
        return 1
    # -b: a flight recorder. The module overwrites its oldest events instead of
    # refusing new ones, and hourglass freezes it (SIGUSR1 to hgtrace record) at
    # the sample that passed, so what led to it is in the file whatever came before.
    try:
        breaktrace = json.loads(p.stdout).get("breaktrace_ns")
    except (ValueError, AttributeError):
        breaktrace = None       # an hourglass older than -b
    hgtrace = paths.locate("hgtrace") or os.path.join(os.path.dirname(hg), "hgtrace")
    if module and not os.path.exists(hgtrace):
        return fail(f"{hgtrace}: the recorder is missing (make userspace)", 2)
    hgftrace = paths.locate("hgtrace-ftrace") if ftrace else None
    if ftrace and not hgftrace:
        return fail(f"--ftrace{'-only' if not module else ''} needs hgtrace-ftrace, the module-less recorder: "
                    f"{paths.HINTS['hgtrace-ftrace']}", 2)
    st = _check_run([hgtrace, "stat"]) if module else None
    if st and st.returncode:
        sys.stderr.write(st.stderr)
        return fail("the kernel module is not usable (load it: insmod hgtrace.ko, or record with "
                    "--ftrace-only)", 2)
    # A Ctrl-C from here until the handler below is in place would leave the
    # directory marked "in progress" with no record.json: held until then, and
    # delivered to the handler (the run is then not started, and the directory says so)
    held = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        failed_dir = _prepare_dir(out, force)
        marker = os.path.join(out, "INCOMPLETE")
        if failed_dir is None:
            with open(marker, "w") as f:
                f.write("recording in progress\n")
    except BaseException:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
        raise
    if failed_dir is not None:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
        return failed_dir
    meta: Dict[str, Any] = {"record_version": 1, "command": ["hourglass", "record", *argv], "workload": rest,
                            "start_unix": time.time(), "ftrace": ftrace, "module": module,
                            "hgtrace_stat": st.stdout if st else None, "breaktrace_ns": breaktrace,
                            "reader_cpu": reader_cpu, "reader_interval": reader_interval}
    if load_cmds or extra_labels:
        meta["labels_given"] = extra_labels
    rec: Optional[subprocess.Popen[bytes]] = None
    loads: List[loadmod.Load] = []
    if load_cmds:
        from . import loads as loadmod
        loads = [loadmod.Load(i, c) for i, c in enumerate(load_cmds)]
    gate: Optional[_Gate] = None
    status = "incomplete"
    rc = 0
    # Ctrl-C reaches the whole foreground group: the recorders and hourglass
    # stop cleanly on it (hgtrace-ftrace removes its instance); we wait for
    # them, then mark the directory. A SIGINT to us alone is passed on. The
    # loads run in sessions of their own, out of its reach: stopped here,
    # whatever happened. SIGTERM (a harness giving up) is taken for a Ctrl-C.
    interrupted: List[int] = []

    def on_signal(sig: int, _frame: Any) -> None:
        interrupted.append(sig)
        if rec and rec.poll() is None:
            rec.send_signal(signal.SIGINT)

    old_handlers = (signal.signal(signal.SIGINT, on_signal), signal.signal(signal.SIGTERM, on_signal))
    signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
    log_path = os.path.join(out, "hgtrace.log" if module else "hgtrace-ftrace.log" if ftrace else "hourglass.log")
    try:
        cmd = [hg, *rest, "--trace", os.path.join(out, "hourglass.hgl"),
               "--json", os.path.join(out, "hourglass.json"), "-o", os.path.join(out, "hourglass.txt")]
        meta["hourglass_command"] = cmd
        if loads:
            gate = _Gate()
            cmd = gate.wrap(cmd)
        placed = ["-C", str(reader_cpu)] if reader_cpu is not None else []
        if reader_interval is not None:
            placed += ["-i", reader_interval]
        if module:
            cmd = [hgtrace, "record", *(["-m", "overwrite"] if breaktrace else []), *placed,
                   "-o", os.path.join(out, "kernel.hgt"), "--", *cmd]
        if ftrace:
            # overwrite mode (its default): with -b the end of the file holds what led to the sample
            assert hgftrace
            cmd = [hgftrace, "record", *placed, "-o", os.path.join(out, "ftrace.hgt"), "--", *cmd]
        meta["recorder_command"] = cmd
        with open(log_path, "w") as log:
            if not interrupted:
                rec = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                       pass_fds=gate.child_fds() if gate else ())
                if interrupted:
                    # Ctrl-C came while it was being started: the group's SIGINT missed it
                    rec.send_signal(signal.SIGINT)
        if gate and rec:
            gate.parent_side()
            failed = _run_loads(out, gate, rec, loads, settle, meta, interrupted)
            if failed:
                status, rc = failed, 2
            # a gate still waiting for its go (a failure, Ctrl-C) reads the end of file and exits
            gate.close()
        if rec:
            rec.wait()
        log_text = _read(log_path)
        top_rc = rec.returncode if rec else None
        # each recorder says its command's status when it is not 0 (and nothing when it never started it)
        ft_rc = top_rc if ftrace else None
        hgt_rc = (top_rc if not ftrace else _said(log_text, "hgtrace-ftrace", ft_rc)) if module else None
        # hourglass alone (--no-kernel): its own status
        hg_rc = (_said(log_text, "hgtrace" if module else "hgtrace-ftrace", hgt_rc if module else ft_rc)
                 if module or ftrace else top_rc)
        if hg_rc == 0 and not os.path.exists(os.path.join(out, "hourglass.hgl")):
            hg_rc = -1
        meta.update(hourglass_exit=hg_rc)
        if module:
            meta["hgtrace_exit"] = hgt_rc
        if ftrace:
            meta["hgtrace_ftrace_exit"] = ft_rc
            m = FTRACE_SUMMARY.search(log_text)
            meta["ftrace_records"], meta["ftrace_lost"] = (int(m.group(1)), int(m.group(2))) if m else (None, None)
        if rc:
            pass        # a load failed: said above
        elif interrupted:
            status, rc = ("interrupted by Ctrl-C" if rec else "interrupted by Ctrl-C before hourglass started",
                          EXIT_INTERRUPTED)
        elif ftrace and ft_rc:
            sys.stderr.write(log_text[-4000:])
            status, rc = f"hgtrace-ftrace record failed (exit {ft_rc})", 2
        elif module and hgt_rc:
            sys.stderr.write(log_text[-4000:])
            status, rc = f"hgtrace record failed (exit {hgt_rc})", 2
        elif hg_rc is None:
            sys.stderr.write(log_text[-4000:])
            status, rc = "hourglass did not run", 2
        elif hg_rc == EXIT_INTERRUPTED:
            status, rc = "hourglass was interrupted", EXIT_INTERRUPTED
        elif hg_rc not in FINISHED:
            sys.stderr.write(log_text[-4000:])
            status, rc = f"hourglass failed (exit {hg_rc})", 2
        else:
            status, rc = FINISHED[hg_rc], hg_rc
            if meta.get("ftrace_lost"):
                print(f"hourglass record: hgtrace-ftrace lost {meta['ftrace_lost']} events: ftrace.hgt marks "
                      "where (LOST records), and the report counts the gaps they touch as unexplainable",
                      file=sys.stderr)
    finally:
        if gate:
            gate.close()
        for ld in loads:
            ld.stop(grace)
        if rec and rec.poll() is None:
            rec.send_signal(signal.SIGINT)
            try:
                rec.wait(timeout=120)
            except subprocess.TimeoutExpired:
                rec.kill()
                rec.wait()
        if loads:
            meta["loads"] = [ld.record() for ld in loads]
            meta["labels"] = meta.get("labels", []) + extra_labels
        elif extra_labels:
            meta["labels"] = extra_labels
        signal.signal(signal.SIGINT, old_handlers[0])
        signal.signal(signal.SIGTERM, old_handlers[1])
        meta["status"] = status
        meta["end_unix"] = time.time()
        with open(os.path.join(out, "record.json"), "w") as f:
            json.dump(meta, f, indent=1)
        if rc in FINISHED:
            os.unlink(marker)
        else:
            with open(marker, "w") as f:
                f.write(status + "\n")
    print(f"hourglass record: {status}; files in {out}", file=sys.stderr)
    if analyse and (module or ftrace) and rc in (EXIT_OK, EXIT_BREAK):
        # as rtla timerlat -a ends: the worst sample, stage by stage (a latency run only)
        from . import analysis
        for line in analysis.after_record(out):
            print(line)
    return rc


def _prepare_dir(out: str, force: bool) -> Optional[int]:
    """@out made, or emptied of a former run's files with --force; None, or
    the exit status after saying why not."""
    if os.path.exists(out):
        if not os.path.isdir(out):
            return fail(f"{out}: exists and is not a directory", 1)
        if os.listdir(out) and not force:
            return fail(f"{out}: not empty (use --force to reuse it)", 1)
        for name in OUR_FILES + [n for n in os.listdir(out) if re.fullmatch(r"load-\d+\.log", n)]:
            if os.path.exists(os.path.join(out, name)):
                os.unlink(os.path.join(out, name))
        return None
    try:
        os.makedirs(out)
    except OSError as e:
        return fail(f"cannot create {out}: {reason(e)}", 2)
    return None


def _said(log: str, recorder: str, recorder_rc: Optional[int]) -> Optional[int]:
    """The exit status of @recorder's command, from what it printed: None when
    the recorder failed or never started it, 0 when it said nothing."""
    m = re.findall(rf"^{re.escape(recorder)}: the command exited with status (\d+)$", log, re.M)
    if m:
        return int(m[-1])
    if recorder_rc is None or re.search(rf"^{re.escape(recorder)}: the command was not started", log, re.M):
        return None
    return 0 if recorder_rc == 0 else None


class _Gate:
    """The two pipes between record and GATE (see there)."""

    def __init__(self) -> None:
        self.up_r, self.up_w = os.pipe()        # the gate tells us
        self.down_r, self.down_w = os.pipe()    # we tell the gate
        # a signal's byte (signal.set_wakeup_fd) ends wait_line's wait: no timeout to poll on
        self.wake_r, self.wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.buf = b""

    def wrap(self, cmd: List[str]) -> List[str]:
        return ["/bin/sh", "-c", GATE.format(w=self.up_w, r=self.down_r), "hourglass-gate", *cmd]

    def child_fds(self) -> "tuple[int, int]":
        return (self.up_w, self.down_r)

    def parent_side(self) -> None:
        """Close the child's ends here, so that its end is our end of file."""
        os.close(self.up_w)
        os.close(self.down_r)
        self.up_w = self.down_r = -1

    def wait_line(self, proc: "subprocess.Popen[bytes]", interrupted: List[int]) -> Optional[str]:
        """The gate's next line; None at its end (it, or the recorder, ended) or on Ctrl-C.
        One wait, which the line or a signal ends: a wake-up every 100 ms here was a gap
        in hourglass's run on its CPU that the recording made (docs/lab.md)."""
        try:
            old, poll = signal.set_wakeup_fd(self.wake_w), None
        except ValueError:      # not the main thread (an embedder): no signal comes here; look at times
            old, poll = None, 0.1
        try:
            while b"\n" not in self.buf:
                if interrupted:
                    return None
                r, _, _ = select.select([self.up_r, self.wake_r], [], [], poll)
                if self.wake_r in r:
                    try:
                        os.read(self.wake_r, 256)
                    except BlockingIOError:
                        pass
                if self.up_r not in r:
                    continue
                chunk = os.read(self.up_r, 256)
                if not chunk:
                    return None
                self.buf += chunk
        finally:
            if old is not None:
                signal.set_wakeup_fd(old)
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode(errors="replace")

    def go(self) -> None:
        try:
            os.write(self.down_w, b"go\n")
        except OSError:
            pass   # the gate is gone: the recorder's status says why

    def close(self) -> None:
        for fd in (self.up_r, self.up_w, self.down_r, self.down_w, self.wake_r, self.wake_w):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.up_r = self.up_w = self.down_r = self.down_w = self.wake_r = self.wake_w = -1


def _run_loads(out: str, gate: _Gate, rec: "subprocess.Popen[bytes]", loads: List[loadmod.Load], settle: float,
               meta: Dict[str, Any], interrupted: List[int]) -> Optional[str]:
    """Between the recorder's start and its end: start the loads, let them settle, read the
    counters, run hourglass, read them again. A reason to fail, or None."""
    from . import loads as loadmod
    if gate.wait_line(rec, interrupted) != "ready":
        return None     # the recorder failed or Ctrl-C: its status says which
    for ld in loads:
        with open(os.path.join(out, LOAD_LOG.format(ld.index)), "wb") as log:
            ld.start(out, log)
    t_end = time.monotonic() + settle
    while time.monotonic() < t_end and not interrupted:
        time.sleep(min(0.05, max(0.0, t_end - time.monotonic())))
    if interrupted:
        return None
    procs = loadmod.parent_map()
    for ld in loads:
        ld.watch(procs)
    for ld in loads:
        code = ld.early_exit()
        if code is not None and not ld.alive_tasks():
            ld.ended = "exited before hourglass started"
            return (f"load {ld.index} ({ld.command}) exited with status {code} before hourglass started "
                    f"(its output: {os.path.join(out, LOAD_LOG.format(ld.index))})")
    loadmod.name_loads(loads)
    foreign = loadmod.foreign_tasks(loads, procs)
    meta["counters_before"] = loadmod.counters_now()
    for ld in loads:
        ld.sched_before = ld.sample_sched()
    gate.go()
    done = gate.wait_line(rec, interrupted)
    if done and done.startswith("done"):
        meta["counters_after"] = loadmod.counters_now()
        procs = loadmod.parent_map()
        for ld in loads:
            ld.watch(procs)
            ld.sched_after = ld.sample_sched()
        loadmod.name_loads(loads)      # again, on what ran: the first sample may have caught a step
        foreign.update(loadmod.foreign_tasks(loads, procs))
    gate.go()
    meta["labels"] = loadmod.labels(loads, foreign)
    return None


def _read(path: str) -> str:
    with open(path, errors="replace") as f:
        return f.read()

"""record - one step to a run directory: the kernel's recording (hgtrace.ko),
hourglass's trace, and with --ftrace trace-cmd's as a second ground truth;
with --ftrace-only, trace-cmd's as the only one (no module needed).

    hourglass record --dir DIR [--ftrace | --ftrace-only] [--force] <the paper's options>

(--dir was -o, which still works: in a plain run -o is the text output's
file, so record's directory has a name of its own.)

DIR gets hourglass.hgl/.json/.txt, kernel.hgt, trace.dat (--ftrace),
record.json (what ran, exit statuses, versions) and, until everything
finished, a file INCOMPLETE saying why: a directory with INCOMPLETE is
readable but the report refuses it.

Its own errors are one line `hourglass record: ...`; a file or directory
that cannot be made says which and why.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional, Sequence

from . import paths
from .errors import EXIT_BREAK, EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_OK, HgError, reason

FTRACE_EVENTS = ["sched:sched_switch", "sched:sched_waking", "sched:sched_wakeup",
                 "sched:sched_migrate_task", "sched:sched_process_exit", "irq:irq_handler_entry",
                 "irq:irq_handler_exit", "irq:softirq_entry", "irq:softirq_exit", "irq_vectors:*",
                 "timer:hrtimer_expire_entry", "timer:hrtimer_expire_exit"]

USAGE = """usage: hourglass record --dir DIR [--ftrace | --ftrace-only] [--force] <hourglass options>

Record an hourglass run with the kernel's ground truth (hgtrace.ko must be
loaded, unless --ftrace-only), into one directory that `hourglass report
DIR` reads.

  --dir DIR      the run directory (created; must be empty unless --force);
                 -o DIR is the same, kept for scripts (in a plain hourglass run
                 -o names the text output's file)
  --ftrace       also record the same tracepoints with trace-cmd (x86-tsc clock)
  --ftrace-only  record them with trace-cmd only: for machines that cannot
                 load the module (the report reads trace.dat instead)
  --force        reuse a non-empty DIR, deleting the files this command writes
  -h, --help     this text

With hourglass's -b US (cyclictest -b, rtla -T) the module records in overwrite
mode and the recording freezes where a gap or a wake-up first passed US: the
end of kernel.hgt holds what led to it, hourglass.json names the sample.

Exit status (docs/exit-status.md): 0 recorded, 1 bad usage, 2 could not record
(module, privileges, a file that cannot be written), 4 recorded, but hourglass's
trace buffer filled (raise -e), 5 recorded, and hourglass stopped at its -b
threshold, 130 interrupted (DIR kept, marked INCOMPLETE).
"""

# hourglass's statuses for a run that finished, and what the directory then holds
FINISHED = {EXIT_OK: "complete", EXIT_INCOMPLETE: "hourglass's trace buffer filled (records dropped)",
            EXIT_BREAK: "complete: hourglass stopped at its -b threshold"}

OUR_FILES = ["hourglass.hgl", "hourglass.json", "hourglass.txt", "kernel.hgt", "trace.dat",
             "record.json", "INCOMPLETE", "hgtrace.log", "hourglass.log", "trace-cmd.log"]


def fail(msg: str, code: int) -> int:
    print(f"hourglass record: {msg}", file=sys.stderr)
    return code


def main(argv: Sequence[str]) -> int:
    """`hourglass record ARGS`; the exit status (see USAGE)."""
    try:
        return _record(list(argv))
    except KeyboardInterrupt:
        # before the recording's own handler is in place: nothing was started
        return fail("interrupted before the recording started: nothing recorded", EXIT_INTERRUPTED)
    except HgError as e:
        return fail(str(e), 2)
    except OSError as e:
        # a file of the run directory that cannot be written: say which and why
        return fail(f"{e.filename or 'the run directory'}: {reason(e)}", 2)


def _record(argv: List[str]) -> int:
    out: Optional[str] = None
    ftrace, force = False, False
    rest: List[str] = []
    module = True
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
        if a == "--":
            rest = argv[i + 1:]
            break
        if a == "--ftrace":
            ftrace = True
        elif a == "--ftrace-only":
            ftrace, module = True, False
        elif a == "--force":
            force = True
        else:
            rest = argv[i:]
            break
        i += 1
    if not out:
        sys.stderr.write(USAGE)
        return fail("--dir DIR (or -o DIR) is required", 1)
    for bad in ("--trace", "--json", "-o", "--output"):
        if bad in rest:
            return fail(f"{bad} is set by record (files go in {out})", 1)
    hg = paths.require("hourglass")
    # the workload's options are checked before anything starts
    p = subprocess.run([hg, *rest, "--dry-run"], capture_output=True, text=True)
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
    if ftrace and not shutil.which("trace-cmd"):
        return fail("--ftrace needs trace-cmd (apt install trace-cmd)", 2)
    st = subprocess.run([hgtrace, "stat"], capture_output=True, text=True) if module else None
    if st and st.returncode:
        sys.stderr.write(st.stderr)
        return fail("the kernel module is not usable (load it: insmod hgtrace.ko, or record with "
                    "--ftrace-only)", 2)
    if os.path.exists(out):
        if not os.path.isdir(out):
            return fail(f"{out}: exists and is not a directory", 1)
        if os.listdir(out) and not force:
            return fail(f"{out}: not empty (use --force to reuse it)", 1)
        for name in OUR_FILES:
            if os.path.exists(os.path.join(out, name)):
                os.unlink(os.path.join(out, name))
    else:
        try:
            os.makedirs(out)
        except OSError as e:
            return fail(f"cannot create {out}: {reason(e)}", 2)
    marker = os.path.join(out, "INCOMPLETE")
    with open(marker, "w") as f:
        f.write("recording in progress\n")
    meta: Dict[str, Any] = {"record_version": 1, "command": ["hourglass", "record", *argv], "workload": rest,
                            "start_unix": time.time(), "ftrace": ftrace, "module": module,
                            "hgtrace_stat": st.stdout if st else None, "breaktrace_ns": breaktrace}
    tc: Optional[subprocess.Popen[bytes]] = None
    status = "incomplete"
    rc = 0
    # Ctrl-C reaches the whole foreground group: hgtrace and trace-cmd stop
    # cleanly on it; we wait for them, then mark the directory.
    interrupted: List[int] = []
    signal.signal(signal.SIGINT, lambda *_: interrupted.append(1))
    try:
        if ftrace:
            tc_log = os.path.join(out, "trace-cmd.log")
            args = ["trace-cmd", "record", "-C", "x86-tsc", "-o", os.path.join(out, "trace.dat")]
            for ev in FTRACE_EVENTS:
                args += ["-e", ev]
            with open(tc_log, "w") as log:
                tc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
            # trace-cmd says so once its readers run
            for _ in range(300):
                time.sleep(0.1)
                if interrupted or tc.poll() is not None or "Hit Ctrl^C" in _read(tc_log):
                    break
            if tc.poll() is not None and not interrupted:
                return fail(f"trace-cmd did not start: {_read(tc_log)[-500:]}", 2)
        if interrupted:
            # Ctrl-C while trace-cmd started: hourglass and the module were never started
            status, rc = "interrupted by Ctrl-C before hourglass started", EXIT_INTERRUPTED
            return fail(f"{status}; {out} marked INCOMPLETE", rc)
        cmd = [hg, *rest, "--trace", os.path.join(out, "hourglass.hgl"),
               "--json", os.path.join(out, "hourglass.json"), "-o", os.path.join(out, "hourglass.txt")]
        if module:
            cmd = [hgtrace, "record", *(["-m", "overwrite"] if breaktrace else []),
                   "-o", os.path.join(out, "kernel.hgt"), "--", *cmd]
        meta["recorder_command"] = cmd
        r = subprocess.run(cmd, capture_output=True, text=True)
        with open(os.path.join(out, "hgtrace.log" if module else "hourglass.log"), "w") as f:
            f.write(r.stdout + r.stderr)
        if module:
            m = re.search(r"the command exited with status (\d+)", r.stderr)
            hg_rc = int(m.group(1)) if m else (0 if os.path.exists(os.path.join(out, "hourglass.hgl")) else -1)
        else:
            hg_rc = r.returncode
        meta.update(hgtrace_exit=r.returncode, hourglass_exit=hg_rc)
        if interrupted:
            status, rc = "interrupted by Ctrl-C", 130
        elif module and r.returncode:
            sys.stderr.write(r.stderr)
            status, rc = f"hgtrace record failed (exit {r.returncode})", 2
        elif hg_rc == EXIT_INTERRUPTED:
            status, rc = "hourglass was interrupted", EXIT_INTERRUPTED
        elif hg_rc not in FINISHED:
            sys.stderr.write(r.stderr)
            status, rc = f"hourglass failed (exit {hg_rc})", 2
        else:
            status, rc = FINISHED[hg_rc], hg_rc
    finally:
        if tc and tc.poll() is None:
            tc.send_signal(signal.SIGINT)
            try:
                tc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                tc.kill()
            meta["trace_cmd_exit"] = tc.returncode
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
    return rc


def _read(path: str) -> str:
    with open(path, errors="replace") as f:
        return f.read()

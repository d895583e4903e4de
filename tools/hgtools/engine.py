"""engine - run the C merger (hgmerge) on a run directory, and hgtrace-import
first when the ground truth is trace-cmd's trace.dat; their bad-input exit
(3, one line naming the file, the offset and what was wrong) becomes one
clean error (failure(): every command's one path, learn's too). What hgmerge
refuses (a recording that does not cover the run, or is damaged) is refused
so by report, export, learn and results alike; a recording record.json says
was made but that is not there is refused here, before any merge. The loads
`hourglass record --load` ran are named to the merger from the run's
record.json (its "labels"), with the user's own --label after.

    hgmerge --hgl FILE --kernel FILE.hgt --report OUT.json [--name DISPLAY_NAME] [--gaps OUT.hgg]
            [--gaps-json OUT.jsonl (a run hourglass -b stopped)]
            [--kernelshark OUT.dat [--ks-session OUT.json]] [--perfetto OUT.perfetto-trace] [--progress]
            [--label WHAT=NAME ...] [--ready-fd FD (hourglass export, to draw its page meanwhile)]
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

from . import breaktrace, jsonfile, paths, progress, report_json
from .errors import EXIT_BAD_INPUT, EXIT_ENV, HgError, cannot

TRACE_DAT_MAGIC = b"\x17\x08\x44tracing"


LABEL_RE = re.compile(r"^(\d+|comm:[^=]+|irq:\d+)=[^=]+$")


def record_meta(run_dir: str) -> Dict[str, Any]:
    """@run_dir's record.json (hourglass record's account of the run), {} without one; one
    that cannot be read is an error naming it."""
    return jsonfile.load_object(os.path.join(run_dir, "record.json")) or {}


def run_labels(run_dir: str) -> List[str]:
    """The --label options of the loads recorded in @run_dir (record.json "labels"); none
    without a record.json. A record.json that cannot be read, or labels that are not what
    hgmerge takes, are an error naming the file."""
    path = os.path.join(run_dir, "record.json")
    labels = record_meta(run_dir).get("labels")
    if labels is None:
        return []
    if not isinstance(labels, list) or not all(isinstance(x, str) and LABEL_RE.match(x) for x in labels):
        raise HgError(f"{path}: \"labels\" must be a list of PID=NAME, comm:PREFIX=NAME or irq:N=NAME")
    return labels


@dataclass
class Exports:
    """Files the merge writes besides the report (None: not wanted)."""
    gaps: Optional[str] = None
    kernelshark: Optional[str] = None
    ks_session: Optional[str] = None
    perfetto: Optional[str] = None
    gaps_json: Optional[str] = None     # the per-gap stream as JSON lines (hourglass report --explain)


GROUND_TRUTH = ("kernel.hgt", "ftrace.hgt", "trace.dat")   # a run directory's, in the order looked for


def has_ground_truth(run_dir: str) -> bool:
    """Whether @run_dir holds a kernel recording (else hourglass ran alone: record --no-kernel)."""
    return any(os.path.exists(os.path.join(run_dir, n)) for n in GROUND_TRUTH)


# what record.json says was recorded, and the file it went to (tools/hgtools/record.py)
PROMISED = (("module", "kernel.hgt", "the module recorded this run"),
            ("ftrace", "ftrace.hgt", "the ftrace recorder recorded this run"))


def check_promised(run_dir: str) -> None:
    """Refuse a run whose record.json says a recorder recorded it ("module": true: kernel.hgt;
    "ftrace": true: ftrace.hgt) when that recording is not there: a run with its ground truth
    lost is not a run without one (issue 50), and is never reported as one."""
    meta = record_meta(run_dir)
    for key, name, what in PROMISED:
        path = os.path.join(run_dir, name)
        if meta.get(key) is True and not os.path.exists(path):
            raise HgError(f"{path}: no such file, though {os.path.join(run_dir, 'record.json')} says {what} "
                          f"(\"{key}\": true): its ground truth is lost, and the run is not judged without it",
                          EXIT_BAD_INPUT)


def run_inputs(run_dir: str, kernel: Optional[str] = None, alone: bool = False) -> "tuple[str, str]":
    """hourglass's trace and the ground truth of @run_dir (DIR/kernel.hgt, the
    module's, else DIR/ftrace.hgt, hgtrace-ftrace's, else DIR/trace.dat,
    unless @kernel names one); a run that did not finish recording is refused, and so is one
    whose record.json names a recording that is not there (check_promised).
    @alone: hourglass's trace only (the ground truth is ''), for a run without one."""
    if not os.path.isdir(run_dir):
        raise HgError(f"{run_dir}: not a directory" if os.path.exists(run_dir) else f"{run_dir}: no such directory")
    hgl = os.path.join(run_dir, "hourglass.hgl")
    if not os.path.exists(hgl):
        raise HgError(f"{run_dir}: no hourglass.hgl (hourglass --trace) in this directory")
    marker = os.path.join(run_dir, "INCOMPLETE")
    if os.path.exists(marker):
        try:
            with open(marker) as f:
                why = f.read().strip()
        except OSError as e:
            raise cannot("read", marker, e)
        raise HgError(f"{run_dir}: the recording did not finish ({why or 'INCOMPLETE'}): nothing to report")
    if not kernel:
        check_promised(run_dir)
    if alone:
        return hgl, ""
    if kernel:
        if not os.path.exists(kernel):
            raise HgError(f"{kernel}: no such file")
        return hgl, kernel
    for name in GROUND_TRUTH:
        p = os.path.join(run_dir, name)
        if os.path.exists(p):
            return hgl, p
    raise HgError(f"{run_dir}: no kernel.hgt (hgtrace record), ftrace.hgt (hgtrace-ftrace record) or trace.dat "
                  "(trace-cmd record -C x86-tsc) in this directory")


def is_trace_dat(path: str) -> bool:
    """Whether @path is a trace-cmd trace.dat (by its magic, not its name)."""
    try:
        with open(path, "rb") as f:
            return f.read(len(TRACE_DAT_MAGIC)) == TRACE_DAT_MAGIC
    except OSError as e:
        raise cannot("read", path, e)


def _run(cmd: List[str], on_ready: Optional[Callable[[], None]] = None) -> None:
    """Run one of our programs; its messages reach stderr as they come, and
    its failure is raised as an HgError (its own one-line reason for exit 3, and for 2 when it
    gave one).
    With @on_ready (hgmerge only), hgmerge says when its report is whole
    (--ready-fd) and @on_ready runs then, while hgmerge puts the exports'
    files together; hgmerge's own failure outranks one of @on_ready."""
    prog = os.path.basename(cmd[0])
    relay = progress.Relay(sys.stderr)
    rfd = wfd = -1
    if on_ready:
        rfd, wfd = os.pipe()
        cmd = cmd + ["--ready-fd", str(wfd)]
    try:
        # the child's stdout is not ours to print (our stdout may be the report): it joins its stderr
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             pass_fds=(wfd,) if on_ready else ())
    except OSError as e:
        if on_ready:
            os.close(rfd)
        raise HgError(f"cannot run {cmd[0]}: {e.strerror or e}", EXIT_ENV)
    finally:
        if wfd >= 0:
            os.close(wfd)
    assert p.stdout is not None
    late: Optional[BaseException] = None
    pump = None
    try:
        if on_ready:
            pump = threading.Thread(target=relay.pump, args=(p.stdout,), daemon=True)
            pump.start()
            with os.fdopen(rfd, "rb") as r:
                said = r.read()     # "report\n"; nothing when hgmerge ends without one
            if said == b"report\n":
                try:
                    on_ready()
                except BaseException as e:      # noqa: B902  (raised below, after hgmerge's own)
                    late = e
        else:
            relay.pump(p.stdout)
    finally:
        if pump:
            pump.join()
        rc = p.wait()
    if rc == 0:
        relay.flush()
        if late:
            raise late
        return
    raise failure(prog, rc, relay.last_line(prog + ": "))


def failure(prog: str, rc: int, said: str) -> HgError:
    """The error for one of our programs (@prog) that exited @rc, its last line @said: its own
    one-line reason for a bad input (3; what every command reads refused, in the merger's
    words) and for what it could not do (2); a crash or another status named as such."""
    msg = said.strip().splitlines()[-1] if said.strip() else ""
    if msg.startswith(prog + ": "):
        msg = msg[len(prog) + 2:]
    if rc == EXIT_BAD_INPUT:
        return HgError(msg or f"{prog} found a bad input (exit 3) and said nothing", EXIT_BAD_INPUT)
    if rc == EXIT_ENV and msg:      # memory, an output it could not write: its own words say which
        return HgError(msg, EXIT_ENV)
    if rc < 0:
        return HgError(f"{prog} died of {signal.Signals(-rc).name} (a bug: please report it with the run "
                       f"directory){': ' + msg if msg else ''}", EXIT_ENV)
    return HgError(f"{prog} failed (exit {rc}){': ' + msg if msg else ''}", EXIT_ENV)


def merge(run_dir: str, kernel: Optional[str] = None, exports: Optional[Exports] = None,
          show_progress: Optional[bool] = None, labels: Optional[List[str]] = None,
          on_report: Optional[Callable[[Dict[str, Any]], None]] = None,
          limits: Optional[str] = None, classes: Optional[str] = None) -> Dict[str, Any]:
    """Merge @run_dir with hgmerge: the report (JSON v2, as a dictionary), and
    the @exports written where they say; the run's loads and @labels named. A
    run hourglass -b stopped gets a "breaktrace" object: the sample and what
    the kernel says of it. @on_report gets the report as soon as it is whole,
    while hgmerge is still putting the exports' files together (hourglass
    export draws its HTML page meanwhile); merge() returns when they are. @limits: hgmerge's
    --limits (a profile's, hgtools.learn); @classes: hgmerge --classes (a profile's model's classes). A run directory without a kernel recording (hourglass
    record --no-kernel) is merged without one (hgmerge --no-kernel): inferred, not judged; its
    exports, which show the kernel's events, are refused."""
    alone = not kernel and os.path.isdir(run_dir) and not has_ground_truth(run_dir)
    exports = exports or Exports()
    hgl, kpath = run_inputs(run_dir, kernel, alone)     # first: a recording lost is said as such
    if alone and (exports.kernelshark or exports.perfetto or exports.ks_session):
        raise HgError(f"{run_dir}: no kernel recording (hourglass record --no-kernel): the exports show the "
                      "kernel's events, and there are none")
    trip = None if alone else breaktrace.of_run(run_dir)
    all_labels = run_labels(run_dir) + list(labels or [])
    if show_progress is None:
        show_progress = progress.enabled()
    hgmerge = paths.require("hgmerge")
    with tempfile.TemporaryDirectory(prefix="hourglass-") as tmp:
        kpath, name = _as_hgt(kpath, kernel, tmp)
        out = os.path.join(tmp, "report.json")
        cmd = [hgmerge, "--hgl", hgl, *(["--kernel", kpath] if kpath else ["--no-kernel"]), "--report", out,
               "--dir", os.path.abspath(run_dir)]
        if name:
            cmd += ["--name", name]
        for opt, path in (("--gaps", exports.gaps), ("--kernelshark", exports.kernelshark),
                          ("--ks-session", exports.ks_session), ("--perfetto", exports.perfetto)):
            if path:
                _check_writable(path)
                cmd += [opt, path]
        gaps_json = exports.gaps_json or (os.path.join(tmp, "gaps.jsonl") if trip and trip["kind"] == "gap"
                                          else None)
        if gaps_json:
            cmd += ["--gaps-json", gaps_json]
        for lab in all_labels:
            cmd += ["--label", lab]
        if limits:
            cmd += ["--limits", limits]
        if classes:
            cmd += ["--classes", classes]
        if show_progress:
            cmd.append("--progress")

        def complete(path: str) -> Dict[str, Any]:
            rep = report_json.load(path)
            if trip:
                rep["breaktrace"] = explain(rep, path.endswith(".partial"))
            return rep

        def explain(rep: Dict[str, Any], early: bool) -> Dict[str, Any]:
            assert trip is not None
            if early and gaps_json:
                # before the exports are finished the gap stream too is whole at FILE.partial,
                # named FILE just before the report
                try:
                    return breaktrace.explain(rep, trip, gaps_json + ".partial")
                except HgError:
                    if os.path.exists(gaps_json + ".partial") or not os.path.exists(gaps_json):
                        raise
            return breaktrace.explain(rep, trip, gaps_json)

        early: List[Dict[str, Any]] = []

        def ready() -> None:
            # whole at OUT.partial until hgmerge names it OUT (as soon as the exports are done)
            try:
                early.append(complete(out + ".partial"))
            except HgError:
                if os.path.exists(out + ".partial") or not os.path.exists(out):
                    raise
                early.append(complete(out))
            assert on_report is not None
            on_report(early[0])

        _run(cmd, ready if on_report else None)
        return early[0] if early else complete(out)


def _as_hgt(kpath: str, kernel: Optional[str], tmp: str) -> "tuple[str, Optional[str]]":
    """The recording hgmerge reads for @kpath, and the name it gives it: a trace.dat imported
    into @tmp (hgtrace-import) and named as the user gave it; an .hgt as it is."""
    if not kpath or not is_trace_dat(kpath):
        return kpath, None
    imported = os.path.join(tmp, "kernel.hgt")
    _run([paths.require("hgtrace-import"), kpath, "-o", imported])
    return imported, kernel or kpath


def check(run_dir: str) -> None:
    """Refuse @run_dir as merge(@run_dir) would, without merging it: its inputs found the same
    way, then hgmerge --check (both files read and checked as a merge reads them, every record,
    and the recording's coverage of the run; nothing written). hourglass results asks it
    before it trusts a report saved in the run: one rule, the merger's, for both."""
    alone = os.path.isdir(run_dir) and not has_ground_truth(run_dir)
    hgl, kpath = run_inputs(run_dir, None, alone)
    with tempfile.TemporaryDirectory(prefix="hourglass-") as tmp:
        kpath, name = _as_hgt(kpath, None, tmp)
        cmd = [paths.require("hgmerge"), "--hgl", hgl, *(["--kernel", kpath] if kpath else ["--no-kernel"]),
               "--check"]
        _run(cmd + (["--name", name] if name else []))


def _check_writable(path: str) -> None:
    """Refuse an output that cannot be written before minutes of merging, not after."""
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise HgError(f"cannot write {path}: {d} is not a directory")
    if not os.access(d, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise HgError(f"cannot write {path}: permission denied")

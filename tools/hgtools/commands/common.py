"""common - what every subcommand's command line shares: the parser with hourglass's exit
status for a bad command line, --label, the merge (or a report JSON read back), and writing
outputs (docs/exit-status.md)."""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import IO, Any, Callable, Dict, NoReturn, Optional, Sequence

from .. import engine, report_json
from ..errors import EXIT_ENV, EXIT_USAGE, HgError, cannot

EXIT_EPILOG = ("Exit status (docs/exit-status.md): 0 done, 1 bad command line, 2 could not run (a program "
               "missing or crashed, an output that cannot be written), 3 bad input (named: truncated or "
               "corrupt file, unfinished run, another clock), 130 interrupted.")


class Parser(argparse.ArgumentParser):
    """argparse, with hourglass's exit status for a bad command line (1, not 2)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: {message}\n")


def label_option(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--label", metavar="WHAT=NAME", action="append", default=[],
                    help="name a load in the report: WHAT is a pid, comm:PREFIX (every task whose comm starts "
                         "so) or irq:N (repeatable; the loads hourglass record --load ran are named already, "
                         "from DIR/record.json)")


def check_labels(ap: argparse.ArgumentParser, labels: Sequence[str]) -> None:
    for lab in labels:
        if not engine.LABEL_RE.match(lab):
            ap.error(f"--label {lab}: not PID=NAME, comm:PREFIX=NAME or irq:N=NAME")


def report_of(what: str, kernel: Optional[str], exports: engine.Exports,
               labels: Sequence[str] = (),
               on_report: Optional[Callable[[Dict[str, Any]], None]] = None,
               limits: Optional[str] = None, classes: Optional[str] = None) -> Dict[str, Any]:
    """A run directory, merged now; or a report JSON already written, read back."""
    if os.path.isfile(what) and what.endswith(".json"):
        if kernel or exports.kernelshark or exports.perfetto or exports.gaps or labels or limits:
            raise HgError(f"{what}: a report JSON holds no timeline: give the run directory to export it",
                          EXIT_USAGE)
        return report_json.load(what)
    return engine.merge(what, kernel, exports, labels=list(labels), on_report=on_report, limits=limits,
                        classes=classes)


def check_output(path: str) -> None:
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise HgError(f"cannot write {path}: {d} is not a directory", EXIT_ENV)


def write_json(rep: Dict[str, Any], path: str) -> None:
    try:
        with open(path, "w") as f:
            json.dump(rep, f, indent=1)
            f.write("\n")
    except OSError as e:
        raise cannot("write", path, e)


def print_out(write: Any) -> None:
    """Write to stdout; a reader that went away (`hourglass report DIR | head`) is not an error."""
    out: IO[str] = sys.stdout
    try:
        write(out)
        out.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def size_of(path: str) -> str:
    try:
        return f" ({os.path.getsize(path) / 1e6:.1f} MB)"
    except OSError:
        return ""

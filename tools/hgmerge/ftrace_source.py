"""ftrace_source - a trace.dat recorded by trace-cmd with the x86-tsc clock,
as the ground truth instead of hgtrace.ko's recording, for users who cannot
load the module.

build/hgtrace-import reads the file through libtracecmd and libtraceevent
(the libraries trace-cmd and KernelShark use) and writes the records
hgtrace.ko would have written (kmod/uapi/hgtrace.h) to a temporary .hgt
file, which is then streamed like the module's: the sweep is the same for
both sources, and memory does not grow with the file. Events the buffer
dropped become LOST records, so gaps over them are unexplainable, as with
the module.
"""
import os
import subprocess
import tempfile

from hgtrace_file import HgtFormatError, HgtStream


class FtraceError(Exception):
    """The trace.dat could not be read."""


def importer():
    """The hgtrace-import program: next to hourglass (HG_BIN) or in the tree's build/."""
    here = os.path.dirname(os.path.abspath(__file__))
    for d in (os.path.dirname(os.path.realpath(os.environ["HG_BIN"])) if os.environ.get("HG_BIN") else None,
              os.path.join(here, "..", "..", "build")):
        if d and os.access(os.path.join(d, "hgtrace-import"), os.X_OK):
            return os.path.join(d, "hgtrace-import")
    raise FtraceError("hgtrace-import is not built (make userspace; it needs libtracecmd-dev)")


class FtraceStream(HgtStream):
    """Iterates like hgtrace_file.HgtStream: (cpu, tsc, typ, flags, aux, arg, buf, pos, ln);
    its window (first and last stamps) is known before the iteration."""

    def __init__(self, path):
        fd, tmp = tempfile.mkstemp(prefix="hgmerge-", suffix=".hgt")
        os.close(fd)
        try:
            p = subprocess.run([importer(), path, "-o", tmp], capture_output=True, text=True)
            if p.returncode != 0:
                msg = p.stderr.strip().splitlines()
                raise FtraceError(msg[0].removeprefix("hgtrace-import: ") if msg else
                                  f"{path}: hgtrace-import failed (exit {p.returncode})")
            summary = dict(kv.split("=", 1) for kv in p.stdout.split() if "=" in kv)
            try:
                super().__init__(tmp)
            except HgtFormatError as e:
                raise FtraceError(f"{path}: {e}")
        finally:
            # the open stream keeps the data; the name goes now, whatever happens
            os.unlink(tmp)
        self.path = path
        self.meta["source"] = "trace-cmd"
        n = int(summary.get("events", 0))
        self.window = (int(summary["first_ts"]), int(summary["last_ts"])) if n else None

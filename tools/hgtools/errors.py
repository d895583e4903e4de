"""errors - what the commands say when they stop: one line, no traceback."""
from __future__ import annotations

# exit statuses shared by record, report and export (and by the C hourglass)
EXIT_OK = 0
EXIT_USAGE = 1          # a bad command line
EXIT_ENV = 2            # could not run: a program, a library or the module missing, a crash
EXIT_BAD_INPUT = 3      # a file that is not what it claims, or an output that cannot be written


class HgError(Exception):
    """An error for the user: a complete sentence and the status to exit with."""

    def __init__(self, msg: str, status: int = EXIT_BAD_INPUT) -> None:
        super().__init__(msg)
        self.status = status


def reason(e: OSError) -> str:
    """The system's reason in words ('permission denied'), never '[Errno 13] ...'."""
    if e.strerror:
        return e.strerror[0].lower() + e.strerror[1:]
    return str(e) or type(e).__name__


def cannot(action: str, path: str, e: OSError, status: int = EXIT_BAD_INPUT) -> HgError:
    """'cannot write out.html: permission denied' as an HgError."""
    return HgError(f"cannot {action} {path}: {reason(e)}", status)

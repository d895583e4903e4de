"""errors - what the commands say when they stop: one line, no traceback."""
from __future__ import annotations

# exit statuses of every program of the project (docs/exit-status.md)
EXIT_OK = 0
EXIT_USAGE = 1          # a bad command line: nothing was done
EXIT_ENV = 2            # could not run: a program, a library or the module missing, privileges,
#                         a crash, an output that cannot be written
EXIT_BAD_INPUT = 3      # a file that is not what it claims (named, with the offset)
EXIT_INCOMPLETE = 4     # ran, but records were dropped: hourglass's trace buffer filled
EXIT_BREAK = 5          # ran, and stopped early at hourglass's -b threshold
EXIT_INTERRUPTED = 130  # Ctrl-C, SIGTERM: what was done so far is kept, marked incomplete


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


def cannot(action: str, path: str, e: OSError, status: int = 0) -> HgError:
    """'cannot write out.html: permission denied' as an HgError: an input that cannot be
    read is a bad input (3), an output that cannot be made is the system's refusal (2)."""
    return HgError(f"cannot {action} {path}: {reason(e)}",
                   status or (EXIT_BAD_INPUT if action in ("read", "open") else EXIT_ENV))

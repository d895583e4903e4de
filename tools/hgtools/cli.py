"""cli - `python3 -m hgtools record|report|export|learn|results ARGS`, what the C
`hourglass SUBCOMMAND` runs; also the `hgtools` entry point. It only dispatches: each
subcommand is a module of hgtools.commands (record: hgtools.record), imported when asked for:
learn's model and export's charts are loaded only by the commands that draw on them.

Exit statuses, the same for every program of the project (docs/exit-status.md):
0 done, 1 bad command line, 2 could not run (a program or library missing,
a program that crashed, an output that cannot be written), 3 bad input (a
file that is not what it claims, named with the offset and the problem);
record adds 4 (hourglass's trace buffer filled), 5 (stopped at -b) and 130
(interrupted).
"""
from __future__ import annotations

import importlib
import sys
from typing import Optional, Sequence

from .errors import EXIT_ENV, EXIT_INTERRUPTED, EXIT_USAGE, HgError, reason

USAGE = """usage: hourglass record|report|export|learn|results ARGS (each has --help)

  record  run hourglass under the kernel's recorder, into a run directory
  report  merge a run directory and print what explains every gap
  export  merge it into files for viewers: trace.dat, a Perfetto trace, an HTML page
  learn   fit the inference's limits to a machine from runs with ground truth (a profile)
  results many runs in one table (Parquet), queried with SQL (DuckDB)
"""

# the subcommands of hgtools.commands: each module's NAME_main(argv)
COMMANDS = ("report", "export", "learn", "results")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Dispatch to the subcommand; the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        (sys.stdout if args else sys.stderr).write(USAGE)
        return 0 if args else EXIT_USAGE
    cmd, rest = args[0], args[1:]
    if cmd == "record":
        from . import record
        return record.main(rest)
    if cmd not in COMMANDS:
        print(f"hourglass: unknown command '{cmd}'\n{USAGE}", file=sys.stderr, end="")
        return EXIT_USAGE
    try:
        module = importlib.import_module(f".commands.{cmd}", __package__)
        rc: int = getattr(module, f"{cmd}_main")(rest)
        return rc
    except HgError as e:
        print(f"hourglass {cmd}: {e}", file=sys.stderr)
        return e.status
    except KeyboardInterrupt:
        print(f"hourglass {cmd}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as e:
        # never '[Errno 13] ...': the file and the reason in words
        print(f"hourglass {cmd}: {e.filename or 'a file'}: {reason(e)}", file=sys.stderr)
        return EXIT_ENV

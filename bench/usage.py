"""bench/usage.py - every benchmark's -h/--help: its docstring, printed before
the benchmark needs anything (a guest, the module, trace-cmd, root), so that
asking how to run one never ends in a traceback."""
import sys


def help_if_asked(doc):
    """Print @doc and exit 0 when the command line asks for help."""
    if any(a in ("-h", "--help") for a in sys.argv[1:]):
        try:
            print(doc.strip())
            sys.stdout.flush()
        except BrokenPipeError:     # `--help | head`
            pass
        sys.exit(0)

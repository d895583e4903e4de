"""python3 -m hgtools record|report|export ARGS (what the C `hourglass` execs; for record,
`python3 -I -S -c CODE DIR record ARGS`, CODE appending DIR to the import path and importing
this module, which starts sooner: userspace/hourglass/main.c, run_tool)."""
import os
import sys

if sys.argv[1:2] == ["record"]:
    # the same as cli.main's dispatch, without importing what report and export need
    # (argparse, the merge's engine, the report's formatters): hourglass record's
    # start-up, each module compiled again at every run where the tree is read-only
    from .record import main as record_main
    rc = record_main(sys.argv[2:])
else:
    from .cli import main
    rc = main()
# Everything is written and closed; what is left is the interpreter's teardown, freeing
# matplotlib's figures and modules one by one: a tenth of a second after `export --html` of
# the merge bench's run, longer than the page's text takes to write. Flush and leave.
for stream in (sys.stdout, sys.stderr):
    try:
        stream.flush()
    except (BrokenPipeError, ValueError):
        pass    # a reader that stopped reading (| head) had what it wanted; a stream closed
os._exit(rc)

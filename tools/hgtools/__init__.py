"""hgtools - hourglass's record, report and export commands.

The merge itself is C (build/hgmerge): it reads a run directory's two
timelines and writes the report as JSON (docs/report-json.md) and the
exports. This package runs it and formats what it wrote:

    cli.py          `python3 -m hgtools record|report|export|learn|results ARGS`: dispatch
    commands/       one module a subcommand (trace-cmd's trace-<cmd>.c shape)
    paths.py        where hourglass's programs are
    engine.py       run hgmerge and hgtrace-import; their bad-input exits as one clean error
    record.py       `hourglass record`: a run directory with the kernel's ground truth
    report_json.py  read report JSON v2: version check, names and times as printed
    report_text.py  the text report
    html.py         the self-contained HTML page
    charts.py       its charts, with matplotlib (inline SVG; PNG or SVG files on request)
    progress.py     hgmerge's progress line relayed to the terminal
    errors.py       one-line errors with their exit status
"""
import os as _os

__version__ = "2.0"

# numpy (matplotlib's) links OpenBLAS, which starts a thread per core that spins in
# sched_yield() between calls; the charts do no linear algebra, and on a 2-core machine the
# spinning took CPU from hgmerge's exporters while hourglass export drew its page (perf,
# 2026-11-28). The user's own setting wins.
_os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

"""hgtools - hourglass's record, report and export commands.

The merge itself is C (build/hgmerge): it reads a run directory's two
timelines and writes the report as JSON (docs/report-json.md) and the
exports. This package runs it and formats what it wrote:

    cli.py          `python3 -m hgtools record|report|export ARGS`
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
__version__ = "2.0"

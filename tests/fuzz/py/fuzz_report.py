"""fuzz_report - atheris (libFuzzer for Python) on what hgtools still parses of
ours: the merger's report JSON, read by report_json.load() and laid out by
the text report, the HTML page and its charts.

Most inputs pick a real report (report_mutate.seeds) and corrupt it in one
to three places the fuzzer's bytes choose (report_mutate.mutate): the
structure stays JSON, so the checks and the renderers are what is
exercised. One input in eight is taken as the file's bytes themselves. The
loader must refuse a bad report in one line naming the file and the key
(exit 3); anything else must render. Any other exception is a finding.

Charts: made (not drawn) for one input in 16, drawn for one in 256: drawing
takes seconds, and what a bad figure trips on is mostly in the making.

    build/fuzz/pyenv/bin/python tests/fuzz/py/fuzz_report.py [libFuzzer flags]
"""
import json
import os
import sys
import tempfile
import warnings

import atheris

import testpath  # noqa: F401  (pytest.ini's folders on the import path: hgtools)

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
warnings.simplefilter("ignore")        # matplotlib's about odd axes: not a failure

import matplotlib  # noqa: E402
matplotlib.use("Agg")

with atheris.instrument_imports(include=["hgtools"]):
    from hgtools import charts, html, report_json, report_text  # noqa: F401,E402
import report_mutate as M  # noqa: E402

SEEDS = M.seeds(TOP)
TMP = tempfile.mkdtemp(prefix="hgfuzz-report-")
PATH = os.path.join(TMP, "report.json")
runs = [0]


def one(data: bytes) -> None:
    runs[0] += 1
    fdp = atheris.FuzzedDataProvider(data)
    if fdp.ConsumeIntInRange(0, 7) == 0:
        body = fdp.ConsumeBytes(1 << 16)
    else:
        seed = SEEDS[fdp.ConsumeIntInRange(0, len(SEEDS) - 1)]
        rep = M.mutate(seed, lambda n: fdp.ConsumeIntInRange(0, n - 1) if n > 1 else 0)
        body = json.dumps(rep).encode()
    with open(PATH, "wb") as f:
        f.write(body)
    level = 2 if runs[0] % 256 == 0 else 1 if runs[0] % 16 == 0 else 0
    M.exercise(PATH, level)


if __name__ == "__main__":
    atheris.Setup(sys.argv, one)
    atheris.Fuzz()

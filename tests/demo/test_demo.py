"""make check's checks of what `make demo` left, under pytest: each script run
as make check runs it, on HGT_DEMO_DIR (default out/demo). Where no demo was
made they are skipped, saying so: `make demo` boots a guest when this kernel
does not load modules, too slow for `pytest tests` to start itself."""
import os
import subprocess
import sys

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
DEMO = os.environ.get("HGT_DEMO_DIR", os.path.join(TOP, "out", "demo"))


@pytest.mark.parametrize("script", ["check_demo.py", "check_tutorial.py", "check_screens.py"])
def test_demo_output(script):
    # summary.txt: written once the runs are merged and judged (scripts/demo-steps analyse)
    if not os.path.isfile(os.path.join(DEMO, "summary.txt")):
        pytest.skip(f"no demo output in {DEMO}: make demo first (or HGT_DEMO_DIR=DIR, a demo's output)")
    p = subprocess.run([sys.executable, os.path.join(TOP, "tests", "demo", script), DEMO], capture_output=True,
                       text=True, timeout=900)
    if p.returncode == 2 and p.stderr.startswith("check_screens: missing "):
        pytest.skip(p.stderr.strip())       # "check_screens: missing Xvfb, ...: run scripts/setup.sh"
    assert p.returncode == 0, p.stdout + p.stderr

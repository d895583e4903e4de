"""hourglass record's start-up: the interpreter it starts and what it imports before anything
records. In the guests each module of ours is compiled again at every run and each standard
module costs tens of milliseconds under emulation (bench/record_startup.py measures the whole
command against trace-cmd record), so record must not bring in what report and export need."""
import os
import subprocess
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# report's and export's, none of which a recording needs (--load and --label import loads,
# and with it the engine, when they are given)
NOT_FOR_RECORD = {"hgtools.cli", "hgtools.engine", "hgtools.loads", "hgtools.report_json", "hgtools.report_text",
                  "hgtools.breaktrace", "hgtools.progress", "argparse", "typing", "shutil", "tempfile",
                  "dataclasses", "shlex"}


def imported(*args):
    """The modules `python3 -S -m hgtools ARGS` imports (its -X importtime lines)."""
    env = dict(os.environ, PYTHONPATH=os.path.join(TOP, "tools"))
    p = subprocess.run([sys.executable, "-S", "-X", "importtime", "-m", "hgtools", *args], capture_output=True,
                       text=True, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    return {line.rsplit("|", 1)[1].strip() for line in p.stderr.splitlines() if line.startswith("import time:")
            and "|" in line}


def test_record_imports_nothing_of_the_report():
    mods = imported("record", "--help")
    assert "hgtools.record" in mods and "subprocess" in mods, sorted(mods)
    assert not mods & NOT_FOR_RECORD, sorted(mods & NOT_FOR_RECORD)


def test_report_still_goes_through_the_cli():
    assert {"hgtools.cli", "argparse"} <= imported("report", "--help")


"""hourglass record's start-up: the interpreter it starts and what it imports before anything
records. In the guests each module of ours is compiled again at every run and each standard
module costs tens of milliseconds under emulation (bench/record_startup.py measures the whole
command against trace-cmd record), so record must not bring in what report and export need."""
import os
import stat
import subprocess
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HOURGLASS = os.path.join(TOP, "build", "hourglass")

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


def test_hourglass_starts_record_isolated_without_the_site(tmp_path):
    """record's interpreter runs isolated and without the site (-I -S: no .pth files, no directory
    searched before the standard library's), the package's directory appended to its path; report
    and export keep -m, PYTHONPATH and the site, where matplotlib is."""
    subprocess.run(["make", "-s", "-C", os.path.join(TOP, "userspace", "hourglass")], check=True)
    log = tmp_path / "argv"
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    env = dict(os.environ, HG_PYTHON=str(fake))
    for cmd in ("record", "report", "export"):
        subprocess.run([HOURGLASS, cmd, "--help"], env=env, check=True)
    code = "import sys; sys.path.append(sys.argv.pop(1)); import hgtools.__main__"
    rec, *others = log.read_text().splitlines()
    head, tail = f"-I -S -c {code} ", " record --help"
    assert rec.startswith(head) and rec.endswith(tail), rec
    assert os.path.normpath(rec[len(head):-len(tail)]) == os.path.join(TOP, "tools"), rec
    assert others == ["-m hgtools report --help", "-m hgtools export --help"]


def test_record_runs_as_hourglass_starts_it(tmp_path):
    """The interpreter as the C hourglass starts record: the package found after the standard
    library, none of the caller's PYTHON* settings, the usage printed and exit 0."""
    p = subprocess.run([HOURGLASS, "record", "--help"], capture_output=True, text=True, cwd=tmp_path,
                       env=dict(os.environ, PYTHONPATH=str(tmp_path / "nothing-here")))
    assert p.returncode == 0 and p.stdout.startswith("usage: hourglass record --dir DIR"), p

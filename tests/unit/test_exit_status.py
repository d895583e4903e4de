"""One exit-status convention for every program (docs/exit-status.md):
0 done, 1 bad command line, 2 could not run (an unwritable output included),
3 bad input, 4 hourglass's buffer filled, 5 stopped at -b, 130 interrupted.

What needs no module and no root: the C programs' command lines, and
`hourglass record` driven through stand-ins for hourglass and hgtrace that
end as told, so that what record makes of each status is checked exactly."""
import json
import os
import signal
import stat
import subprocess
import sys
import threading

import pytest

from conftest import TOP
from hgtools import cli, errors

BUILD = os.path.join(TOP, "build")


@pytest.fixture(scope="module")
def built():
    subprocess.run(["make", "-s", "userspace"], cwd=TOP, check=True)
    return BUILD


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=60)


def test_every_help_says_the_convention(built):
    for prog in (["hourglass", "--help"], ["hgtrace", "--help"], ["hgtrace", "record", "--help"],
                 ["hgtrace-import", "--help"], ["hgmerge", "--help"]):
        p = run(os.path.join(built, prog[0]), *prog[1:])
        assert p.returncode == 0 and "docs/exit-status.md" in p.stdout, prog
        assert "1 bad" in p.stdout and "2 could not" in p.stdout, (prog, p.stdout[-600:])
    # as the C hourglass runs it: tools/ in PYTHONPATH, installed or not (make test before make setup)
    p = subprocess.run([sys.executable, "-m", "hgtools", "record", "--help"], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.path.join(TOP, "tools")))
    assert "docs/exit-status.md" in p.stdout and "4 recorded, but" in p.stdout and "5 recorded" in p.stdout
    assert "--dir DIR" in p.stdout


def test_bad_usage_is_1_everywhere(built):
    """hgmerge said 2 for a bad command line; each program now says 1, naming the option."""
    p = run(os.path.join(built, "hgmerge"), "--frobnicate")
    assert p.returncode == 1, p.stderr
    p = run(os.path.join(built, "hgmerge"), "--hgl", "x")
    assert p.returncode == 1 and "are required" in p.stderr
    p = run(os.path.join(built, "hgtrace-import"), "t.dat", "-o", "--compress")
    assert p.returncode == 1 and "-o needs a file, but '--compress'" in p.stderr, p.stderr
    p = run(os.path.join(built, "hgtrace"), "record", "-o", "--quiet")
    assert p.returncode == 1 and "-o needs a value, but '--quiet'" in p.stderr, p.stderr
    p = run(os.path.join(built, "hgtrace"), "record", "-Z")
    assert p.returncode == 1 and "unknown option '-Z'" in p.stderr, p.stderr


def test_hgtrace_record_takes_trace_cmds_letters(built):
    """-P is the pid filter and -r the reader's priority (trace-cmd record's);
    -p, which meant the pid and is hourglass's priority, is refused with both."""
    hgt = os.path.join(built, "hgtrace")
    p = run(hgt, "record", "-p", "1234")
    assert p.returncode == 1 and "the pid filter is -P" in p.stderr and "priority -r" in p.stderr, p.stderr
    p = run(hgt, "record", "-r", "0")
    assert p.returncode == 1 and "bad priority '0'" in p.stderr
    p = run(hgt, "record", "-P", "abc")
    assert p.returncode == 1 and "bad pid 'abc'" in p.stderr
    # parsed and said; then the missing module (2), never a usage error
    p = run(hgt, "record", "-d", "10ms", "-P", "1", "-r", "5", "-e", "sched", "-e", "irq", "-o", "/nonexistent/x")
    assert "recording the task events of pid 1 only (-P)" in p.stderr, p.stderr
    assert p.returncode == 2, p.stderr


def test_cannot_names_the_status():
    assert errors.cannot("read", "x", OSError(13, "Permission denied")).status == errors.EXIT_BAD_INPUT
    assert errors.cannot("write", "x", OSError(13, "Permission denied")).status == errors.EXIT_ENV
    assert errors.cannot("create", "d", OSError(2, "No such file")).status == errors.EXIT_ENV
    assert str(errors.cannot("write", "x", OSError(13, "Permission denied"))) == "cannot write x: permission denied"


FAKE_HOURGLASS = r'''#!/usr/bin/env python3
"""hourglass's stand-in: --dry-run prints what -b asks; a run writes its files and exits FAKE_HG_RC."""
import json, os, sys
a = sys.argv[1:]
if "--dry-run" in a:
    print(json.dumps({"breaktrace_ns": int(a[a.index("-b") + 1]) * 1000 if "-b" in a else None}))
    sys.exit(0)
for opt in ("--trace", "--json", "-o"):
    open(a[a.index(opt) + 1], "w").write("{}")
sys.exit(int(os.environ.get("FAKE_HG_RC", "0")))
'''

FAKE_HGTRACE = r'''#!/usr/bin/env python3
"""hgtrace's stand-in: stat answers; record logs its argv, runs the command, says its status as hgtrace does."""
import json, os, subprocess, sys
a = sys.argv[1:]
if a[0] == "stat":
    sys.exit(0)
with open(os.path.join(os.path.dirname(__file__), "hgtrace.argv"), "w") as f:
    json.dump(a, f)
open(a[a.index("-o") + 1], "w").write("hgt")
rc = subprocess.call(a[a.index("--") + 1:])
if rc:
    sys.stderr.write(f"hgtrace: the command exited with status {rc}\n")
'''


@pytest.fixture
def stand_ins(tmp_path, monkeypatch):
    d = tmp_path / "bin"
    d.mkdir()
    for name, text in (("hourglass", FAKE_HOURGLASS), ("hgtrace", FAKE_HGTRACE)):
        (d / name).write_text(text)
        (d / name).chmod((d / name).stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("HG_BIN", str(d / "hourglass"))
    return d


@pytest.mark.parametrize("hg_rc,rc,status,complete", [
    (0, 0, "complete", True),
    (4, 4, "trace buffer filled", True),
    (5, 5, "stopped at its -b threshold", True),
    (130, 130, "interrupted", False),
    (2, 2, "hourglass failed (exit 2)", False),
])
def test_record_passes_hourglass_status_on(stand_ins, tmp_path, capsys, monkeypatch, hg_rc, rc, status, complete):
    """4 (was 3, a bad input elsewhere) and 5 are finished recordings: no
    INCOMPLETE; 130 and failures keep it, saying why."""
    monkeypatch.setenv("FAKE_HG_RC", str(hg_rc))
    d = tmp_path / "run"
    assert cli.main(["record", "--dir", str(d), "--", "-n", "1"]) == rc
    err = capsys.readouterr().err
    meta = json.loads((d / "record.json").read_text())
    assert status in meta["status"] and status in err, (meta["status"], err)
    assert (d / "INCOMPLETE").exists() != complete, os.listdir(d)


def test_record_with_breaktrace_overwrites(stand_ins, tmp_path, capsys):
    """-b in the workload's options: the module records in overwrite mode (a
    flight recorder hourglass freezes); without it, the module's default."""
    assert cli.main(["record", "--dir", str(tmp_path / "b"), "--", "-n", "1", "-b", "100"]) == 0
    argv = json.loads((stand_ins / "hgtrace.argv").read_text())
    assert argv[:3] == ["record", "-m", "overwrite"], argv
    assert json.loads((tmp_path / "b" / "record.json").read_text())["breaktrace_ns"] == 100_000
    assert cli.main(["record", "-o", str(tmp_path / "n"), "--", "-n", "1"]) == 0, "-o DIR still works"
    argv = json.loads((stand_ins / "hgtrace.argv").read_text())
    assert "overwrite" not in argv


def test_record_dir_value_that_is_an_option(stand_ins, tmp_path, capsys):
    assert cli.main(["record", "--dir", "--ftrace", "--", "-n", "1"]) == 1
    assert "--dir needs a directory, but '--ftrace' that follows it is an option" in capsys.readouterr().err
    assert not os.path.exists("--ftrace")


def test_record_ctrl_c_while_making_the_directory(stand_ins, tmp_path, capsys, monkeypatch):
    """A Ctrl-C between making the directory and record's handler is held
    until the handler takes it: the run is not started, and the directory says
    why (INCOMPLETE and record.json), not 'in progress' forever."""
    from hgtools import record
    made = record._prepare_dir

    def prepare_then_ctrl_c(out, force):
        rc = made(out, force)
        # to this thread: record runs single-threaded, but other tests leave threads in this
        # process, and a signal to the process would go to one of them, where it is not held
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)    # held: no KeyboardInterrupt here
        return rc

    monkeypatch.setattr(record, "_prepare_dir", prepare_then_ctrl_c)
    d = tmp_path / "run"
    assert cli.main(["record", "--dir", str(d), "--", "-n", "1"]) == 130
    assert (d / "INCOMPLETE").read_text() == "interrupted by Ctrl-C before hourglass started\n"
    meta = json.loads((d / "record.json").read_text())
    assert meta["status"] == "interrupted by Ctrl-C before hourglass started", meta
    assert not (d / "hourglass.hgl").exists() and not (stand_ins / "hgtrace.argv").exists()
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set()), "left held"

"""The recorder's command line: help, bad options, and no module on this machine."""
import subprocess

import pytest


def run(hgtrace_bin, *args):
    return subprocess.run([hgtrace_bin, *args], capture_output=True, text=True)


def test_help(hgtrace_bin):
    p = run(hgtrace_bin, "--help")
    assert p.returncode == 0 and "record" in p.stdout and "dump" in p.stdout
    p = run(hgtrace_bin, "record", "--help")
    assert p.returncode == 0 and "--buffer" in p.stdout and "Exit status" in p.stdout


@pytest.mark.parametrize("args,msg", [
    (["frobnicate"], "unknown command 'frobnicate'"),
    (["record", "-m", "sideways"], "bad mode 'sideways'"),
    (["record", "-e", "sched,nope"], "unknown event group 'nope'"),
    (["record", "-b", "3"], "bad buffer size '3'"),
    (["record", "-d", "-5s"], "bad duration '-5s'"),
    (["record", "-d", "10 parsecs"], "bad duration"),
    (["record", "-c", "3-1"], "bad CPU list '3-1'"),
    (["record", "-P", "0"], "bad pid '0'"),
    (["record", "-r", "120"], "bad priority '120'"),
    (["record", "-i", "0s"], "bad interval"),
    (["record", "-F"], "--follow needs a command"),
    (["dump"], "usage: hgtrace dump"),
    (["stat", "-x"], "usage: hgtrace stat"),
    (["msa", "abc"], None),
])
def test_bad_options(hgtrace_bin, args, msg):
    p = run(hgtrace_bin, *args)
    if msg is None:          # msa parses pids only after opening the device
        assert p.returncode != 0
        return
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert msg in p.stderr, p.stderr


def test_no_module_here(hgtrace_bin, tmp_path):
    """This machine's kernel has no modules: a clear 'not loaded' and exit 2, no file left half-made."""
    out = tmp_path / "x.hgt"
    p = run(hgtrace_bin, "record", "-d", "10ms", "-o", str(out))
    assert p.returncode == 2, p.stderr
    assert "not loaded" in p.stderr or "needs root" in p.stderr, p.stderr
    assert not out.exists()
    # a file is read as dump reads it (stat FILE: a recording's figures, docs/hgtrace.md)
    for cmd in ("dump", "stat"):
        p = run(hgtrace_bin, cmd, str(tmp_path / "missing.hgt"))
        assert p.returncode == 3 and "missing.hgt" in p.stderr, (cmd, p.stderr)

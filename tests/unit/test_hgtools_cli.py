"""hourglass report/export as users meet them: what runs hgmerge with, and
every failure one line `hourglass <cmd>: ...` with its exit status (1 usage,
2 could not run (an unwritable output included), 3 bad input), never a traceback."""
import json
import os
import shutil
import stat
import subprocess
import sys

import pytest

from hgtools import cli, engine, paths

DATA = os.path.join(os.path.dirname(__file__), "data")
# `python3 -m hgtools` as the C hourglass runs it (run_tool): tools/ in PYTHONPATH, so that it
# is this tree's package, installed (make setup) or not, and a git worktree's own
HGTOOLS_ENV = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
TRACE_DAT = b"\x17\x08\x44tracing6\0"

FAKE_HGMERGE = r'''#!/usr/bin/env python3
"""A stand-in for build/hgmerge: logs its argv, writes the fixture report, or fails as asked."""
import json, os, shutil, sys
args = sys.argv[1:]
with open(os.path.join(os.path.dirname(__file__), "argv.log"), "a") as f:
    f.write(json.dumps([os.path.basename(sys.argv[0])] + args) + "\n")
if os.environ.get("FAKE_FAIL"):
    sys.stderr.write("\rsweeping: 3%\033[K\n" + os.path.basename(sys.argv[0]) + ": " + os.environ["FAKE_FAIL"] + "\n")
    sys.exit(int(os.environ.get("FAKE_RC", "3")))
if "--ready-fd" in args:     # the report whole at REPORT.partial first, as hgmerge does
    out = args[args.index("--report") + 1]
    shutil.copy(os.environ["FAKE_REPORT"], out + ".partial")
    fd = int(args[args.index("--ready-fd") + 1])
    os.write(fd, b"report\n")
    os.close(fd)
    if os.environ.get("FAKE_FAIL_LATE"):   # an export fails as its file is put together
        os.unlink(out + ".partial")
        sys.stderr.write("hgmerge: " + os.environ["FAKE_FAIL_LATE"] + "\n")
        sys.exit(3)
    os.rename(out + ".partial", out)
elif "--report" in args:
    shutil.copy(os.environ["FAKE_REPORT"], args[args.index("--report") + 1])
for opt in ("--kernelshark", "--perfetto"):
    if opt in args:
        open(args[args.index(opt) + 1], "w").write("x")
if "-o" in args:
    open(args[args.index("-o") + 1], "w").write("hgt")
'''


@pytest.fixture
def fake_bin(tmp_path, monkeypatch):
    """A directory with hourglass, hgmerge and hgtrace-import stand-ins, found through HG_BIN."""
    d = tmp_path / "bin"
    d.mkdir()
    for name in ("hgmerge", "hgtrace-import"):
        p = d / name
        p.write_text(FAKE_HGMERGE)
        p.chmod(p.stat().st_mode | stat.S_IEXEC)
    (d / "hourglass").write_text("#!/bin/sh\nexit 0\n")
    (d / "hourglass").chmod(0o755)
    monkeypatch.setenv("HG_BIN", str(d / "hourglass"))
    monkeypatch.setenv("FAKE_REPORT", os.path.join(DATA, "report-three.json"))
    monkeypatch.setenv("HG_PROGRESS", "0")
    monkeypatch.delenv("FAKE_FAIL", raising=False)
    return d


def calls(d):
    with open(d / "argv.log") as f:
        return [json.loads(l) for l in f]


@pytest.fixture
def run_dir(tmp_path):
    r = tmp_path / "run"
    r.mkdir()
    (r / "hourglass.hgl").write_bytes(b"HGLASS\n\0")
    (r / "kernel.hgt").write_bytes(b"HGTRACE\n")
    return r


def main(capsys, *args):
    rc = cli.main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def one_line(err, cmd):
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"hourglass {cmd}: "), err
    assert "Traceback" not in err and "Errno" not in err
    return lines[0]


def test_report_runs_hgmerge_and_prints_the_text(fake_bin, run_dir, capsys):
    rc, out, err = main(capsys, "report", str(run_dir), "--json", str(run_dir / "r.json"))
    assert rc == 0, err
    assert out.startswith("gaps: 4849 on 1 CPU;")
    (argv,) = calls(fake_bin)
    assert argv[0] == "hgmerge" and argv[1:5] == ["--hgl", str(run_dir / "hourglass.hgl"),
                                                 "--kernel", str(run_dir / "kernel.hgt")]
    assert argv[5] == "--report" and "--progress" not in argv and "--name" not in argv
    assert json.load(open(run_dir / "r.json"))["report_version"] == 2


def test_report_json_to_stdout_only(fake_bin, run_dir, capsys):
    rc, out, _ = main(capsys, "report", str(run_dir), "--json", "-")
    assert rc == 0 and json.loads(out)["summary"][0].startswith("gaps: 4849")


def test_a_trace_dat_goes_through_hgtrace_import(fake_bin, run_dir, capsys):
    os.unlink(run_dir / "kernel.hgt")
    (run_dir / "trace.dat").write_bytes(TRACE_DAT)
    rc, _, err = main(capsys, "report", str(run_dir))
    assert rc == 0, err
    imp, merge = calls(fake_bin)
    assert imp[0] == "hgtrace-import" and imp[1] == str(run_dir / "trace.dat") and imp[2] == "-o"
    assert merge[merge.index("--kernel") + 1] == imp[3]
    assert merge[merge.index("--name") + 1] == str(run_dir / "trace.dat")
    assert not os.path.exists(imp[3]), "the temporary .hgt is removed"


def test_export_passes_every_output_in_one_merge(fake_bin, run_dir, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    rc, _, err = main(capsys, "export", str(run_dir), "--kernelshark", str(tmp_path / "m.dat"), "--ks-session",
                      str(tmp_path / "s.json"), "--perfetto", str(tmp_path / "p.perfetto-trace"), "--html", str(tmp_path / "r.html"))
    assert rc == 0, err
    (argv,) = calls(fake_bin)
    for opt, f in (("--kernelshark", "m.dat"), ("--ks-session", "s.json"), ("--perfetto", "p.perfetto-trace")):
        assert argv[argv.index(opt) + 1] == str(tmp_path / f)
    assert (tmp_path / "r.html").read_text().count("<svg") == 5
    assert "--ready-fd" in argv, "the page is drawn as soon as the report is whole"


def test_export_says_the_reports_warnings(fake_bin, run_dir, tmp_path, capsys, monkeypatch):
    """Issue 52: that 385 kernel events came later than the trace.dat's reorder window was said in
    report.txt and the page, not where export wrote the trace.dat. Export prints every warning of
    the merge, after what it wrote."""
    rep = json.load(open(os.path.join(DATA, "report-three.json")))
    rep["warnings"] = ["the trace.dat: 385 kernel events came later than the reorder window and are shown at the "
                       "time of the last one written on their CPU", "the kernel's clocksource is 'hpet', not tsc"]
    (tmp_path / "w.json").write_text(json.dumps(rep))
    monkeypatch.setenv("FAKE_REPORT", str(tmp_path / "w.json"))
    rc, _, err = main(capsys, "export", str(run_dir), "--kernelshark", str(tmp_path / "m.dat"))
    assert rc == 0, err
    lines = err.splitlines()
    assert lines[0].startswith(f"hourglass export: {tmp_path}/m.dat: trace.dat written")
    assert lines[1:] == [f"hourglass export: warning: {w}" for w in rep["warnings"]]


def test_export_without_matplotlib_stops_before_merging(fake_bin, run_dir, tmp_path, capsys, monkeypatch):
    """Whether matplotlib is there is found, not imported (the import overlaps the merge)."""
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    rc, _, err = main(capsys, "export", str(run_dir), "--html", str(tmp_path / "r.html"))
    assert rc == 2 and "the HTML page's charts need matplotlib (Debian: apt-get install python3-matplotlib" in err, err
    assert not (fake_bin / "argv.log").exists() and not (tmp_path / "r.html").exists()


def test_export_whose_trace_file_fails_late_writes_no_page(fake_bin, run_dir, tmp_path, capsys, monkeypatch):
    """The page is drawn from the report while hgmerge still puts the trace files together;
    when that fails, the page is not written either, and hgmerge's reason is the error."""
    pytest.importorskip("matplotlib")
    monkeypatch.setenv("FAKE_FAIL_LATE", f"{tmp_path}/m.dat: cannot write it: File too large")
    rc, _, err = main(capsys, "export", str(run_dir), "--kernelshark", str(tmp_path / "m.dat"), "--html",
                      str(tmp_path / "r.html"), "--json", str(tmp_path / "r.json"))
    assert rc == 3, err
    assert err.splitlines()[-1] == f"hourglass export: {tmp_path}/m.dat: cannot write it: File too large"
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "r.json").exists()


def test_bad_input_is_one_line_exit_3(fake_bin, run_dir, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_FAIL", "run/kernel.hgt: offset 4096: chunk of CPU 70000, but the recording has 2 CPUs")
    rc, out, err = main(capsys, "report", str(run_dir))
    assert rc == 3 and out == ""
    assert err.splitlines()[-1] == "hourglass report: run/kernel.hgt: offset 4096: chunk of CPU 70000, but the " \
                                   "recording has 2 CPUs"
    assert err.count("CPU 70000") == 1


def test_a_crashed_merger_is_exit_2(fake_bin, run_dir, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_FAIL", "internal error")
    monkeypatch.setenv("FAKE_RC", "70")
    rc, _, err = main(capsys, "report", str(run_dir))
    assert rc == 2 and err.splitlines()[-1] == "hourglass report: hgmerge failed (exit 70): internal error"


def test_missing_merger_says_where_it_looked(run_dir, capsys, monkeypatch, tmp_path):
    monkeypatch.delenv("HG_BIN", raising=False)
    monkeypatch.setattr(paths, "search_dirs", lambda: [str(tmp_path)])
    monkeypatch.setenv("PATH", str(tmp_path))
    rc, _, err = main(capsys, "report", str(run_dir))
    line = one_line(err, "report")
    assert rc == 2 and "hgmerge not found" in line and str(tmp_path) in line and "make userspace" in line


@pytest.mark.parametrize("setup,args,status,says", [
    (None, ["report", "{tmp}/nope"], 3, "{tmp}/nope: no such directory"),
    ("file", ["report", "{tmp}/f"], 3, "{tmp}/f: not a directory"),
    ("empty", ["report", "{tmp}/e"], 3, "{tmp}/e: no hourglass.hgl (hourglass --trace) in this directory"),
    # no recording: hourglass alone (record --no-kernel), read without one; its exports refused
    ("nokernel", ["report", "{tmp}/r"], 3, "{tmp}/r/hourglass.hgl: offset 0: empty file"),
    ("nokernel", ["export", "{tmp}/r", "--kernelshark", "{tmp}/x.dat"], 3,
     "{tmp}/r: no kernel recording (hourglass record --no-kernel): the exports show the kernel's events"),
    ("incomplete", ["report", "{tmp}/r"], 3, "{tmp}/r: the recording did not finish (interrupted by Ctrl-C)"),
    ("nokernel", ["report", "{tmp}/r", "--kernel", "{tmp}/k.hgt"], 3, "{tmp}/k.hgt: no such file"),
    ("v1", ["report", "{tmp}/old.json"], 3, "{tmp}/old.json: report_version 1; this hourglass reads version 2"),
    ("garbage", ["report", "{tmp}/bad.json"], 3, "{tmp}/bad.json: not a report (JSON)"),
    ("v2", ["report", "{tmp}/r2.json", "--json", "{tmp}/nodir/x.json"], 2, "cannot write {tmp}/nodir/x.json"),
    ("v2", ["report", "{tmp}/r2.json", "--json", "{tmp}"], 2, "cannot write {tmp}: is a directory"),
    ("v2", ["export", "{tmp}/r2.json", "--html", "{tmp}"], 2, "cannot write {tmp}: is a directory"),
    ("v2", ["export", "{tmp}/r2.json", "--perfetto", "{tmp}/p.json"], 1, "a report JSON holds no timeline"),
])
def test_bad_input_and_outputs(tmp_path, capsys, setup, args, status, says):
    if setup == "file":
        (tmp_path / "f").write_text("")
    elif setup == "empty":
        (tmp_path / "e").mkdir()
    elif setup in ("nokernel", "incomplete"):
        (tmp_path / "r").mkdir()
        (tmp_path / "r" / "hourglass.hgl").write_text("")
        if setup == "incomplete":
            (tmp_path / "r" / "kernel.hgt").write_text("")
            (tmp_path / "r" / "INCOMPLETE").write_text("interrupted by Ctrl-C\n")
    elif setup == "v1":
        (tmp_path / "old.json").write_text('{"report_version": 1}')
    elif setup == "garbage":
        (tmp_path / "bad.json").write_text("{not json")
    elif setup == "v2":
        shutil.copy(os.path.join(DATA, "report-lat.json"), tmp_path / "r2.json")
    if "--html" in args:
        pytest.importorskip("matplotlib")
    rc, out, err = main(capsys, *[a.format(tmp=tmp_path) for a in args])
    assert rc == status, err
    assert says.format(tmp=tmp_path) in one_line(err, args[0])


@pytest.mark.parametrize("args,says", [
    (["report"], "the following arguments are required: dir"),
    (["report", "d", "--disagreements", "many"], "invalid int value"),
    (["export", "d"], "say what to write"),
    (["export", "d", "--ks-session", "s.json", "--perfetto", "p.json"], "--ks-session goes with --kernelshark"),
    (["export", "d", "--perfetto", "p.json", "--png", "x"], "--with, --svg and --png go with --html"),
    (["frobnicate"], "unknown command 'frobnicate'"),
    # issue 52: these printed a report and exited 0 (-1 listed all but the last disagreement)
    (["report", "d", "--disagreements", "-1"], "--disagreements -1: a count, 0 or more"),
    (["report", "d", "--explain", "9:1"], "--explain 9:1: T1:T2 must run forward (9 is after 1)"),
    (["report", "d", "--explain", "nan"], "--explain nan: times are seconds from the start"),
    (["report", "d", "--explain=-2"], "--explain -2: times are seconds from the start"),
])
def test_bad_usage_is_exit_1(capsys, args, says):
    with pytest.raises(SystemExit) if args[0] in ("report", "export") else _nothing() as e:
        rc = cli.main(args)
    rc = e.value.code if args[0] in ("report", "export") else rc
    assert rc == 1
    assert says in capsys.readouterr().err


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_the_module_runs_as_the_c_hourglass_runs_it(tmp_path):
    """`python3 -m hgtools report FILE` from any directory, the package found as the C hourglass finds it."""
    rep = tmp_path / "r.json"
    shutil.copy(os.path.join(DATA, "report-deadlines.json"), rep)
    p = subprocess.run([sys.executable, "-m", "hgtools", "report", str(rep)], capture_output=True, text=True,
                       cwd=str(tmp_path), env=HGTOOLS_ENV)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0].startswith("gaps: 8945 on 1 CPU")
    p = subprocess.run([sys.executable, "-m", "hgtools", "--help"], capture_output=True, text=True, cwd=str(tmp_path),
                       env=HGTOOLS_ENV)
    assert p.returncode == 0 and "record" in p.stdout and "export" in p.stdout


def test_report_to_a_closed_pipe_is_quiet(tmp_path):
    shutil.copy(os.path.join(DATA, "report-three.json"), tmp_path / "r.json")
    p = subprocess.run(f"{sys.executable} -m hgtools report {tmp_path}/r.json --disagreements 1000 | head -1",
                       shell=True, capture_output=True, text=True, env=HGTOOLS_ENV)
    assert p.stdout.startswith("gaps: ") and p.stderr == ""


def test_record_usage_and_a_directory_it_cannot_make(capsys, fake_bin, tmp_path):
    assert cli.main(["record"]) == 1
    assert "--dir DIR (or -o DIR) is required" in capsys.readouterr().err
    (tmp_path / "blocker").write_text("")
    rc = cli.main(["record", "-o", str(tmp_path / "blocker" / "run"), "--ftrace-only", "--", "-n", "1"])
    err = capsys.readouterr().err
    if paths.locate("hgtrace-ftrace") is None:
        assert rc == 2 and "--ftrace-only needs hgtrace-ftrace" in err
    else:
        assert rc == 2 and f"cannot create {tmp_path}/blocker/run: not a directory" in err, err
    assert "Traceback" not in err


def test_the_pyproject_names_every_package():
    """A wheel holds the packages tools/pyproject.toml lists, not the folders beside
    them: hgtools.paper was missing from the wheel until 2026-11-28."""
    import tomllib
    tools = os.path.join(os.path.dirname(__file__), "..", "..", "tools")
    with open(os.path.join(tools, "pyproject.toml"), "rb") as f:
        listed = set(tomllib.load(f)["tool"]["setuptools"]["packages"])
    found = {os.path.relpath(d, tools).replace(os.sep, ".")
             for d, _, files in os.walk(os.path.join(tools, "hgtools")) if "__init__.py" in files}
    assert found == listed and "hgtools.paper" in found, (found, listed)

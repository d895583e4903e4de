"""`hourglass record --ftrace` and `--ftrace-only` through stand-ins for
hourglass, hgtrace and hgtrace-ftrace: how the recorders nest, which files
the directory gets, what record makes of each one's status and of the
events hgtrace-ftrace lost, and that the report finds ftrace.hgt. The real
recorders run in the guests (tests/guest/test_ftrace.py, test_merge.py)."""
import json
import os
import stat

import pytest

from hgtools import cli, engine, paths

FAKE_HOURGLASS = r'''#!/usr/bin/env python3
"""hourglass: --dry-run answers; a run writes its three files and exits FAKE_HG_RC."""
import json, os, sys
a = sys.argv[1:]
if "--dry-run" in a:
    print(json.dumps({"breaktrace_ns": int(a[a.index("-b") + 1]) * 1000 if "-b" in a else None}))
    sys.exit(0)
for opt in ("--trace", "--json", "-o"):
    open(a[a.index(opt) + 1], "w").write("{}")
sys.exit(int(os.environ.get("FAKE_HG_RC", "0")))
'''

# hgtrace and hgtrace-ftrace: log argv, fail before the command when FAKE_<NAME>_RC says so
# (with FAKE_<NAME>_SAYS), else write -o, run the command and say its status as the real ones do
FAKE_RECORDER = r'''#!/usr/bin/env python3
import json, os, subprocess, sys
name = os.path.basename(sys.argv[0])
key = name.upper().replace("-", "_")
a = sys.argv[1:]
if a[0] == "stat":
    sys.exit(0)
with open(os.path.join(os.path.dirname(__file__), name + ".argv"), "w") as f:
    json.dump(a, f)
if os.environ.get(f"FAKE_{key}_RC"):
    sys.stderr.write(f"{name}: {os.environ.get(f'FAKE_{key}_SAYS', 'failed')}\n")
    sys.exit(int(os.environ[f"FAKE_{key}_RC"]))
open(a[a.index("-o") + 1], "w").write("hgt")
rc = subprocess.call(a[a.index("--") + 1:])
if name == "hgtrace-ftrace":
    sys.stderr.write(f"hgtrace-ftrace: 1234 records, {os.environ.get('FAKE_LOST', '0')} events lost\n")
if rc:
    sys.stderr.write(f"{name}: the command exited with status {rc}\n")
'''


@pytest.fixture
def bin_dir(tmp_path, monkeypatch):
    d = tmp_path / "bin"
    d.mkdir()
    for name, text in (("hourglass", FAKE_HOURGLASS), ("hgtrace", FAKE_RECORDER), ("hgtrace-ftrace", FAKE_RECORDER)):
        (d / name).write_text(text)
        (d / name).chmod((d / name).stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("HG_BIN", str(d / "hourglass"))
    for k in ("FAKE_HG_RC", "FAKE_HGTRACE_RC", "FAKE_HGTRACE_FTRACE_RC", "FAKE_LOST"):
        monkeypatch.delenv(k, raising=False)
    return d


def argv_of(d, name):
    return json.loads((d / f"{name}.argv").read_text())


def test_ftrace_only_runs_hgtrace_ftrace_around_hourglass(bin_dir, tmp_path, capsys):
    d = tmp_path / "run"
    assert cli.main(["record", "--dir", str(d), "--ftrace-only", "--", "-n", "1"]) == 0
    ft = argv_of(bin_dir, "hgtrace-ftrace")
    assert ft[:4] == ["record", "-o", str(d / "ftrace.hgt"), "--"] and ft[4] == str(bin_dir / "hourglass"), ft
    assert not (bin_dir / "hgtrace.argv").exists(), "the module's recorder must not run"
    assert sorted(os.listdir(d)) == ["ftrace.hgt", "hgtrace-ftrace.log", "hourglass.hgl", "hourglass.json",
                                     "hourglass.txt", "record.json"]
    meta = json.loads((d / "record.json").read_text())
    assert meta["module"] is False and meta["status"] == "complete", meta
    assert meta["hgtrace_ftrace_exit"] == 0 and meta["hourglass_exit"] == 0 and meta["ftrace_lost"] == 0, meta
    assert engine.run_inputs(str(d))[1] == str(d / "ftrace.hgt"), "the report reads ftrace.hgt"
    assert "lost" not in capsys.readouterr().err


def test_ftrace_beside_the_module_nests_the_recorders(bin_dir, tmp_path, capsys, monkeypatch):
    """hgtrace-ftrace outside, hgtrace record inside (hourglass -b freezes the
    hgtrace above it), hourglass's status passed through both."""
    monkeypatch.setenv("FAKE_HG_RC", "5")
    d = tmp_path / "run"
    assert cli.main(["record", "--dir", str(d), "--ftrace", "--", "-n", "1", "-b", "100"]) == 5
    ft, hgt = argv_of(bin_dir, "hgtrace-ftrace"), argv_of(bin_dir, "hgtrace")
    assert ft[:4] == ["record", "-o", str(d / "ftrace.hgt"), "--"] and ft[4] == str(bin_dir / "hgtrace"), ft
    assert hgt[:5] == ["record", "-m", "overwrite", "-o", str(d / "kernel.hgt")], hgt
    assert (d / "kernel.hgt").exists() and (d / "ftrace.hgt").exists() and not (d / "INCOMPLETE").exists()
    meta = json.loads((d / "record.json").read_text())
    assert (meta["hgtrace_ftrace_exit"], meta["hgtrace_exit"], meta["hourglass_exit"]) == (0, 0, 5), meta
    assert "stopped at its -b threshold" in meta["status"]
    assert engine.run_inputs(str(d))[1] == str(d / "kernel.hgt"), "the module's recording comes first"


@pytest.mark.parametrize("flags,failing,says", [
    (["--ftrace-only"], "HGTRACE_FTRACE", "hgtrace-ftrace record failed (exit 2)"),
    (["--ftrace"], "HGTRACE_FTRACE", "hgtrace-ftrace record failed (exit 2)"),
    (["--ftrace"], "HGTRACE", "hgtrace record failed (exit 2)"),
])
def test_a_recorder_that_cannot_record(bin_dir, tmp_path, capsys, monkeypatch, flags, failing, says):
    """Its own reason reaches the user; the directory stays, INCOMPLETE, saying which failed."""
    monkeypatch.setenv(f"FAKE_{failing}_RC", "2")
    monkeypatch.setenv(f"FAKE_{failing}_SAYS", "tracefs is not mounted at /sys/kernel/tracing")
    d = tmp_path / "run"
    assert cli.main(["record", "--dir", str(d), *flags, "--", "-n", "1"]) == 2
    err = capsys.readouterr().err
    assert "tracefs is not mounted" in err and says in err, err
    assert (d / "INCOMPLETE").read_text().strip() == says
    assert json.loads((d / "record.json").read_text())["status"] == says


def test_events_lost_are_said_and_kept(bin_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_LOST", "7")
    d = tmp_path / "run"
    assert cli.main(["record", "--dir", str(d), "--ftrace-only", "--", "-n", "1"]) == 0
    assert "hgtrace-ftrace lost 7 events" in capsys.readouterr().err
    meta = json.loads((d / "record.json").read_text())
    assert meta["ftrace_lost"] == 7 and meta["ftrace_records"] == 1234, meta


def test_without_hgtrace_ftrace(bin_dir, tmp_path, capsys, monkeypatch):
    (bin_dir / "hgtrace-ftrace").unlink()
    # not beside hourglass, and not in build/ or on PATH either, as on a machine without libtracefs
    locate = paths.locate
    monkeypatch.setattr(paths, "locate", lambda name: None if name == "hgtrace-ftrace" else locate(name))
    assert cli.main(["record", "--dir", str(tmp_path / "run"), "--ftrace-only", "--", "-n", "1"]) == 2
    err = capsys.readouterr().err
    assert "--ftrace-only needs hgtrace-ftrace" in err and "libtracefs-dev" in err, err
    assert not (tmp_path / "run").exists(), "nothing made before the check"


def test_force_clears_what_the_trace_cmd_path_left(bin_dir, tmp_path, capsys):
    d = tmp_path / "run"
    d.mkdir()
    for old in ("trace.dat", "trace-cmd.log", "hourglass.log"):
        (d / old).write_text("old")
    assert cli.main(["record", "--dir", str(d), "--force", "--ftrace-only", "--", "-n", "1"]) == 0
    assert not any((d / old).exists() for old in ("trace.dat", "trace-cmd.log", "hourglass.log"))
    assert engine.run_inputs(str(d))[1] == str(d / "ftrace.hgt")

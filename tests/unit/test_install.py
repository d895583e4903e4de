"""make install into a private prefix: what it puts where (docs/install.md, "Building and installing"), and that the
installed hourglass reports and exports a run from any directory with nothing of the build
tree in its environment; make uninstall takes it all away again."""
import json
import os
import subprocess

from test_merge import generated_run

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def installed_env(prefix, home):
    """A bare environment: the prefix's programs first, no PYTHONPATH, no HG_* overrides."""
    return {"PATH": f"{prefix}/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}


def test_installed_hourglass_reports_and_exports_from_anywhere(tmp_path):
    prefix = tmp_path / "prefix"
    p = subprocess.run(["make", "-s", "install", f"PREFIX={prefix}"], cwd=TOP, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    # the programs make built, the package beside them, the man pages, the module's DKMS source
    for prog in ("hourglass", "hgtrace", "hgmerge"):
        assert os.access(prefix / "bin" / prog, os.X_OK), prog
    pydir = prefix / "lib" / "hourglass" / "python"
    assert (pydir / "hgtools" / "__main__.py").is_file()
    # the installed copy names where the programs are, for runs without HG_BIN
    assert f'LIBEXEC_DIR: Optional[str] = "{prefix}/bin"' in (pydir / "hgtools" / "config.py").read_text()
    # ... and hourglass runs that copy, not the tree's
    assert str(pydir).encode() in (prefix / "bin" / "hourglass").read_bytes()
    assert (prefix / "share" / "man" / "man1" / "hourglass.1").is_file()
    [dkms] = (prefix / "src").glob("hgtrace-*")
    assert (dkms / "dkms.conf").is_file()
    # every header under kmod/uapi: the module's sources include them all (hgtrace.h, hgtrace_vectors.h)
    uapi = sorted(f for f in os.listdir(os.path.join(TOP, "kmod", "uapi")) if f.endswith(".h"))
    assert "hgtrace_vectors.h" in uapi and sorted(os.listdir(dkms / "uapi")) == uapi, os.listdir(dkms / "uapi")

    run, elsewhere = tmp_path / "run", tmp_path / "elsewhere"
    run.mkdir()
    elsewhere.mkdir()
    generated_run(run, 20000)
    env = installed_env(prefix, tmp_path)
    p = subprocess.run(["hourglass", "report", str(run)], cwd=elsewhere, env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    # the generator's gaps (bench/merge_speed.py), each with its cause in the kernel's recording
    assert "the kernel explains 3998 of the 3998 others" in p.stdout, p.stdout[:400]
    p = subprocess.run(["hourglass", "export", str(run), "--json", "r.json", "--kernelshark", "m.dat",
                        "--perfetto", "t.pf", "--html", "r.html"],
                       cwd=elsewhere, env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    with open(elsewhere / "r.json") as f:
        assert json.load(f)["gaps"]["total"] == 3998
    assert (elsewhere / "m.dat").read_bytes()[:10] == b"\x17\x08\x44tracing"
    assert (elsewhere / "t.pf").stat().st_size > 0 and b"<svg" in (elsewhere / "r.html").read_bytes()

    p = subprocess.run(["make", "-s", "uninstall", f"PREFIX={prefix}"], cwd=TOP, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    left = [os.path.join(d, f) for d, _, fs in os.walk(prefix) for f in fs]
    assert not left, left

"""hourglass's pure logic in C: time units, TSC fit, the polling loop (TAP)."""
import glob
import os
import subprocess

from conftest import TOP

SRC = os.path.join(TOP, "userspace", "hourglass")


def test_hourglass_units(tmp_path):
    exe = tmp_path / "hourglass_units"
    srcs = [os.path.join(SRC, f) for f in
            ("timeunits.c", "tsc.c", "workloads.c", "acct.c", "policy.c", "timers.c", "options.c")]
    lib = os.path.join(TOP, "userspace", "lib")     # options.c parses CPU lists with the library's
    subprocess.run(["gcc", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE", "-DHG_FAKE_TSC", "-pthread",
                    "-I", SRC, "-I", lib, "-o", str(exe), os.path.join(os.path.dirname(__file__), "hourglass_units.c"),
                    *srcs, os.path.join(lib, "cpulist.c"), "-lm", "-lrt"], check=True)
    p = subprocess.run([str(exe)], capture_output=True, text=True)
    lines = p.stdout.splitlines()
    bad = [l for l in lines if l.startswith("not ok")]
    assert not bad, "\n".join(bad)
    assert p.returncode == 0
    assert len([l for l in lines if l.startswith("ok")]) >= 30, p.stdout
    assert glob.glob(os.path.join(SRC, "*.c"))

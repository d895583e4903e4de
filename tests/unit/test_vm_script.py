"""scripts/vm refuses bad input with a message and exit 2, before it builds or boots anything."""
import os
import subprocess

import pytest

VM = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "vm")


def vm(*args):
    return subprocess.run([VM, *args], capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("args, msg", [
    (["--bogus", "true"], "unknown option --bogus"),
    (["-k", "6.1"], "no command to run"),
    (["-k", "9.9", "--", "true"], "kernel '9.9' is not installed"),
    (["-o", "/tmp/a=b", "--", "true"], "contains '='"),
    (["-c", "0", "--", "true"], "--cpus takes a number of CPUs from 1 to 64"),
])
def test_bad_input(args, msg):
    p = vm(*args)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert msg in p.stderr, p.stderr


def test_icount_smp_needs_qemu_10(tmp_path):
    """--icount with two vCPUs or more: refused, with what to do, where QEMU is older than 10
    (a QEMU 7.2 stand-in on PATH: the test holds whatever QEMU the machine has)."""
    qemu = tmp_path / "qemu-system-x86_64"
    qemu.write_text("#!/bin/sh\necho 'QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)'\n")
    qemu.chmod(0o755)
    env = dict(os.environ, PATH=f"{tmp_path}:{os.environ['PATH']}")
    p = subprocess.run([VM, "--icount", "-c", "2", "--", "true"], capture_output=True, text=True,
                       timeout=30, env=env)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "--icount -c 2 needs QEMU 10 or later" in p.stderr and "QEMU 7.2.22" in p.stderr \
        and "scripts/setup-qemu" in p.stderr, p.stderr


def _kernels():
    p = subprocess.run(["bash", "-c", f". {os.path.dirname(VM)}/kernels && echo $HG_KERNELS"],
                       capture_output=True, text=True, check=True)
    return p.stdout.split()


def test_list_names_the_six_aliases():
    p = vm("--list")
    assert p.returncode == 0, p.stderr
    assert [line.split()[0] for line in p.stdout.splitlines()] == _kernels() == \
        ["6.1", "6.1-rt", "6.12", "6.12-rt", "7.3", "7.3-rt"], p.stdout


def test_python_copies_of_the_kernel_list():
    """scripts/kernels is the one list; the Python tables that order or colour kernels follow it."""
    from hgtools.paper import figures, plan
    from lab import labtable
    assert list(plan.KERNELS) == _kernels()
    assert list(labtable.KERNEL_ORDER) == _kernels()
    assert set(_kernels()) <= set(figures.KERNEL_COLORS)

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
    # the kernel keeps 2048 bytes of its command line and cuts the rest without a word
    (["--append", "x" * 1100, "--", "true"], "would pass the kernel's 2048-byte command line"),
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
    from hgtools.lab import labtable
    from hgtools.paper import figures, plan
    assert list(plan.KERNELS) == _kernels()
    assert list(labtable.KERNEL_ORDER) == _kernels()
    assert set(_kernels()) <= set(figures.KERNEL_COLORS)


def vm_env(env_add, *args):
    return subprocess.run([VM, *args], capture_output=True, text=True, timeout=30,
                          env=dict(os.environ, **env_add))


@pytest.mark.parametrize("env_add, args, msg", [
    ({"HGT_VM_CHECKERS": "maybe"}, ["--", "true"], "HGT_VM_CHECKERS=maybe: not on or off"),
    ({"HGT_VM_SLUB_DEBUG": "F;x"}, ["--", "true"], "HGT_VM_SLUB_DEBUG=F;x: not slub_debug flags"),
])
def test_bad_checker_settings(env_add, args, msg):
    p = vm_env(env_add, *args)
    assert p.returncode == 2 and msg in p.stderr, (p.returncode, p.stderr)


def test_debug_kernel_not_built_says_how_to_build_it(tmp_path):
    p = vm_env({"HG_DEBUG_KERNEL_DIR": str(tmp_path)}, "-k", "debug", "--", "true")
    assert p.returncode == 2 and "the debug kernel is not built: make debug-kernel" in p.stderr, p.stderr


def _config(alias):
    """(release, its config's text) of an installed kernel, or a skip."""
    p = vm("--list")
    rel = dict(line.split(None, 1) for line in p.stdout.splitlines()).get(alias, "")
    for f in (f"/boot/config-{rel}", f"/lib/modules/{rel}/config"):
        if rel and os.path.exists(f):
            return rel, open(f).read()
    pytest.skip(f"kernel {alias} is not installed with its config (make setup installs it)")


@pytest.mark.parametrize("alias", ["6.1", "6.12", "7.3"])
def test_boot_options_switch_on_the_checkers_the_kernel_carries(alias):
    """What the kernel's config carries and leaves off is switched on; nothing it lacks."""
    _, cfg = _config(alias)
    p = vm_env({"HGT_VM_APPEND": ""}, "-k", alias, "--boot-options")
    assert p.returncode == 0, p.stderr
    opts = p.stdout.split()
    has = lambda sym: f"\nCONFIG_{sym}=y\n" in cfg     # noqa: E731
    assert ("kfence.sample_interval=100" in opts) == has("KFENCE"), opts
    assert ("slub_debug=FZPU" in opts) == has("SLUB_DEBUG"), opts
    assert ("sysctl.kernel.hung_task_timeout_secs=30" in opts) == has("DETECT_HUNG_TASK"), opts
    assert "watchdog_thresh=5" not in opts       # the debug kernel's only


def test_boot_options_off_keep_only_what_was_asked():
    _config("6.12")
    p = vm_env({"HGT_VM_CHECKERS": "off", "HGT_VM_APPEND": "tsc=reliable"}, "-k", "6.12",
               "--append", "isolcpus=1", "--boot-options")
    assert p.returncode == 0 and p.stdout.split() == ["isolcpus=1", "tsc=reliable"], (p.stdout, p.stderr)
    p = vm_env({"HGT_VM_SLUB_DEBUG": "FZ", "HGT_VM_APPEND": ""}, "-k", "6.12", "--boot-options")
    assert "slub_debug=FZ" in p.stdout.split(), p.stdout


def test_each_append_adds_its_options():
    # the lab passes a guest's boot options one --append each (scenario.vm_options): a second
    # --append must add to the first, not replace it
    _config("6.12")
    p = vm_env({"HGT_VM_CHECKERS": "off", "HGT_VM_APPEND": ""}, "-k", "6.12", "--append", "isolcpus=1",
               "--append", "transparent_hugepage=never", "--boot-options")
    assert p.returncode == 0 and p.stdout.split() == ["isolcpus=1", "transparent_hugepage=never"], (p.stdout, p.stderr)


def test_boot_options_icount_guests_measure_without_checkers():
    """On the instruction-count clock the checkers' instructions would be in every figure:
    off there unless asked."""
    _config("6.12")
    p = vm_env({"HGT_VM_APPEND": ""}, "-k", "6.12", "--icount", "--boot-options")
    assert p.returncode == 0 and p.stdout.strip() == "", (p.stdout, p.stderr)
    p = vm_env({"HGT_VM_APPEND": "", "HGT_VM_CHECKERS": "on"}, "-k", "6.12", "--icount", "--boot-options")
    assert "slub_debug=FZPU" in p.stdout.split(), p.stdout

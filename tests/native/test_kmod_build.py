"""hgtrace.ko's build on this machine, for what no guest shows: a kernel whose tracepoint
takes arguments the module does not know, the HGT_TP_SKIP way out, and DKMS building for
Debian 13's kernels in the build root (scripts/setup-trixie, kmod/Makefile's KROOT).

A kernel with an unknown prototype is made here by changing one probe of a copy of the
module instead (the compiler's check cannot tell the two apart: it compares the probe's
type with the kernel's declaration of the tracepoint).
"""
import os
import re
import shutil
import subprocess

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
KMOD = os.path.join(TOP, "kmod")


def _kernels():
    """{alias: release} of scripts/vm --list, installed ones only."""
    p = subprocess.run([os.path.join(TOP, "scripts", "vm"), "--list"], capture_output=True, text=True, check=True)
    return dict(l.split() for l in p.stdout.splitlines() if "not installed" not in l)


def _kbuild_root():
    p = subprocess.run(["bash", "-c", f". {TOP}/scripts/kernels && echo $HG_KBUILD_ROOT"],
                       capture_output=True, text=True, check=True)
    return p.stdout.strip()


def _host_release():
    """The oldest kernel whose headers are on this machine (a host build, any user)."""
    for alias, rel in _kernels().items():
        if os.path.exists(f"/lib/modules/{rel}/build/Makefile"):
            return rel
    pytest.skip("no guest kernel's headers on this machine: make setup installs them")


def _copy(tmp_path):
    src = tmp_path / "kmod"
    shutil.copytree(KMOD, src, ignore=shutil.ignore_patterns("build"))
    return src


def _make(src, rel, *args):
    return subprocess.run(["make", "-s", "-C", str(src), f"KVER={rel}", "WERROR=1", *args],
                          capture_output=True, text=True, timeout=600)


def test_unknown_prototype_is_one_line_naming_it(tmp_path):
    """A tracepoint whose prototype no probe takes: one error, naming the tracepoint, the
    kernel and what to do; then HGT_TP_SKIP builds the module without it."""
    rel = _host_release()
    src = _copy(tmp_path)
    probes = (src / "probes.c").read_text()
    old = "static void probe_sched_migrate(void *data, struct task_struct *p, int dest_cpu)"
    assert old in probes, "probes.c's sched_migrate_task probe changed: update this test"
    (src / "probes.c").write_text(probes.replace(old, old.replace("int dest_cpu", "long dest_cpu")))
    p = _make(src, rel)
    assert p.returncode != 0, "a probe of the wrong type built"
    errors = [l for l in p.stderr.splitlines() if "error:" in l]
    assert len(errors) == 1, "more than the one line that names the tracepoint:\n" + "\n".join(errors)
    assert re.search(rf"tracepoint sched_migrate_task of Linux {re.escape(rel)} takes arguments no probe", errors[0]), \
        errors[0]
    assert "make HGT_TP_SKIP=sched_migrate_task" in errors[0] and "kmod/compat.h" in errors[0], errors[0]
    # the way out it names: the module builds, without that probe
    p = _make(src, rel, "HGT_TP_SKIP=sched_migrate_task")
    assert p.returncode == 0, p.stderr
    ko = src / "build" / rel / "hgtrace.ko"
    assert ko.is_file(), p.stdout + p.stderr
    strings = subprocess.run(["strings", str(ko)], capture_output=True, text=True, check=True).stdout
    assert "left out of this build (HGT_TP_SKIP)" in strings, "the load-time notice of a skipped probe is missing"


def test_validated_release_builds_without_notice(tmp_path):
    """A validated release builds warning-free (WERROR=1) and without the untested notice."""
    rel = _host_release()
    p = _make(_copy(tmp_path), rel)
    assert p.returncode == 0, p.stderr
    assert "is not one of the releases" not in p.stdout + p.stderr, p.stdout + p.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="the Debian 13 build root is a chroot: root only")
def test_dkms_builds_for_debian13_in_the_build_root(tmp_path):
    """`dkms build` in the Debian 13 root, for each of its kernels the guests boot: what a user
    on Debian 13 runs, the module's DKMS source as make install lays it out."""
    root = _kbuild_root()
    rels = [r for a, r in _kernels().items() if os.path.exists(f"{root}/lib/modules/{r}/build/Makefile")]
    if not os.path.exists(os.path.join(root, ".hourglass-root")) or not rels:
        pytest.fail(f"no Debian 13 build root with headers at {root}: make setup (scripts/setup-trixie) makes it")
    stage = tmp_path / "stage"
    subprocess.run(["make", "-s", "-C", TOP, "install", f"DESTDIR={stage}", "PREFIX=/usr"],
                   check=True, capture_output=True, text=True, timeout=600)
    [src] = (stage / "usr" / "src").glob("hgtrace-*")
    version = src.name.split("-", 1)[1]
    dest = os.path.join(root, "usr", "src", src.name)
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(src, dest)

    def chroot(*cmd):
        # /proc in a mount namespace of its own (objtool and dkms read it), gone with it
        return subprocess.run(["unshare", "--mount", "--propagation", "private", "--fork", "sh", "-ec",
                               f"mount -t proc proc {root}/proc; exec chroot {root} \"$@\"", "sh", *cmd],
                              capture_output=True, text=True, timeout=900)
    try:
        chroot("dkms", "remove", "-m", "hgtrace", "-v", version, "--all")
        p = chroot("dkms", "add", "-m", "hgtrace", "-v", version)
        assert p.returncode == 0, p.stdout + p.stderr
        for rel in rels:
            p = chroot("dkms", "build", "-m", "hgtrace", "-v", version, "-k", rel)
            assert p.returncode == 0, f"dkms build for {rel}:\n{p.stdout}{p.stderr}"
            kos = [os.path.join(d, f) for d, _, fs in os.walk(f"{root}/var/lib/dkms/hgtrace/{version}/{rel}")
                   for f in fs if f.startswith("hgtrace.ko")]
            assert kos, f"dkms build for {rel} left no hgtrace.ko under /var/lib/dkms"
            info = subprocess.run(["modinfo", "-F", "vermagic", kos[0]], capture_output=True, text=True).stdout
            assert info.split()[0] == rel, f"{kos[0]}: vermagic {info!r}, not {rel}"
    finally:
        chroot("dkms", "remove", "-m", "hgtrace", "-v", version, "--all")
        shutil.rmtree(dest, ignore_errors=True)


@pytest.mark.skipif(not os.path.exists("/etc/apt/preferences.d/hourglass-trixie"),
                    reason="make setup has not added Debian 13's kernels (scripts/setup-trixie)")
def test_debian13_gives_nothing_but_its_kernels():
    """Debian 13's suites are pinned to -1 but for the kernel's own packages: an upgrade, or an
    install of packages both suites have, takes nothing from them."""
    sim = subprocess.run(["apt-get", "-s", "-o", "Debug::NoLocking=1", "upgrade"], capture_output=True,
                         text=True, check=True).stdout
    # Debian 13's versions end in +deb13... or ~bpo13+N, and its origins say 13 or stable(-backports)
    later = re.compile(r"deb13|bpo13|Debian:13|Debian Backports|/stable[ \]-]")
    assert not [l for l in sim.splitlines() if l.startswith("Inst") and later.search(l)], sim
    for pkg in ("libc6", "linux-base", "python3", "gcc", "trace-cmd", "stress-ng", "linux-image-amd64"):
        pol = subprocess.run(["apt-cache", "policy", pkg], capture_output=True, text=True, check=True).stdout
        cand = re.search(r"Candidate: (\S+)", pol)
        assert cand and "deb13" not in cand.group(1) and "bpo13" not in cand.group(1), pol

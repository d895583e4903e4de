"""lava_jobs - LAVA job definitions that run the truth lab on a farm's devices:

    python3 -m hgtools.lab.lava_jobs -o DIR [--device NAME]... [--kernel URL] [--rootfs URL]
                           [--project URL] [--artifacts URL] [--paper quick|EXP,...|none]
                           [--ssh-host HOST --ssh-user USER --ssh-identity-file FILE]

(`make lava-jobs` writes them all into out/lava-jobs/; docs/lava.md.) A job boots the
device (or reaches it over ssh), builds hgtrace.ko for the device's kernel with DKMS and
runs scripts/lava-lab there: the lab's scenarios made for a real machine (scenario.py's
machine guest) and the paper's quick experiments made for one (plan.on_machine), analysed
on the device, each check, each class's figures and each paper run reported as a LAVA
test case (tools/hgtools/lab/lava_cases.py), the run directories left in /tmp/hourglass-lab
and, with --artifacts URL, uploaded to the farm's artifact store as one archive linked to
the case hourglass-artifacts (what `hourglass results` reads).

The jobs are rendered by Linaro's TuxLAVA, the generator KernelCI's and LKFT's tooling
uses, from its own templates for each device type; this file adds only what TuxLAVA has no
option for (the test's timeout, the job's metadata). Every job is then checked by LAVA's
own job schema (lava_common.schemas, Debian 13 backports' lava-common, which
scripts/setup-lava unpacks into build/lava) before it is written: a job LAVA would refuse is never
written, and the exit status is 1.
"""
from __future__ import annotations

import argparse
import glob
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "../../.."))
# LAVA's own Python (scripts/setup-lava unpacks it)
LAVA_PY = os.path.join(TOP, "build", "lava", "usr", "lib", "python3", "dist-packages")

# device type: (what it is, its architecture, what the lab records there)
DEVICES = {
    "qemu-x86_64": ("a QEMU x86_64 guest the dispatcher boots itself (the type tested here, docs/lava.md)",
                    "x86_64"),
    "nfs-x86_64": ("an x86_64 machine the lab boots over the network (iPXE, NFS root)", "x86_64"),
    "ssh-device": ("an existing machine, running its own kernel, reached over ssh", "any"),
    "nfs-ampereone": ("an arm64 server the lab boots over the network (AmpereOne, NFS root)", "arm64"),
}
DEFAULT_DEVICES = list(DEVICES)
# where the project sits on the device: the overlay unpacks the tarball (`git archive
# --prefix=hourglass/`) into /opt
PROJECT_DIR = "/opt/hourglass"
# what the jobs' URLs are when not given: where a lab keeps its files, for the user to edit
PLACEHOLDER = "https://lab.example/hourglass/"


def project_tarball(out: str) -> str:
    """The project's source as the jobs install it (git archive of HEAD), written into @out."""
    path = os.path.join(out, "hourglass-src.tar.gz")
    subprocess.run(["git", "-C", TOP, "archive", "--format=tar.gz", "--prefix=hourglass/", "-o", path, "HEAD"],
                   check=True)
    return path


def device_command(project: str, lab_args: str = "", artifacts: str = "", paper: str = "quick") -> List[str]:
    """The job's one command on the device: fetch the project where no overlay brought it
    (an ssh device), then the lab (scripts/lava-lab @lab_args: it builds, runs and reports;
    runs the paper's quick experiments @paper unless "none"; uploads its run directories to
    @artifacts)."""
    fetch = (f"test -x {PROJECT_DIR}/scripts/lava-lab || {{ mkdir -p /opt && "
             f"curl -fsSL {project} | tar -xz -C /opt; }}")
    args = (f" --paper {paper}" if paper and paper != "none" else "") \
        + (f" --upload {artifacts}" if artifacts else "") + (f" {lab_args}" if lab_args else "")
    return ["sh", "-c", f"{fetch} && {PROJECT_DIR}/scripts/lava-lab --out /tmp/hourglass-lab{args}"]


def render(device: str, a: argparse.Namespace) -> str:
    """One job for @device, as TuxLAVA renders it."""
    from tuxlava.jobs import Job   # optional: make setup installs it into .venv

    arch = DEVICES[device][1]
    # fresh lists and dicts each time: Job's defaults are shared between its instances
    kw: Dict[str, Any] = {"device": device, "commands": device_command(a.project, a.lab_args, a.artifacts or "", a.paper), "tests": [],
                          "parameters": {"command-name": "hourglass-lab"}, "deploy_os": "debian",
                          "timeouts": {"deploy": 20, "boot": 15}}
    if a.artifacts and device.startswith("qemu-"):
        # TuxLAVA's QEMU jobs run with `-net none` unless asked: the upload needs the network
        kw["enable_network"] = True
    if device == "ssh-device":
        kw.update(ssh_host=a.ssh_host, ssh_user=a.ssh_user, ssh_identity_file=a.ssh_identity_file)
    else:
        kernel = a.kernel if arch == "x86_64" else a.arm64_kernel
        # QEMU boots a disk image; a lab's machines an NFS root from a tarball
        rootfs = a.rootfs if device.startswith("qemu-") else a.nfs_rootfs if arch == "x86_64" else a.arm64_rootfs
        kw.update(kernel=kernel, rootfs=rootfs, overlays=[(a.project, "/opt")] + [tuple(o) for o in a.overlay])
    job = Job(**kw)
    job.initialize()
    return str(job.render())


def finish(text: str, device: str, minutes: int, ramdisk: str = "") -> Dict[str, Any]:
    """@text's job with what TuxLAVA has no option for: the lab's test may take @minutes
    (TuxLAVA gives a command 2), the job as long as it needs, metadata saying what it is, and
    a QEMU device's initramfs (@ramdisk: a distribution's kernel needs one to find its disk)."""
    import yaml

    job = yaml.safe_load(text)
    added = 0
    for action in job["actions"]:
        d = action.get("deploy")
        if d and ramdisk and device.startswith("qemu-"):
            d["images"]["ramdisk"] = {"image_arg": "-initrd {ramdisk}", "url": ramdisk}
        t = action.get("test")
        if t and any(d.get("name") == "commands" for d in t.get("definitions", [])):
            added += minutes - int(t["timeout"].get("minutes", 0))
            t["timeout"] = {"minutes": minutes}
        b = action.get("boot")
        if b and b.get("method") == "ssh":
            # TuxLAVA 0.28's ssh template says `connection: serial`, which LAVA 2026.10's boot.ssh
            # schema does not list and its dispatcher never reads (only a secondary connection's
            # boot does): dropped, so that the job passes the strict schema
            b.pop("connection", None)
    if not added and minutes:
        raise SystemExit(f"lava_jobs: TuxLAVA's {device} job has no commands test to give {minutes} minutes")
    job["timeouts"]["job"] = {"minutes": int(job["timeouts"]["job"].get("minutes", 0)) + added}
    job["job_name"] = f"hourglass truth lab on {device}"
    job["metadata"] = {"hourglass.device": device, "hourglass.arch": DEVICES[device][1],
                       "hourglass.what": DEVICES[device][0],
                       "hourglass.clock": "x86_64: the TSC; other architectures: not ported, the job says so (docs/lava.md)"}
    return dict(job)


def _lava_common() -> None:
    """LAVA's lava_common package imported from LAVA_PY, looked for in that folder alone, so
    that the folder stays off the import path (no module is found there by chance); the
    package's own modules are found through it. An ImportError when it is not there."""
    if "lava_common" in sys.modules:
        return
    spec = importlib.machinery.PathFinder.find_spec("lava_common", [LAVA_PY])
    if spec is None or spec.loader is None:
        raise ImportError(f"no lava_common in {LAVA_PY}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["lava_common"] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules["lava_common"]
        raise


def validate(job: Dict[str, Any]) -> str:
    """LAVA's own verdict on @job: '' if its job schema takes it, else why not."""
    try:
        _lava_common()
        from lava_common import schemas
    except ImportError as e:
        return f"LAVA's job schema is not here ({e}): scripts/setup-lava unpacks lava-common into {LAVA_PY}"
    try:
        schemas.validate(job, strict=True)
    except Exception as e:        # voluptuous.Invalid and its kin: the message names the path
        return f"{type(e).__name__}: {e}"
    return ""


def main() -> int:
    ap = argparse.ArgumentParser(
        description="write LAVA job definitions that run the truth lab on a farm's devices (docs/lava.md)")
    ap.add_argument("-o", "--out", required=True, help="the directory the jobs go to (one DEVICE.yaml each)")
    ap.add_argument("--device", action="append", choices=sorted(DEVICES),
                    help=f"a device type (repeatable; default: all of {', '.join(DEFAULT_DEVICES)})")
    ap.add_argument("--kernel", default=PLACEHOLDER + "x86_64/bzImage", help="the x86_64 devices' kernel URL")
    ap.add_argument("--rootfs", default=PLACEHOLDER + "x86_64/rootfs.ext4.xz",
                    help="qemu-x86_64's root file system, a disk image (Debian, with the kernel's headers, "
                         "dkms and the lab's packages: docs/lava.md)")
    ap.add_argument("--ramdisk", help="qemu-x86_64's initramfs URL, for a kernel that needs one (a distribution's)")
    ap.add_argument("--nfs-rootfs", default=PLACEHOLDER + "x86_64/rootfs.tar.xz",
                    help="nfs-x86_64's root file system, a tarball (the same contents)")
    ap.add_argument("--arm64-kernel", default=PLACEHOLDER + "arm64/Image", help="the arm64 devices' kernel URL")
    ap.add_argument("--arm64-rootfs", default=PLACEHOLDER + "arm64/rootfs.tar.xz",
                    help="the arm64 devices' root file system, a tarball")
    ap.add_argument("--project", help="the project's source tarball URL (default: file:// the one written into OUT)")
    ap.add_argument("--ssh-host", default="machine.lab.example", help="ssh-device: the machine")
    ap.add_argument("--ssh-user", default="root", help="ssh-device: the user (root: the module is loaded)")
    ap.add_argument("--ssh-identity-file", help="ssh-device: the private key LAVA logs in with "
                                                "(default: an empty placeholder file written into OUT)")
    ap.add_argument("--overlay", nargs=2, action="append", default=[], metavar=("URL", "PATH"),
                    help="one more tarball to unpack at PATH in the root file system (repeatable; "
                         "scripts/lava-local's kernel config, where the lab reads CONFIG_HZ)")
    ap.add_argument("--artifacts", metavar="URL",
                    help="the farm's artifact store: the device PUTs its run directories' archive under URL/ "
                         "(curl -T) and links it to the case hourglass-artifacts (default: kept on the device)")
    ap.add_argument("--paper", default="quick", metavar="quick|EXP,...|none",
                    help="the paper's quick experiments the device runs after the lab: all made for a real "
                         "machine (quick, the default), those named (rta,dl), or none")
    ap.add_argument("--lab-args", default="", help="more arguments for scripts/lava-lab on the device "
                                                    "(scenarios to run instead of the quick ones)")
    ap.add_argument("--minutes", type=int, default=40, help="how long the lab may run on the device (40)")
    a = ap.parse_args()
    if a.minutes < 1:
        ap.error("--minutes must be at least 1")
    os.makedirs(a.out, exist_ok=True)
    if not a.project:
        a.project = "file://" + os.path.abspath(project_tarball(a.out))
    if not a.ssh_identity_file:
        # TuxLAVA reads the key's file when it renders the job: a placeholder, never a real key
        a.ssh_identity_file = os.path.join(a.out, "ssh-identity-placeholder")
        open(a.ssh_identity_file, "a").close()
    import yaml

    bad = 0
    for old in glob.glob(os.path.join(a.out, "*.yaml")):
        os.unlink(old)
    for dev in a.device or DEFAULT_DEVICES:
        try:
            job = finish(render(dev, a), dev, a.minutes, a.ramdisk or "")
        except ImportError as e:
            print(f"lava_jobs: TuxLAVA is not here ({e}): make setup installs it into .venv", file=sys.stderr)
            return 2
        except Exception as e:        # noqa: BLE001
            # TuxLAVA's refusals (its TuxLavaException, argparse's ArgumentTypeError for a
            # file:// URL to nothing) are plain Exceptions that name the option
            print(f"lava_jobs: {dev}: TuxLAVA refuses the job: {e}", file=sys.stderr)
            return 2
        why = validate(job)
        if why:
            print(f"lava_jobs: {dev}: LAVA's job schema refuses the job: {why}", file=sys.stderr)
            bad += 1
            continue
        path = os.path.join(a.out, f"{dev}.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(job, f, sort_keys=False, width=1000)
        print(f"{path}: {DEVICES[dev][0]}; valid (LAVA's job schema)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

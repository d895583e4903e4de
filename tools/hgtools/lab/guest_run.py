"""guest_run - the lab's scenarios inside one booted guest, one after another:

    scripts/vm [--icount] -k KERNEL -o OUT -- python3 -m hgtools.lab.guest_run --guest icount|smp2 [SCENARIO...]
    HGT_KO=hgtrace.ko HGT_OUT=OUT python3 -m hgtools.lab.guest_run --guest machine    (scripts/lava-lab)

Loads hgtrace.ko once, then for each scenario made for this guest: its setup
commands (a line `label: WHAT=NAME` they print names an irq or task for the
report), `build/hourglass record --dir OUT/<scenario> --load ... --
<hourglass options>`, its teardown commands (always). Each run directory gets
lab-run.json: the scenario, the guest, the kernel (and its CONFIG_HZ), exit statuses,
times.
At the end the module is unloaded and the kernel log checked (the guest
tests' patterns). Prints one TAP line a scenario; exit 0 only if every run
recorded and the kernel stayed healthy. The analysis is done on the host
(tools/hgtools/lab/analyse.py), not under the emulator.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
from typing import Any, Dict

from . import scenario
from .kernel import TROUBLE as BAD_DMESG, config_hz, mount_debugfs

TOP = scenario.TOP
KO = os.environ.get("HGT_KO", "")
OUT = os.environ.get("HGT_OUT", "/tmp/lab-out")


def sh(cmd: str, timeout: float = 120) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(["/bin/sh", "-c", cmd], capture_output=True, text=True, timeout=timeout, cwd=TOP)


HOURGLASS = os.path.join(TOP, "build", "hourglass")


def duration_s(hg_args: str) -> float:
    m = re.search(r"-d\s+(\d+(?:\.\d+)?)(ms|s|m)?\b", hg_args)
    if not m:
        return 10.0
    return float(m.group(1)) * {"ms": 1e-3, "s": 1.0, "m": 60.0, None: 1.0}[m.group(2)]


def record_slack() -> float:
    """How long a recording may take beyond hourglass's run, in this guest's time. On the
    instruction-count clock, guest time leaps forward whenever the guest waits idle for
    the host (each read or write of its 9p root: QEMU warps the clock to the next timer),
    so a recording of 3 s has taken 170 to 300 guest seconds and 15 host seconds; the host's
    timeout on the whole guest (scripts/lab, scripts/check-kernels) is the one that counts."""
    return 3600.0 if os.environ.get("HGT_VM_ICOUNT") == "1" else 300.0


def preempt_rt() -> bool:
    """Whether this kernel is PREEMPT_RT (its version string says so, as uname -v prints)."""
    return "PREEMPT_RT" in os.uname().version


def run_one(name: str, guest: str, out_root: str, run: int = 1) -> Dict[str, Any]:
    sc = scenario.load(name)
    cmds = scenario.for_guest(sc, guest)
    d = os.path.join(out_root, scenario.run_dir_name(name, run))
    res: Dict[str, Any] = {"scenario": name, "run": run, "guest": guest, "kernel": os.uname().release, "cpus": os.cpu_count(),
           "icount": os.environ.get("HGT_VM_ICOUNT") == "1", "setup": [], "teardown": [], "record_exit": None,
           "config_hz": config_hz()}
    t0 = time.monotonic()
    why = scenario.not_run_reason(sc, os.uname().release, preempt_rt())
    if why:
        res["not_run"] = why
        return _write_run(d, res)
    labels = list(cmds["labels"])
    ok = True
    # the last scenario's files (megabytes, on the 9p share) are written back now, not during
    # this one's run by a flusher on CPU 0: with two vCPUs taking turns, device-timer after
    # device-irq had 65 of its interrupts in gaps of 450 us, read as switches (6.1, 2026-12-02)
    os.sync()
    try:
        for c in cmds["setup"]:
            p = sh(c)
            res["setup"].append({"command": c, "exit": p.returncode, "output": (p.stdout + p.stderr)[-2000:]})
            labels += [m.group(1) for m in re.finditer(r"^label: (\S+=\S+)$", p.stdout, re.M)]
            if p.returncode:
                res["error"] = f"setup failed: {c}: {(p.stdout + p.stderr)[-500:]}"
                ok = False
                break
        if ok:
            argv = [HOURGLASS, "record", "--dir", d, "--force", "--load-settle", cmds["settle"], *cmds["record"]]
            for ld in cmds["loads"]:
                argv += ["--load", ld]
            for lab in labels:
                argv += ["--label", lab]
            argv += ["--", *cmds["hourglass"].split()]
            res["record_command"] = argv
            t1 = time.monotonic()
            p = subprocess.run(argv, capture_output=True, text=True, cwd=TOP,
                               timeout=duration_s(cmds["hourglass"]) + record_slack())
            res["record_seconds"] = time.monotonic() - t1
            res["record_exit"] = p.returncode
            res["record_stderr"] = p.stderr[-3000:]
            if p.returncode not in (0, 4):
                res["error"] = f"hourglass record exited {p.returncode}: {p.stderr[-800:]}"
    except subprocess.TimeoutExpired as e:
        res["error"] = f"timed out: {e.cmd}"
    finally:
        for c in cmds["teardown"]:
            try:
                p = sh(c)
                res["teardown"].append({"command": c, "exit": p.returncode, "output": (p.stdout + p.stderr)[-2000:]})
            except subprocess.TimeoutExpired:
                res["teardown"].append({"command": c, "exit": None, "output": "timed out"})
    res["labels"] = labels
    res["seconds"] = time.monotonic() - t0
    return _write_run(d, res)


def _write_run(d: str, res: Dict[str, Any]) -> Dict[str, Any]:
    """@res as @d/lab-run.json (what analyse.py reads of the run), and returned."""
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "lab-run.json"), "w") as f:
        json.dump(res, f, indent=1)
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description="run the lab's scenarios in this guest")
    ap.add_argument("--guest", choices=sorted(scenario.GUESTS), required=True)
    ap.add_argument("--quick", action="store_true", help="only the scenarios marked quick, each check_runs times (make check's subset)")
    ap.add_argument("--runs", type=int, default=1, choices=range(1, 6), metavar="N",
                    help="record each scenario N times (1-5; make lab: 2, so that a profile learned on one run "
                         "is measured on the other, docs/profile.md); --quick's come from check_runs")
    ap.add_argument("scenarios", nargs="*")
    a = ap.parse_args()
    if os.geteuid() != 0 or not os.path.exists("/proc/modules") or not KO:
        print("1..0 # SKIP needs root in a kernel that loads modules (run through scripts/vm)")
        return 4
    want = scenario.GUESTS[a.guest]
    if (want["cpus"] and os.cpu_count() != want["cpus"]) or (os.environ.get("HGT_VM_ICOUNT") == "1") != want["icount"]:
        print(f"Bail out! this guest has {os.cpu_count()} CPUs, icount {os.environ.get('HGT_VM_ICOUNT')}: "
              f"not the {a.guest} guest")
        return 2
    with open("/proc/cmdline") as f:
        cmdline = f.read().split()
    if any(o not in cmdline for o in (want.get("append") or "").split()):
        print(f"Bail out! this guest booted without {want['append']} (/proc/cmdline): not the {a.guest} guest")
        return 2
    names = a.scenarios or scenario.names()
    todo = []   # (scenario, run): the quick subset records each check_runs times
    for n in names:
        sc = scenario.load(n)
        if scenario.made_for(sc, a.guest) and (not a.quick or sc.get("quick")):
            todo += [(n, k) for k in range(1, (sc["check_runs"] if a.quick else a.runs) + 1)]
    print(f"TAP version 13\n1..{len(todo)}\n# lab: {a.guest} guest, kernel {os.uname().release}", flush=True)
    why = mount_debugfs()     # hourglass reads the scheduler's features there, as on a typical system
    if why:
        print(f"# {why}", flush=True)
    dmesg0 = len(sh("dmesg").stdout.splitlines())
    # the recorders drain once a run is over (GUESTS' record), so the module holds the whole
    # run: 2 MiB a CPU lost 4077 of ipi's events on 6.12-rt with two vCPUs, 8 MiB 163071 of
    # softirq-backlog's there (its load polls every 20 us: 50,000 timers a second), 2026-12-02
    p = sh(f"insmod {KO} buffer_kb=32768")
    if p.returncode:
        print(f"Bail out! insmod {KO}: {p.stderr.strip()}")
        return 2
    failed = not_run = 0
    for i, (n, k) in enumerate(todo, 1):
        r = run_one(n, a.guest, OUT, k)
        if r.get("not_run"):
            not_run += 1
            print(f"ok {i} - {scenario.run_dir_name(n, k)} # SKIP not on this kernel: {r['not_run']}", flush=True)
            continue
        err = r.get("error")
        failed += bool(err)
        print(f"{'not ok' if err else 'ok'} {i} - {scenario.run_dir_name(n, k)} ({r['seconds']:.1f}s)", flush=True)
        if err:
            for line in err.splitlines()[:20]:
                print(f"#   {line}", flush=True)
    p = sh("rmmod hgtrace")
    if p.returncode:
        print(f"# rmmod hgtrace failed: {p.stderr.strip()}")
        failed += 1
    bad = [line for line in sh("dmesg").stdout.splitlines()[dmesg0:] if BAD_DMESG.search(line)]
    if bad:
        print("# the kernel log shows trouble:\n" + "\n".join(f"#   {line}" for line in bad[:30]))
        failed += 1
    with open(os.path.join(OUT, "dmesg.txt"), "w") as f:
        f.write("\n".join(sh("dmesg").stdout.splitlines()[dmesg0:]) + "\n")
    print(f"# {len(todo) - failed - not_run} of {len(todo)} recorded in the {a.guest} guest"
          + (f", {not_run} not made for this kernel" if not_run else ""), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

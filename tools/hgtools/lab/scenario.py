"""scenario - the lab's scenario files (tools/hgtools/lab/scenarios/*.toml): read,
checked, and filled in for one guest.

A scenario says what runs (hourglass's command line, the loads, setup and
teardown commands), in which guests, and what to expect, from the loads' own
parameters or from counters the module does not produce (docs/lab.md):

    title = "a periodic SCHED_FIFO task on the hourglass CPU"
    guests = ["icount", "smp2"]          # icount: 1 CPU, instruction clock; icount2: 2 vCPUs on
                                         # it; smp2: 2 vCPUs, plain emulation (GUESTS)
    quick = true                         # in make check's subset (its icount guest; the icount2 guest on some kernels)
    check_runs = 3                       # optional: make check records it this many times (1-5) and
                                         # judges the majority: for a scenario whose gaps hang on a
                                         # phase that is each run's chance (docs/lab.md)
    hourglass = "-n 1 -d 3s -t 0 -p NORMAL --affinity {cpu}"
    setup = ["..."]                      # shell, as root, before recording
    teardown = ["..."]                   # shell, after (also after a failure)
    settle = "1s"                        # the loads run this long before hourglass
    not_held = {icount2 = "why"}         # optional: guests whose class figures are shown, not held
    not_on = [{rt = true, below = "6.10", why = "..."}]   # optional: kernels it cannot run on, and why
                                         # (rt: PREEMPT_RT or not; below: releases older than):
                                         # there it is not run, and the table says why

    [[known_misread]]                    # optional: gaps a kernel is known to misread in a guest
    kernels = ["6.12"]                   # the lab's kernel names (scripts/kernels)
    guests = ["icount"]
    actual = "timer"                     # gaps of this actual class (vocab.ACTUAL_CLASSES)
    inferred = "interrupt"               # read as this one (vocab.INFERABLE_CLASSES)
    share = 0.02                         # at most this share of a class's gaps in a run: of the
                                         # actual class's for its recall, of the inferred one's for
                                         # its precision; never more than vocab.ALLOWANCE_CEILING
    why = "..."                          # what user space cannot separate there
    runs = ["2026-11-27: ..."]           # the dated runs behind it (docs/lab.md, "Allowances")

    [[class_not_held]]                   # optional: target classes a kernel's guest cannot be held to
    kernels = ["6.12"]                   # (they would need more than the ceiling): shown with their
    guests = ["icount"]                  # figures and why, never counted as passed
    classes = ["interrupt"]
    why = "..."
    runs = ["2026-11-27: ..."]

    [[load]]
    command = "{lab}/lab-periodic -p 7ms -b 400us -c {cpu} -o $HOURGLASS_RUN_DIR/stamps-0.txt"

    [[expect]]
    what = "preemptions by the periodic task"
    expected = "stamps:0"                # how many: see EXPECTED
    found = "load:0"                     # which gaps are its: see FOUND
    class = "switch_other"               # the actual class those gaps must have
    named = "\\[lab-periodic\\]$"         # optional: what their cause must be (a regular expression)
    median_us = {icount = [400, 510]}    # optional: bounds on their median length ([LOW, HIGH] for any guest)
    on_rt = {class = "switch_other", named = "..."}   # optional: class and named on PREEMPT_RT (a
                                         # device's handler runs in its irq thread there)
    hidden = {icount2 = "why"}           # optional: guests where more than 2% of those gaps may be
                                         # hidden (mostly another vCPU's turn: its cause runs there)

Placeholders, filled per guest: {cpu} hourglass's CPU (the last one),
{cpumask} the same as a hexadecimal mask, {other} another CPU (icount2, smp2), {lab}
the lab's programs (build/lab), {top} the tree.
"""
from __future__ import annotations

import os
import re
import sys
from typing import Any, Dict, List, Optional, Set

if sys.version_info >= (3, 11):
    import tomllib
else:                      # hgtools runs on 3.10; the lab reads its scenarios with 3.11's tomllib
    tomllib: Any = None

# the gaps' one vocabulary (tools/hgtools/vocab.py): the classes and the targets
from .. import vocab

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "../../.."))
SCENARIOS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenarios")   # the lab's own, beside it
# what `hourglass record` is told in each guest beside the scenario's own: the
# icount guest has one CPU, so the recorder's drains (every 100 ms by default)
# ran on hourglass's CPU and fell into the gaps measured, named after the
# recorder instead of the scenario's load in up to 2% of them (fifo-periodic)
# and taken for interrupts on 6.12 (docs/lab.md); drained every 60 s, the
# recorder stays out of the run (the 2 MiB buffer holds a lab run, about
# 0.8 MiB at most; a loss would be counted and reported, never silent). Every
# 10 s was not enough: the first recording of a boot once lasted 17.6 s, and
# its drain at 10 s fell inside hourglass's run
# icount2: two vCPUs on the instruction-count clock (QEMU 10; scripts/setup-qemu), taking turns
# on one host thread, so that what runs on the other CPU is steal on hourglass's: the drains
# every 60 s there too keep CPU 0 as quiet as the scenario's load leaves it, and hourglass's
# CPU 1 is isolated from the scheduler's balancing (isolcpus=1, as real-time users isolate the
# CPU they measure): else CPU 1's tick sends CPU 0 to balance its idle load every few ticks
# (an IPI, then a SCHED softirq there), whose turns were 33 to 70 hidden gaps of 26 us and 19
# to 20 ticks read as switches in device-timer's 3 s (6.1, 7.3; 11 and 15 isolated, 2026-12-02).
# And it keeps transparent huge pages off (transparent_hugepage=never, as real-time tuning does):
# with them on (Debian's default, always), khugepaged ran on CPU 0 for 75 to 150 ms at once,
# turns of CPU 0 with no event in them, and the gaps of CPU 1 they fell in
# were hidden: 60 to 133 of device-timer's 2307 HPET interrupts in 6 of 14 runs (the 6 where it
# ran that long; 1 to 7 in the 8 others), against 2 to 9 in 10 of 10 runs with them off and
# khugepaged never running (6.1, 7.3, 2026-12-07; docs/lab.md)
# icount2-shared: the same without isolation, for what needs the balancer (unpinned) or receive
# packet steering, which refuses an isolated CPU (softirq).
# not_held: why a guest's class figures are shown but not held to the targets (tools/hgtools/lab/check.py
# makes them TAP TODOs: counted apart, never as passed), where the inference is known short there;
# a scenario may say so for one guest (its not_held table)
GUESTS: Dict[str, Dict[str, Any]] = {"icount": {"cpus": 1, "icount": True, "record": ["--reader-interval", "60s"]},
          "icount2": {"cpus": 2, "icount": True, "append": "isolcpus=1 transparent_hugepage=never", "record": ["--reader-interval", "60s"]},
          "icount2-shared": {"cpus": 2, "icount": True, "record": ["--reader-interval", "60s"],
                             "not_held": "icount2-shared: CPU 0 runs as much as hourglass's CPU 1, and the vCPUs "
                                         "take turns: half of each CPU's time is the other's steal (docs/lab.md)"},
          "smp2": {"cpus": 2, "icount": False, "record": []},
          # machine: the machine this runs on, as a farm's device runs the lab (docs/lava.md):
          # however many CPUs it has (hourglass on the last), its own clock, the scenarios made
          # for smp2 (runs_like: the plain guest is the nearest to a real machine); its class
          # figures are measured, never held: the targets are the instruction-count lab's
          "machine": {"cpus": None, "icount": False, "record": [], "runs_like": "smp2",
                      "not_held": "machine: a real machine's (or a farm device's) figures are measured, "
                                  "not held: the targets are the instruction-count lab's (docs/lava.md)"}}


def guest_cpus(guest: str, cpus: Optional[int] = None) -> int:
    """How many CPUs @guest has: its own count; for the machine guest, @cpus (what its run
    recorded, lab-run.json) or this machine's."""
    n = GUESTS[guest]["cpus"] or cpus
    return int(n) if n else (os.cpu_count() or 1)


def made_for(sc: Dict[str, Any], guest: str) -> bool:
    """Whether @sc runs in @guest: it names the guest, or the guest it runs like."""
    return guest in sc["guests"] or GUESTS[guest].get("runs_like") in sc["guests"]


def vm_options(guest: str) -> str:
    """scripts/vm's options for @guest: the one place a guest's CPUs and clock are said."""
    g = GUESTS[guest]
    if not g["cpus"]:
        raise ValueError(f"the {guest} guest is the machine this runs on: no scripts/vm boots it")
    # one --append a boot option: the lab's scripts pass these options to scripts/vm as words
    return " ".join((["--icount"] if g["icount"] else []) + ["-c", str(g["cpus"])]
                    + [w for o in (g.get("append") or "").split() for w in ("--append", o)])


def known_misreads(sc: Dict[str, Any], kernel: str, guest: str) -> List[Dict[str, Any]]:
    """@sc's [[known_misread]] entries for @kernel (the lab's name: 6.12, 7.3-rt ...) in @guest."""
    return [m for m in sc.get("known_misread", []) if kernel in m["kernels"] and guest in m["guests"]]


def classes_not_held(sc: Dict[str, Any], kernel: str, guest: str) -> Dict[str, str]:
    """@sc's target classes not held on @kernel in @guest ([[class_not_held]]), each with why."""
    return {c: e["why"] for e in sc.get("class_not_held", []) if kernel in e["kernels"] and guest in e["guests"]
            for c in e["classes"]}


def not_held(sc: Dict[str, Any], guest: str) -> str:
    """Why @sc's class figures in @guest are shown but not held to the targets ('' if held):
    the scenario's own word for that guest, else the guest's."""
    return str((sc.get("not_held") or {}).get(guest) or GUESTS.get(guest, {}).get("not_held", ""))

# expected = ...: where the expected count comes from
EXPECTED = {
    "stamps": "the events a load stamped (stamps:N: load N's stamps-N.txt) inside hourglass's run on its CPU",
    "device": "a device's own count of its interrupts (device:N: load N's stamps-N.txt, irqs= over on_tsc.."
              "off_tsc), scaled to hourglass's run on its CPU",
    "zero": "none",
    "ticks": "CONFIG_HZ (the guest kernel's config) times hourglass's run on its CPU: a busy CPU's periodic tick",
    "switches": "hourglass's own count of consecutive intervals of different threads on a CPU",
    "voluntary": "hourglass's own count of the gaps it asked for (yields and sleeps)",
    "misses": "hourglass's own count of missed deadlines",
    "migrations": "the kernel's count of hourglass's threads' migrations (the issue asks inference against it)",
}
# found = ...: which gaps the report attributes to the expectation
FOUND = {
    "ticks": "gaps in which the tick's hrtimer expired (kernel.hgt names it; without names, gaps with a "
             "local_timer part), less those the recorder ran in (hgtrace's own hrtimer woke it)",
    "load": "gaps the report names after load N (its label: switched to it, or its primary cause)",
    "touched": "gaps load N caused or took any part of (the report's loads section)",
    "unscored": "gaps neither scored nor unexplainable (total - scored - unexplainable): left out as voluntary",
    "cause": "gaps whose cause, as the report names it, matches the regular expression",
    "component": "gaps with a part (a task, handler, irq, softirq) whose name matches the regular expression",
    "class": "gaps of that actual class",
    "voluntary": "the gaps the report counts as voluntary (not scored)",
    "missed": "missed deadlines the report explains (what ran instead)",
    "migrations": "migrations inferred from hourglass's intervals",
}
CLASSES = vocab.ACTUAL_CLASSES


class ScenarioError(Exception):
    pass


RUN_SEP = ".run"   # a scenario's second and later runs in one boot: OUT/.../NAME.run2/


def run_dir_name(name: str, run: int) -> str:
    """The directory of a scenario's @run-th run in one boot (1: the scenario's own name)."""
    return name if run == 1 else f"{name}{RUN_SEP}{run}"


def parse_run_dir(dirname: str) -> "tuple[str, int]":
    """(scenario, run) from a run directory's name (run_dir_name)."""
    name, sep, k = dirname.rpartition(RUN_SEP)
    return (name, int(k)) if sep and name and k.isdigit() and int(k) > 1 else (dirname, 1)


def names() -> List[str]:
    return sorted(f[:-5] for f in os.listdir(SCENARIOS) if f.endswith(".toml"))


def extra_dirs() -> List[str]:
    """More directories of scenarios, named in HGT_LAB_SCENARIOS (':' between them): found by
    name after the lab's own, never listed by names() (scripts/lava-local's scenario that
    fails on purpose lives in one, out of the lab's matrix)."""
    return [d for d in os.environ.get("HGT_LAB_SCENARIOS", "").split(":") if d]


def load(name: str) -> Dict[str, Any]:
    """Scenario @name (its file's stem), checked: a ScenarioError names the file and the key."""
    path = os.path.join(SCENARIOS, name + ".toml")
    for d in extra_dirs():
        if not os.path.exists(path):
            path = os.path.join(d, name + ".toml")
    if tomllib is None:
        raise ScenarioError(f"{path}: the lab needs Python 3.11 or later (tomllib) to read it")
    try:
        with open(path, "rb") as f:
            sc = tomllib.load(f)
    except OSError as e:
        raise ScenarioError(f"{path}: {e.strerror}")
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{path}: {e}")
    sc["name"] = name
    _check(path, sc)
    return dict(sc)


def _check(path: str, sc: Dict[str, Any]) -> None:
    def bad(msg: str) -> ScenarioError:
        return ScenarioError(f"{path}: {msg}")

    for key, typ in (("title", str), ("hourglass", str), ("guests", list)):
        if not isinstance(sc.get(key), typ):
            raise bad(f"'{key}' is required ({typ.__name__})")
    if not sc["guests"] or any(g not in GUESTS for g in sc["guests"]):
        raise bad(f"guests must be some of {sorted(GUESTS)}")
    cr = sc.setdefault("check_runs", 1)
    if not isinstance(cr, int) or isinstance(cr, bool) or not 1 <= cr <= 5 or (cr > 1 and not sc.get("quick")):
        raise bad("check_runs is how many times make check's quick subset records it: 1 to 5, and only "
                  "with quick = true")
    nh = sc.setdefault("not_held", {})
    if not isinstance(nh, dict) or not all(g in sc["guests"] and isinstance(w, str) and w for g, w in nh.items()):
        raise bad("not_held is a table {GUEST = \"why\"} of the scenario's guests whose class figures are not "
                  "held to the targets")
    not_on = sc.setdefault("not_on", [])
    if not isinstance(not_on, list) or not all(
            isinstance(c, dict) and isinstance(c.get("why"), str) and set(c) - {"why"} and set(c) <= NOT_ON_KEYS
            and isinstance(c.get("rt", False), bool) and _release(c.get("below", "0.0")) for c in not_on):
        raise bad("not_on is a list of {rt = true|false, below = \"X.Y\", why = \"...\"}: at least one "
                  "of rt and below, and why")
    _check_allowances(bad, sc)
    for key in ("setup", "teardown"):
        if not isinstance(sc.get(key, []), list) or not all(isinstance(x, str) for x in sc.get(key, [])):
            raise bad(f"'{key}' is a list of shell commands")
    loads = sc.setdefault("load", [])
    if not isinstance(loads, list) or not all(isinstance(x, dict) and isinstance(x.get("command"), str)
                                               for x in loads):
        raise bad("each [[load]] needs a command")
    exps = sc.get("expect")
    if not isinstance(exps, list) or not exps:
        raise bad("at least one [[expect]]")
    for i, e in enumerate(exps):
        where = f"[[expect]] {i + 1}"
        kind, _, arg = str(e.get("expected", "")).partition(":")
        if kind not in EXPECTED:
            raise bad(f"{where}: expected = one of {sorted(EXPECTED)} (stamps:N)")
        if kind == "stamps" and (not arg.isdigit() or int(arg) >= len(loads)):
            raise bad(f"{where}: stamps:N needs the index of a [[load]]")
        fk, _, farg = str(e.get("found", "")).partition(":")
        if fk not in FOUND:
            raise bad(f"{where}: found = one of {sorted(FOUND)}")
        if fk in ("load", "touched") and (not farg.isdigit() or int(farg) >= len(loads)):
            raise bad(f"{where}: {fk}:N needs the index of a [[load]]")
        for what, rx in ((f"{fk}:REGEX", farg if fk in ("cause", "component") else None), ("named", e.get("named"))):
            try:
                if rx is not None:
                    re.compile(rx)
            except re.error as err:
                raise bad(f"{where}: {what}: {err}")
        if fk == "class" and farg not in CLASSES:
            raise bad(f"{where}: class:NAME, NAME one of {CLASSES}")
        if "class" in e and e["class"] not in CLASSES:
            raise bad(f"{where}: class must be one of {CLASSES}")
        mu = e.get("median_us")
        for b in (mu.values() if isinstance(mu, dict) else [mu] if mu is not None else []):
            if not (isinstance(b, list) and len(b) == 2 and all(isinstance(x, (int, float)) for x in b)):
                raise bad(f"{where}: median_us = [LOW, HIGH], or a table of them by guest")
        if not isinstance(e.get("what"), str):
            raise bad(f"{where}: 'what' says what is counted")
        hid = e.get("hidden", {})
        if not isinstance(hid, dict) or not all(isinstance(v, str) and v for v in hid.values()):
            raise bad(f"{where}: hidden = {{GUEST = \"why\"}}: the guests where more than "
                      "2% of these gaps may be hidden, and why")
        rt = e.get("on_rt", {})
        if not isinstance(rt, dict) or set(rt) - {"class", "named"} or rt.get("class", "switch_other") not in CLASSES:
            raise bad(f"{where}: on_rt = {{class = \"...\", named = \"...\"}}: what PREEMPT_RT's irq threads "
                      "make of the class and the name")
        if "named" in rt:
            try:
                re.compile(rt["named"])
            except re.error as err:
                raise bad(f"{where}: on_rt.named: {err}")


NOT_ON_KEYS = {"rt", "below", "why"}
MISREAD_KEYS = {"kernels", "guests", "actual", "inferred", "share", "why", "runs"}
NOT_HELD_KEYS = {"kernels", "guests", "classes", "why", "runs"}
DATED = re.compile(r"^\d{4}-\d{2}-\d{2}")


def _check_allowances(bad: Any, sc: Dict[str, Any]) -> None:
    """The scenario's [[known_misread]] and [[class_not_held]] entries: each says for which
    kernels and guests, why, and the dated runs behind it; a misread's share is at most
    vocab.ALLOWANCE_CEILING (a class that needs more is not held there, and says so)."""
    def common(where: str, e: Any, keys: Set[str]) -> None:
        if not isinstance(e, dict) or set(e) != keys:
            raise bad(f"{where}: needs exactly {', '.join(sorted(keys))}")
        if not (isinstance(e["kernels"], list) and e["kernels"] and all(isinstance(k, str) and k for k in e["kernels"])):
            raise bad(f"{where}: kernels is a list of the lab's kernel names (6.1, 6.12-rt, ...)")
        if not (isinstance(e["guests"], list) and e["guests"] and all(g in sc["guests"] for g in e["guests"])):
            raise bad(f"{where}: guests is a list of the scenario's guests ({', '.join(sc['guests'])})")
        if not (isinstance(e["why"], str) and e["why"].strip()):
            raise bad(f"{where}: why says what user space cannot separate there")
        if not (isinstance(e["runs"], list) and e["runs"] and all(isinstance(r, str) and DATED.match(r)
                                                                   for r in e["runs"])):
            raise bad(f"{where}: runs lists the runs behind it, each starting with its date (YYYY-MM-DD)")

    for i, m in enumerate(sc.setdefault("known_misread", [])):
        where = f"[[known_misread]] {i + 1}"
        common(where, m, MISREAD_KEYS)
        if m["actual"] not in vocab.ACTUAL_CLASSES or m["inferred"] not in vocab.INFERABLE_CLASSES \
                or m["actual"] == m["inferred"]:
            raise bad(f"{where}: actual is one of {', '.join(vocab.ACTUAL_CLASSES)}, inferred another of "
                      f"{', '.join(vocab.INFERABLE_CLASSES)}")
        share = m["share"]
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= vocab.ALLOWANCE_CEILING:
            raise bad(f"{where}: share {share!r} is not above 0 and at most {vocab.ALLOWANCE_CEILING} of a class's "
                      "gaps (vocab.ALLOWANCE_CEILING): a class that needs more is not held there ([[class_not_held]])")
    for i, e in enumerate(sc.setdefault("class_not_held", [])):
        where = f"[[class_not_held]] {i + 1}"
        common(where, e, NOT_HELD_KEYS)
        if not (isinstance(e["classes"], list) and e["classes"] and all(c in vocab.TARGET_CLASSES
                                                                         for c in e["classes"])):
            raise bad(f"{where}: classes is a list of some of {', '.join(vocab.TARGET_CLASSES)}")


def _release(text: Any) -> "tuple[int, ...]":
    """(6, 10) from "6.10" or "6.10.3-rt-amd64"; () when it does not start with X.Y."""
    m = re.match(r"(\d+)\.(\d+)", text) if isinstance(text, str) else None
    return (int(m.group(1)), int(m.group(2))) if m else ()


def not_run_reason(sc: Dict[str, Any], release: str, rt: bool) -> "str | None":
    """Why scenario @sc does not run on a kernel of @release (uname -r), PREEMPT_RT
    or not (@rt): the first of its not_on entries whose every condition holds."""
    for c in sc.get("not_on", []):
        if "rt" in c and c["rt"] != rt:
            continue
        if "below" in c and not _release(release) < _release(c["below"]):
            continue
        return str(c["why"])
    return None


def fill(text: str, guest: str, ncpus: Optional[int] = None) -> str:
    """@text with the placeholders of @guest (of @ncpus CPUs: guest_cpus) filled in."""
    cpus = guest_cpus(guest, ncpus)
    return (text.replace("{cpu}", str(cpus - 1)).replace("{cpumask}", f"{1 << (cpus - 1):x}")
            .replace("{other}", str(0))
            .replace("{lab}", os.path.join(TOP, "build", "lab")).replace("{top}", TOP))


def for_guest(sc: Dict[str, Any], guest: str, cpus: Optional[int] = None) -> Dict[str, Any]:
    """The commands of @sc as they run in @guest (of @cpus CPUs: guest_cpus)."""
    return {"hourglass": fill(sc["hourglass"], guest, cpus),
            "loads": [fill(ld["command"], guest, cpus) for ld in sc["load"]],
            "setup": [fill(c, guest, cpus) for c in sc.get("setup", [])],
            "teardown": [fill(c, guest, cpus) for c in sc.get("teardown", [])],
            "settle": str(sc.get("settle", "1s")),
            "labels": [fill(x, guest, cpus) for x in sc.get("labels", [])],
            "cpu": guest_cpus(guest, cpus) - 1,
            "record": list(GUESTS[guest]["record"])}

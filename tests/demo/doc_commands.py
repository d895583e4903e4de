#!/usr/bin/env python3
"""doc_commands - every command README.md and the docs show, run on the demo's outputs.

    python3 tests/demo/doc_commands.py [--no-guest] OUT/demo     (check_tutorial.py runs it)

The commands are read from the documents' code blocks (DOCS: fenced blocks marked sh, bash
or shell, every line a command; console blocks, the lines after a `$ ` prompt), so the test
follows the docs when they change. Each command must match exactly one RULE, which says
where it runs and what it must print:

- host: here, in a scratch copy of the tree for that document (out/doctest/DOC: the tree's
  own files linked, the demo's outputs copied to out/demo), in the document's order;
- guest: what needs the module or the demo's machine (recording runs), in one guest booted
  as make demo boots it (scripts/vm --icount -c 2 -k 6.1), in the same scratch directories,
  before the host's: there the runs are recorded that the host's commands then read;
- demo: what this test's input itself is the output of (make demo), checked on it;
- not run here: what changes the machine (make install, dkms) or contains this test (make
  check), with the reason and the test that covers it. Printed as TAP SKIPs, never passed.

A command no rule knows fails the test: a new command in the docs needs a rule here.
`kernelshark` runs under xvfb-run, and passes if it is still up and has said nothing
wrong 20 s later; `sudo` runs the command as is when already root. Prints TAP; exits 1 on
any failure. tests/unit/test_tutorial_doc.py checks, without a demo, that every command
has its rule.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
DOCS = ("README.md", "docs/install.md", "docs/tutorial.md", "docs/profile.md", "docs/results.md")
LANGS = ("sh", "bash", "shell")
TIMEOUT = 900           # seconds a command may take (the guest's: scripts/vm's own)


@dataclass
class Cmd:
    """A command as a document shows it: where, and its text (continuation lines joined)."""
    doc: str
    line: int
    text: str

    def bare(self) -> str:
        """The text without a trailing comment (a # after a blank, outside quotes)."""
        out, quote = [], None
        for i, ch in enumerate(self.text):
            if quote:
                quote = None if ch == quote else quote
            elif ch in "'\"":
                quote = ch
            elif ch == "#" and (i == 0 or self.text[i - 1] in " \t"):
                break
            out.append(ch)
        return "".join(out).strip()


def parse(doc: str, text: Optional[str] = None) -> List[Cmd]:
    """Every command in @doc's code blocks (see the module's text)."""
    if text is None:
        with open(os.path.join(TOP, doc)) as f:
            text = f.read()
    out: List[Cmd] = []
    lang = None
    pending: Optional[Cmd] = None
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            lang = None if lang is not None else line[3:].strip() or ""
            continue
        if lang is None:
            continue
        if lang == "console":
            if not line.startswith("$ "):
                continue
            line = line[2:]
        elif lang not in LANGS:
            continue
        if pending:
            pending.text += " " + line.strip()
        elif line.strip() and not line.lstrip().startswith("#"):
            pending = Cmd(doc, n, line.strip())
        else:
            continue
        if pending.text.endswith("\\"):
            pending.text = pending.text[:-1].rstrip()
            continue
        out.append(pending)
        pending = None
    return out


@dataclass
class Result:
    rc: int
    out: str
    err: str
    seconds: float


@dataclass
class View:
    """A document's scratch directory, and what the checks need to know of the demo."""
    path: str
    demo: str

    def file(self, *p: str) -> str:
        return os.path.join(self.path, *p)


Check = Callable[[Result, View], Optional[str]]


@dataclass
class Rule:
    pattern: str                    # a regular expression the command's bare text matches whole
    where: str                      # host, guest, demo, no
    check: Optional[Check] = None
    why: str = ""                   # no: why not here, and where it is covered
    module: Optional[bool] = None   # guest: the module loaded (True) or not (False) before it
    docs: tuple = ()                # the documents it applies to (empty: any)
    guest_made: bool = False        # host: boots a guest itself, or reads what the guest recorded (not with
                                    # --no-guest)

    def matches(self, c: Cmd) -> bool:
        return (not self.docs or c.doc in self.docs) and re.fullmatch(self.pattern, c.bare()) is not None


# --- checks -------------------------------------------------------------------------------------

def ok(r: Result, v: View) -> Optional[str]:
    return None if r.rc == 0 else f"exit {r.rc}: {(r.err or r.out).strip()[-300:]}"


def all_of(*checks: Check) -> Check:
    def f(r: Result, v: View) -> Optional[str]:
        for c in checks:
            bad = c(r, v)
            if bad:
                return bad
        return None
    return f


def prints(pattern: str, where: str = "out", times: Optional[int] = None) -> Check:
    """A check that the output (or stderr) holds @pattern (a regular expression, per line)."""
    def f(r: Result, v: View) -> Optional[str]:
        text = r.out if where == "out" else r.err if where == "err" else r.out + r.err
        n = len(re.findall(pattern, text, re.M))
        if times is None and n or times == n:
            return None
        return f"printed {n} lines matching {pattern!r}" + (f", not {times}" if times is not None else "") + \
            f": {text.strip()[-300:]!r}"
    return f


def exists(*paths: str, test: Callable[[str], bool] = os.path.isfile) -> Check:
    def f(r: Result, v: View) -> Optional[str]:
        for p in paths:
            full = glob.glob(v.file(p))
            if not full or not all(test(x) for x in full):
                return f"{p} was not written"
        return None
    return f


def run_dir(d: str, ground_truth: Optional[str] = "kernel.hgt") -> Check:
    """A run directory record finished: its files, no INCOMPLETE, record.json complete."""
    def f(r: Result, v: View) -> Optional[str]:
        p = v.file(d)
        if os.path.exists(os.path.join(p, "INCOMPLETE")):
            return f"{d}/INCOMPLETE: {open(os.path.join(p, 'INCOMPLETE')).read().strip()}"
        for name in ("hourglass.hgl", "hourglass.json", "record.json") + ((ground_truth,) if ground_truth else ()):
            if not os.path.isfile(os.path.join(p, name)):
                return f"{d}/{name} missing"
        st = json.load(open(os.path.join(p, "record.json"))).get("status")
        return None if st == "complete" else f"{d}/record.json: status {st}"
    return f


def report_json(path: str, **want: Callable[[dict], bool]) -> Check:
    def f(r: Result, v: View) -> Optional[str]:
        try:
            rep = json.load(open(v.file(path)))
        except (OSError, ValueError) as e:
            return f"{path}: {e}"
        if rep.get("report_version") != 2:
            return f"{path}: report_version {rep.get('report_version')}"
        for what, test in want.items():
            if not test(rep):
                return f"{path}: {what}"
        return None
    return f


def demo_disagreements(v: View) -> int:
    return json.load(open(os.path.join(v.demo, "three", "report.json")))["disagreements"]["count"]


def agree0_count(r: Result, v: View) -> Optional[str]:
    """trace-cmd's filter printed every disagreement of the run (its report's count), each once."""
    n = len(re.findall(r" gap: .*\bagree=0\b", r.out))
    want = demo_disagreements(v)
    return None if n == want else f"printed {n} gaps with agree=0, the report counts {want}"


def hourglass_summaries(n: int) -> Check:
    return prints(r"^summary: thread \d+ ", times=n)


def periodic_json(r: Result, v: View) -> Optional[str]:
    try:
        js = json.load(open(v.file("run.json")))
    except (OSError, ValueError) as e:
        return f"run.json: {e}"
    with open(v.file("run.hgl"), "rb") as f:
        magic = f.read(8)
    if magic != b"HGLASS\n\0":
        return f"run.hgl: magic {magic!r}"
    return None if len(js.get("threads") or []) == 2 else f"run.json: {len(js.get('threads') or [])} threads"


def gui_up(r: Result, v: View) -> Optional[str]:
    return None if r.rc == 0 else f"kernelshark: {(r.err or r.out).strip()[-300:]}"


def dump_lines(r: Result, v: View) -> Optional[str]:
    lines = r.out.splitlines()
    good = [x for x in lines if re.match(r"\d+ \d+ \w+", x)]
    return None if len(lines) == 10 and len(good) >= 9 else f"{len(lines)} lines, {len(good)} records: {r.out[:200]!r}"


def hgtrace_accounts(r: Result, v: View) -> Optional[str]:
    """hgtrace record's closing lines add up: per CPU, produced = read + refused + overwritten, and
    the summary's events and losses are the table's. (How much an emulated guest loses to a
    hackbench is the emulator's: the doc's command promises no figure, only that every event is
    accounted for, docs/hgtrace.md.)"""
    text = r.out + r.err
    rows = [tuple(int(x) for x in m.groups()) for m in
            re.finditer(r"^\s+\d+\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$", text, re.M)]
    m = re.search(r"^hgtrace: (\d+) events, (\d+) lost", text, re.M)
    if not rows or not m:
        return f"no per-CPU table or summary line: {text.strip()[-300:]!r}"
    if any(p != rd + rf + ov for p, rd, rf, ov in rows):
        return f"a CPU's produced is not read + refused + overwritten: {rows}"
    events, lost = int(m.group(1)), int(m.group(2))
    if (events, lost) != (sum(x[1] for x in rows), sum(x[2] + x[3] for x in rows)):
        return f"the summary ({events} events, {lost} lost) is not the table's {rows}"
    return None


def demo_made(r: Result, v: View) -> Optional[str]:
    for f in ("summary.txt", "where.txt", "three/report.json", "lat/report.json", "report.html", "tutorial.md"):
        if not os.path.isfile(os.path.join(v.demo, f)):
            return f"{v.demo}/{f} missing"
    return None


LEARN = all_of(ok, prints(r"^hourglass learn: machine\.json: "), prints(r"^  held out \(each run by "),
               exists("machine.json"))

RULES: List[Rule] = [
    # README: the two commands
    Rule(r"make check", "no", why="the suite that runs this test (make check: after make demo)"),
    Rule(r"make demo", "demo", demo_made),
    Rule(r"make check-full", "no", why="the whole guest suite at full size on each kernel: hours; "
         "scripts/check-kernels runs it"),
    # README: using hourglass, on this machine
    Rule(r"make userspace", "host", all_of(ok, lambda r, v: None if os.access(v.file("build", "hourglass"), os.X_OK)
                                           else "build/hourglass missing")),
    Rule(r"sudo build/hourglass -n 3 -d 5s -e 2000000 -t 0 -p LOW -t 1 -p NORMAL -t 2 -p HIGH", "host",
         all_of(ok, hourglass_summaries(3), prints(r"^summary: run duration_ms 5\d\d\d\.\d+ .* complete yes"))),
    Rule(r"sudo build/hourglass -n 2 -e 2000000 -t 0 -p RTMED -w PERIODIC 3ms 8ms -i HR -t 1 -p RTLOW -w PERIODIC 17ms 33ms "
         r"-i HR --json run\.json --trace run\.hgl", "host", all_of(ok, hourglass_summaries(2), periodic_json)),
    # README: recording and judging a run, with the module
    Rule(r"build/hourglass record -o run -- -n 3 -d 5s -e 2000000 -t 0 -p LOW -t 1 -p NORMAL -t 2 -p HIGH", "guest",
         all_of(ok, run_dir("run")), module=True),
    Rule(r"build/hourglass report run", "host", all_of(ok, prints(r"^gaps: \d+ "), prints(r"^inferred \(columns")), guest_made=True),
    Rule(r"build/hourglass report run --json run/report\.json", "host",
         all_of(ok, report_json("run/report.json", inferences=lambda r: r["inference"] is not None)), guest_made=True),
    Rule(r"build/hourglass export run --kernelshark run/merged\.dat && kernelshark run/merged\.dat", "host",
         all_of(ok, exists("run/merged.dat"), prints(r"run/merged\.dat: trace\.dat written", "err")), guest_made=True),
    # README: install
    Rule(r"make", "host", all_of(ok, prints(r"^make: built .*man pages in .*/build/man"))),
    Rule(r"make test", "no", why="make check runs it before the demo"),
    Rule(r"sudo make install", "no", why="installs into the machine; tests/unit/test_install.py installs into a "
         "private PREFIX and runs the installed hourglass"),
    Rule(r"sudo make uninstall", "no", why="the same: tests/unit/test_install.py uninstalls its PREFIX"),
    Rule(r"sudo dkms .*", "no", why="installs into the machine's DKMS tree; the module's DKMS build is checked "
         "in the Debian 13 root by make check (docs/testing.md)"),
    Rule(r"sudo modprobe hgtrace", "no", why="needs the module installed by DKMS (above)"),
    # README: the recorder, on a machine that loads modules
    Rule(r"make -C kmod", "guest", ok),
    Rule(r"insmod kmod/build/\$\(uname -r\)/hgtrace\.ko", "guest", ok, module=False),
    Rule(r"build/hgtrace record -o run\.hgt -- hackbench -l 100", "guest",
         all_of(ok, hgtrace_accounts, exists("run.hgt"))),
    Rule(r"build/hgtrace dump run\.hgt \| head", "guest", all_of(ok, dump_lines)),
    Rule(r"rmmod hgtrace", "guest", ok),
    # a guest of its own from the host, at the view's long path: in a fresh clone of 2026-12-07
    # that path made the kernel's command line 2063 bytes, the kernel cut it, and the guest sat
    # idle (scripts/vm now passes its command in a file); this command is what catches that
    Rule(r"scripts/vm -k 6\.1 -- bash -c 'insmod \$HGT_KO && hgtrace record -o \$HGT_OUT/run\.hgt -- hackbench'",
         "host", all_of(ok, hgtrace_accounts, exists("out/vm/6.1.0-*/run.hgt"))),
    Rule(r"ls out/vm/6\.1\.0-\*/run\.hgt", "host", ok),
    # the tutorial, on the demo's outputs
    Rule(r"kernelshark out/demo/three/merged\.dat", "host", gui_up),
    Rule(r"kernelshark -s out/demo/three/kernelshark-session\.json", "host", gui_up),
    Rule(r"trace-cmd report -F 'hourglass/gap: agree==0' out/demo/three/merged\.dat", "host", all_of(ok, agree0_count)),
    Rule(r"hourglass record --dir run -- -n 3 .*", "guest", all_of(ok, run_dir("run")), module=True,
         docs=("docs/tutorial.md",)),
    Rule(r"hourglass report run", "host", all_of(ok, prints(r"^gaps: \d+ "), prints(r"^inferred \(columns")), guest_made=True),
    Rule(r"hourglass export run --kernelshark run/merged\.dat --perfetto run/trace\.perfetto-trace "
         r"--html run/report\.html", "host",
         all_of(ok, exists("run/merged.dat", "run/trace.perfetto-trace", "run/report.html"),
                prints(r"run/report\.html: 1 run\(s\), \d+ charts", "err")), guest_made=True),
    Rule(r"hourglass record --dir run-ftrace --ftrace-only -- -n 3 .*", "guest",
         all_of(ok, run_dir("run-ftrace", "ftrace.hgt")), module=False),
    Rule(r"hourglass report run-ftrace", "host", all_of(ok, prints(r"^kernel: \d+ events from .*ftrace\.hgt"),
                                                        prints(r"^inferred \(columns")), guest_made=True),
    Rule(r"hourglass learn out/demo/three out/demo/lat -o machine\.json", "host", LEARN),
    Rule(r"hourglass learn out/demo/three out/demo/lat -o machine\.json --model tree", "host",
         all_of(LEARN, prints(r"^  model: (taken|not taken): "))),
    Rule(r"hourglass record --dir alone --no-kernel -- -n 3 .*", "guest", all_of(ok, run_dir("alone", None)),
         module=False),
    Rule(r"hourglass report alone --profile machine\.json", "host",
         all_of(ok, prints(r"^no kernel recording: \d+ involuntary gaps inferred from hourglass alone"),
                prints(r"^expected precision and recall: ")), guest_made=True),
    Rule(r"hourglass report alone --profile machine\.json --explain [\d.]+", "host",
         all_of(ok, prints(r"^explained: [1-9]\d* of \d+ involuntary gaps"), prints(r"^  t=\d+\.\d+ s CPU \d+ ")),
         guest_made=True),
    # docs/profile.md's example
    Rule(r"hourglass record --dir r[123] -- .*", "guest", lambda r, v: ok(r, v), module=True,
         docs=("docs/profile.md",)),
    Rule(r"hourglass learn r1 r2 -o machine\.json", "host", LEARN, guest_made=True),
    Rule(r"hourglass report r3 --profile machine\.json", "host",
         all_of(ok, prints(r"^limits from the profile .*machine\.json"), prints(r"^inferred \(columns")),
         guest_made=True),
    # docs/results.md's examples
    Rule(r"hourglass results out/demo --histograms histograms\.html", "host",
         all_of(ok, exists("histograms.html", "sessions/lat.json"),
                prints(r"histograms\.html: 2 runs, 1 KernelShark session\(s\) at the worst wake-up", "err"))),
    Rule(r"hourglass results out/demo --query \"SELECT .*\"", "host",
         all_of(ok, prints(r"^kernel +cls +recall$"), prints(r"^6\.1\.\S+ +switch_hg +1(\.0+)?$"))),
]


def rule_of(c: Cmd) -> List[Rule]:
    return [r for r in RULES if r.matches(c)]


def commands() -> List[Cmd]:
    return [c for doc in DOCS for c in parse(doc)]


# --- running ------------------------------------------------------------------------------------

SHIMS = {
    # already root: sudo is the command itself; else sudo that never asks
    "sudo": '#!/bin/sh\nif [ "$(id -u)" -eq 0 ]; then exec "$@"; fi\nexec /usr/bin/sudo -n "$@"\n',
    # the GUI under a virtual display: up and quiet 20 s later is a pass (the screenshot test,
    # tests/demo/check_screens.py, looks at what it draws)
    # (a runtime directory and KernelShark's cache of its own: what the runner's environment or
    # an earlier run left there, e.g. an XDG_RUNTIME_DIR Qt cannot create, is not the doc's)
    "kernelshark": r'''#!/bin/sh
log=$(mktemp)
own=$(mktemp -d)
XDG_RUNTIME_DIR=$own KS_USER_CACHE_DIR=$own/ks timeout -s TERM 20 xvfb-run -a /usr/bin/kernelshark "$@" > "$log" 2>&1
rc=$?
rm -rf "$own"
if [ $rc -eq 124 ] && ! grep -Eiq 'error|fail|cannot|segmentation|abort' "$log"; then rm -f "$log"; exit 0; fi
cat "$log" >&2; rm -f "$log"
[ $rc -eq 124 ] && exit 1
exit ${rc:-1}
''',
}


def view_of(scratch: str, doc: str, demo: str) -> View:
    """@doc's scratch directory: the tree's own files linked (not out/), the demo's outputs
    copied to out/demo; made once."""
    path = os.path.join(scratch, re.sub(r"\W", "-", doc))
    if not os.path.isdir(path):
        os.makedirs(os.path.join(path, "out"))
        for name in os.listdir(TOP):
            if name not in ("out",):
                os.symlink(os.path.join(TOP, name), os.path.join(path, name))
        shutil.copytree(demo, os.path.join(path, "out", "demo"), symlinks=True,
                        ignore=shutil.ignore_patterns("plain"))
    return View(path, demo)


def env_for(scratch: str) -> Dict[str, str]:
    shims = os.path.join(scratch, "bin")
    os.makedirs(shims, exist_ok=True)
    for name, text in SHIMS.items():
        p = os.path.join(shims, name)
        with open(p, "w") as f:
            f.write(text)
        os.chmod(p, 0o755)
    return dict(os.environ, PATH=f"{shims}:{TOP}/build:{os.environ.get('PATH', '')}", HG_PROGRESS="0")


def run(text: str, cwd: str, env: Dict[str, str], timeout: int = TIMEOUT) -> Result:
    t0 = time.monotonic()
    try:
        p = subprocess.run(["bash", "-c", text], cwd=cwd, env=env, capture_output=True, text=True,
                           timeout=timeout)
        return Result(p.returncode, p.stdout, p.stderr, time.monotonic() - t0)
    except subprocess.TimeoutExpired as e:
        return Result(124, str(e.stdout or ""), f"timed out after {timeout} s", time.monotonic() - t0)


def guest_main(plan_path: str) -> int:
    """Inside the guest: each planned command in its directory, the module loaded or not as
    its rule says; the results (and dmesg) beside the plan."""
    with open(plan_path) as f:
        plan = json.load(f)
    env = env_for(os.path.dirname(plan_path))
    loaded = False
    results = {}
    for step in plan:
        want = step["module"]
        if want is True and not loaded:
            subprocess.run(["insmod", os.environ["HGT_KO"]], check=True)
            loaded = True
        elif want is False and loaded:
            subprocess.run(["rmmod", "hgtrace"], check=True)
            loaded = False
        r = run(step["text"], step["cwd"], env)
        if re.match(r"insmod\b", step["text"]) and r.rc == 0:
            loaded = True
        if re.match(r"rmmod\b", step["text"]) and r.rc == 0:
            loaded = False
        results[step["id"]] = r.__dict__
    if loaded:
        subprocess.run(["rmmod", "hgtrace"])
    dmesg = subprocess.run(["dmesg"], capture_output=True, text=True).stdout
    with open(plan_path + ".results", "w") as f:
        json.dump({"results": results, "dmesg": dmesg}, f)
    return 0


def results(demo: str, guest: bool = True) -> List[tuple]:
    """Every command run or accounted for: (name, passed (None: not run here), note)."""
    demo = os.path.abspath(demo)
    scratch = os.path.join(TOP, "out", "doctest")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    env = env_for(scratch)
    cmds = commands()
    rows: List[tuple] = []
    planned, seen = [], {}
    for i, c in enumerate(cmds):
        rules = rule_of(c)
        if len(rules) != 1:
            rows.append((c, False, f"{len(rules)} rules match it: the doc-test needs exactly one"))
            continue
        r = rules[0]
        key = (c.doc, c.bare())
        if key in seen:         # the same command again in the same document: run once
            rows.append((c, None, f"the same as {seen[key]}, run there"))
            continue
        seen[key] = f"{c.doc}:{c.line}"
        v = view_of(scratch, c.doc, demo)
        if r.where == "guest":
            planned.append({"id": i, "cwd": v.path, "text": c.text, "module": r.module})
    guest_out: Dict[str, dict] = {}
    dmesg = ""
    if planned and guest:
        plan = os.path.join(scratch, "guest.json")
        with open(plan, "w") as f:
            json.dump(planned, f)
        # the demo's guest (scripts/demo): the profile the tutorial learns from the demo's runs
        # must be of the machine its no-kernel run is recorded on
        g = run(f"scripts/vm --icount -c 2 -k 6.1 -o {scratch} -- tests/demo/doc_commands.py --guest {plan}",
                TOP, env, timeout=4 * TIMEOUT)
        try:
            with open(plan + ".results") as f:
                got = json.load(f)
            guest_out, dmesg = got["results"], got["dmesg"]
        except (OSError, ValueError):
            rows.append((Cmd("guest", 0, "scripts/vm ... doc_commands.py --guest"), False,
                        f"the guest did not run its commands (exit {g.rc}): {g.err.strip()[-500:]}"))
    bad_dmesg = [x for x in dmesg.splitlines() if re.search(r"WARNING:|BUG:|Oops|soft lockup|hung task", x)]
    if planned and guest and guest_out:
        rows.append((Cmd("guest", 0, "dmesg after the guest's commands"), not bad_dmesg,
                    "; ".join(bad_dmesg[:3]) or ""))
    for i, c in enumerate(cmds):
        rules = rule_of(c)
        if len(rules) != 1 or seen.get((c.doc, c.bare())) != f"{c.doc}:{c.line}":
            continue
        r = rules[0]
        v = view_of(scratch, c.doc, demo)
        if r.where == "no":
            rows.append((c, None, f"not run here: {r.why}"))
            continue
        if (r.where == "guest" or r.guest_made) and not guest:
            rows.append((c, None, "not run here: --no-guest"))
            continue
        if r.where == "guest":
            if str(i) not in guest_out:
                rows.append((c, False, "the guest did not run it"))
                continue
            res = Result(**guest_out[str(i)])
        elif r.where == "demo":
            res = Result(0, "", "", 0.0)
        else:
            res = run(c.text, v.path, env)
        bad = r.check(res, v) if r.check else ok(res, v)
        rows.append((c, bad is None, bad or f"{res.seconds:.1f} s"))
    out = []
    for c, good, note in rows:
        out.append((f"{c.doc}:{c.line}: {c.text}", good, note))
    n_run = sum(1 for _, g, _ in rows if g is not None)
    n_bad = sum(1 for _, g, _ in rows if g is False)
    # the failures again in the last line: CI shows a run's tail, and the rows above may be cut
    failed = "; ".join(f"{c.doc}:{c.line}: {note[:200]}" for c, g, note in rows if g is False)
    out.append((f"{len(cmds)} commands in {', '.join(DOCS)}: {n_run - n_bad} passed, {n_bad} failed, "
                f"{sum(1 for _, g, _ in rows if g is None)} not run here (each says why)", n_bad == 0, failed))
    return out


def tap(results: List[tuple]) -> int:
    """Print @results (name, True/False/None for not run, note) as TAP: the exit status."""
    print(f"1..{len(results)}")
    for n, (name, good, note) in enumerate(results, 1):
        if good is None:
            print(f"ok {n} - {name} # SKIP {note}")
        else:
            print(f"{'ok' if good else 'not ok'} {n} - {name}" + (f" # {note}" if note else ""))
    return 1 if any(g is False for _, g, _ in results) else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--guest":
        sys.exit(guest_main(args[1]))
    no_guest = "--no-guest" in args
    args = [a for a in args if a != "--no-guest"]
    if len(args) != 1:
        sys.exit("usage: doc_commands.py [--no-guest] OUT/demo")
    sys.exit(tap(results(args[0], not no_guest)))

#!/usr/bin/env python3
"""mutants - mutation testing of the inference and the truth (issue 53): does the lab's
verdict fail when the merger is wrong?

    tests/mutants/mutants.py LAB [--only NAME ...] [--out DIR] [--no-host] [--keep]

Each tests/mutants/NN-NAME.patch is one deliberate, realistic fault in the merger's
source (a limit off, a rule that names the wrong class, events dropped, stamps shifted,
a score computed from the wrong column). For each, and first for the tree as it is (the
control, no patch):

 1. a copy of the tree's userspace/, tools/, tests/ and kmod/uapi/ in a temporary
    directory, the patch applied there (`patch -p1`), hgmerge built there (the objects
    of build/ copied first, so only the patched file is compiled again); never a
    product option, and the tree itself is not touched;
 2. the lab's recorded runs in LAB (LAB/<kernel>/<guest>/<scenario>/, as scripts/lab
    leaves them) judged again on the host with that hgmerge, in a directory of links to
    their recordings: python3 -m hgtools.lab.analyse --no-exports, then python3 -m hgtools.lab.check for
    each guest LAB holds. No guest is booted: what the lab recorded does not depend on
    the merger;
 3. the host tests that concern the merger (HOST_TESTS) run in the copy.

A mutant is caught when the copy cannot build or analyse the runs, when a lab test
that the control passed (or excused as a known shortfall) fails, or when a host test
fails. A test that goes from passed to a known shortfall (TAP's TODO) does NOT catch
it: an allowance that hides a fault is the lab's blind spot. The control itself must
be caught by nothing (else the comparison means nothing: exit 2). Prints a table, a
line per mutant (caught or not, by what), and writes it with the details to
OUT/mutants.md and OUT/mutants.json (default out/mutants). Exit 0 when every mutant
was caught, 1 when one was not, 2 when the control failed or LAB holds no run.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "../.."))
# the host tests that judge the merger's figures on runs made by hand (each builds its run
# and reads hgmerge's report and gap stream): the merge itself, the gap's composition, the
# scheduler's own timer, the switch lags, learn's lanes (the inference's limits), the lab's
# tick count and the lab's host side. The rest of make test's pytest part reads no merge
# (the recorder, the exporters from synthetic hooks, the CLI, the report's formatting of
# hand-written JSON): it cannot see a fault of the merger's and would double each mutant's time
HOST_TESTS = ["tests/unit/test_merge.py", "tests/unit/test_gap_composition.py",
              "tests/unit/test_merge_hrtick.py", "tests/unit/test_switch_lags.py",
              "tests/unit/test_learn.py", "tests/unit/test_lab_ticks.py", "tests/unit/test_lab.py"]
# what the copy needs: the sources, the Python package and the tests (TOP-relative paths)
COPY = ["userspace", "tools", "tests", "bench", "kmod/uapi", "docs/lab.md", "pytest.ini"]
# the analysis' own outputs in a run directory: not linked, written anew by each mutant
OUTPUTS = {"report.json", "report.txt", "gaps.jsonl", "merged.dat", "run.perfetto-trace", "report.html"}
TAP = re.compile(r"^(not ok|ok) \d+ - lab: (.*?)(?: # TODO (.*))?$")


def patches(only: List[str]) -> List[Tuple[str, str]]:
    """(name, path) of every mutant, in order; @only: those whose name contains one of them."""
    out = []
    for p in sorted(glob.glob(os.path.join(HERE, "*.patch"))):
        name = os.path.basename(p)[:-6]
        if not only or any(o in name for o in only):
            out.append((name, p))
    return out


def describe(path: str) -> str:
    """What the mutant does: the comment its patch adds after 'MUTANT:'."""
    with open(path) as f:
        for line in f:
            m = re.search(r"MUTANT: ([^*]*)", line)
            if line.startswith("+") and m:
                return m.group(1).strip()
    return ""


def run(cmd: List[str], cwd: str, log: str, env: Optional[Dict[str, str]] = None) -> int:
    """@cmd in @cwd, its output appended to @log; its exit status."""
    with open(log, "a") as f:
        f.write(f"$ {' '.join(cmd)}\n")
        f.flush()
        return subprocess.run(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT, env=env).returncode


def copy_tree(work: str) -> None:
    """The tree's sources, tests and programs in @work (times kept, for make)."""
    for rel in COPY:
        src, dst = os.path.join(TOP, rel), os.path.join(work, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.isdir(src):
            shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
        else:
            shutil.copy2(src, dst)
    # the tree's virtual environment (hourglass runs hgtools with its Python), as it is
    if os.path.isdir(os.path.join(TOP, ".venv")):
        os.symlink(os.path.join(TOP, ".venv"), os.path.join(work, ".venv"))
    # the other programs are not mutated: copies (not links: hgtools looks for hgmerge beside
    # where hourglass really is), so that hourglass runs the copy's tools/ and finds the copy's
    # hgmerge, and the tests' readers (hgtrace dump) are there
    b = os.path.join(TOP, "build")
    os.makedirs(os.path.join(work, "build"), exist_ok=True)
    for f in os.listdir(b):
        if f != "hgmerge" and os.path.isfile(os.path.join(b, f)) and os.access(os.path.join(b, f), os.X_OK):
            shutil.copy2(os.path.join(b, f), os.path.join(work, "build", f))
    for rel in ("tests", "lib", "export", "obj/lib", "obj/export"):
        if os.path.isdir(os.path.join(b, rel)):
            shutil.copytree(os.path.join(b, rel), os.path.join(work, "build", rel), symlinks=True)


def build(work: str, log: str) -> bool:
    """hgmerge in @work, without link-time optimisation: each mutant then compiles only the
    file its patch touched and links (seconds), where LTO compiles the whole merger again at
    every link; the rules are the same C."""
    env = dict(os.environ, WERROR="0")
    return run(["make", "-s", "-j2", "-C", "userspace/merger", "OUT=" + os.path.join(work, "build"), "LTO="],
               work, log, env) == 0


def make_base(base: str, log: str) -> bool:
    """The unmutated tree, built once: every mutant starts from a copy of it."""
    copy_tree(base)
    return build(base, log)


def make_tree(work: str, base: str, patch: Optional[str], log: str) -> Optional[str]:
    """A copy of @base in @work with @patch applied and hgmerge built; why not, or None."""
    shutil.copytree(base, work, symlinks=True, dirs_exist_ok=True)
    if patch and run(["patch", "-p1", "--batch", "--forward", "-i", patch], work, log):
        return "the patch does not apply (the source moved: rewrite it against the tree)"
    if not build(work, log):
        return "hgmerge does not build"
    return None


def shadow_lab(lab: str, dst: str) -> int:
    """@dst: @lab's run directories as links to their recordings (the outputs left out); how many."""
    n = 0
    for lr in glob.glob(os.path.join(lab, "*", "*", "*", "lab-run.json")):
        d = os.path.dirname(lr)
        to = os.path.join(dst, os.path.relpath(d, lab))
        os.makedirs(to)
        for f in os.listdir(d):
            if f not in OUTPUTS and not f.startswith("."):
                os.symlink(os.path.join(d, f), os.path.join(to, f))
        n += 1
    return n


def guests(lab: str) -> List[str]:
    return sorted({os.path.basename(os.path.dirname(os.path.dirname(p)))
                   for p in glob.glob(os.path.join(lab, "*", "*", "*", "lab-run.json"))})


def clean_env() -> Dict[str, str]:
    """The environment without what would send the copy's programs to another tree."""
    env = {k: v for k, v in os.environ.items() if k not in ("HG_BIN", "HG_TOOLS", "HGMERGE", "PYTHONPATH")}
    env["HG_PROGRESS"] = "0"
    return env


def judge_lab(work: str, lab: str, log: str) -> Dict[str, Any]:
    """The lab's tests on the runs of @lab, judged with the copy in @work: {test: (verdict, todo)}."""
    dst = os.path.join(work, "lab")
    shadow_lab(lab, dst)
    py = sys.executable
    env = dict(clean_env(), PYTHONPATH=os.path.join(work, "tools"))   # the copy's lab: hgtools.lab
    out: Dict[str, Any] = {"tests": {}, "error": None}
    if run([py, "-m", "hgtools.lab.analyse", dst, "--no-exports", "--jobs", "2"], work, log, env):
        out["error"] = "hgtools.lab.analyse: a run could not be analysed"
    for g in guests(lab):
        p = subprocess.run([py, "-m", "hgtools.lab.check", dst, "--guest", g],
                           cwd=work, capture_output=True, text=True, env=env)
        with open(log, "a") as f:
            f.write(p.stdout + p.stderr)
        for line in p.stdout.splitlines():
            m = TAP.match(line)
            if m:
                out["tests"][test_key(m.group(2))] = {"ok": m.group(1) == "ok", "todo": m.group(3) or "",
                                                      "name": m.group(2)}
    return out


def test_key(name: str) -> str:
    """A lab test's name without its figures: its run and which test ('cpu-yield on 6.1 icount:
    classes'), so that the control's and a mutant's can be compared."""
    where = name.split(":", 1)[0].split(", in most of")[0]
    kind = ("counts" if "expected counts" in name else "classes" if "every class" in name
            else "recorded" if "recorded" in name else name)
    return f"{where}: {kind}"


def host_tests(work: str, log: str) -> Dict[str, Any]:
    """HOST_TESTS in the copy: the tests that failed (pytest's node ids)."""
    env = clean_env()
    xdist = subprocess.run([sys.executable, "-c", "import xdist"], capture_output=True).returncode == 0
    rep = os.path.join(work, "host-report.txt")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf"] + (["-n", "2"] if xdist else []) \
        + HOST_TESTS
    p = subprocess.run(cmd, cwd=work, capture_output=True, text=True, env=env)
    with open(log, "a") as f:
        f.write(p.stdout[-20000:] + p.stderr[-5000:])
    with open(rep, "w") as f:
        f.write(p.stdout)
    failed = sorted({m.group(1) for m in re.finditer(r"^(?:FAILED|ERROR) (\S+)", p.stdout, re.M)})
    last = (p.stdout.strip().splitlines() or [""])[-1]
    return {"rc": p.returncode, "failed": failed, "summary": last}


def verdict(control: Dict[str, Any], m: Dict[str, Any]) -> List[str]:
    """What caught mutant @m, against the control: a list of reasons (empty: not caught)."""
    why = []
    if m.get("build_error"):
        return [m["build_error"]]
    lab = m["lab"]
    if lab["error"] and not control["lab"]["error"]:
        why.append(lab["error"])
    for key, t in sorted(lab["tests"].items()):
        c = control["lab"]["tests"].get(key)
        was_ok = c is None or c["ok"] or c["todo"]
        if not t["ok"] and not t["todo"] and was_ok:
            why.append(f"lab: {key}")
    gone = sorted(set(control["lab"]["tests"]) - set(lab["tests"]))
    why += [f"lab: {k} not reported" for k in gone]
    if "host" in m and m["host"]["rc"] != 0:
        why += [f"host: {t}" for t in m["host"]["failed"]] or [f"host: pytest exit {m['host']['rc']}"]
    return why


def one(name: str, patch: Optional[str], base: str, lab: str, out: str, host: bool, keep: bool) -> Dict[str, Any]:
    t0 = time.monotonic()
    logdir = os.path.join(out, name)
    os.makedirs(logdir, exist_ok=True)
    log = os.path.join(logdir, "log.txt")
    open(log, "w").close()
    work = tempfile.mkdtemp(prefix=f"hg-mutant-{name}-")
    res: Dict[str, Any] = {"name": name, "what": describe(patch) if patch else "the tree as it is", "work": work}
    try:
        res["build_error"] = make_tree(work, base, patch, log)
        if not res["build_error"]:
            res["lab"] = judge_lab(work, lab, log)
            if host:
                res["host"] = host_tests(work, log)
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    res["seconds"] = time.monotonic() - t0
    return res


def table(results: List[Dict[str, Any]]) -> str:
    """The mutants as a markdown table: caught or not, by which lab tests and which host tests."""
    def short(why: List[str], prefix: str) -> str:
        got = [w[len(prefix):] for w in why if w.startswith(prefix)]
        return "; ".join(got[:3]) + (f"; and {len(got) - 3} more" if len(got) > 3 else "") if got else "-"

    lines = ["| mutant | what | caught | by the lab | by the host tests |", "| --- | --- | --- | --- | --- |"]
    for r in results:
        why = r["caught_by"]
        other = [w for w in why if not w.startswith(("lab: ", "host: "))]
        lab = "; ".join(other) if other else short(why, "lab: ")
        lines.append(f"| {r['name']} | {r['what']} | {'yes' if why else '**NO**'} | {lab} | "
                     f"{short(why, 'host: ').replace('tests/unit/', '')} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description="mutation testing of the merger against the lab and the host tests")
    ap.add_argument("lab", help="recorded lab runs (scripts/lab's OUT: OUT/<kernel>/<guest>/<scenario>/)")
    ap.add_argument("--only", nargs="*", default=[], help="the mutants whose names contain one of these")
    ap.add_argument("--out", default=os.path.join(TOP, "out", "mutants"))
    ap.add_argument("--no-host", action="store_true", help="the lab alone, without the host tests")
    ap.add_argument("--keep", action="store_true", help="keep each mutant's tree (its path in mutants.json)")
    a = ap.parse_args()
    lab = os.path.abspath(a.lab)
    if not guests(lab):
        print(f"mutants: {lab}: no recorded lab run (scripts/lab --quick -o {a.lab} records them)", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    todo = patches(a.only)
    nruns = len(glob.glob(os.path.join(lab, "*", "*", "*", "lab-run.json")))
    print(f"mutants: {len(todo)} mutants against the {nruns} runs of {lab} ({', '.join(guests(lab))})"
          + ("" if a.no_host else f" and {len(HOST_TESTS)} host test files"), flush=True)
    os.makedirs(a.out, exist_ok=True)
    base = tempfile.mkdtemp(prefix="hg-mutant-base-")
    try:
        if not make_base(base, os.path.join(a.out, "base-log.txt")):
            print(f"mutants: the tree's hgmerge does not build in a copy: {os.path.join(a.out, 'base-log.txt')}",
                  file=sys.stderr)
            return 2
        return judge_all(a, lab, base, todo, nruns, t0)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def judge_all(a: argparse.Namespace, lab: str, base: str, todo: List[Tuple[str, str]], nruns: int,
              t0: float) -> int:
    """The control, then every mutant of @todo, against @lab; the table."""
    control = one("control", None, base, lab, a.out, not a.no_host, a.keep)
    bad = control.get("build_error") or control["lab"]["error"] or (control.get("host") or {}).get("rc")
    nlab = len(control.get("lab", {}).get("tests", {}))
    print(f"mutants: control (no patch): {nlab} lab tests, "
          f"{sum(1 for t in control.get('lab', {}).get('tests', {}).values() if t['ok'])} passed; host tests: "
          f"{(control.get('host') or {}).get('summary', 'not run')} ({control['seconds']:.0f} s)", flush=True)
    if bad:
        print(f"mutants: the control failed ({control.get('build_error') or control['lab']['error'] or 'host tests'}):"
              f" a mutant's verdict would mean nothing; {os.path.join(a.out, 'control', 'log.txt')}", file=sys.stderr)
        return 2
    results = []
    for name, p in todo:
        r = one(name, p, base, lab, a.out, not a.no_host, a.keep)
        r["caught_by"] = verdict(control, r)
        results.append(r)
        print(f"mutants: {name}: {'caught' if r['caught_by'] else 'NOT CAUGHT'} ({r['seconds']:.0f} s)"
              + (f": {'; '.join(r['caught_by'][:3])}" + (" ..." if len(r["caught_by"]) > 3 else "")
                 if r["caught_by"] else ""), flush=True)
    text = table(results)
    missed = [r["name"] for r in results if not r["caught_by"]]
    took = time.monotonic() - t0
    with open(os.path.join(a.out, "mutants.md"), "w") as f:
        f.write(f"Mutants against {lab} ({nruns} runs), {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
                f"{took / 60:.1f} min\n\n" + text)
    with open(os.path.join(a.out, "mutants.json"), "w") as f:
        json.dump({"lab": lab, "runs": nruns, "seconds": took, "control": control, "mutants": results}, f, indent=1)
    print(text, end="")
    print(f"mutants: {len(results) - len(missed)} of {len(results)} caught in {took / 60:.1f} min"
          + (f"; NOT caught: {', '.join(missed)}" if missed else ""))
    return 1 if missed or not results else 0


if __name__ == "__main__":
    sys.exit(main())

"""analyse - the lab's runs, judged on the host: for every run directory under
OUT (OUT/<kernel>/<guest>/<scenario>/, as tools/hgtools/lab/guest_run.py left them)

  - `hourglass export DIR --json DIR/report.json --text DIR/report.txt --kernelshark
    DIR/merged.dat --perfetto DIR/run.perfetto-trace --html DIR/report.html` (one merge; with
    --no-exports, `hourglass report DIR --json DIR/report.json > DIR/report.txt`),
  - `hgmerge ... --gaps-json DIR/gaps.jsonl` (the same merge again, one gap a line, with the
    labels the report used),
  - the scenario's expectations (tools/hgtools/lab/expect.py) and issue 17's class targets;

then OUT/lab.json, OUT/lab.csv and OUT/index.html (tools/hgtools/lab/labtable.py).

    python3 -m hgtools.lab.analyse OUT [--no-exports] [--jobs N]

Exit 0 when every run could be analysed (targets short are marked, not
failures: tools/hgtools/lab/check.py asserts them); 1 when a run could not be.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "../../.."))
from . import expect
from . import labsummary
from . import labtable
from . import scenario
from .. import engine, jsonfile
from ..errors import HgError

HOURGLASS = [os.path.join(TOP, "build", "hourglass")]
ENV = dict(os.environ, HG_PROGRESS="0")


def runs_under(out: str) -> List[Dict[str, Any]]:
    found: List[Dict[str, Any]] = []
    for kernel in sorted(os.listdir(out)):
        kd = os.path.join(out, kernel)
        if not os.path.isdir(kd):
            continue
        for guest in sorted(os.listdir(kd)):
            gd = os.path.join(kd, guest)
            if guest not in scenario.GUESTS or not os.path.isdir(gd):
                continue
            for name in sorted(os.listdir(gd)):
                d = os.path.join(gd, name)
                if os.path.exists(os.path.join(d, "lab-run.json")):
                    sc, run = scenario.parse_run_dir(name)
                    found.append({"kernel": kernel, "guest": guest, "scenario": sc, "run": run, "dir": d})
    return found


def _run(cmd: List[str], **kw: Any) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(cmd, capture_output=True, text=True, env=ENV, cwd=TOP, **kw)


def merge(d: str, exports: bool) -> Dict[str, Any]:
    """Report, per-gap stream and exports of run directory @d; what failed, if anything."""
    errs: Dict[str, Any] = {}
    if exports:
        p = _run(HOURGLASS + ["export", d, "--json", os.path.join(d, "report.json"), "--text",
                              os.path.join(d, "report.txt"), "--kernelshark", os.path.join(d, "merged.dat"),
                              "--perfetto", os.path.join(d, "run.perfetto-trace"), "--html", os.path.join(d, "report.html")])
    else:
        p = _run(HOURGLASS + ["report", d, "--json", os.path.join(d, "report.json")])
        with open(os.path.join(d, "report.txt"), "w") as f:
            f.write(p.stdout)
    if p.returncode:
        errs["report"] = p.stderr.strip()[-1000:]
        return errs
    hgl, kpath = engine.run_inputs(d)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [os.path.join(TOP, "build", "hgmerge"), "--hgl", hgl, "--kernel", kpath,
               "--report", os.path.join(tmp, "r.json"), "--gaps-json", os.path.join(d, "gaps.jsonl")]
        for lab in engine.run_labels(d):
            cmd += ["--label", lab]
        p = _run(cmd)
        if p.returncode:
            errs["gaps"] = p.stderr.strip()[-1000:]
    return errs


def analyse_run(r: Dict[str, str], exports: bool) -> Dict[str, Any]:
    d = r["dir"]
    t0 = time.monotonic()
    try:
        lab_run = jsonfile.load_object(os.path.join(d, "lab-run.json")) or {}
    except HgError as e:
        return dict(r, error=str(e))
    res: Dict[str, Any] = dict(r, record_exit=lab_run.get("record_exit"), record_seconds=lab_run.get("record_seconds"),
                               kernel_release=lab_run.get("kernel"))
    try:
        sc = scenario.load(r["scenario"])
    except scenario.ScenarioError as e:
        res["error"] = str(e)
        return res
    res["title"] = sc["title"]
    if lab_run.get("not_run"):
        res["not_run"] = lab_run["not_run"]
        return res
    if lab_run.get("error"):
        res["error"] = lab_run["error"]
        return res
    errs = merge(d, exports)
    res["merge_errors"] = errs
    if "report" in errs or "gaps" in errs:
        res["error"] = "; ".join(f"{k}: {v}" for k, v in errs.items())
        return res
    try:
        rep = jsonfile.load_object(os.path.join(d, "report.json"))
        meta = jsonfile.load_object(os.path.join(d, "record.json")) or {}
        hg = jsonfile.load_object(os.path.join(d, "hourglass.json"))
    except HgError as e:
        res["error"] = str(e)
        return res
    if not rep or not hg:
        res["error"] = "report.json or hourglass.json missing"
        return res
    with open(os.path.join(d, "gaps.jsonl")) as f:
        gaps = [json.loads(line) for line in f]
    run = {"dir": d, "guest": r["guest"], "report": rep, "record": meta, "hourglass": hg, "gaps": gaps,
           "cpu": scenario.for_guest(sc, r["guest"], lab_run.get("cpus"))["cpu"] if "{cpu}" in sc["hourglass"] else None,
           "load_names": [ld.get("name") for ld in meta.get("loads") or []], "config_hz": lab_run.get("config_hz"),
           "rt": "-rt-" in str(lab_run.get("kernel", ""))}
    res["expectations"] = expect.evaluate(sc, run)
    g = rep.get("gaps") or {}
    cls = g.get("classes") or {}
    total = g.get("total") or 0
    hidden = cls.get("hidden", 0)
    unexpl = g.get("unexplainable", 0)
    inf = rep.get("inference") or {}
    few: Dict[str, Any] = {}
    res.update(
        gaps=total, voluntary=g.get("voluntary"), actual_classes=cls,
        # as the report's first line: what is neither hidden nor unexplainable
        explained_share=(total - hidden - unexpl) / total if total else None,
        steal_share=(rep.get("steal") or {}).get("share"), steal_ms=(rep.get("steal") or {}).get("hidden_ms"),
        steal_by_cpu=steal_by_cpu(gaps, hg), **longest_gap(gaps, hg),
        classes=inf.get("classes"), macro_f1=inf.get("macro_f1"), headline=inf.get("headline"),
        # the confusion matrix too: check.py judges the classes again against the scenario's
        # known misreads and classes not held as they are when it runs (scenario data)
        confusion=inf.get("confusion"),
        class_short=expect.class_targets(rep, few, scenario.known_misreads(sc, r["kernel"], r["guest"]),
                                         scenario.classes_not_held(sc, r["kernel"], r["guest"])),
        class_few=few, loads=rep.get("loads"), summary=rep.get("summary"),
        misreads=expect.misread_digest(rep, gaps),
        lost=(rep.get("kernel_recording") or {}).get("lost_total"))
    res["ok"] = all(e["ok"] for e in res["expectations"])
    res["analyse_seconds"] = time.monotonic() - t0
    return res


def longest_gap(gaps: List[Dict[str, Any]], hg: Dict[str, Any]) -> Dict[str, Any]:
    """The run's worst latency: its longest gap hourglass did not ask for (not voluntary), in
    us, and what the kernel says it was (its actual class); None where there is none."""
    worst = max((g for g in gaps if not g.get("vol")), key=lambda g: g["g1"] - g["g0"], default=None)
    if worst is None or not hg["tsc"]["hz"]:
        return {"longest_gap_us": None, "longest_gap_actual": None}
    return {"longest_gap_us": (worst["g1"] - worst["g0"]) * 1e6 / hg["tsc"]["hz"],
            "longest_gap_actual": worst.get("actual")}


def steal_by_cpu(gaps: List[Dict[str, Any]], hg: Dict[str, Any]) -> Dict[str, float]:
    """Per CPU hourglass ran on: its hidden gaps' time (steal: no kernel event there, so the
    time went below the kernel, to the emulator or the other vCPU's turns) over the run."""
    run = (hg.get("duration_ns") or 0) * 1e-9 * hg["tsc"]["hz"]
    out: Dict[str, float] = {}
    for g in gaps:
        c = str(g.get("cpu"))
        out.setdefault(c, 0.0)
        if g.get("actual") == "hidden":
            out[c] += g["g1"] - g["g0"]
    return {c: v / run for c, v in sorted(out.items())} if run > 0 else {}


def commit() -> str:
    """The tree's commit (git describe), or '' where there is no git or no repository: a
    farm's device runs the lab from a tarball (scripts/lava-lab)."""
    try:
        git = subprocess.run(["git", "-C", TOP, "describe", "--always", "--dirty"], capture_output=True, text=True)
    except OSError:
        return ""
    return git.stdout.strip() if git.returncode == 0 else ""


def main() -> int:
    ap = argparse.ArgumentParser(description="judge the lab's runs and write lab.json, lab.csv, index.html")
    ap.add_argument("out", help="the lab's output directory (out/lab)")
    ap.add_argument("--no-exports", action="store_true", help="skip the trace.dat, Perfetto and HTML exports")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    t0 = time.monotonic()
    todo = runs_under(a.out)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        results = list(ex.map(lambda r: analyse_run(r, not a.no_exports), todo))
    lab = {"lab_version": 1, "commit": commit(), "generated_unix": time.time(),
           "targets": {"count_tolerance": expect.TOLERANCE, "class_share": expect.CLASS_SHARE,
                       "classes": list(expect.TARGET_CLASSES), "class_precision_recall": expect.CLASS_TARGET},
           "analyse_seconds": time.monotonic() - t0, "runs": results}
    with open(os.path.join(a.out, "lab.json"), "w") as f:
        json.dump(lab, f, indent=1)
    labtable.write_csv(lab, os.path.join(a.out, "lab.csv"))
    # the tables across runs come from the runs' one table, as a farm's queries do (issue 41)
    table, why_not = labsummary.write_table(a.out)
    try:
        across = labsummary.tables(table) if table else []
    except Exception as e:        # noqa: BLE001 - the page is still written, saying why not
        across, why_not = [], f"{type(e).__name__}: {e}"
    labtable.write_html(lab, os.path.join(a.out, "index.html"), labsummary.as_html(across, why_not))
    with open(os.path.join(a.out, "lab.md"), "w") as f:
        f.write(labtable.markdown(lab) + labsummary.as_markdown(across, why_not))
    bad = [r for r in results if r.get("error")]
    for r in results:
        print(labtable.one_line(r))
    print(f"lab: {len(results)} runs analysed in {time.monotonic() - t0:.0f} s; {len(bad)} could not be; "
          f"{os.path.join(a.out, 'index.html')}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""report - `hourglass report DIR`: merge a run and print what explains every gap (or its JSON,
or --explain's rule by rule); with --profile, a machine's learned limits."""
from __future__ import annotations

import json
import math
import os
import sys
import tempfile
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .. import engine, gapmodel, learn, report_text
from ..errors import EXIT_BAD_INPUT, EXIT_USAGE, HgError
from ..machine import machine_of
from . import common


def report_main(argv: Sequence[str]) -> int:
    """`hourglass report DIR`: merge, then print the text (or the JSON)."""
    ap = common.Parser(prog="hourglass report",
                       description="Merge an hourglass run with the kernel's recording: explain every gap, score "
                                   "the user-space inferences, decompose wake-up latency.",
                       epilog="The merge is build/hgmerge (C); this command formats its report. On a terminal a "
                              "progress line shows how far it is (HG_PROGRESS=1 forces it, HG_PROGRESS=0 silences "
                              "it). Times are seconds from the start of the kernel's recording, the clock of "
                              "`trace-cmd report` on the exported trace. " + common.EXIT_EPILOG + " See docs/merge.md.")
    ap.add_argument("dir", help="run directory (hourglass record --dir DIR), or a report JSON to print again")
    ap.add_argument("--kernel", metavar="FILE",
                    help="the ground truth: an hgtrace recording (.hgt) or a trace-cmd trace.dat recorded "
                         "with -C x86-tsc (default DIR/kernel.hgt, else DIR/ftrace.hgt, else DIR/trace.dat)")
    ap.add_argument("--json", metavar="FILE", help="also write the report as JSON ('-': to stdout, no text)")
    ap.add_argument("--gaps", metavar="OUT.hgg", help="also write the per-gap records (docs/merge.md)")
    ap.add_argument("--disagreements", type=int, default=20, metavar="N",
                    help="disagreements and missed deadlines listed in the text (default 20; all are in the JSON)")
    common.label_option(ap)
    ap.add_argument("--profile", metavar="PROFILE",
                    help="infer with the limits hourglass learn fitted on this machine (docs/profile.md), "
                         "scored beside the profile's held-out figures")
    ap.add_argument("--force-profile", action="store_true",
                    help="use --profile's limits on a run of another kernel, CPU count, hypervisor or TSC "
                         "than the profile's (a warning, not a refusal)")
    ap.add_argument("--explain", nargs="?", const="all", metavar="WHEN",
                    help="instead of the report, the rule that decided each gap, in its words and with the "
                         "limits it used, and the kernel's verdict beside it with what ran in the gap and the "
                         "kernel's events in it: every gap, or those over a time WHEN (seconds on the "
                         "report's clock; else the nearest on each CPU), or T1:T2")
    a = ap.parse_args(argv)
    if a.disagreements < 0:
        ap.error(f"--disagreements {a.disagreements}: a count, 0 or more")
    if a.explain and a.explain != "all":
        why = _explain_bad(a.explain)
        if why:
            ap.error(f"--explain {a.explain}: {why}")
    if a.explain and a.json == "-":
        ap.error("--explain prints text: not with --json -")
    common.check_labels(ap, a.label)
    if a.json and a.json != "-":
        common.check_output(a.json)
    prof = _profile_for(a.profile, a.dir, a.force_profile) if a.profile else None
    if a.explain and not os.path.isdir(a.dir):
        raise HgError(f"{a.dir}: --explain needs the run directory (a report JSON holds no gaps)", EXIT_USAGE)
    with tempfile.TemporaryDirectory(prefix="hourglass-explain-") as tmp:
        gj = os.path.join(tmp, "gaps.jsonl") if a.explain else None
        classes = _model_classes(prof, a.dir, a.kernel, a.label, tmp) if prof and prof.get("model") else None
        rep = common.report_of(a.dir, a.kernel, engine.Exports(gaps=a.gaps, gaps_json=gj), a.label,
                         limits=learn.limits_arg(prof) if prof else None,
                         classes=classes[0] if classes else None)
        if prof:
            rep["profile"] = _profile_section(prof, a.profile)
        if a.json == "-":
            common.print_out(lambda out: out.write(json.dumps(rep, indent=1) + "\n"))
            return 0
        if a.json:
            common.write_json(rep, a.json)
        gaps = []
        if gj:
            with open(gj) as f:
                gaps = [json.loads(line) for line in f]
            if classes:     # the model's questions, where the rule's words would be
                for g in gaps:
                    path = classes[1].get((g["cpu"], g["g0"]))
                    if path is not None and g.get("why_inferred", "").startswith("the profile's model"):
                        g["why_inferred"] = "the profile's model: " + ("; ".join(path) or "its one leaf")
    def text(out: Any) -> None:
        if a.explain:       # the gaps asked about, not the whole report again
            report_text.explain_head(rep, out)
            report_text.explain(rep, gaps, out, a.explain)
        else:
            report_text.render(rep, out, a.disagreements)
    common.print_out(text)
    return 0


def _explain_bad(when: str) -> Optional[str]:
    """What is wrong with --explain's WHEN (a time T in seconds or T1:T2, on the report's
    clock, which starts at 0), None when it is right."""
    parts = when.split(":", 1)
    try:
        ts = [float(x) for x in parts]
    except ValueError:
        return "not 'all', a time in seconds or T1:T2"
    if not all(math.isfinite(x) and x >= 0 for x in ts):
        return "times are seconds from the start of the kernel's recording, 0 or more"
    if len(ts) == 2 and ts[0] > ts[1]:
        return f"T1:T2 must run forward ({parts[0]} is after {parts[1]})"
    return None


def _model_classes(prof: Dict[str, Any], run_dir: str, kernel: Optional[str], labels: Sequence[str],
                   tmp: str) -> Tuple[str, Dict[Tuple[int, int], List[str]]]:
    """The profile's model on the run: hgmerge --classes' file (in @tmp), and each gap's path
    through the tree by (cpu, g0). The run's gaps come from a first merge of it; the tree reads
    only hourglass's side of each (gapmodel.FEATURES)."""
    gj = os.path.join(tmp, "model-gaps.jsonl")
    rep = engine.merge(run_dir, kernel, engine.Exports(gaps_json=gj), labels=list(labels), show_progress=False,
                       limits=learn.limits_arg(prof))
    with open(gj) as f:
        gaps = [json.loads(line) for line in f]
    decided = gapmodel.classify(prof["model"], gaps, float(rep["run"]["tsc_hz"]))
    path = os.path.join(tmp, "model.classes")
    gapmodel.write_classes(decided, path)
    return path, {(g["cpu"], g["g0"]): p for g, _, p in decided}


def _profile_for(path: str, run_dir: str, force: bool) -> Dict[str, Any]:
    """The profile at @path, for the run at @run_dir: refused (or, forced, warned about) when it was
    learned on another machine or kernel than the run's."""
    prof = learn.load(path)
    if not os.path.isdir(run_dir):
        raise HgError(f"{run_dir}: --profile needs a run directory (its hourglass.json says the machine)",
                      EXIT_USAGE)
    try:
        with open(os.path.join(run_dir, "hourglass.json")) as f:
            machine = machine_of(json.load(f))
    except (OSError, ValueError) as e:
        raise HgError(f"{run_dir}: hourglass.json unreadable ({e}): the run's machine is unknown", EXIT_BAD_INPUT)
    diff = learn.mismatch(prof, machine)
    if diff and not force:
        raise HgError(f"{path} was learned on another machine than this run's ({'; '.join(diff)}): its limits "
                      "would misjudge it (--force-profile uses them anyway)", EXIT_USAGE)
    if diff:
        print(f"hourglass report: warning: {path} was learned on another machine ({'; '.join(diff)}); "
              "its limits used anyway (--force-profile)", file=sys.stderr)
    prof["_mismatch"] = diff
    return prof


def _profile_section(prof: Dict[str, Any], path: str) -> Dict[str, Any]:
    """What the report says of the profile it inferred with."""
    held = prof.get("held_out") or {}
    return {"path": os.path.abspath(path), "machine": prof["machine"], "limits_us": prof["limits_us"],
            "learned_runs": len((prof.get("learned") or {}).get("runs") or []),
            "held_out": held.get("profile"), "held_out_builtin": held.get("builtin"),
            "model": gapmodel.text(prof["model"]) if prof.get("model") else None,
            "mismatch": prof.get("_mismatch") or []}

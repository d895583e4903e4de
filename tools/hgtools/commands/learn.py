"""learn - `hourglass learn RUN... -o PROFILE`: fit the inference's limits to a machine, write
the profile and say how it did on the runs left out."""
from __future__ import annotations

from typing import Sequence

from .. import gapmodel, learn
from . import common


def learn_main(argv: Sequence[str]) -> int:
    """`hourglass learn RUN... -o PROFILE`: fit the inference's limits, write the profile."""
    ap = common.Parser(prog="hourglass learn",
                       description="Fit the gray-box inference's three limits (switch/interrupt, at the tick's phase, "
                                   "the hidden floor) to one machine and kernel, from runs recorded there with ground "
                                   "truth (hourglass record, with the module or --ftrace-only), and measure them on "
                                   "runs left out of the fit. hourglass report --profile then infers with them, on "
                                   "runs of that machine.",
                       epilog="Each candidate limit is scored by the merger itself (build/hgmerge --limits): the "
                              "rules stay docs/merge.md's, only their limits are learned; --model tree adds a "
                              "decision tree whose classes the merger judges the same way (hgmerge --classes). "
                              "With two runs or more, each is scored by the limits fitted on the others (held_out "
                              "in the profile). "
                              + common.EXIT_EPILOG + " See docs/profile.md.")
    ap.add_argument("runs", nargs="+", metavar="RUN", help="run directories of one machine and kernel, with "
                                                           "ground truth (kernel.hgt or ftrace.hgt)")
    ap.add_argument("-o", "--output", required=True, metavar="PROFILE", help="the profile to write (JSON)")
    ap.add_argument("-j", "--jobs", type=int, default=2, metavar="N", help="merges at once (default 2)")
    ap.add_argument("--model", choices=("tree",), help="also fit a decision tree over what hourglass's own data "
                    "says of each gap (its length, where it falls in the tick's period, its neighbours), kept "
                    "only if, held out, it reads more gaps right than the limits (with --never-worse, also no "
                    "class worse; needs scikit-learn; docs/profile.md, THE MODEL)")
    ap.add_argument("--never-worse", action="store_true",
                    help="keep the fitted limits (and the tree) only if, each run read by what was fitted on the "
                         "others, they read no class of any run worse than the built-in rules: else the built-in "
                         "rules' own limits (where the rules are trusted; the default takes the most gaps right)")
    a = ap.parse_args(argv)
    if a.jobs < 1:
        ap.error("--jobs must be 1 or more")
    if a.never_worse and len(a.runs) < 2:
        ap.error("--never-worse judges runs held out: give two runs or more")
    common.check_output(a.output)
    prof = learn.learn(a.runs, a.jobs, model=bool(a.model), never_worse=a.never_worse)
    common.write_json(prof, a.output)
    fit, held = prof["fitted"], prof.get("held_out")
    lim = prof["limits_us"]
    print(f"hourglass learn: {a.output}: {learn.limits_text(lim)}"
          + f", from {len(a.runs)} run(s) of {prof['machine']['kernel']}")
    print(f"  the limits on the runs they were fitted on: {fit['profile']['correct']} of {fit['profile']['gaps']} "
          f"gaps with a kernel cause right, the built-in rules {fit['builtin']['correct']}")
    if held:
        by = "the model fitted on" if prof.get("model") else "the limits of"
        print(f"  held out (each run by {by} the others): {held['profile']['correct']} of "
              f"{held['profile']['gaps']} right ({100 * (held['profile']['accuracy'] or 0):.1f}%), the built-in "
              f"rules {held['builtin']['correct']} ({100 * (held['builtin']['accuracy'] or 0):.1f}%)")
    else:
        print("  held out: none (one run: give two or more to measure the profile on runs it did not see)")
    if prof.get("limits_learned"):
        print(f"  limits: {'taken' if prof['limits_learned']['taken'] else 'not taken'}: "
              f"{prof['limits_learned']['why']}")
    note = prof.get("model_learned")
    if note:
        h = note.get("held_out")
        print(f"  model: {'taken' if note['taken'] else 'not taken'}: {note['why']}"
              + (f" (held out: the tree {100 * (h['accuracy'] or 0):.1f}%, the limits "
                 f"{100 * (note['limits_held_out']['accuracy'] or 0):.1f}%)" if h else ""))
        if prof.get("model"):
            print("\n".join("    " + line for line in gapmodel.text(prof["model"])))
    return 0

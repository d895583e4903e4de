"""gapstream - a guest test run's gap stream (hgmerge --gaps-json), read on the host or in the
guest: what the kernel recorded in each gap, whatever the gap is named."""
import json
import os

from harness import TOP, run


def gap_stream(d, kernel="kernel.hgt"):
    """The run's gap stream (hgmerge --gaps-json, docs/gap-stream.md): each gap with its parts,
    whatever it is named. Under plain TCG most gaps hold an emulator stall longer than their
    kernel events and are named hidden (the gap composition, issue 50); what the kernel
    recorded in them is still there, and is what these tests check."""
    out = os.path.join(d, "gaps.jsonl")
    run([os.path.join(TOP, "build", "hgmerge"), "--hgl", os.path.join(d, "hourglass.hgl"), "--kernel",
         os.path.join(d, kernel), "--report", os.path.join(d, "gaps-report.json"), "--gaps-json", out],
        timeout=600)
    with open(out) as f:
        return [json.loads(line) for line in f if line.strip()]


def switches_between_threads(gaps):
    """Gaps in which the kernel switched from an hourglass thread to another one."""
    return [g for g in gaps if g["out"] and str(g.get("out_to") or "").startswith("hg-thread")]

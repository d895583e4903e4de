"""runs - what the analysis reads from one run directory of the paper's
experiments: the runner's paper-run.json, hourglass's JSON summary and
records (through `hgtrace dump -j`, the project's one reader), the kernel's
recording, and the merger's report and per-gap stream (hgmerge, run once
per directory and kept: report.json, gaps.jsonl).

Every failure is an HgError (a RunError, or jsonfile's for a file it cannot read) naming the
directory or file and what is wrong, so that
the page can say which figure is missing and why instead of stopping.
"""
from __future__ import annotations

import json
import os
import subprocess
from functools import cached_property
from typing import Any, Dict, Iterator, List, Optional

from .. import jsonfile, paths
from ..errors import HgError
from .. import report_json


# the merger's outputs the analysis reads: report 2.1 and gap stream 1.1 (kernel_tick; each gap's
# switch_path_cycles, tick_cycles, tick), which one merge writes together
REPORT_MINOR = 1


class RunError(HgError):
    """A run directory that cannot give a figure: the message says which and why. The files
    it cannot read are jsonfile's HgErrors: the figures catch HgError, which holds both."""


def _report_minor(path: str) -> int:
    """The minor version of a kept report (-1 if unreadable: merged again). One merged by an older
    hgmerge lacks what the analysis reads, which only the merger computes: it is merged again."""
    try:
        with open(path) as f:
            return report_json.minor(json.load(f))
    except (OSError, ValueError, TypeError, AttributeError):
        return -1


class RunDir:
    """One run of the plan, as left by scripts/paper-run."""

    def __init__(self, path: str):
        self.path = path
        self.meta: Dict[str, Any] = jsonfile.load(os.path.join(path, "paper-run.json"))

    def __repr__(self) -> str:
        return f"RunDir({self.path})"

    @property
    def name(self) -> str:
        return str(self.meta.get("run"))

    @property
    def errors(self) -> List[str]:
        return list(self.meta.get("errors") or [])

    def file(self, name: str) -> str:
        return os.path.join(self.path, name)

    def has(self, name: str) -> bool:
        return os.path.exists(self.file(name))

    @cached_property
    def hourglass(self) -> Dict[str, Any]:
        """hourglass's JSON summary (--json)."""
        if not self.has("hourglass.json"):
            raise RunError(f"{self.path}: no hourglass.json: hourglass did not finish "
                           f"({'; '.join(self.errors) or 'see its logs'})")
        return jsonfile.load(self.file("hourglass.json"))  # type: ignore[no-any-return]

    @property
    def recorded(self) -> bool:
        return self.has("kernel.hgt") and self.has("hourglass.hgl") and not self.has("INCOMPLETE")

    def labels(self) -> List[str]:
        """hgmerge --label options naming the run's load (its comm prefix)."""
        load = self.meta.get("load") or {}
        out = []
        if load.get("comm") and load.get("name"):
            out.append(f"comm:{load['comm']}={load['name']}-load")
        # what `hourglass record --load` wrote, where it did
        rec = self.file("record.json")
        if os.path.exists(rec):
            out += [x for x in (jsonfile.load(rec).get("labels") or []) if isinstance(x, str)]
        return out

    def merge(self) -> None:
        """hgmerge once: report.json and gaps.jsonl beside the recording (kept for the next run
        of the analysis; redone when the recording is newer)."""
        rep, gaps = self.file("report.json"), self.file("gaps.jsonl")
        if not self.recorded:
            why = "; ".join(self.errors) or ("the recording is INCOMPLETE" if self.has("INCOMPLETE")
                                            else "no kernel.hgt (not recorded with the module)")
            raise RunError(f"{self.path}: no recording to merge ({why})")
        src = max(os.path.getmtime(self.file(n)) for n in ("kernel.hgt", "hourglass.hgl", "paper-run.json"))
        if os.path.exists(rep) and os.path.exists(gaps) and os.path.getmtime(rep) >= src \
                and os.path.getmtime(gaps) >= src and _report_minor(rep) >= REPORT_MINOR:
            return
        cmd = [paths.require("hgmerge"), "--hgl", self.file("hourglass.hgl"), "--kernel", self.file("kernel.hgt"),
               "--report", rep + ".tmp", "--gaps-json", gaps + ".tmp", "--dir", self.path]
        for lab in self.labels():
            cmd += ["--label", lab]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            raise RunError(f"{self.path}: hgmerge exited {p.returncode}: {(p.stderr or p.stdout).strip()[-400:]}")
        os.replace(rep + ".tmp", rep)
        os.replace(gaps + ".tmp", gaps)

    @cached_property
    def report(self) -> Dict[str, Any]:
        """The merger's report (JSON version 2)."""
        self.merge()
        try:
            return report_json.load(self.file("report.json"))
        except Exception as e:   # noqa: BLE001 - its own errors name the file
            raise RunError(f"{self.file('report.json')}: {e}")

    def gaps(self) -> Iterator[Dict[str, Any]]:
        """The per-gap stream, one dict a gap (docs/gap-stream.md, --gaps-json)."""
        self.merge()
        with open(self.file("gaps.jsonl")) as f:
            for line in f:
                if line.strip():
                    yield json.loads(line)

    def records(self, name: str) -> Iterator[Dict[str, Any]]:
        """The records of hourglass.hgl or kernel.hgt, through `hgtrace dump -j` (the first line,
        the file's facts, is skipped)."""
        path = self.file(name)
        if not os.path.exists(path):
            raise RunError(f"{path}: missing")
        p = subprocess.Popen([paths.require("hgtrace"), "dump", "-j", path], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        assert p.stdout is not None
        first = True
        for line in p.stdout:
            if first:
                first = False
                continue
            yield json.loads(line)
        err = p.stderr.read() if p.stderr else ""
        if p.wait():
            raise RunError(f"{path}: hgtrace dump exited {p.returncode}: {err.strip()[-300:]}")

    @cached_property
    def tsc_hz(self) -> float:
        return float(self.hourglass["tsc"]["hz"])

    def thread(self, k: int) -> Dict[str, Any]:
        for t in self.hourglass.get("threads", []):
            if t.get("thread") == k:
                return t  # type: ignore[no-any-return]
        raise RunError(f"{self.path}: hourglass.json has no thread {k}")

    def jobs(self) -> List[Dict[str, Any]]:
        """hourglass's JOB records (release, completion, deadline, missed) in ms from its t0."""
        t0, hz = float(self.hourglass["t0_tsc"]), self.tsc_hz
        out = []
        for r in self.records("hourglass.hgl"):
            if r.get("kind") != "job":
                continue
            done = r["t1"] or None
            out.append({"thread": r["thread"], "release_ms": (r["t0"] - t0) / hz * 1e3,
                        "done_ms": None if done is None else (done - t0) / hz * 1e3,
                        "deadline_ms": (r["t2"] - t0) / hz * 1e3,
                        "missed": r["missed"], "cut": r["cut"]})
        return out

    def wakes(self) -> List[Dict[str, Any]]:
        """hourglass's WAKE records: thread, lateness in us, LAT sample or a job's release."""
        return [{"thread": r["thread"], "late_us": r["lateness_ns"] / 1e3, "lat": r["lat"]}
                for r in self.records("hourglass.hgl") if r.get("kind") == "wake"]


def find(root: str, kernel: str, guest: str, exp: str, run: str) -> Optional[RunDir]:
    """The run directory of OUT/runs/<kernel>/<guest>/<exp>/<run>, natively OUT/runs/native/...;
    None when it was not run."""
    base = os.path.join(root, "runs", "native") if guest == "native" else os.path.join(root, "runs", kernel, guest)
    d = os.path.join(base, exp, run)
    if not os.path.exists(os.path.join(d, "paper-run.json")):
        return None
    return RunDir(d)

"""report_json - the merger's report (docs/report-json.md, report_version 2):
read and checked, and the few ways its figures are written for people
(times on the one base, thread names, shares)."""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from .errors import HgError, cannot

REPORT_MAJOR = 2
# the stages of a wake-up, in the order they happen
STAGES = ("timer", "irq", "sched", "return")
CLASSES = ("switch_hg", "switch_other", "timer", "interrupt", "hidden", "other", "unexplainable")

Report = Dict[str, Any]


def load(path: str) -> Report:
    """The report in @path, checked to be one this package formats."""
    try:
        with open(path) as f:
            rep = json.load(f)
    except OSError as e:
        raise cannot("read", path, e)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise HgError(f"{path}: not a report (JSON): {e}")
    check(rep, path)
    out: Report = rep
    return out


def check(rep: Any, path: str) -> None:
    """Refuse what is not a report of the major version this package reads."""
    if not isinstance(rep, dict) or "report_version" not in rep:
        raise HgError(f"{path}: not an hourglass report (no report_version)")
    v = rep["report_version"]
    if not isinstance(v, int) or v != REPORT_MAJOR:
        raise HgError(f"{path}: report_version {v!r}; this hourglass reads version {REPORT_MAJOR} "
                      "(merge the run again with this version's hgmerge)")
    for key in ("summary", "run", "warnings"):
        if key not in rep:
            raise HgError(f"{path}: report_version 2 without '{key}'")


def t(sec: Optional[float]) -> str:
    """A time on the report's one base: 't=0.580948 s' (seconds from the start of the recording)."""
    return "t=?" if sec is None else f"t={sec:.6f} s"


def pct(x: Optional[float]) -> str:
    """A share as a percentage, '-' when there is none."""
    return "-" if x is None else f"{x * 100:.1f}%"


def thread_names(rep: Report) -> Dict[int, str]:
    """Hourglass's thread number to its name everywhere (hg-thread-K)."""
    return {int(th["thread"]): th.get("name") or f"hg-thread-{th['thread']}"
            for th in rep["run"].get("threads") or []}


def thread_name(rep: Report, k: Optional[int]) -> str:
    """The name of hourglass's thread @k."""
    if k is None or k < 0:
        return "-"
    return thread_names(rep).get(int(k), f"hg-thread-{k}")


def section(rep: Report, key: str) -> Any:
    """A section's content, or None when the report says it has nothing (null, or absent)."""
    v = rep.get(key)
    if v is None or v == [] or v == {}:
        return None
    return v


def run_label(rep: Report) -> str:
    """A short name for the run: its directory's last part."""
    d = str(rep["run"].get("dir") or "run").rstrip("/")
    return d.rsplit("/", 1)[-1] or d


def lat_threads(rep: Report) -> List["tuple[int, Dict[str, Any]]"]:
    """The latency section's threads, by thread number."""
    lat = section(rep, "latency") or {}
    return sorted(((int(k), v) for k, v in (lat.get("threads") or {}).items()), key=lambda kv: kv[0])

"""breaktrace - a run that hourglass -b stopped: the sample that passed the
threshold, placed on the report's time base and explained by the merge, so
that the report opens with it (cyclictest -b and rtla -T users look there
first).

    trip = breaktrace.of_run(run_dir)            # hourglass.json's "breaktrace", or None
    rep["breaktrace"] = breaktrace.explain(rep, trip, gaps_jsonl)

hourglass names the sample in its own clock (TSC: the thread's last read
before the gap and its first after it; or a wake-up's due and actual time).
The merge's per-gap stream (hgmerge --gaps-json) gives every gap of the trip's
CPU with its kernel cause: the ones inside the sample are what tripped it,
the ones just before it the stretch that led there. A late wake-up is the
latency section's decomposition of that wake-up (its threads' worst list).
"""
from __future__ import annotations

import heapq
import json
import os
from typing import Any, Dict, List, Optional

from .errors import HgError, cannot

# the gaps shown before the trip: enough to see a pattern, few enough to read first
BEFORE = 5


def of_run(run_dir: str) -> Optional[Dict[str, Any]]:
    """The -b sample hourglass wrote in @run_dir/hourglass.json, or None (no
    -b, or no such file: a run recorded by other means)."""
    path = os.path.join(run_dir, "hourglass.json")
    if not os.path.isfile(path):
        return None
    try:
        with open(path) as f:
            hg = json.load(f)
    except OSError as e:
        raise cannot("read", path, e)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise HgError(f"{path}: not hourglass's JSON summary: {e}")
    b = hg.get("breaktrace") if isinstance(hg, dict) else None
    if not isinstance(b, dict):
        return None
    need = {"threshold_ns": int, "thread": int, "kind": str, "value_ns": int, "t0_tsc": int, "t1_tsc": int,
            "cpu": int}
    for k, typ in need.items():
        if not isinstance(b.get(k), typ) or isinstance(b.get(k), bool):
            raise HgError(f"{path}: breaktrace.{k} is missing or not a{'n integer' if typ is int else ' string'}")
    if b["kind"] not in ("gap", "lateness") or b["t1_tsc"] < b["t0_tsc"]:
        raise HgError(f"{path}: breaktrace is neither a gap nor a lateness with its start before its end")
    return b


def explain(rep: Dict[str, Any], trip: Dict[str, Any], gaps_jsonl: Optional[str]) -> Dict[str, Any]:
    """The report's "breaktrace" object: the sample on the time base, and
    what the kernel says of it (@gaps_jsonl: hgmerge --gaps-json's file)."""
    run = rep.get("run") or {}
    hz, base = run.get("tsc_hz"), run.get("base_tsc")
    on_base = (lambda tsc: (tsc - base) / hz) if hz and base is not None else (lambda tsc: None)
    out: Dict[str, Any] = {
        "kind": trip["kind"], "thread": trip["thread"], "cpu": trip["cpu"],
        "threshold_us": trip["threshold_ns"] / 1e3, "value_us": trip["value_ns"] / 1e3,
        "t": on_base(trip["t0_tsc"]), "t_end": on_base(trip["t1_tsc"]),
        "gaps": [], "before": [], "wakeup": None,
    }
    if trip["kind"] == "gap" and gaps_jsonl:
        inside, before = _gaps_near(gaps_jsonl, trip)
        out["gaps"], out["before"] = inside, before
    elif trip["kind"] == "lateness":
        out["wakeup"] = _wakeup(rep, trip, out["t"], hz)
    return out


def _gaps_near(path: str, trip: Dict[str, Any]) -> "tuple[List[Dict[str, Any]], List[Dict[str, Any]]]":
    """The merged gaps of the trip's CPU inside the sample, and the last
    BEFORE ones that ended before it, in time order. Only those are kept: a
    -b run with -a has hundreds of thousands of gaps (288 373 in a 4 s run
    under the emulator), and keeping every earlier one took 900 MB."""
    inside: List[Dict[str, Any]] = []
    before: List["tuple[int, int, Dict[str, Any]]"] = []     # a min-heap on g0: the latest BEFORE
    t0, t1 = trip["t0_tsc"], trip["t1_tsc"]
    try:
        with open(path) as f:
            for n, line in enumerate(f):
                g = json.loads(line)
                if g.get("cpu") != trip["cpu"]:
                    continue
                if g["g0"] < t1 and g["g1"] > t0:
                    inside.append(g)
                elif g["g1"] <= t0:
                    item = (g["g0"], n, g)
                    if len(before) < BEFORE:
                        heapq.heappush(before, item)
                    elif item > before[0]:
                        heapq.heapreplace(before, item)
    except OSError as e:
        raise cannot("read", path, e)
    except (ValueError, KeyError, TypeError) as e:
        raise HgError(f"{path}: hgmerge's per-gap stream is not what it documents: {e}")
    inside.sort(key=lambda g: g["g0"])
    return inside, [g for _, _, g in sorted(before)]


def _wakeup(rep: Dict[str, Any], trip: Dict[str, Any], t: Optional[float], hz: Optional[float]) \
        -> Optional[Dict[str, Any]]:
    """The latency section's decomposition of the wake-up that tripped, found
    among its thread's worst by its due time (the report rounds it to a microsecond)."""
    if t is None or not hz:
        return None
    th = ((rep.get("latency") or {}).get("threads") or {}).get(str(trip["thread"])) or {}
    for x in th.get("worst") or []:
        if isinstance(x, dict) and x.get("t") is not None and abs(x["t"] - t) <= 2e-6:
            found: Dict[str, Any] = x
            return found
    return None

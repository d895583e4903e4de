"""report_json - the merger's report (docs/report-json.md, report_version 2):
read and checked, and the few ways its figures are written for people
(times on the one base, thread names, shares).

Versions: report_version is the major (one this package reads); report_minor
(absent: 0) grows when the merger adds keys. 2.1 added kernel_tick,
gaps.class_order and latency.stages: the class order and the stage names
are the merger's (classes() and stages() read them), and a 2.0 report,
which does not list them, gets the ones the 2.0 merger wrote.

load() checks every key the text and HTML renderers use, before they see
the report: its type (a count is a whole number, a time a finite number,
a name a string), its range where the format fixes one (shares 0..1,
counts >= 0), and the shapes that go together (the confusion matrix is
actual x inferred, a histogram has one edge more than counts, a supply-
bound function has as many values as windows). A report that breaks one is
refused with one line naming the file and the key ("r.json:
inference.confusion.matrix[2] has 5 counts, inferred has 6 classes"),
exit 3, never a traceback from the renderers. Keys the renderers do not
use are not checked: a newer merger may add them (docs: keys are never
removed within a major version).
"""
from __future__ import annotations

import json
import math
from typing import Any, Callable, Dict, List, Optional

from . import vocab
from .errors import HgError, cannot

REPORT_MAJOR = 2
# the minor the merger of this tree writes (userspace/merger/report.c): a saved report of an older
# minor was judged by an older truth (2.6: a gap's composition), so hourglass results merges again
REPORT_MINOR = 6
# what a report_version 2.0 report does not list itself: its wake-up stages, in the order they happen,
# and its actual classes in the engine's order (2.1's latency.stages and gaps.class_order)
STAGES_2_0 = ("timer", "irq", "sched", "return")
CLASSES_2_0 = vocab.ACTUAL_CLASSES

Report = Dict[str, Any]

# No figure of a report comes near these: a time in seconds, ms, us or ns of a run, a count of events.
# Beyond them a number is a corrupt file (and would overflow what formats and draws it).
NUM_LIMIT = 1e18
COUNT_LIMIT = 2 ** 53


def load(path: str) -> Report:
    """The report in @path, checked to be one this package formats (every key it uses)."""
    try:
        with open(path, encoding="utf-8") as f:
            rep = json.load(f, parse_constant=_no_constant)
    except OSError as e:
        raise cannot("read", path, e)
    except (json.JSONDecodeError, UnicodeDecodeError, ValueError) as e:
        raise HgError(f"{path}: not a report (JSON): {e}")
    except RecursionError:
        raise HgError(f"{path}: not a report: JSON nested deeper than this reader follows")
    check(rep, path)
    out: Report = rep
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number (the merger writes null for a figure it has not)")


def check(rep: Any, path: str) -> None:
    """Refuse what is not a report of the major version this package reads, naming the key at fault."""
    if not isinstance(rep, dict) or "report_version" not in rep:
        raise HgError(f"{path}: not an hourglass report (no report_version)")
    v = rep["report_version"]
    if not isinstance(v, int) or isinstance(v, bool) or v != REPORT_MAJOR:
        raise HgError(f"{path}: report_version {v!r}; this hourglass reads version {REPORT_MAJOR} "
                      "(merge the run again with this version's hgmerge)")
    for key in ("summary", "run", "warnings"):
        if key not in rep:
            raise HgError(f"{path}: report_version 2 without '{key}'")
    try:
        REPORT(rep, "")
    except _Bad as e:
        raise HgError(f"{path}: {e}")


# ---- the checks: each is a function of (value, where) that raises _Bad ----

class _Bad(Exception):
    """What is wrong, and where in the report ("gaps.classes.timer is a string, not a count")."""


Check = Callable[[Any, str], None]


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "a whole number"
    if isinstance(v, float):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    return "an object"


def _wrong(v: Any, where: str, want: str) -> _Bad:
    return _Bad(f"{where or 'the report'} is {_kind(v)}, not {want}")


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def num(lo: float = -NUM_LIMIT, hi: float = NUM_LIMIT, above: Optional[float] = None) -> Check:
    """A finite number within [lo, hi] (and > @above when given)."""
    def c(v: Any, where: str) -> None:
        if not _is_num(v):
            raise _wrong(v, where, "a number")
        if not (lo <= v <= hi) or (above is not None and not v > above):
            span = f"above {above:g}, up to {hi:g}" if above is not None else f"{lo:g}..{hi:g}"
            raise _Bad(f"{where} is {v!r}, outside {span}")
    return c


def count(hi: int = COUNT_LIMIT) -> Check:
    """A whole number from 0 to @hi."""
    def c(v: Any, where: str) -> None:
        if not isinstance(v, int) or isinstance(v, bool):
            raise _wrong(v, where, "a count (a whole number)")
        if not 0 <= v <= hi:
            raise _Bad(f"{where} is {v}, outside 0..{hi}")
    return c


def text(v: Any, where: str) -> None:
    """A string that can be printed (UTF-8: no lone surrogates from \\ud800 escapes)."""
    if not isinstance(v, str):
        raise _wrong(v, where, "a string")
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        raise _Bad(f"{where} is not UTF-8 text (a lone surrogate escape)")


def boolean(v: Any, where: str) -> None:
    if not isinstance(v, bool):
        raise _wrong(v, where, "true or false")


def anything(v: Any, where: str) -> None:
    """Any value: the renderers only print it as it is."""
    if isinstance(v, str):
        text(v, where)


def either(*checks: Check, want: str) -> Check:
    def c(v: Any, where: str) -> None:
        for k in checks:
            try:
                k(v, where)
                return
            except _Bad:
                pass
        raise _wrong(v, where, want)
    return c


def opt(check: Check) -> Check:
    """null (nothing to say), or what @check accepts."""
    def c(v: Any, where: str) -> None:
        if v is not None:
            check(v, where)
    return c


def lst(item: Check, most: Optional[int] = None) -> Check:
    def c(v: Any, where: str) -> None:
        if not isinstance(v, list):
            raise _wrong(v, where, "a list")
        if most is not None and len(v) > most:
            raise _Bad(f"{where} has {len(v)} items, more than {most}")
        for i, x in enumerate(v):
            item(x, f"{where}[{i}]")
    return c


def tup(*items: Check) -> Check:
    """A list of exactly len(@items) values."""
    def c(v: Any, where: str) -> None:
        if not isinstance(v, list):
            raise _wrong(v, where, f"a list of {len(items)}")
        if len(v) != len(items):
            raise _Bad(f"{where} has {len(v)} items, not {len(items)}")
        for i, (x, k) in enumerate(zip(v, items)):
            k(x, f"{where}[{i}]")
    return c


def _key_is_index(k: str) -> bool:
    return k.isascii() and k.isdigit() and len(k) < 10


def obj(required: Optional[Dict[str, Check]] = None, optional: Optional[Dict[str, Check]] = None,
        rule: Optional[Check] = None) -> Check:
    """An object: @required keys present, @optional ones checked when present, then @rule on the whole."""
    def c(v: Any, where: str) -> None:
        if not isinstance(v, dict):
            raise _wrong(v, where, "an object")
        for k, check in (required or {}).items():
            if k not in v:
                raise _Bad(f"{where + '.' if where else ''}{k} is missing")
            check(v[k], f"{where + '.' if where else ''}{k}")
        for k, check in (optional or {}).items():
            if k in v:
                check(v[k], f"{where + '.' if where else ''}{k}")
        if rule:
            rule(v, where)
    return c


def dmap(value: Check, index_keys: bool = False) -> Check:
    """An object whose keys are names (or, with @index_keys, numbers: thread, CPU) and values @value."""
    def c(v: Any, where: str) -> None:
        if not isinstance(v, dict):
            raise _wrong(v, where, "an object")
        for k, x in v.items():
            text(k, f"{where} key {k!r}")
            if index_keys and not _key_is_index(k):
                raise _Bad(f"{where} has the key {k!r}, not a thread or CPU number")
            value(x, f"{where}.{k}")
    return c


# ---- what goes together ----

def _increasing(v: List[float], where: str) -> None:
    for i in range(1, len(v)):
        if not v[i] > v[i - 1]:
            raise _Bad(f"{where}[{i}] is {v[i]!r}, not above the one before ({v[i - 1]!r})")


def _hist_rule(v: Dict[str, Any], where: str) -> None:
    if len(v["edges_us"]) != len(v["counts"]) + 1:
        raise _Bad(f"{where} has {len(v['edges_us'])} edges for {len(v['counts'])} counts (one edge more expected)")
    _increasing(v["edges_us"], f"{where}.edges_us")


def _gap_hist_rule(v: Dict[str, Any], where: str) -> None:
    _increasing(v["edges_us"], f"{where}.edges_us")
    for cls, counts in v["classes"].items():
        if len(counts) + 1 != len(v["edges_us"]):
            raise _Bad(f"{where}.classes.{cls} has {len(counts)} counts for {len(v['edges_us'])} edges "
                       "(one edge more expected)")


def _confusion_rule(v: Dict[str, Any], where: str) -> None:
    if len(v["matrix"]) != len(v["actual"]):
        raise _Bad(f"{where}.matrix has {len(v['matrix'])} rows, actual has {len(v['actual'])} classes")
    for i, row in enumerate(v["matrix"]):
        if len(row) != len(v["inferred"]):
            raise _Bad(f"{where}.matrix[{i}] has {len(row)} counts, inferred has {len(v['inferred'])} classes")


def _sbf_rule(v: Dict[str, Any], where: str) -> None:
    n = len(v.get("window_ms") or [])
    _increasing(v.get("window_ms") or [], f"{where}.window_ms")
    for k in ("lower_ms", "upper_ms"):
        if n and len(v.get(k) or []) != n:
            raise _Bad(f"{where}.{k} has {len(v.get(k) or [])} values for {n} windows")


def _span_rule(v: Dict[str, Any], where: str) -> None:
    if not v["from"] < v["to"]:
        raise _Bad(f"{where} runs from {v['from']!r} to {v['to']!r}: not forwards")


def _pair_rule(v: List[Any], where: str) -> None:
    if not v[0] <= v[1]:
        raise _Bad(f"{where} ends ({v[1]!r}) before it starts ({v[0]!r})")


def _all(*checks: Check) -> Check:
    def c(v: Any, where: str) -> None:
        for k in checks:
            k(v, where)
    return c


# ---- the report, as the renderers read it (docs/report-json.md) ----

NUM = num()
T = num(-1e12, 1e12)                    # seconds on the report's base
POS = num(0)                            # a duration, a size: not negative
SHARE = num(0, 1)
COUNT = count()
THREAD = count(1 << 16)
PRINTABLE = either(text, num(), count(), boolean, want="a string or a number")   # printed as it is
STAT = obj(optional={k: opt(NUM) for k in ("min_us", "median_us", "avg_us", "p99_us", "max_us")})
PARTS = lst(obj(required={"what": text, "us": NUM}))     # 2.6: what a stage or a gap was made of
WORST = obj(required={"latency_us": NUM},
            optional={"t": opt(T), "cpu": opt(PRINTABLE), "thread": opt(THREAD), "stages_us": opt(dmap(opt(NUM))),
                      "largest_stage": opt(PRINTABLE), "blame": opt(text), "complete": opt(boolean),
                      "stage_parts": opt(dmap(opt(obj(optional={"unrecorded_us": opt(NUM),
                                                                "parts": opt(PARTS)}))))})
HIST = obj(required={"edges_us": lst(POS), "counts": lst(COUNT)}, rule=_hist_rule)
LAT_THREAD = obj(optional={
    "name": opt(text), "wakeups": opt(COUNT), "decomposed": opt(COUNT),
    "latency": opt(STAT), "worst": opt(lst(WORST)), "hist": opt(HIST),
    "cdf": opt(lst(tup(NUM, num(above=0, hi=1)))),
})


def _stages_rule(v: Dict[str, Any], where: str) -> None:
    """Each thread's figures of every stage the report names (2.0's when it names none)."""
    names = v.get("stages") or STAGES_2_0
    for k, th in (v.get("threads") or {}).items():
        for st in names:
            opt(STAT)(th.get(st), f"{where}.threads.{k}.{st}")


KTICK = obj(optional={"timer_gaps": COUNT, "period_cycles": opt(COUNT), "period_ms": opt(POS),
                      "handler_max_cycles": opt(COUNT), "handler_max_us": opt(POS)})
INTERVAL = _all(tup(T, T), _pair_rule)
MAP_GAP = either(_all(tup(T, T, text, boolean), _pair_rule), _all(tup(T, T, text), _pair_rule),
                 want="[t0, t1, class, wrong]")

REPORT = obj(
    required={"summary": lst(text), "warnings": lst(text), "run": obj(optional={
        "dir": opt(text), "command": opt(lst(text)),
        "kernel": opt(obj(optional={"release": opt(text), "preempt_rt": opt(anything)})),
        "tsc_hz": opt(POS), "t0": opt(T), "duration_s": opt(POS), "hourglass_complete": opt(boolean),
        "threads": opt(lst(obj(required={"thread": THREAD}, optional={
            "name": text, "tid": either(COUNT, text, want="a tid"), "workload": text, "policy": PRINTABLE,
            "priority": PRINTABLE, "timer": PRINTABLE, "affinity": opt(PRINTABLE), "period_ms": opt(POS)}))),
    })},
    optional={
        "report_minor": COUNT,
        "kernel_recording": opt(obj(optional={
            "path": opt(text), "recorder": opt(text), "events": opt(COUNT), "window": opt(lst(T, 2)),
            "lost": opt(dmap(COUNT)), "lost_total": opt(COUNT), "meta": opt(dmap(anything))})),
        "gaps": opt(obj(optional={
            "total": COUNT, "voluntary": COUNT, "scored": COUNT, "unexplainable": COUNT,
            "unexplainable_why": opt(dmap(COUNT)), "classes": opt(dmap(COUNT)), "class_order": lst(text),
            "unrecorded": opt(obj(optional={"ms": opt(POS), "turn_ms": opt(POS), "share_of_run": opt(NUM),
                                            "mostly_unrecorded_gaps": opt(COUNT), "turn_gaps": opt(COUNT)})),
            "longest": opt(obj(optional={
                "t": opt(T), "cpu": opt(PRINTABLE), "thread": opt(THREAD), "next_thread": opt(THREAD),
                "us": opt(NUM), "actual": opt(text), "kind": opt(text), "cause": opt(text), "inferred": opt(text),
                "why_inferred": opt(text), "unrecorded_us": opt(NUM), "parts": opt(PARTS)}))})),
        "steal": opt(obj(optional={"hidden_gaps": opt(COUNT), "hidden_ms": POS, "run_ms": POS,
                                   "cpus": opt(COUNT), "share": opt(SHARE)})),
        "inference": opt(obj(required={"confusion": obj(
            required={"actual": lst(text), "inferred": lst(text), "matrix": lst(lst(COUNT))}, rule=_confusion_rule)},
            optional={
                "headline": opt(obj(required={"gaps": COUNT, "correct": COUNT}, optional={"accuracy": opt(SHARE)})),
                "all": opt(obj(required={"gaps": COUNT, "correct": COUNT}, optional={"accuracy": opt(SHARE)})),
                "classes": opt(dmap(obj(optional={k: opt(SHARE) for k in ("precision", "recall", "f1")}))),
                "macro_f1": opt(SHARE),
                "calibration": opt(obj(optional={
                    "switch_limit_us": opt(POS), "switch_limit_basis": opt(text), "hidden_limit_us": opt(POS),
                    "hidden_limit_basis": opt(text),
                    "tick": opt(dmap(obj(optional={"period_ms": opt(POS), "floor_us": opt(POS)})))})),
                "rules": opt(dmap(PRINTABLE))})),
        "causes": opt(lst(obj(required={"cause": text, "gaps": COUNT, "total_ms": POS},
                              optional={"median_us": opt(NUM)}))),
        "time_lost": opt(lst(obj(required={"what": text, "ms": NUM}, optional={"kind": text, "gaps": COUNT}))),
        "context_switch": opt(obj(required={"switches": COUNT}, optional={
            **{k: opt(NUM) for k in ("inferred_shortest_us", "inferred_median_us", "kernel_handler_median_us",
                                     "kernel_switch_only_median_us", "kernel_switch_only_shortest_us")},
            **{k: opt(COUNT) for k in ("kernel_confirmed", "preemptions_between_cpu_bound", "with_tick_in_gap",
                                       "with_resched_ipi")}})),
        "interrupt_durations": opt(lst(obj(required={"source": text, "gaps": COUNT},
                                           optional={"inferred_median_us": opt(NUM), "handler_median_us": opt(NUM)}))),
        "migrations": opt(obj(optional={k: COUNT for k in ("inferred", "confirmed",
                                                            "kernel_migrations_of_hourglass_threads")})),
        "microstates": opt(lst(obj(optional={
            "name": opt(text), "thread": opt(THREAD), "kernel_ns": opt(NUM), "handlers_ns": opt(NUM),
            **{f"{k}_ns": opt(NUM) for k in ("intervals", "cputime", "schedstat", "rusage")},
            **{f"{k}_vs_kernel": opt(NUM) for k in ("intervals", "cputime", "schedstat", "rusage")}}))),
        "latency": opt(obj(optional={"stages": lst(text), "threads": opt(dmap(LAT_THREAD, index_keys=True)),
                                     "worst": opt(WORST)}, rule=_stages_rule)),
        "kernel_tick": opt(dmap(KTICK, index_keys=True)),
        "missed_deadlines": opt(obj(required={"count": COUNT}, optional={"listed": opt(lst(obj(optional={
            "t": T, "thread": opt(THREAD), "cpu": opt(PRINTABLE), "thread_ran_ms": NUM, "period_ms": NUM,
            "instead": opt(lst(obj(required={"what": text, "ms": NUM})))})))})),
        "disagreements": opt(obj(optional={"count": COUNT, "listed": opt(lst(obj(
            required={"inferred": text, "actual": text},
            optional={"t": T, "cpu": opt(PRINTABLE), "thread": opt(THREAD), "next_thread": opt(THREAD),
                      "length_us": NUM, "inferred_why": opt(text), "primary": opt(text), "actual_why": opt(text),
                      "cause": opt(text), "components_us": opt(dmap(NUM)), "events": opt(lst(text))})))})),
        "charts": opt(obj(optional={
            "map": opt(obj(required={"from": T, "to": T}, optional={
                "threads_total": COUNT, "threads": opt(lst(obj(optional={
                    "thread": opt(THREAD), "name": opt(text), "intervals": opt(lst(INTERVAL)),
                    "gaps": opt(lst(MAP_GAP))})))}, rule=_span_rule)),
            "switch_hist": opt(HIST),
            "gap_hist": opt(obj(required={"edges_us": lst(POS), "classes": dmap(lst(COUNT))},
                                rule=_gap_hist_rule)),
            "sbf": opt(dmap(obj(optional={"name": opt(text), "window_ms": opt(lst(num(above=0))),
                                          "lower_ms": opt(lst(opt(POS))), "upper_ms": opt(lst(opt(POS)))}, rule=_sbf_rule),
                            index_keys=True))})),
    })


def t(sec: Optional[float]) -> str:
    """A time on the report's one base: 't=0.580948 s' (seconds from the start of the recording)."""
    return "t=?" if sec is None else f"t={sec:.6f} s"


def run_whole(st: Optional[Dict[str, Any]]) -> str:
    """What a report's steal share is of: the run, or its time on the CPUs its gaps were on
    (steal.cpus, 2.6: a share of the run's length alone passed 1 with two CPUs' gaps)."""
    n = (st or {}).get("cpus") or 1
    return "the run" if n <= 1 else f"the run's time on its {n} CPUs"


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


def minor(rep: Report) -> int:
    """The report's minor version (0 before 2.1, which first wrote it)."""
    return int(rep.get("report_minor") or 0)


def classes(rep: Report) -> List[str]:
    """The actual classes in the merger's order (a 2.0 report's when it does not list them)."""
    return list((rep.get("gaps") or {}).get("class_order") or CLASSES_2_0)


def stages(rep: Report) -> List[str]:
    """A wake-up's stages in the order they happen, as the merger names them (2.0's when it does not)."""
    return list((rep.get("latency") or {}).get("stages") or STAGES_2_0)


def lat_threads(rep: Report) -> List["tuple[int, Dict[str, Any]]"]:
    """The latency section's threads, by thread number."""
    lat = section(rep, "latency") or {}
    return sorted(((int(k), v) for k, v in (lat.get("threads") or {}).items()), key=lambda kv: kv[0])


def migrations_text(rep: Report) -> Optional[str]:
    """The one sentence every output says of migrations (text, HTML): inferred from the intervals'
    CPUs and confirmed, against the kernel's migrations of hourglass's threads; where the threads
    recorded no intervals (a latency run's sleep), nothing was there to infer from, and the
    sentence says so instead of '0 inferred'. None without the section."""
    m = section(rep, "migrations")
    if not m:
        return None
    k = int(m.get("kernel_migrations_of_hourglass_threads") or 0)
    moved = f"the kernel moved hourglass's threads {k} time{'' if k == 1 else 's'}"
    if not (section(rep, "gaps") or {}).get("total"):
        return f"migrations: {moved}; none inferred, the threads recorded no intervals to infer them from"
    return (f"migrations: {m.get('inferred', 0)} inferred from the intervals' CPUs, {m.get('confirmed', 0)} of "
            f"them confirmed by the kernel; {moved}")


def disagreement_counts(rep: Report) -> Dict[str, int]:
    """What the report's disagreements are, counted one way for every output: "count" (every
    scored gap whose inferred class is not the kernel's), "explained" (of those, the gaps the
    kernel gives a cause: the score's wrong inferences, the headline's gaps less its correct)
    and "hidden" (gaps in which the kernel recorded nothing, inferred as something else).
    From `listed`, which holds every disagreement (report-json.md)."""
    dis = section(rep, "disagreements") or {}
    listed = dis.get("listed") or []
    hidden = sum(1 for d in listed if d.get("actual") == "hidden")
    return {"count": int(dis.get("count", len(listed))), "explained": len(listed) - hidden, "hidden": hidden}


def disagreement_of(rep: Report, thread: int, t0: float, t1: float) -> Optional[int]:
    """The index in disagreements.listed of the gap of hourglass's @thread from @t0 to @t1 s
    (the execution map's, to 0.1 us), None if it is not there. The listed times have six
    decimals: the nearest start within 1 us, of a length within 1 us."""
    listed = (section(rep, "disagreements") or {}).get("listed") or []
    best, best_d = None, 1e-6
    for i, d in enumerate(listed):
        if d.get("thread") != thread or d.get("t") is None:
            continue
        dt = abs(float(d["t"]) - t0)
        if dt <= best_d and abs(float(d.get("length_us") or 0) - (t1 - t0) * 1e6) <= 1.0:
            best, best_d = i, dt
    return best


def loads_by_name(rep: Report) -> List[Dict[str, Any]]:
    """The loads section, one entry a load: hgmerge reports one per --label it was given, and a
    load recorded with --load has several (each pid, each comm). Gaps caused, the time they took
    and the time charged add up (each gap's cause, each component's time, goes to one label); the
    median of the gaps caused and the gaps a load was in do not, and are None where more than one
    label of the load has some."""
    out: Dict[str, Dict[str, Any]] = {}
    for ld in section(rep, "loads") or []:
        name = str(ld.get("label", "?"))
        o = out.setdefault(name, {"label": name, "gaps_caused": 0, "caused_ms": 0.0, "charged_ms": 0.0,
                                  "caused_median_us": None, "gaps_touched": 0, "_c": 0, "_t": 0})
        o["gaps_caused"] += int(ld.get("gaps_caused") or 0)
        o["caused_ms"] += float(ld.get("caused_ms") or 0)
        o["charged_ms"] += float(ld.get("charged_ms") or 0)
        if ld.get("gaps_caused"):
            o["_c"] += 1
            o["caused_median_us"] = ld.get("caused_median_us") if o["_c"] == 1 else None
        if ld.get("gaps_touched"):
            o["_t"] += 1
            o["gaps_touched"] = int(ld["gaps_touched"]) if o["_t"] == 1 else None
    return [{k: v for k, v in o.items() if not k.startswith("_")} for o in out.values()]


def loads_head(rep: Report) -> str:
    """The loads' line every output opens their section with: their names, and what the table
    after it holds, or, where hourglass's threads had no gap (a latency run's sleep), that there
    was none for a load to cause."""
    names = ", ".join(ld["label"] for ld in loads_by_name(rep))
    if not (section(rep, "gaps") or {}).get("total"):
        return (f"loads beside hourglass (hourglass record --load, --label): {names}; hourglass's threads had no "
                "gap for them to cause (a task of theirs that delayed a wake-up is named in its stages)")
    return (f"loads beside hourglass (hourglass record --load, --label): {names}; the gaps each caused (it ran, "
            "or was their main cause) and those it was in, with the time charged to it")

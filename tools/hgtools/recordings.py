"""recordings - read .hgt recordings and hourglass traces through the one
reader, the C library, by running `hgtrace dump --json` (docs/hgtrace.md). The tests,
the benches and the lab read the files with it.

    rec = read_hgt("run.hgt")          # rec.events, rec.meta, rec.stats, rec.window
    tr = read_hgl("run.hgl")           # tr.info, tr.records, tr.complete, tr.dropped

A file the library refuses raises FormatError (HgtFormatError or
HglFormatError) with the library's message: the file, the offset and what
was wrong.
"""
from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple, Type

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))   # the source tree: tools/hgtools/..

INTERVAL, JOB, WAKE = 1, 2, 3
IV_YIELD, IV_SLEEP, IV_LAST = 0x01, 0x02, 0x04
JOB_MISSED, JOB_CUT = 0x01, 0x02
WAKE_LAT = 0x10
STATS_FIELDS = ("produced", "written", "refused", "overwritten", "read", "reader_fault")


class FormatError(Exception):
    """A file the library refused; the message is the library's."""


class HgtFormatError(FormatError):
    """A .hgt file that is not one, or is truncated or corrupt."""


class HglFormatError(FormatError):
    """An hourglass trace that is not one, or is truncated or corrupt."""


@dataclass(slots=True)
class Event:
    cpu: int
    tsc: int
    kind: str
    arg: int
    flags: int
    aux: int
    fields: Dict[str, Any] = field(default_factory=dict)
    raw: Optional[bytes] = None


@dataclass
class Recording:
    path: str
    meta: Dict[str, Any]
    events: List[Event]
    stats: Dict[int, Dict[str, Any]]   # cpu -> {produced, written, ...}
    window: Optional[Tuple[int, ...]]  # (start_tsc, stop_tsc) or None
    complete: bool
    version: int = 1
    nr_cpus: int = 0

    @property
    def tsc_khz(self) -> int:
        return int(self.meta["tsc_khz"])


@dataclass(slots=True)
class Record:
    t0: int
    t1: int
    t2: int
    thread: int
    type: int
    flags: int
    cpu: int

    @property
    def lateness_ns(self) -> int:
        """WAKE records: t2 is a signed lateness in ns."""
        return self.t2 - (1 << 64) if self.t2 >= 1 << 63 else self.t2


@dataclass
class Trace:
    path: str
    version: Tuple[int, int]
    info: Dict[str, Any]
    records: List[Record]
    complete: bool         # an END section, and nothing dropped
    dropped: int


def hgtrace_bin() -> str:
    """The hgtrace that reads: $HGTRACE, else the tree's build/hgtrace."""
    path = os.environ.get("HGTRACE") or os.path.join(TOP, "build", "hgtrace")
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(f"{path} is not built: make -C userspace/recorder")
    return path


def _dump(path: str, err: Type[FormatError], allow_incomplete: bool,
          on_record: Optional[Callable[[Dict[str, Any]], None]], raw: bool = False) -> Optional[Dict[str, Any]]:
    """Run `hgtrace dump --json` on @path: its first line (the file's facts)
    back, every other line's object handed to @on_record as it comes, so
    that a long recording is never held as text."""
    args = [hgtrace_bin(), "dump", "--json"] + (["--raw"] if raw else []) + [str(path)]
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          errors="replace") as p:
        assert p.stdout is not None and p.stderr is not None
        first = p.stdout.readline()
        header: Optional[Dict[str, Any]] = json.loads(first) if first else None
        for line in p.stdout:
            if on_record:
                on_record(json.loads(line))
        msg = p.stderr.read().strip()     # one line at most: no pipe fills while stdout is read
        rc = p.wait()
    if rc:
        # an unfinished file is read when allowed: dump says so in its one line
        unfinished = header is not None and not header["complete"] and rc == 3 and (
            "did not finish" in msg or "no END section" in msg)
        if not (allow_incomplete and unfinished):
            raise err(msg.removeprefix("hgtrace: ") or f"{path}: hgtrace dump exited {rc}")
    return header


def read_hgt(path: str, allow_incomplete: bool = False, raw: bool = False, records: bool = True) -> Recording:
    """A whole recording. An unfinished one (no END) raises unless allowed;
    @raw keeps each record's bytes (Event.raw). With records=False the
    library still reads and checks every record, but events stays empty:
    where the file has stats, they are the counts (the library checked that
    each CPU's records are its stats' read, its LOST markers refused +
    overwritten)."""
    events: List[Event] = []

    def on_record(o: Dict[str, Any]) -> None:
        kind = o["kind"] if o["kind"] != "unknown" else f"type{o['type']}"
        events.append(Event(o["cpu"], o["tsc"], kind, o["arg"], o["flags"], o["aux"], o["fields"],
                            bytes.fromhex(o["raw"]) if raw else None))

    h = _dump(path, HgtFormatError, allow_incomplete, on_record if records else None, raw)
    if h is None or h.get("format") != "hgtrace":
        raise HgtFormatError(f"{path}: not an hgtrace recording")
    stats = {int(cpu): st for cpu, st in h["stats"].items()}
    window = tuple(h["window"]) if h["window"] else None
    return Recording(str(path), h["meta"], events, stats, window, h["complete"], h["version"], h["nr_cpus"])


def read_hgl(path: str, allow_incomplete: bool = False, records: bool = True) -> Trace:
    """The whole trace; with records=False its records are checked by the
    library but not handed over."""
    recs: List[Record] = []

    def on_record(o: Dict[str, Any]) -> None:
        recs.append(Record(o["t0"], o["t1"], o["t2"], o["thread"], o["type"], o["flags"], o["cpu"]))

    h = _dump(path, HglFormatError, allow_incomplete, on_record if records else None)
    if h is None or h.get("format") != "hourglass trace":
        raise HglFormatError(f"{path}: not an hourglass trace")
    return Trace(str(path), (h["major"], h["minor"]), h["info"], recs,
                 h["complete"] and not h["dropped"], h["dropped"])

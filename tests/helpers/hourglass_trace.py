"""hourglass_trace - read the binary trace `hourglass --trace FILE` writes
(docs/hourglass-trace.md; the C layout is userspace/hourglass/hgl_trace.h).

    tr = read_trace("run.hgl")
    tr.info["tsc"]["hz"]                 # the run's JSON summary
    for r in tr.records:                 # per thread in time order
        if r.type == INTERVAL: print(r.thread, r.t0, r.t1, r.cpu)

Raises HglFormatError, naming the file and the offset, on anything malformed;
a file without its END section is refused unless allow_incomplete=True.
"""
import json
import struct
from dataclasses import dataclass

MAGIC = b"HGLASS\n\0"
FORMAT_MAJOR = 1
INTERVAL, JOB, WAKE = 1, 2, 3
IV_YIELD, IV_SLEEP, IV_LAST = 0x01, 0x02, 0x04
JOB_MISSED, JOB_CUT = 0x01, 0x02
WAKE_LAT = 0x10

_PRELUDE = struct.Struct("<8sHHI")      # struct hgl_prelude
_SECTION = struct.Struct("<4sIQ")       # struct hgl_section
_REC = struct.Struct("<QQQHBBI")        # struct hgl_rec
_END = struct.Struct("<QQ")             # struct hgl_end


class HglFormatError(Exception):
    """A file that is not an hourglass trace, or a truncated or corrupt one."""


@dataclass
class Record:
    t0: int
    t1: int
    t2: int
    thread: int
    type: int
    flags: int
    cpu: int

    @property
    def lateness_ns(self):
        """WAKE records: t2 is a signed lateness in ns."""
        return self.t2 - (1 << 64) if self.t2 >= 1 << 63 else self.t2


@dataclass
class Trace:
    path: str
    version: tuple
    info: dict
    records: list
    complete: bool
    dropped: int


def read_trace(path, allow_incomplete=False, records=True):
    """The whole trace; with records=False the records are counted and checked
    for size only, not read (hgmerge-core reads them itself)."""
    with open(path, "rb") as f:
        data = f.read()

    def bad(off, what):
        raise HglFormatError(f"{path}: offset {off}: {what}")

    if len(data) < _PRELUDE.size:
        bad(0, f"too short for an hourglass trace ({len(data)} bytes)")
    magic, major, minor, _ = _PRELUDE.unpack_from(data, 0)
    if magic != MAGIC:
        bad(0, "not an hourglass trace (bad magic)")
    if major != FORMAT_MAJOR:
        bad(8, f"format version {major}.{minor}, this reader knows {FORMAT_MAJOR}.x")
    want_records = records
    off, info, records, end, nrec = _PRELUDE.size, None, [], None, 0
    while off < len(data):
        if off + _SECTION.size > len(data):
            bad(off, "truncated section header")
        tag, _, size = _SECTION.unpack_from(data, off)
        body = off + _SECTION.size
        if body + size > len(data):
            bad(off, f"section '{tag.decode(errors='replace')}' of {size} bytes runs past the end of the file")
        if tag == b"info":
            try:
                info = json.loads(data[body:body + size].decode())
            except (UnicodeDecodeError, ValueError) as e:
                bad(body, f"the info section is not valid JSON: {e}")
        elif tag == b"recs":
            if size % _REC.size:
                bad(off, f"record section of {size} bytes is not a whole number of records")
            nrec += size // _REC.size
            for o in range(body, body + size, _REC.size) if want_records else ():
                r = Record(*_REC.unpack_from(data, o))
                if r.type not in (INTERVAL, JOB, WAKE):
                    bad(o, f"unknown record type {r.type}")
                records.append(r)
        elif tag == b"end!":
            if size != _END.size:
                bad(off, "bad END section")
            end = _END.unpack_from(data, body)
        off = body + size + (-size % 8)
        if end:
            break
    if info is None:
        bad(off, "no info section")
    if end is None and not allow_incomplete:
        bad(off, "no END section: the run or its writer stopped before finishing")
    if end and end[0] != nrec:
        bad(off, f"END says {end[0]} records, the file holds {nrec}")
    threads = info.get("threads_n", len(info.get("threads", [])))
    for r in records:
        if r.thread >= threads:
            bad(0, f"record of thread {r.thread}, but the run had {threads} threads")
    dropped = end[1] if end else 0
    return Trace(path, (major, minor), info, records, bool(end) and not dropped, dropped)

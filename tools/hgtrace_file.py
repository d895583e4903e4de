"""hgtrace_file - read .hgt recordings made by `hgtrace record` (docs/hgtrace-file.md).

    rec = read_hgt("run.hgt")
    for ev in rec.events:            # every record, per CPU in file order
        print(ev.cpu, ev.tsc, ev.kind, ev.fields)

Raises HgtFormatError, naming the file and the offset, on anything malformed.
The layouts below mirror kmod/uapi/hgtrace.h; tests/unit checks them against it.
"""
import struct
import zlib
from dataclasses import dataclass, field

FILE_MAGIC = b"HGTRACE\n"
FILE_VERSION = 1
CHUNK_MAGIC = 0x6B6E6863
STATS_MAGIC = 0x74617473
TIME_MAGIC = 0x656D6974
END_MAGIC = 0x21646E65
ZCHUNK_MAGIC = 0x6B68637A

TYPES = {
    1: "switch", 2: "waking", 3: "wakeup", 4: "wakeup_new", 5: "migrate", 6: "exit",
    7: "irq_entry", 8: "irq_exit", 9: "softirq_entry", 10: "softirq_exit",
    11: "vec_entry", 12: "vec_exit", 13: "nmi", 14: "hrtimer_entry", 15: "hrtimer_exit",
    16: "sys_enter", 17: "sys_exit", 18: "comm", 19: "name", 20: "lost",
}
VECTORS = ["local_timer", "reschedule", "call_function", "call_function_single", "irq_work",
           "x86_platform_ipi", "spurious_apic", "error_apic", "thermal_apic"]
STATS_FIELDS = ("produced", "written", "refused", "overwritten", "read", "reader_fault")

_HDR = struct.Struct("<QBBBBI")          # struct hgt_rec
_CHUNK = struct.Struct("<IIII")          # struct hgt_chunk
_PRELUDE = struct.Struct("<8sII")        # struct hgt_file_prelude


class HgtFormatError(Exception):
    """A .hgt file that is not one, or is truncated or corrupt."""


@dataclass
class Event:
    cpu: int
    tsc: int
    kind: str
    arg: int
    flags: int
    aux: int
    fields: dict = field(default_factory=dict)


@dataclass
class Recording:
    path: str
    meta: dict
    events: list
    stats: dict            # cpu -> {produced, written, ...}
    window: tuple          # (start_tsc, stop_tsc) or None
    complete: bool

    @property
    def tsc_khz(self):
        return int(self.meta["tsc_khz"])


def _payload(kind, rec, flags, aux, arg):
    """Type-specific fields of one record (rec = the bytes after the header)."""
    if kind == "switch":
        prev_pid, prev_state, prev_prio, next_prio = struct.unpack_from("<IIhh", rec)
        return dict(prev_pid=prev_pid, prev_state=prev_state, prev_prio=prev_prio,
                    next_pid=arg, next_prio=next_prio, next_policy=aux, preempt=flags & 1)
    if kind in ("waking", "wakeup", "wakeup_new"):
        target_cpu, prio = struct.unpack_from("<Hh", rec)
        return dict(pid=arg, target_cpu=target_cpu, prio=prio)
    if kind == "migrate":
        orig, dest = struct.unpack_from("<HH", rec)
        return dict(pid=arg, orig_cpu=orig, dest_cpu=dest)
    if kind == "exit":
        return dict(pid=arg)
    if kind in ("irq_entry",):
        return dict(irq=arg)
    if kind == "irq_exit":
        return dict(irq=arg, ret=flags)
    if kind in ("softirq_entry", "softirq_exit"):
        return dict(vec=arg)
    if kind in ("vec_entry", "vec_exit"):
        return dict(vector=arg, vec_kind=VECTORS[flags] if flags < len(VECTORS) else "unknown")
    if kind == "nmi":
        delta, handled = struct.unpack_from("<II", rec)
        return dict(handler=arg, delta_ns=delta, handled=handled)
    if kind == "hrtimer_entry":
        (func,) = struct.unpack_from("<I", rec)
        return dict(timer=arg, func=func)
    if kind == "hrtimer_exit":
        return dict(timer=arg)
    if kind == "sys_enter":
        return dict(nr=arg)
    if kind == "sys_exit":
        return dict(ret=struct.unpack("<i", struct.pack("<I", arg))[0])
    if kind == "comm":
        tgid, _pad, comm = struct.unpack_from("<II16s", rec)
        return dict(pid=arg, tgid=tgid, comm=comm.split(b"\0")[0].decode(errors="replace"))
    if kind == "name":
        (name,) = struct.unpack_from("<32s", rec)
        return dict(id=arg, name_kind="irq" if flags == 0 else "func",
                    name=name.split(b"\0")[0].decode(errors="replace"))
    if kind == "lost":
        (count,) = struct.unpack_from("<Q", rec)
        return dict(count=count, by="overwrite" if aux else "refused")
    return {}


def read_hgt(path, allow_incomplete=False):
    """Read a whole recording. An unfinished one (no END) raises unless allowed."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < _PRELUDE.size:
        raise HgtFormatError(f"{path}: too short to be an hgtrace recording")
    magic, version, meta_bytes = _PRELUDE.unpack_from(data)
    if magic != FILE_MAGIC:
        raise HgtFormatError(f"{path}: not an hgtrace recording (bad magic)")
    if version != FILE_VERSION:
        raise HgtFormatError(f"{path}: format version {version}, this reader knows {FILE_VERSION}")
    off = _PRELUDE.size
    if meta_bytes % 8 or off + meta_bytes > len(data):
        raise HgtFormatError(f"{path}: truncated or corrupt metadata")
    meta = {}
    for line in data[off:off + meta_bytes].split(b"\0")[0].decode().splitlines():
        k, _, v = line.partition(": ")
        meta[k] = v
    off += meta_bytes
    events, stats, window, complete = [], {}, None, False
    while off < len(data):
        if off + _CHUNK.size > len(data):
            raise HgtFormatError(f"{path}: truncated chunk header at offset {off}")
        magic, cpu, nbytes, _nrec = _CHUNK.unpack_from(data, off)
        if magic == END_MAGIC:
            complete = True
            off += _CHUNK.size
            break
        if magic not in (CHUNK_MAGIC, STATS_MAGIC, TIME_MAGIC, ZCHUNK_MAGIC) or nbytes % 8:
            raise HgtFormatError(f"{path}: corrupt chunk at offset {off} (magic {magic:#x})")
        body = off + _CHUNK.size
        if body + nbytes > len(data):
            raise HgtFormatError(f"{path}: truncated chunk at offset {off}")
        if magic == STATS_MAGIC:
            stats[cpu] = dict(zip(STATS_FIELDS, struct.unpack_from("<6Q", data, body)))
        elif magic == TIME_MAGIC:
            window = struct.unpack_from("<QQ", data, body)
        else:
            buf, pos, end = data, body, body + nbytes
            if magic == ZCHUNK_MAGIC:
                try:
                    raw_bytes, z_bytes = struct.unpack_from("<II", data, body)
                    if z_bytes > nbytes - 8:
                        raise ValueError("stream longer than its chunk")
                    buf = zlib.decompress(data[body + 8:body + 8 + z_bytes])
                    if len(buf) != raw_bytes:
                        raise ValueError(f"inflated to {len(buf)} bytes, not {raw_bytes}")
                except (struct.error, zlib.error, ValueError) as e:
                    raise HgtFormatError(f"{path}: corrupt compressed chunk at offset {off}: {e}")
                pos, end = 0, len(buf)
            while pos < end:
                if end - pos < _HDR.size:
                    raise HgtFormatError(f"{path}: corrupt record at offset {pos}")
                tsc, typ, ln, flags, aux, arg = _HDR.unpack_from(buf, pos)
                if ln < _HDR.size or ln % 8 or pos + ln > end:
                    raise HgtFormatError(f"{path}: corrupt record length {ln} at offset {pos}")
                kind = TYPES.get(typ, f"type{typ}")
                try:
                    fields = _payload(kind, buf[pos + _HDR.size:pos + ln], flags, aux, arg)
                except struct.error:
                    raise HgtFormatError(f"{path}: record too short for {kind} at offset {pos}")
                events.append(Event(cpu, tsc, kind, arg, flags, aux, fields))
                pos += ln
        off = body + nbytes
    if not complete and not allow_incomplete:
        raise HgtFormatError(f"{path}: the recording did not finish (no END marker)")
    if complete and off != len(data):
        raise HgtFormatError(f"{path}: {len(data) - off} bytes of garbage after the END marker")
    return Recording(path, meta, events, stats, window, complete)

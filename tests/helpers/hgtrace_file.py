"""hgtrace_file - read .hgt recordings made by `hgtrace record` (docs/hgtrace-file.md).

    rec = read_hgt("run.hgt")
    for ev in rec.events:            # every record, per CPU in file order
        print(ev.cpu, ev.tsc, ev.kind, ev.fields)

Raises HgtFormatError, naming the file and the offset, on anything malformed.
The layouts below mirror kmod/uapi/hgtrace.h; tests/unit checks them against it.
"""
import os
import struct
import zlib
from dataclasses import dataclass, field

FILE_MAGIC = b"HGTRACE\n"
FILE_VERSION = 1
FILE_VERSION_PACKED = 3     # may hold packed chunks (hgtrace pack, record -z)
FILE_VERSION_PACKED_OLD = 2  # packed with an earlier coding: refused by name, never misread
CHUNK_MAGIC = 0x6B6E6863
STATS_MAGIC = 0x74617473
TIME_MAGIC = 0x656D6974
END_MAGIC = 0x21646E65
ZCHUNK_MAGIC = 0x6B68637A
PCHUNK_MAGIC = 0x6B686370

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
PACK_SEGS = 11
_PCHUNK = struct.Struct(f"<QII{PACK_SEGS}I{PACK_SEGS}I")      # struct hgt_pchunk
SWITCH = 1
# whose previous arg predicts a type's arg: an exit's its entry's, a wakeup's its waking's
# (hgt_pack.c arg_ref)
_ARG_REF = [t for t in range(256)]
for _exit, _entry in ((8, 7), (10, 9), (12, 11), (15, 14), (3, 2)):
    _ARG_REF[_exit] = _entry


def _varints(data, start, end, count=None):
    """LEB128 varints of data[start:end]: all of them, exactly filling it."""
    out, v, shift = [], 0, 0
    for i in range(start, end):
        b = data[i]
        v |= (b & 0x7F) << shift
        if b & 0x80:
            shift += 7
            if shift >= 64:
                raise ValueError("a varint longer than 64 bits")
        else:
            out.append(v)
            v, shift = 0, 0
    if shift:
        raise ValueError("a varint cut short")
    return out


def _unzigzag(z):
    return -(z >> 1) - 1 if z & 1 else z >> 1


def unpack_chunk(body, n):
    """A packed chunk's body (after the chunk header) back into @n records, as bytes
    (userspace/recorder/hgt_pack.c is the writer; docs/hgtrace-file.md the layout)."""
    h = _PCHUNK.unpack_from(body)
    base, raw_bytes, nsegs = h[:3]
    seg_bytes, z_bytes = h[3:3 + PACK_SEGS], h[3 + PACK_SEGS:]
    if nsegs != PACK_SEGS or any(seg_bytes[k] != n for k in range(8)) or \
            sum(z_bytes) > len(body) - _PCHUNK.size:
        raise ValueError("sizes that do not add up")
    segs, at = [], _PCHUNK.size
    for k in range(PACK_SEGS):
        seg = zlib.decompress(body[at:at + z_bytes[k]])
        if len(seg) != seg_bytes[k]:
            raise ValueError(f"column {k} inflates to {len(seg)} bytes, not {seg_bytes[k]}")
        segs.append(seg)
        at += z_bytes[k]
    lens, types, flags, auxs = segs[:4]
    planes = segs[4:8]
    high = _varints(segs[8], 0, len(segs[8]))
    args = _varints(segs[9], 0, len(segs[9]))
    pay = _varints(segs[10], 0, len(segs[10]))
    if len(high) != n or len(args) != n:
        raise ValueError("columns that do not match their records")
    out = bytearray()
    prev, last_arg, last_len, last_next, p = base, [0] * 256, [0] * 256, 0, 0
    for i in range(n):
        typ = types[i]
        ln = lens[i] ^ last_len[typ]
        last_len[typ] = ln
        if ln < 16 or ln % 8:
            raise ValueError(f"a record length of {ln}")
        dz = planes[0][i] | planes[1][i] << 8 | planes[2][i] << 16 | planes[3][i] << 24 | high[i] << 32
        prev = (prev + _unzigzag(dz)) & (2**64 - 1)
        arg = (last_arg[_ARG_REF[typ]] + _unzigzag(args[i])) & 0xFFFFFFFF
        last_arg[typ] = arg
        words = pay[p:p + (ln - 16) // 4]
        if len(words) != (ln - 16) // 4:
            raise ValueError("columns that do not match their records")
        p += len(words)
        if typ == SWITCH and words:
            words[0] = (last_next + _unzigzag(words[0])) & 0xFFFFFFFF
            last_next = arg
        elif typ == SWITCH:
            last_next = arg
        out += _HDR.pack(prev, typ, ln, flags[i], auxs[i], arg) + struct.pack(f"<{len(words)}I", *words)
    if p != len(pay) or len(out) != raw_bytes:
        raise ValueError("columns that do not match their records")
    return bytes(out)


def pack_record(tsc, typ, arg=0, flags=0, aux=0, payload=b""):
    """One record as the module writes it: struct hgt_rec, then the payload
    padded to 8 bytes. For tests and benchmarks that write recordings."""
    body = payload + b"\0" * (-len(payload) % 8)
    return _HDR.pack(tsc, typ, 16 + len(body), flags, aux, arg & 0xffffffff) + body


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


class HgtStream:
    """Stream a recording chunk by chunk: memory stays with one chunk.

        st = HgtStream(path)            # reads and checks the prelude and metadata
        for cpu, tsc, typ, flags, aux, arg, buf, pos, ln in st:
            ...                         # the payload is buf[pos + 16:pos + ln]
        st.stats, st.window, st.complete   # known once the iteration ended

    Records of one CPU come in time order; CPUs are interleaved by chunk.
    Raises HgtFormatError on anything malformed, and at the end on a missing
    END marker unless allow_incomplete.
    """

    def __init__(self, path, allow_incomplete=False):
        self.path, self.allow_incomplete = path, allow_incomplete
        self.stats, self.window, self.complete = {}, None, False
        self.bytes = os.path.getsize(path)
        self.f = open(path, "rb")
        head = self.f.read(_PRELUDE.size)
        if len(head) < _PRELUDE.size:
            raise HgtFormatError(f"{path}: too short to be an hgtrace recording")
        magic, version, meta_bytes = _PRELUDE.unpack(head)
        if magic != FILE_MAGIC:
            raise HgtFormatError(f"{path}: not an hgtrace recording (bad magic)")
        if version == FILE_VERSION_PACKED_OLD:
            raise HgtFormatError(f"{path}: packed by an hgtrace before 2026-11-22 (format version {version}), "
                                 f"whose coding this reader does not read; pack the plain recording again")
        if version not in (FILE_VERSION, FILE_VERSION_PACKED):
            raise HgtFormatError(f"{path}: format version {version}, this reader knows {FILE_VERSION} "
                                 f"and {FILE_VERSION_PACKED}")
        self.version = version
        raw = self.f.read(meta_bytes)
        if meta_bytes % 8 or len(raw) != meta_bytes:
            raise HgtFormatError(f"{path}: truncated or corrupt metadata")
        self.meta = {}
        for line in raw.split(b"\0")[0].decode().splitlines():
            k, _, v = line.partition(": ")
            self.meta[k] = v
        self.offset = _PRELUDE.size + meta_bytes

    def _records(self, off, cpu, buf, pos, end):
        path = self.path
        unpack = _HDR.unpack_from
        while pos < end:
            if end - pos < _HDR.size:
                raise HgtFormatError(f"{path}: corrupt record at offset {off + pos}")
            tsc, typ, ln, flags, aux, arg = unpack(buf, pos)
            if ln < _HDR.size or ln % 8 or pos + ln > end:
                raise HgtFormatError(f"{path}: corrupt record length {ln} in the chunk at offset {off}")
            yield cpu, tsc, typ, flags, aux, arg, buf, pos, ln
            pos += ln

    def __iter__(self):
        path, f = self.path, self.f
        try:
            while True:
                off = self.offset
                head = f.read(_CHUNK.size)
                if not head:
                    break
                if len(head) < _CHUNK.size:
                    raise HgtFormatError(f"{path}: truncated chunk header at offset {off}")
                magic, cpu, nbytes, _nrec = _CHUNK.unpack(head)
                if magic == END_MAGIC:
                    self.complete = True
                    self.offset += _CHUNK.size
                    if f.read(1):
                        raise HgtFormatError(f"{path}: {self.bytes - self.offset} bytes of garbage after the END marker")
                    break
                known = (CHUNK_MAGIC, STATS_MAGIC, TIME_MAGIC, ZCHUNK_MAGIC) + \
                    ((PCHUNK_MAGIC,) if self.version >= FILE_VERSION_PACKED else ())
                if magic not in known or nbytes % 8:
                    raise HgtFormatError(f"{path}: corrupt chunk at offset {off} (magic {magic:#x})")
                body = f.read(nbytes)
                if len(body) != nbytes:
                    raise HgtFormatError(f"{path}: truncated chunk at offset {off}")
                self.offset += _CHUNK.size + nbytes
                if magic == STATS_MAGIC:
                    self.stats[cpu] = dict(zip(STATS_FIELDS, struct.unpack_from("<6Q", body)))
                elif magic == TIME_MAGIC:
                    self.window = struct.unpack_from("<QQ", body)
                elif magic == ZCHUNK_MAGIC:
                    try:
                        raw_bytes, z_bytes = struct.unpack_from("<II", body)
                        if z_bytes > nbytes - 8:
                            raise ValueError("stream longer than its chunk")
                        buf = zlib.decompress(body[8:8 + z_bytes])
                        if len(buf) != raw_bytes:
                            raise ValueError(f"inflated to {len(buf)} bytes, not {raw_bytes}")
                    except (struct.error, zlib.error, ValueError) as e:
                        raise HgtFormatError(f"{path}: corrupt compressed chunk at offset {off}: {e}")
                    yield from self._records(off, cpu, buf, 0, len(buf))
                elif magic == PCHUNK_MAGIC:
                    try:
                        buf = unpack_chunk(body, _nrec)
                    except (struct.error, zlib.error, ValueError) as e:
                        raise HgtFormatError(f"{path}: corrupt packed chunk at offset {off}: {e}")
                    yield from self._records(off, cpu, buf, 0, len(buf))
                else:
                    yield from self._records(off, cpu, body, 0, nbytes)
        finally:
            f.close()
        if not self.complete and not self.allow_incomplete:
            raise HgtFormatError(f"{path}: the recording did not finish (no END marker)")


def read_hgt(path, allow_incomplete=False):
    """Read a whole recording. An unfinished one (no END) raises unless allowed."""
    st = HgtStream(path, allow_incomplete)
    events = []
    for cpu, tsc, typ, flags, aux, arg, buf, pos, ln in st:
        kind = TYPES.get(typ, f"type{typ}")
        try:
            fields = _payload(kind, buf[pos + _HDR.size:pos + ln], flags, aux, arg)
        except struct.error:
            raise HgtFormatError(f"{path}: record too short for {kind} at offset {pos}")
        events.append(Event(cpu, tsc, kind, arg, flags, aux, fields))
    return Recording(path, st.meta, events, st.stats, st.window, st.complete)

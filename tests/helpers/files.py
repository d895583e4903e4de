"""files - write .hgt recordings and hourglass traces, for tests and benchmarks
that need files of a known content (good ones, and ones wrong in one place).

The layouts are the C headers': kmod/uapi/hgtrace.h (records),
userspace/lib/hg_hgt_format.h (.hgt), userspace/hourglass/hgl_trace.h
(hourglass's trace); tests/unit/test_abi.py and test_hourglass_trace.py
compile them and compare. Reading is the C library's job (hgtools.recordings).
"""
import json
import struct
import zlib

# .hgt (docs/hgtrace-file.md)
FILE_MAGIC = b"HGTRACE\n"
CHUNK_MAGIC = 0x6B6E6863
ZCHUNK_MAGIC = 0x6B68637A
PCHUNK_MAGIC = 0x6B686370
TIME_MAGIC = 0x656D6974
STATS_MAGIC = 0x74617473
END_MAGIC = 0x21646E65
REC = struct.Struct("<QBBBBI")          # struct hgt_rec
CHUNK = struct.Struct("<IIII")          # struct hgt_chunk
PRELUDE = struct.Struct("<8sII")        # struct hgt_file_prelude
STATS = struct.Struct("<6Q")            # struct hgt_cpu_stats
STATS_FIELDS = ("produced", "written", "refused", "overwritten", "read", "reader_fault")
RECORD_TYPES = {
    1: "switch", 2: "waking", 3: "wakeup", 4: "wakeup_new", 5: "migrate", 6: "exit",
    7: "irq_entry", 8: "irq_exit", 9: "softirq_entry", 10: "softirq_exit",
    11: "vec_entry", 12: "vec_exit", 13: "nmi", 14: "hrtimer_entry", 15: "hrtimer_exit",
    16: "sys_enter", 17: "sys_exit", 18: "comm", 19: "name", 20: "lost",
}

# hourglass's trace (docs/hourglass-trace.md)
HGL_MAGIC = b"HGLASS\n\0"
HGL_PRELUDE = struct.Struct("<8sHHI")   # struct hgl_prelude
HGL_SECTION = struct.Struct("<4sIQ")    # struct hgl_section
HGL_REC = struct.Struct("<QQQHBBI")     # struct hgl_rec
HGL_END = struct.Struct("<QQ")          # struct hgl_end


def pack_record(tsc, typ, arg=0, flags=0, aux=0, payload=b""):
    """One record as the module writes it: struct hgt_rec, then the payload
    padded to 8 bytes."""
    body = payload + b"\0" * (-len(payload) % 8)
    return REC.pack(tsc, typ, 16 + len(body), flags, aux, arg & 0xffffffff) + body


rec = pack_record


def chunk(cpu, records, magic=CHUNK_MAGIC):
    """A records chunk as read() returns it: struct hgt_chunk, then the records."""
    data = b"".join(records)
    return CHUNK.pack(magic, cpu, len(data), len(records)) + data


def zchunk(cpu, records, corrupt=False):
    """A compressed chunk ("zchk"), as `hgtrace record -z` once wrote it."""
    raw = b"".join(records)
    z = zlib.compress(raw, 1)
    if corrupt:
        z = z[:len(z) // 2] + bytes(len(z) - len(z) // 2)
    body = struct.pack("<II", len(raw), len(z)) + z + b"\0" * (-len(z) % 8)
    return CHUNK.pack(ZCHUNK_MAGIC, cpu, len(body), len(records)) + body


def hgt_file(chunks, meta="format: hgtrace 1\ntsc_khz: 1000000\n", end=True, stats=None,
             window=(1, 10**12), version=1):
    """A whole recording: prelude, metadata, @chunks, the time chunk (unless
    @window is None), one stats chunk per CPU of @stats ({cpu: 6 numbers}),
    and the END marker."""
    m = meta.encode()
    m += b"\0" * (8 - len(m) % 8)
    out = PRELUDE.pack(FILE_MAGIC, version, len(m)) + m + b"".join(chunks)
    if window is not None:
        out += CHUNK.pack(TIME_MAGIC, 0, 16, 1) + struct.pack("<QQ", *window)
    for cpu, st in (stats or {}).items():
        out += CHUNK.pack(STATS_MAGIC, cpu, STATS.size, 1) + STATS.pack(*st)
    if end:
        out += CHUNK.pack(END_MAGIC, 0, 0, 0)
    return out


def stats_for(records_by_cpu):
    """The stats chunks that make @records_by_cpu ({cpu: [record bytes]}) whole:
    every record read, each LOST marker's count refused."""
    out = {}
    for cpu, recs in records_by_cpu.items():
        read = lost = 0
        for r in recs:
            if r[8] == 20:
                lost += struct.unpack_from("<Q", r, 16)[0]
            else:
                read += 1
        out[cpu] = (read + lost, read, lost, 0, read, 0)
    return out


def section(tag, body):
    """One section of an hourglass trace: header, payload, zero padding to 8."""
    return HGL_SECTION.pack(tag, 0, len(body)) + body + b"\0" * (-len(body) % 8)


def hgl_file(records, info, end=True, major=1, minor=0, dropped=0, nrec=None, before=b""):
    """An hourglass trace: prelude, @before (extra sections), the info section
    (a dict, or bytes as they are), the records (7-tuples t0, t1, t2, thread,
    type, flags, cpu) and END (with @nrec records if given)."""
    body = b"".join(HGL_REC.pack(*r) for r in records)
    text = info if isinstance(info, bytes) else json.dumps(info).encode()
    out = HGL_PRELUDE.pack(HGL_MAGIC, major, minor, 0) + before + section(b"info", text) + section(b"recs", body)
    if end:
        out += section(b"end!", HGL_END.pack(len(records) if nrec is None else nrec, dropped))
    return out


def iv(t0, t1, thread, cpu, flags=0):
    """An INTERVAL record of hourglass's trace."""
    return (t0, t1, 0, thread, 1, flags, cpu)


def hgl(records, threads=2, t0=0):
    """A complete hourglass trace at 1 GHz: thread k is tid 100 + k."""
    info = {"tsc": {"hz": 1e9}, "t0_tsc": t0, "duration_ns": 10**9, "command": ["hourglass", "test"],
            "kernel": {"release": "test", "preempt_rt": False},
            "threads": [{"thread": k, "tid": 100 + k, "workload": "CPU", "policy": "other", "priority": 0}
                        for k in range(threads)]}
    return hgl_file(records, info)

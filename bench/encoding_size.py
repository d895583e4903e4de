#!/usr/bin/env python3
"""bench/encoding_size.py - bytes per event of a recording under other encodings.

    python3 bench/encoding_size.py RUN.hgt [TRACE.dat]

Issue 2's size target is a quarter of trace-cmd's trace.dat for the same
run. Before changing the file format, this measures what an encoding would
give on a real recording: the records as they are, with each TSC replaced by
its delta from the previous record on the same CPU (zigzag, so a record
stamped before its predecessor still fits), and as LEB128 varints (delta,
type, flags, aux, arg, payload words); each plain, through zlib levels 1 and
6 (what `hgtrace record -z` uses is level 1, per chunk) and through xz.
With TRACE.dat (trace-cmd's file of the same run) it prints the ratios.
Prints one JSON line ("encoding_size: {...}").
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from usage import help_if_asked  # noqa: E402

help_if_asked(__doc__)

import json
import lzma
import struct
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from hgtools.recordings import read_hgt  # noqa: E402  (the library's reader, through hgtrace dump)


def varint(x, out):
    while True:
        b, x = x & 0x7F, x >> 7
        if not x:
            out.append(b)
            return
        out.append(b | 0x80)


def zigzag(d):
    return d << 1 if d >= 0 else ((-d) << 1) - 1


def encodings(path):
    raw, delta, var = bytearray(), bytearray(), bytearray()
    last, n = {}, 0
    for ev in read_hgt(path, raw=True).events:
        n += 1
        rec, cpu, tsc, ln = ev.raw, ev.cpu, ev.tsc, len(ev.raw)
        typ, flags, aux, arg = rec[8], rec[10], rec[11], ev.arg
        d = zigzag(tsc - last.get(cpu, tsc))
        last[cpu] = tsc
        raw += rec
        delta += struct.pack("<Q", d) + rec[8:]
        varint(d, var)
        var += bytes((typ, flags, aux))
        varint(arg, var)
        for i in range(16, ln, 4):
            varint(struct.unpack_from("<I", rec, i)[0], var)
    return n, {"records": raw, "tsc deltas": delta, "varints": var}


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.split("\n\n")[1])
    n, encs = encodings(sys.argv[1])
    if not n:
        sys.exit(f"{sys.argv[1]}: no events")
    out = {"events": n, "file_bytes_per_event": os.path.getsize(sys.argv[1]) / n}
    ref = os.path.getsize(sys.argv[2]) / n if len(sys.argv) == 3 else None
    if ref:
        out["trace_dat_bytes_per_event"] = ref
    print(f"{n} events; the .hgt file {out['file_bytes_per_event']:.2f} B/event"
          + (f"; trace.dat {ref:.2f} B/event" if ref else ""))
    print(f"{'encoding':12s} {'plain':>7s} {'zlib 1':>7s} {'zlib 6':>7s} {'xz':>7s}   (bytes/event)")
    for name, b in encs.items():
        b = bytes(b)
        row = {"plain": len(b) / n, "zlib1": len(zlib.compress(b, 1)) / n, "zlib6": len(zlib.compress(b, 6)) / n,
               "xz": len(lzma.compress(b)) / n}
        out[name] = row
        print(f"{name:12s} " + " ".join(f"{v:7.2f}" for v in row.values())
              + (f"   ratio to trace.dat: " + " ".join(f"{v / ref:.2f}" for v in row.values()) if ref else ""))
    print("encoding_size: " + json.dumps(out))


if __name__ == "__main__":
    main()

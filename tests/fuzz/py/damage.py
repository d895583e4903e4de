#!/usr/bin/env python3
"""damage - damaged copies of real run directories, and what each program
says of them: every file `hourglass report` refuses must make `hgtrace dump`
say something too (issue 37).

    python3 tests/fuzz/py/damage.py [-v] [--hgmerge] [--seed N] [--flips N] [--only RE]
                                    [--keep DIR] [--max-runs N] [RUN_DIR ...]

RUN_DIR: a run directory (hourglass.hgl, kernel.hgt, record.json); by
default the first --max-runs (4; 0: all) of those `make lab` and the guest
tests left, out/lab-check/*/*/icount/*/ and out/vm/*/*/*/, but the ones
marked INCOMPLETE (the report refuses them whatever their files hold). Each
is copied to a scratch directory (the originals are never touched), and
its kernel.hgt or its hourglass.hgl is damaged one way at a time (--only:
the damages whose name matches):

  .hgt  cut at each chunk boundary and inside chunks (a recording cut short);
        a chunk of the trailer dropped (time, stats, END); bytes flipped in
        the prelude, the metadata, chunk headers and records; the metadata
        edited (`clock: jiffies`, another tsc_khz, fewer CPUs); absurd values
        (a stamp of 2^62 or 2^63 - 1, a window to 2^62, huge counters); a
        window that the records contradict (wholly before or after them)
  .hgl  cut at each section boundary and inside the records; bytes flipped
        in section headers and records; absurd stamps, threads and CPUs;
        END's counts changed; the info section's rate and zero changed

Then `build/hourglass report DIR` (--hgmerge: build/hgmerge, the merge
alone, 20 times faster) runs on the directory and, on the damaged file,
`build/hgtrace dump`, `dump --json`, `dump -s` and `hgtrace stat FILE`.
A case is *silent* when report refuses (exit != 0) but a reader exits 0
with nothing on stderr: a damaged file printed without a word (`hgtrace
stat FILE` reads a file as dump does since issue 50, and says the same).
The script prints one line per silent case (and, with -v, every case), a
count, and exits 1 when there is any. tests/unit/test_damaged_files.py
runs it on small real runs.
"""
import argparse
import glob
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BUILD = os.path.join(TOP, "build")
HUGE = 1 << 62
TSC_MAX = (1 << 63) - 1

# .hgt (docs/hgtrace-file.md)
CHUNK = struct.Struct("<IIII")
MAGICS = {0x6B6E6863: "chnk", 0x6B68637A: "zchk", 0x6B686370: "pchk", 0x656D6974: "time",
          0x74617473: "stat", 0x21646E65: "end!"}
RECORDS = ("chnk", "zchk", "pchk")
# hourglass's trace (docs/hourglass-trace.md)
SECTION = struct.Struct("<4sIQ")
HGL_REC = struct.Struct("<QQQHBBI")


# ---- the files' shapes ----

def hgt_chunks(data):
    """[(offset, kind, cpu, nr_bytes, nr_records)] of a well-formed .hgt, the
    metadata's (start, end) and its text"""
    meta_bytes = struct.unpack_from("<I", data, 12)[0]
    out, o = [], 16 + meta_bytes
    while o + 16 <= len(data):
        magic, cpu, nb, nr = CHUNK.unpack_from(data, o)
        out.append((o, MAGICS.get(magic, "?"), cpu, nb, nr))
        o += 16 + nb
    return out, (16, 16 + meta_bytes), data[16:16 + meta_bytes].split(b"\0")[0].decode()


def with_meta(data, text):
    """@data with its metadata replaced by @text (padded to 8 again)"""
    _, (_, m1), _ = hgt_chunks(data)
    m = text.encode()
    m += b"\0" * (8 - len(m) % 8)
    return data[:8] + struct.pack("<II", struct.unpack_from("<I", data, 8)[0], len(m)) + m + data[m1:]


def meta_edit(data, key, value):
    """@data with the metadata line of @key said @value, second (None: without it)"""
    _, _, text = hgt_chunks(data)
    lines = [l for l in text.split("\n") if l and not l.startswith(key + ":")]
    if value is not None:
        lines.insert(1, f"{key}: {value}")
    return with_meta(data, "\n".join(lines) + "\n")


def plain_records(data, chunk):
    """offsets of the records of a plain chunk"""
    o, end = chunk[0] + 16, chunk[0] + 16 + chunk[3]
    out = []
    while o + 16 <= end:
        n = data[o + 9]
        if n < 16 or n % 8:
            break
        out.append(o)
        o += n
    return out


def hgl_sections(data):
    """[(offset, tag, size)] of a well-formed hourglass trace"""
    out, o = [], 16
    while o + 16 <= len(data):
        tag, _, size = SECTION.unpack_from(data, o)
        out.append((o, tag.decode("latin-1"), size))
        o += 16 + size + (-size % 8)
    return out


def put_u64(data, at, v):
    b = bytearray(data)
    struct.pack_into("<Q", b, at, v)
    return bytes(b)


def flip(data, at, rnd):
    b = bytearray(data)
    b[at] ^= 1 << rnd.randrange(8)
    return bytes(b)


# ---- the damages: (name, file, new bytes) ----

def hgt_damages(data, rnd, flips):
    chunks, (m0, m1), _ = hgt_chunks(data)
    recs = [c for c in chunks if c[1] in RECORDS]
    plain = [c for c in recs if c[1] == "chnk"]
    trailer = [c for c in chunks if c[1] not in RECORDS]
    first = {k: next((c for c in chunks if c[1] == k), None) for k in ("time", "stat", "end!")}
    out = []
    # cut short: at chunk boundaries and inside chunks
    for c in dict.fromkeys(chunks[:3] + chunks[-4:]):     # the first and the trailer, once each
        out.append((f"hgt cut at the {c[1]} chunk at {c[0]}", data[:c[0]]))
    for c in dict.fromkeys(recs[:2] + recs[-2:]):
        for frac in (0.1, 0.5, 0.9):
            at = c[0] + 16 + int(c[3] * frac)
            out.append((f"hgt cut inside the {c[1]} chunk at {c[0]} (at {at})", data[:at]))
    out.append(("hgt cut in the prelude", data[:12]))
    out.append(("hgt cut in the metadata", data[:(m0 + m1) // 2]))
    # parts of the trailer dropped
    for k, c in first.items():
        if c:
            out.append((f"hgt without its {k} chunk", data[:c[0]] + data[c[0] + 16 + c[3]:]))
    if first["time"] and first["end!"]:
        t0 = first["time"][0]
        out.append(("hgt without its trailer (time, stats), END kept", data[:t0] + data[first["end!"][0]:]))
    # bytes flipped
    for _ in range(flips):
        out.append(("hgt byte flipped in the prelude", flip(data, rnd.randrange(16), rnd)))
        out.append(("hgt byte flipped in the metadata", flip(data, rnd.randrange(m0, m1), rnd)))
        c = rnd.choice(chunks)
        out.append((f"hgt byte flipped in the header of the {c[1]} chunk at {c[0]}",
                    flip(data, c[0] + rnd.randrange(16), rnd)))
        if plain:
            c = rnd.choice(plain)
            r = rnd.choice(plain_records(data, c))
            out.append((f"hgt byte flipped in a record header at {r}", flip(data, r + rnd.randrange(16), rnd)))
            out.append((f"hgt byte flipped in a record at {r}", flip(data, r + rnd.randrange(data[r + 9]), rnd)))
        if trailer:
            c = rnd.choice(trailer)
            if c[3]:
                out.append((f"hgt byte flipped in the {c[1]} chunk at {c[0]}",
                            flip(data, c[0] + 16 + rnd.randrange(c[3]), rnd)))
    # the metadata edited
    for key, value in (("clock", "jiffies"), ("clock", "local"), ("clock", "x86-tsc"), ("clock", "mono"),
                       ("tsc_khz", "1"), ("tsc_khz", "4294967295"), ("nr_cpu_ids", "1"),
                       ("format", "hgtrace 9"), ("abi", "9.0"), ("tsc_khz", None)):
        out.append((f"hgt metadata {key}: {value}", meta_edit(data, key, value)))
    # absurd values
    if plain:
        for r in (plain_records(data, plain[0])[:1] + plain_records(data, plain[-1])[-1:]):
            for v in (HUGE, TSC_MAX, TSC_MAX + 1, 0):
                out.append((f"hgt record at {r} stamped {v}", put_u64(data, r, v)))
        c = plain[len(plain) // 2]
        rs = plain_records(data, c)
        if len(rs) > 2:
            r = rs[len(rs) // 2]
            out.append((f"hgt record at {r} stamped {HUGE} (mid-file)", put_u64(data, r, HUGE)))
    for c in recs[:1]:
        for field, at in (("nr_bytes", 8), ("nr_records", 12), ("cpu", 4)):
            b = bytearray(data)
            struct.pack_into("<I", b, c[0] + at, 0xFFFFFFF0)
            out.append((f"hgt chunk at {c[0]}: {field} 0xfffffff0", bytes(b)))
    if first["time"]:
        t = first["time"][0] + 16
        start, stop = struct.unpack_from("<QQ", data, t)
        stamps = [struct.unpack_from("<Q", data, r)[0] for c in plain for r in plain_records(data, c)]
        lo, hi = (min(stamps), max(stamps)) if stamps else (start, stop)
        for name, w in (("0..2^62", (0, HUGE)), ("start..2^62", (start, HUGE)),
                        ("0..2^63-1", (0, TSC_MAX)), ("of zero length", (start, start)),
                        ("wholly after the records", (hi + 10**9, hi + 2 * 10**9)),
                        ("wholly before the records", (max(lo - 2 * 10**9, 0), max(lo - 10**9, 0))),
                        ("ten times the records' span", (lo, lo + 10 * max(hi - lo, 1))),
                        ("stop beyond 2^63", (start, 1 << 63))):
            out.append((f"hgt window {name}", data[:t] + struct.pack("<QQ", *w) + data[t + 16:]))
    for c in [c for c in chunks if c[1] == "stat"][:1]:
        for k, field in enumerate(("produced", "written", "refused", "overwritten", "read", "reader_fault")):
            out.append((f"hgt stats {field} {HUGE}", put_u64(data, c[0] + 16 + 8 * k, HUGE)))
    return out


def hgl_damages(data, rnd, flips):
    secs = hgl_sections(data)
    recs = [s for s in secs if s[1] == "recs"]
    info = next((s for s in secs if s[1] == "info"), None)
    end = next((s for s in secs if s[1] == "end!"), None)
    out = []
    for s in secs:
        out.append((f"hgl cut at the {s[1]} section at {s[0]}", data[:s[0]]))
    for s in recs:
        n = s[2] // 32
        for k in (1, n // 2, n - 1):
            if 0 < k < n:
                at = s[0] + 16 + 32 * k
                out.append((f"hgl cut at record {k} of {n}", data[:at]))
                out.append((f"hgl cut inside record {k} of {n}", data[:at + 12]))
    if end:
        out.append(("hgl without its END section", data[:end[0]] + data[end[0] + 32:]))
        for k, field in enumerate(("nr_records", "dropped")):
            v = struct.unpack_from("<Q", data, end[0] + 16 + 8 * k)[0]
            for nv in (v + 1, HUGE):
                out.append((f"hgl END {field} {nv}", put_u64(data, end[0] + 16 + 8 * k, nv)))
    for _ in range(flips):
        out.append(("hgl byte flipped in the prelude", flip(data, rnd.randrange(16), rnd)))
        s = rnd.choice(secs)
        out.append((f"hgl byte flipped in the header of {s[1]} at {s[0]}", flip(data, s[0] + rnd.randrange(16), rnd)))
        for s in recs:
            at = s[0] + 16 + rnd.randrange(s[2])
            out.append((f"hgl byte flipped in a record at {at - (at - s[0] - 16) % 32}", flip(data, at, rnd)))
        if info:
            out.append(("hgl byte flipped in the info section", flip(data, info[0] + 16 + rnd.randrange(info[2]), rnd)))
    for s in recs:
        n = s[2] // 32
        for k in sorted({0, n // 2, n - 1}):
            r = s[0] + 16 + 32 * k
            t0, t1, t2, thread, typ, flags, cpu = HGL_REC.unpack_from(data, r)
            for field, at, v in (("t0", 0, HUGE), ("t1", 8, HUGE), ("t1", 8, TSC_MAX), ("t0", 0, 0),
                                 ("t1", 8, t0 - 1 if t0 else 0), ("t2", 16, HUGE)):
                out.append((f"hgl record {k} ({typ}): {field} = {v}", put_u64(data, r + at, v)))
            for field, fmt, at, v in (("thread", "<H", 24, 0xFFFF), ("type", "<B", 26, 9),
                                      ("cpu", "<I", 28, 0xFFFFFFF)):
                b = bytearray(data)
                struct.pack_into(fmt, b, r + at, v)
                out.append((f"hgl record {k}: {field} = {v}", bytes(b)))
        if n > 2:       # two intervals of a thread that overlap
            a, b_ = s[0] + 16, s[0] + 16 + 32
            t0a = struct.unpack_from("<Q", data, a)[0]
            out.append(("hgl record 1 starts where record 0 does (one thread's: they overlap)", put_u64(data, b_, t0a)))
    if info:
        text = data[info[0] + 16:info[0] + 16 + info[2]]
        for name, pat, rep in (("tsc.hz doubled", rb'"hz":([0-9.e+]+)', None),
                               ("t0_tsc 2^62", rb'"t0_tsc":[0-9]+', b'"t0_tsc":%d' % HUGE),
                               ("t0_tsc 0", rb'"t0_tsc":[0-9]+', b'"t0_tsc":0'),
                               ("complete false", rb'"complete":true', b'"complete":false')):
            if rep is None:
                m = re.search(pat, text)
                if not m:
                    continue
                new = re.sub(pat, lambda m: b'"hz":%r' % (float(m.group(1)) * 2), text, count=1)
            else:
                new = re.sub(pat, rep, text, count=1)
            body = new + b"\0" * (-len(new) % 8)
            sec = SECTION.pack(b"info", 0, len(new)) + body
            out.append((f"hgl info {name}", data[:info[0]] + sec + data[info[0] + 16 + info[2] + (-info[2] % 8):]))
    return out


# ---- running the programs ----

def run(cmd, timeout=300):
    p = subprocess.run(cmd, capture_output=True, timeout=timeout)
    return p.returncode, p.stderr.decode(errors="replace").strip()


def readers(path, quick=False):
    """what the readers say of @path: {name: (status, stderr)}; @quick: dump, dump --json and stat"""
    h = os.path.join(BUILD, "hgtrace")
    said = {"dump": run([h, "dump", path]), "dump --json": run([h, "dump", "--json", path]),
            "stat": run([h, "stat", path])}
    if not quick:
        said["dump -s"] = run([h, "dump", "-s", path])
    return said


def merge(run_dir, merger):
    """`hourglass report DIR`, or (merger "hgmerge": 20 times faster, the same refusals but
    the report loader's) the merge alone: (status, stderr)"""
    if merger == "hgmerge":
        return run([os.path.join(BUILD, "hgmerge"), "--hgl", os.path.join(run_dir, "hourglass.hgl"),
                    "--kernel", os.path.join(run_dir, "kernel.hgt"), "--report", os.path.join(run_dir, "r.json")])
    return run([os.path.join(BUILD, "hourglass"), "report", run_dir])


def judge(run_dir, which, data, merger="report", quick=False):
    """write @data as @which in @run_dir, run report and the readers: a result dict"""
    path = os.path.join(run_dir, which)
    with open(path, "wb") as f:
        f.write(data)
    rc, err = merge(run_dir, merger)
    said = readers(path, quick)
    silent = [k for k, (s, e) in said.items() if s == 0 and not e]
    return {"report": (rc, err.splitlines()[-1] if err else ""), "readers": said,
            "silent": silent if rc else []}


def damaged_runs(run_dirs, seed=37, flips=3, keep=None, only=None, merger="report", quick=False):
    """yield (run_dir, damage, file, result) for every damage of every run"""
    rnd = random.Random(seed)
    scratch = keep or tempfile.mkdtemp(prefix="hg-damage-")
    try:
        for n, src in enumerate(run_dirs):
            work = os.path.join(scratch, f"run{n}")
            shutil.rmtree(work, ignore_errors=True)
            os.makedirs(work)
            for f in ("hourglass.hgl", "kernel.hgt", "record.json"):
                if os.path.exists(os.path.join(src, f)):
                    shutil.copy(os.path.join(src, f), work)
            originals = {}
            for f in ("kernel.hgt", "hourglass.hgl"):
                with open(os.path.join(work, f), "rb") as x:
                    originals[f] = x.read()
            damages = ([("kernel.hgt",) + d for d in hgt_damages(originals["kernel.hgt"], rnd, flips)]
                       + [("hourglass.hgl",) + d for d in hgl_damages(originals["hourglass.hgl"], rnd, flips)])
            for which, name, data in damages:
                if only and not re.search(only, name):
                    continue
                res = judge(work, which, data, merger, quick)
                if keep and res["silent"]:
                    with open(os.path.join(scratch, f"run{n}-{len(os.listdir(scratch))}-{which}"), "wb") as x:
                        x.write(data)
                with open(os.path.join(work, which), "wb") as x:     # the next damage is alone
                    x.write(originals[which])
                yield src, name, which, res
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)


def default_runs():
    runs = sorted(glob.glob(os.path.join(TOP, "out", "lab-check", "*", "*", "icount", "*", "")))
    runs += sorted(glob.glob(os.path.join(TOP, "out", "vm", "*", "*", "*", "")))
    # a run that did not finish (INCOMPLETE) is refused whatever its files hold
    return [r for r in runs if all(os.path.exists(os.path.join(r, f)) for f in ("hourglass.hgl", "kernel.hgt"))
            and not os.path.exists(os.path.join(r, "INCOMPLETE"))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="*", help="run directories (default: out/lab-check's and out/vm's)")
    ap.add_argument("--seed", type=int, default=37)
    ap.add_argument("--flips", type=int, default=3, help="byte flips of each kind a file")
    ap.add_argument("--max-runs", type=int, default=4, help="of the default run directories, this many (0: all)")
    ap.add_argument("--only", help="damages whose name matches this regular expression")
    ap.add_argument("--keep", help="keep the scratch directory here, and each silent file")
    ap.add_argument("--hgmerge", action="store_true", help="run build/hgmerge, not hourglass report (faster)")
    ap.add_argument("-v", action="store_true", help="a line for every case")
    a = ap.parse_args()
    runs = a.runs or default_runs()[:a.max_runs or None]
    if not runs:
        sys.exit("damage: no run directories (give some)")
    total = refused = 0
    silent = []
    for src, name, which, res in damaged_runs(runs, a.seed, a.flips, a.keep, a.only,
                                              "hgmerge" if a.hgmerge else "report"):
        total += 1
        refused += res["report"][0] != 0
        line = (f"{os.path.relpath(src, TOP)}: {name}: report {res['report'][0]}"
                + "".join(f", {k} {s}" for k, (s, e) in res["readers"].items()))
        if res["silent"]:
            silent.append(line)
            print("SILENT " + line + f"  [report: {res['report'][1]}]")
        elif a.v:
            print("       " + line + (f"  [report: {res['report'][1]}]" if res["report"][0] else ""))
    print(f"damage: {total} damaged files, {refused} refused by report, {len(silent)} of those printed by "
          f"hgtrace dump without a word")
    sys.exit(1 if silent else 0)


if __name__ == "__main__":
    main()

"""Reading .hgt files: the C dump and the Python reader agree, and bad files are refused clearly."""
import struct
import subprocess

import pytest

from conftest import chunk, hgt_file, rec
from hgtrace_file import HgtFormatError, read_hgt

SWITCH = struct.pack("<IIhhI", 7, 1, 120, 99, 0)
COMM = struct.pack("<II16s", 7, 0, b"worker")


def good_file():
    return hgt_file([
        chunk(0, [rec(100, 18, arg=7, payload=COMM), rec(110, 1, arg=42, flags=1, aux=1, payload=SWITCH),
                  rec(120, 7, arg=11), rec(130, 8, arg=11, flags=1)]),
        chunk(1, [rec(105, 9, arg=7), rec(140, 20, payload=struct.pack("<Q", 5)), rec(150, 10, arg=7)]),
    ], stats={0: (4, 4, 0, 0, 4, 0), 1: (7, 2, 5, 0, 2, 0)})


def dump(hgtrace_bin, path):
    return subprocess.run([hgtrace_bin, "dump", "-s", str(path)], capture_output=True, text=True,
                          errors="replace")


def test_readers_agree(tmp_path, hgtrace_bin):
    path = tmp_path / "good.hgt"
    path.write_bytes(good_file())
    r = read_hgt(str(path))
    assert [(e.cpu, e.tsc, e.kind) for e in r.events] == [
        (0, 100, "comm"), (0, 110, "switch"), (0, 120, "irq_entry"), (0, 130, "irq_exit"),
        (1, 105, "softirq_entry"), (1, 140, "lost"), (1, 150, "softirq_exit")]
    sw = r.events[1].fields
    assert sw == dict(prev_pid=7, prev_state=1, prev_prio=120, next_pid=42, next_prio=99,
                      next_policy=1, preempt=1)
    assert r.events[0].fields["comm"] == "worker" and r.events[5].fields["count"] == 5
    assert r.window == (1, 10**12) and r.stats[1]["refused"] == 5 and r.complete
    p = dump(hgtrace_bin, path)
    assert p.returncode == 0, p.stderr
    lines = [l for l in p.stdout.splitlines() if not l.startswith("#")]
    assert [tuple(l.split()[:3]) for l in lines] == [(str(e.cpu), str(e.tsc), e.kind) for e in r.events]
    assert "prev_pid=7 prev_prio=120 prev_state=1 next_pid=42 next_prio=99 next_policy=1 preempt=1" in lines[1]
    assert "count=5 by=refused" in lines[5]
    assert "# stats cpu=1 produced=7 written=2 refused=5" in p.stdout


@pytest.mark.parametrize("cut", [4, 20, 60, 200, -40, -16, -1])
def test_truncated(tmp_path, hgtrace_bin, cut):
    data = good_file()
    path = tmp_path / "cut.hgt"
    path.write_bytes(data[:cut])
    with pytest.raises(HgtFormatError) as e:
        read_hgt(str(path))
    assert str(path) in str(e.value)
    p = dump(hgtrace_bin, path)
    assert p.returncode == 3, p.stdout
    assert str(path) in p.stderr and ("truncated" in p.stderr or "did not finish" in p.stderr
                                      or "not an hgtrace" in p.stderr), p.stderr


def test_unfinished_recording(tmp_path, hgtrace_bin):
    path = tmp_path / "noend.hgt"
    path.write_bytes(hgt_file([chunk(0, [rec(5, 7, arg=1)])], end=False))
    with pytest.raises(HgtFormatError, match="did not finish"):
        read_hgt(str(path))
    assert len(read_hgt(str(path), allow_incomplete=True).events) == 1
    p = dump(hgtrace_bin, path)
    assert p.returncode == 3 and "did not finish" in p.stderr
    assert "irq_entry" in p.stdout, "what could be read is still printed"


@pytest.mark.parametrize("what", ["magic", "version", "chunk_magic", "record_len", "short_payload"])
def test_corrupt(tmp_path, hgtrace_bin, what):
    if what == "magic":
        data = b"NOTHGTR\n" + good_file()[8:]
        msg = "not an hgtrace"
    elif what == "version":
        data = hgt_file([], version=9)
        msg = "version 9"
    elif what == "chunk_magic":
        data = hgt_file([struct.pack("<IIII", 0xDEAD, 0, 0, 0)])
        msg = "corrupt chunk"
    elif what == "record_len":
        bad = bytearray(rec(5, 7, arg=1))
        bad[9] = 12          # not a multiple of 8
        data = hgt_file([chunk(0, [bytes(bad)])])
        msg = "corrupt record"
    else:
        data = hgt_file([chunk(0, [rec(5, 1, arg=1)])])   # a switch without its payload
        msg = "too short"
    path = tmp_path / f"{what}.hgt"
    path.write_bytes(data)
    with pytest.raises(HgtFormatError, match=msg):
        read_hgt(str(path))
    p = dump(hgtrace_bin, path)
    assert p.returncode == 3 and msg in p.stderr, p.stderr


def test_compressed_chunks(tmp_path, hgtrace_bin):
    from conftest import zchunk
    plain = tmp_path / "plain.hgt"
    plain.write_bytes(good_file())
    records0 = [rec(100, 18, arg=7, payload=COMM), rec(110, 1, arg=42, flags=1, aux=1, payload=SWITCH),
                rec(120, 7, arg=11), rec(130, 8, arg=11, flags=1)]
    records1 = [rec(105, 9, arg=7), rec(140, 20, payload=struct.pack("<Q", 5)), rec(150, 10, arg=7)]
    z = tmp_path / "z.hgt"
    z.write_bytes(hgt_file([zchunk(0, records0), zchunk(1, records1)],
                           stats={0: (4, 4, 0, 0, 4, 0), 1: (7, 2, 5, 0, 2, 0)}))
    assert [(e.cpu, e.tsc, e.kind, e.fields) for e in read_hgt(str(z)).events] == \
           [(e.cpu, e.tsc, e.kind, e.fields) for e in read_hgt(str(plain)).events]
    assert dump(hgtrace_bin, z).stdout == dump(hgtrace_bin, plain).stdout
    bad = tmp_path / "zbad.hgt"
    bad.write_bytes(hgt_file([zchunk(0, records0 * 20, corrupt=True)]))
    with pytest.raises(HgtFormatError, match="corrupt compressed chunk"):
        read_hgt(str(bad))
    p = dump(hgtrace_bin, bad)
    assert p.returncode == 3 and "corrupt compressed chunk" in p.stderr, p.stderr


def varied_file(n=40000):
    """Records that stress the packed columns: every type, stamps that jump by more than
    2^32 and go back, args that wander, switches whose prev is not the last next,
    payload words of all sizes, and more records on CPU 0 than one packed block holds."""
    import random
    rnd = random.Random(7)
    per_cpu = {0: [], 1: [], 5: []}
    t = {0: 10**9, 1: 2**40, 5: 5}
    last_next = 0
    for i in range(n):
        cpu = 0 if i % 4 else rnd.choice((1, 5))
        step = rnd.choice((1, 300, 5000, 2**33 + 17, -40)) if i % 97 == 0 else rnd.randint(0, 20000)
        t[cpu] = max(0, t[cpu] + step)
        typ = rnd.choice((1, 2, 3, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 33))
        if typ == 1:
            nxt = rnd.choice((0, 100, 101, 2**31 + 5, 4294967295))
            prev = last_next if rnd.random() < 0.8 else rnd.randint(0, 2**32 - 1)
            pay = struct.pack("<IIhhI", prev, rnd.choice((0, 1, 2, 0x402)), 120, -1, 0)
            last_next = nxt
            r = rec(t[cpu], typ, arg=nxt, flags=rnd.randint(0, 1), aux=rnd.randint(0, 6), payload=pay)
        else:
            words = rnd.randint(0, 8) if typ == 33 else {18: 6, 19: 8, 20: 2, 13: 2, 14: 2, 2: 2, 3: 2, 5: 2}.get(typ, 0)
            pay = b"".join(struct.pack("<I", rnd.choice((0, 1, 255, 70000, 2**32 - 1))) for _ in range(words))
            r = rec(t[cpu], typ, arg=rnd.choice((0, 3, 30, 2**32 - 1, rnd.randint(0, 2**32 - 1))),
                    flags=rnd.randint(0, 255), aux=rnd.randint(0, 255), payload=pay)
        per_cpu[cpu].append(r)
    chunks = []
    for cpu, rs in per_cpu.items():
        for k in range(0, len(rs), 1000):
            chunks.append(chunk(cpu, rs[k:k + 1000]))
    chunks.sort(key=lambda c: c[:0])      # keep per-CPU order, CPUs interleaved as written
    return hgt_file(chunks, meta="format: hgtrace 1\ncompression: none\ntsc_khz: 1000000\n",
                    stats={0: (1, 2, 3, 4, 5, 6), 1: (7, 8, 9, 10, 11, 12)}, window=(3, 2**50))


def per_cpu_records(path):
    from hgtrace_file import HgtStream
    out, st = {}, HgtStream(str(path))
    for cpu, tsc, typ, flags, aux, arg, buf, pos, ln in st:
        out.setdefault(cpu, []).append(bytes(buf[pos:pos + ln]))
    return out, st


def test_pack_keeps_every_record(tmp_path, hgtrace_bin):
    plain, packed = tmp_path / "plain.hgt", tmp_path / "packed.hgt"
    plain.write_bytes(varied_file())
    p = subprocess.run([hgtrace_bin, "pack", str(plain), "-o", str(packed)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    a, sa = per_cpu_records(plain)
    b, sb = per_cpu_records(packed)
    assert a == b and sum(len(v) for v in a.values()) == 40000
    assert (sb.version, sb.meta["compression"], sb.meta["format"]) == (3, "packed (columns, zlib 9)", "hgtrace 3")
    assert (sb.stats, sb.window, sb.complete) == (sa.stats, sa.window, True)
    # the C reader too, and the file is smaller
    da, db = dump(hgtrace_bin, plain), dump(hgtrace_bin, packed)
    assert db.returncode == 0, db.stderr
    rows = lambda out: sorted((l.split()[0], i, l) for i, l in enumerate(
        l for l in out.splitlines() if not l.startswith("#")))
    per = lambda out: {c: [l for cc, _, l in rows(out) if cc == c] for c in ("0", "1", "5")}
    assert per(da.stdout) == per(db.stdout)
    assert packed.stat().st_size < plain.stat().st_size / 2
    # in place, and packing a packed file changes nothing in its records
    p = subprocess.run([hgtrace_bin, "pack", str(packed)], capture_output=True, text=True)
    assert p.returncode == 0 and per_cpu_records(packed)[0] == a


def test_pack_refuses_bad_input_and_keeps_it(tmp_path, hgtrace_bin):
    bad = tmp_path / "bad.hgt"
    data = good_file()[:-30]
    bad.write_bytes(data)
    p = subprocess.run([hgtrace_bin, "pack", str(bad)], capture_output=True, text=True)
    assert p.returncode == 3 and str(bad) in p.stderr and "truncated" in p.stderr
    assert bad.read_bytes() == data and not (tmp_path / "bad.hgt.packing").exists()
    noend = tmp_path / "noend.hgt"
    noend.write_bytes(hgt_file([chunk(0, [rec(5, 7, arg=1)])], end=False))
    p = subprocess.run([hgtrace_bin, "pack", str(noend)], capture_output=True, text=True)
    assert p.returncode == 3 and "did not finish" in p.stderr
    r = read_hgt(str(noend), allow_incomplete=True)
    assert not r.complete and [(e.tsc, e.kind) for e in r.events] == [(5, "irq_entry")]
    p = subprocess.run([hgtrace_bin, "pack", str(noend), "-l", "12"], capture_output=True, text=True)
    assert p.returncode == 1 and "bad level" in p.stderr


def test_corrupt_packed_chunk(tmp_path, hgtrace_bin):
    plain, packed = tmp_path / "plain.hgt", tmp_path / "packed.hgt"
    plain.write_bytes(varied_file(3000))
    subprocess.run([hgtrace_bin, "pack", str(plain), "-o", str(packed)], check=True)
    data = bytearray(packed.read_bytes())
    at = data.index(struct.pack("<I", 0x6B686370))      # the first packed chunk
    # a byte inside the first zlib stream; the first column's inflated size
    for name, off, val in (("zlib", at + 16 + 104 + 2, 0x55), ("sizes", at + 16 + 16, 0x7F)):
        bad = tmp_path / f"bad-{name}.hgt"
        d = bytearray(data)
        d[off] ^= val
        bad.write_bytes(bytes(d))
        with pytest.raises(HgtFormatError, match="corrupt packed chunk"):
            read_hgt(str(bad))
        p = dump(hgtrace_bin, bad)
        assert p.returncode == 3 and "corrupt packed chunk" in p.stderr and str(bad) in p.stderr, p.stderr
    # a reader of version 1 files only must refuse a packed file by its version
    v1 = bytearray(data)
    v1[8:12] = struct.pack("<I", 1)
    (tmp_path / "v1.hgt").write_bytes(bytes(v1))
    with pytest.raises(HgtFormatError, match="corrupt chunk"):
        read_hgt(str(tmp_path / "v1.hgt"))


def test_old_packed_version_refused_by_name(tmp_path, hgtrace_bin):
    """Version 2 files were packed with an earlier coding: every reader refuses
    them saying so, none misreads their records."""
    plain, packed = tmp_path / "plain.hgt", tmp_path / "v2.hgt"
    plain.write_bytes(varied_file(2000))
    subprocess.run([hgtrace_bin, "pack", str(plain), "-o", str(packed)], check=True)
    data = bytearray(packed.read_bytes())
    data[8:12] = struct.pack("<I", 2)
    packed.write_bytes(bytes(data))
    with pytest.raises(HgtFormatError, match="format version 2.*pack the plain recording again"):
        read_hgt(str(packed))
    p = dump(hgtrace_bin, packed)
    assert p.returncode != 0 and "format version 2" in p.stderr and str(packed) in p.stderr, p.stderr

"""Reading .hgt files through the one reader (userspace/lib, by `hgtrace dump`):
text and JSON agree, every coding reads the same, and bad files are refused
with one line naming the file, the offset and what was wrong, exit 3."""
import json
import struct
import subprocess

import pytest

from conftest import chunk, hgt_file, rec, zchunk
from helpers.files import hgl_file, iv, stats_for
from hgtools.recordings import HgtFormatError, read_hgl, read_hgt

SWITCH = struct.pack("<IIhhI", 7, 1, 120, 99, 0)
COMM = struct.pack("<II16s", 7, 0, b"worker")
META = "format: hgtrace 1\ntsc_khz: 1000000\nnr_cpu_ids: 2\n"
RECORDS0 = [rec(100, 18, arg=7, payload=COMM), rec(110, 1, arg=42, flags=1, aux=1, payload=SWITCH),
            rec(120, 7, arg=11), rec(130, 8, arg=11, flags=1)]
RECORDS1 = [rec(105, 9, arg=7), rec(140, 20, payload=struct.pack("<Q", 5)), rec(150, 10, arg=7)]
STATS = {0: (4, 4, 0, 0, 4, 0), 1: (7, 2, 5, 0, 2, 0)}


def good_file():
    return hgt_file([chunk(0, RECORDS0), chunk(1, RECORDS1)], meta=META, stats=STATS)


def dump(hgtrace_bin, path, *opts):
    return subprocess.run([hgtrace_bin, "dump", *opts, str(path)], capture_output=True, text=True,
                          errors="replace")


def test_text_and_json_agree(tmp_path, hgtrace_bin):
    path = tmp_path / "good.hgt"
    path.write_bytes(good_file())
    r = read_hgt(str(path))
    assert [(e.cpu, e.tsc, e.kind) for e in r.events] == [
        (0, 100, "comm"), (0, 110, "switch"), (0, 120, "irq_entry"), (0, 130, "irq_exit"),
        (1, 105, "softirq_entry"), (1, 140, "lost"), (1, 150, "softirq_exit")]
    sw = r.events[1].fields
    assert sw == dict(prev_pid=7, prev_state=1, prev_prio=120, next_pid=42, next_prio=99,
                      next_policy=1, preempt=1)
    assert r.events[0].fields == dict(pid=7, tgid=7, comm="worker") and r.events[5].fields["count"] == 5
    assert r.window == (1, 10**12) and r.stats[1]["refused"] == 5 and r.complete
    assert r.meta == {"format": "hgtrace 1", "tsc_khz": "1000000", "nr_cpu_ids": "2"} and r.tsc_khz == 1000000
    assert (r.version, r.nr_cpus) == (1, 2)
    p = dump(hgtrace_bin, path, "-s", "-m")
    assert p.returncode == 0, p.stderr
    lines = [l for l in p.stdout.splitlines() if not l.startswith("#")]
    assert [tuple(l.split()[:3]) for l in lines] == [(str(e.cpu), str(e.tsc), e.kind) for e in r.events]
    assert "prev_pid=7 prev_prio=120 prev_state=1 next_pid=42 next_prio=99 next_policy=1 preempt=1" in lines[1]
    assert "count=5 by=refused" in lines[5]
    assert "# stats cpu=1 produced=7 written=2 refused=5" in p.stdout
    assert "# nr_cpu_ids: 2" in p.stdout and "# window start_tsc=1 stop_tsc=1000000000000" in p.stdout


def test_json_lines(tmp_path, hgtrace_bin):
    """One object a line; bytes that are not UTF-8 still give valid JSON; --raw is the record's bytes."""
    comm = struct.pack("<II16s", 9, 9, b"bad\xff\x01name")
    name = struct.pack("<32s", b'a"quote\\')
    records = [rec(1, 18, arg=9, payload=comm), rec(2, 19, arg=3, payload=name), rec(3, 33, arg=4),
               rec(4, 17, arg=0xFFFFFFFE), rec(5, 11, arg=236, flags=0), rec(6, 12, arg=1, flags=200)]
    path = tmp_path / "j.hgt"
    path.write_bytes(hgt_file([chunk(0, records)], meta=META))
    p = dump(hgtrace_bin, path, "--json", "--raw")
    assert p.returncode == 0, p.stderr
    objs = [json.loads(l) for l in p.stdout.splitlines()]
    head, recs = objs[0], objs[1:]
    assert head["format"] == "hgtrace" and head["complete"] and head["nr_records"] == 6 and head["stats"] == {}
    assert recs[0]["fields"]["comm"] == "bad\ufffd\x01name"
    assert recs[1]["fields"] == {"id": 3, "name_kind": "irq", "name": 'a"quote\\'}
    assert recs[2]["kind"] == "unknown" and recs[2]["fields"] == {}
    assert recs[3]["fields"]["ret"] == -2
    assert recs[4]["fields"]["vec_kind"] == "local_timer" and recs[5]["fields"]["vec_kind"] == "unknown"
    assert [bytes.fromhex(o["raw"]) for o in recs] == records
    r = read_hgt(str(path))
    assert r.events[2].kind == "type33"
    assert dump(hgtrace_bin, path, "--raw").returncode == 1, "--raw without --json is a usage error"


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
    assert str(path) in p.stderr and ("truncated" in p.stderr or "did not finish" in p.stderr), p.stderr


def test_unfinished_recording(tmp_path, hgtrace_bin):
    path = tmp_path / "noend.hgt"
    path.write_bytes(hgt_file([chunk(0, [rec(5, 7, arg=1)])], end=False))
    with pytest.raises(HgtFormatError, match="did not finish"):
        read_hgt(str(path))
    assert len(read_hgt(str(path), allow_incomplete=True).events) == 1
    p = dump(hgtrace_bin, path)
    assert p.returncode == 3 and "did not finish" in p.stderr
    assert "irq_entry" in p.stdout, "what could be read is still printed"
    # a recorder that died while writing a chunk: read up to the last whole one
    cut = tmp_path / "cut.hgt"
    cut.write_bytes(hgt_file([chunk(0, [rec(5, 7, arg=1)]), chunk(0, [rec(6, 8, arg=1)])], end=False,
                             window=None)[:-10])
    r = read_hgt(str(cut), allow_incomplete=True)
    assert [e.kind for e in r.events] == ["irq_entry"] and not r.complete
    p = dump(hgtrace_bin, cut)
    assert p.returncode == 3 and "cut short" in p.stderr and "irq_entry" in p.stdout


def bad_files():
    r0 = RECORDS0
    bad_len = bytearray(rec(5, 7, arg=1))
    bad_len[9] = 12          # not a multiple of 8
    return [
        ("empty", b"", "empty file"),
        ("magic", b"NOT\x1bHGT\n" + good_file()[8:], "not an hgtrace recording (bad magic \"NOT\\x1bHGT\\x0a\")"),
        ("version", hgt_file([], version=9), "format version 9"),
        ("chunk_magic", hgt_file([struct.pack("<IIII", 0xDEAD, 0, 0, 0)]), "unknown magic 0x0000dead"),
        ("record_len", hgt_file([chunk(0, [bytes(bad_len)])]), "corrupt record length 12"),
        ("short_payload", hgt_file([chunk(0, [rec(5, 1, arg=1)])]), "record too short for its type"),
        ("nr_records", hgt_file([chunk(0, r0)[:12] + struct.pack("<I", 5) + chunk(0, r0)[16:]]),
         "the chunk header says 5 records, its bytes hold 4"),
        ("cpu", hgt_file([chunk(2, r0)], meta=META), "CPU 2, but the recording has 2 CPUs"),
        ("cpu_huge", hgt_file([chunk(50000000, r0)]), "CPU 50000000, beyond the format's limit of 8192"),
        ("format", hgt_file([], meta="format: hgtrace 9\n"), "format \"hgtrace 9\""),
        ("tsc_nan", hgt_file([], meta="format: hgtrace 1\ntsc_khz: nan\n"), "tsc_khz \"nan\""),
        ("tsc_neg", hgt_file([], meta="format: hgtrace 1\ntsc_khz: -1000\n"), "tsc_khz \"-1000\""),
        ("meta_utf8", hgt_file([], meta="format: hgtrace 1\nhost: X\n").replace(b"host: X", b"host: \xff"),
         "the metadata is not UTF-8"),
        ("window", hgt_file([], window=(10, 5)), "starts after it stops"),
        ("time_twice", hgt_file([struct.pack("<IIII", 0x656D6974, 0, 16, 1) + struct.pack("<QQ", 1, 2)]),
         "a second time chunk"),
        ("short_time", hgt_file([], window=None)[:-16] + struct.pack("<IIII", 0x656D6974, 0, 8, 1)
         + struct.pack("<Q", 1) + struct.pack("<IIII", 0x21646E65, 0, 0, 0), "a time chunk of 8 bytes"),
        ("stats_dup", hgt_file([chunk(0, r0)], meta=META, stats={0: STATS[0]})[:-16]
         + struct.pack("<IIII", 0x74617473, 0, 48, 1) + struct.pack("<6Q", *STATS[0])
         + struct.pack("<IIII", 0x21646E65, 0, 0, 0), "a second stats chunk for CPU 0"),
        ("stats_cpu", hgt_file([chunk(0, r0)], meta=META, stats={0: STATS[0], 99: (0,) * 6}),
         "a stats chunk of CPU 99, but the recording has 2 CPUs"),
        ("stats_dropped", hgt_file([chunk(0, r0)], meta=META, stats={0: (8, 8, 0, 0, 8, 0)}),
         "they say 8 records read"),
        ("stats_duplicated", hgt_file([chunk(0, r0), chunk(0, r0)], meta=META, stats={0: STATS[0]}),
         "the chunks hold 8 records"),
        ("stats_lost", hgt_file([chunk(0, r0), chunk(1, RECORDS1)], meta=META,
                                stats={0: STATS[0], 1: (6, 2, 4, 0, 2, 0)}),
         "the records of CPU 1 do not match its stats: 2 records and 5 events lost"),
        ("stats_read", hgt_file([chunk(0, r0), chunk(1, RECORDS1)], meta=META,
                                stats={0: STATS[0], 1: (8, 3, 5, 0, 3, 0)}),
         "the stats say 3 read"),
        ("after_end", good_file() + b"\0" * 64, "64 bytes after the END marker"),
    ]


@pytest.mark.parametrize("name,data,msg", bad_files(), ids=[b[0] for b in bad_files()])
def test_bad_files(tmp_path, hgtrace_bin, name, data, msg):
    """Each kind of bad file: exit 3, one line naming the file, the offset and the problem."""
    path = tmp_path / f"{name}.hgt"
    path.write_bytes(data)
    with pytest.raises(HgtFormatError) as e:
        read_hgt(str(path))
    assert msg in str(e.value)
    p = dump(hgtrace_bin, path)
    err = p.stderr.strip().splitlines()
    assert p.returncode == 3 and len(err) == 1 and msg in err[0], p.stderr
    assert str(path) in err[0] and "offset" in err[0] and err[0].isprintable(), err[0]


def test_compressed_chunks(tmp_path, hgtrace_bin):
    plain = tmp_path / "plain.hgt"
    plain.write_bytes(good_file())
    z = tmp_path / "z.hgt"
    z.write_bytes(hgt_file([zchunk(0, RECORDS0), zchunk(1, RECORDS1)], meta=META, stats=STATS))
    assert [(e.cpu, e.tsc, e.kind, e.fields) for e in read_hgt(str(z)).events] == \
           [(e.cpu, e.tsc, e.kind, e.fields) for e in read_hgt(str(plain)).events]
    assert dump(hgtrace_bin, z, "-s").stdout == dump(hgtrace_bin, plain, "-s").stdout
    bad = tmp_path / "zbad.hgt"
    bad.write_bytes(hgt_file([zchunk(0, RECORDS0 * 20, corrupt=True)]))
    with pytest.raises(HgtFormatError, match="corrupt compressed chunk"):
        read_hgt(str(bad))
    p = dump(hgtrace_bin, bad)
    assert p.returncode == 3 and "corrupt compressed chunk" in p.stderr, p.stderr
    # garbage after the stream, inside the length the chunk declares
    zc = bytearray(zchunk(0, RECORDS0))
    raw_bytes, z_bytes = struct.unpack_from("<II", zc, 16)
    stream = bytes(zc[24:24 + z_bytes]) + b"\x55" * 64
    body = struct.pack("<II", raw_bytes, len(stream)) + stream + b"\0" * (-len(stream) % 8)
    garbage = tmp_path / "zgarbage.hgt"
    garbage.write_bytes(hgt_file([struct.pack("<IIII", 0x6B68637A, 0, len(body), 4) + body]))
    p = dump(hgtrace_bin, garbage)
    assert p.returncode == 3 and "bytes after the end of a zlib stream" in p.stderr, p.stderr


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
        elif typ == 20:       # a LOST marker counts a sane number of events
            r = rec(t[cpu], typ, arg=0, aux=rnd.randint(0, 1), payload=struct.pack("<Q", rnd.randint(1, 1000)))
        else:
            words = rnd.randint(0, 8) if typ == 33 else {18: 6, 19: 8, 13: 2, 14: 2, 2: 2, 3: 2, 5: 2}.get(typ, 0)
            pay = b"".join(struct.pack("<I", rnd.choice((0, 1, 255, 70000, 2**32 - 1))) for _ in range(words))
            r = rec(t[cpu], typ, arg=rnd.choice((0, 3, 30, 2**32 - 1, rnd.randint(0, 2**32 - 1))),
                    flags=rnd.randint(0, 255), aux=rnd.randint(0, 255), payload=pay)
        per_cpu[cpu].append(r)
    chunks = []
    for cpu, rs in per_cpu.items():
        for k in range(0, len(rs), 1000):
            chunks.append(chunk(cpu, rs[k:k + 1000]))
    return hgt_file(chunks, meta="format: hgtrace 1\ncompression: none\ntsc_khz: 1000000\nnr_cpu_ids: 6\n",
                    stats=stats_for(per_cpu), window=(3, 2**50))


def per_cpu_records(path):
    r = read_hgt(str(path), raw=True)
    out = {}
    for e in r.events:
        out.setdefault(e.cpu, []).append(e.raw)
    return out, r


def test_pack_keeps_every_record(tmp_path, hgtrace_bin):
    plain, packed = tmp_path / "plain.hgt", tmp_path / "packed.hgt"
    plain.write_bytes(varied_file())
    p = subprocess.run([hgtrace_bin, "pack", str(plain), "-o", str(packed)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    a, ra = per_cpu_records(plain)
    b, rb = per_cpu_records(packed)
    assert a == b and sum(len(v) for v in a.values()) == 40000
    assert (rb.version, rb.meta["compression"], rb.meta["format"]) == (3, "packed (columns, zlib 9)", "hgtrace 3")
    assert (rb.stats, rb.window, rb.complete) == (ra.stats, ra.window, True)
    # the text dump too, and the file is smaller
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
    assert p.returncode == 3 and str(bad) in p.stderr and "did not finish" in p.stderr, p.stderr
    bad2 = tmp_path / "bad2.hgt"
    bad2.write_bytes(good_file() + b"x" * 8)
    p = subprocess.run([hgtrace_bin, "pack", str(bad2)], capture_output=True, text=True)
    assert p.returncode == 3 and str(bad2) in p.stderr and "after the END marker" in p.stderr
    assert bad2.read_bytes() == good_file() + b"x" * 8 and not (tmp_path / "bad2.hgt.packing").exists()
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
    # a file of version 1 cannot hold packed chunks
    v1 = bytearray(data)
    v1[8:12] = struct.pack("<I", 1)
    v1 = bytes(v1).replace(b"format: hgtrace 3", b"format: hgtrace 1")
    (tmp_path / "v1.hgt").write_bytes(v1)
    with pytest.raises(HgtFormatError, match="packed chunk .pchk. in a version 1 file"):
        read_hgt(str(tmp_path / "v1.hgt"))


def test_old_packed_version_refused_by_name(tmp_path, hgtrace_bin):
    """Version 2 files were packed with an earlier coding: the reader refuses
    them saying so, never misreads their records."""
    plain, packed = tmp_path / "plain.hgt", tmp_path / "v2.hgt"
    plain.write_bytes(varied_file(2000))
    subprocess.run([hgtrace_bin, "pack", str(plain), "-o", str(packed)], check=True)
    data = bytearray(packed.read_bytes())
    data[8:12] = struct.pack("<I", 2)
    packed.write_bytes(bytes(data))
    with pytest.raises(HgtFormatError, match="format version 2.*pack the plain recording again"):
        read_hgt(str(packed))
    p = dump(hgtrace_bin, packed)
    assert p.returncode == 3 and "format version 2" in p.stderr and str(packed) in p.stderr, p.stderr


def test_dump_hourglass_trace(tmp_path, hgtrace_bin):
    """`hgtrace dump` tells an hourglass trace by its magic."""
    info = {"tsc": {"hz": 1e9}, "threads": [{"thread": 0, "tid": 5}, {"thread": 1, "tid": 6}]}
    path = tmp_path / "run.hgl"
    path.write_bytes(hgl_file([iv(100, 200, 0, 0, 4), (300, 310, 400, 1, 2, 1, 1),
                               (630, 510, 2**64 - 120, 1, 3, 0x12, 1)], info, dropped=0))   # 120 ns early: due after
    p = dump(hgtrace_bin, path, "-m", "-s")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        "# hourglass trace 1.0",
        "# info " + json.dumps(info, separators=(",", ":")),
        "0 interval t0=100 t1=200 cpu=0 flags=0x04 last",
        "1 job release=300 completion=310 deadline=400 cpu=1 flags=0x01 missed",
        "1 wake due=630 first=510 lateness_ns=-120 cpu=1 timer=HR lat",
        "# end nr_records=3 dropped=0"]
    t = read_hgl(str(path))
    assert t.info == info and t.complete and t.version == (1, 0)
    assert [(r.t0, r.thread, r.type, r.cpu) for r in t.records] == [(100, 0, 1, 0), (300, 1, 2, 1), (630, 1, 3, 1)]
    assert t.records[2].lateness_ns == -120
    # --json says the flags by name too, so that no reader copies hourglass's bits
    p = dump(hgtrace_bin, path, "--json")
    assert p.returncode == 0, p.stderr
    iv0, job, wake = [json.loads(line) for line in p.stdout.splitlines()[1:]]
    assert (iv0["yield"], iv0["sleep"], iv0["last"], iv0["flags"]) == (False, False, True, 4)
    assert (job["missed"], job["cut"]) == (True, False)
    assert (wake["lateness_ns"], wake["timer"], wake["lat"], wake["t2"]) == (-120, "HR", True, 2**64 - 120)
    bad = tmp_path / "bad.hgl"
    bad.write_bytes(hgl_file([iv(1, 2, 7, 0)], info))
    p = dump(hgtrace_bin, bad)
    assert p.returncode == 3 and "record of thread 7, but the run had 2 threads" in p.stderr


def test_dump_time_is_the_reports_clock(tmp_path, hgtrace_bin):
    """dump -t prints seconds from the recording window's start, as the report and
    the exported traces count them; --hz converts at the report's own rate."""
    p = tmp_path / "t.hgt"
    p.write_bytes(hgt_file([chunk(0, [rec(1_000_500, 7, 30), rec(3_000_000, 8, 30)])],
                           meta="format: hgtrace 1\ntsc_khz: 1000000\n", window=(1_000_000, 9_000_000)))
    out = subprocess.run([hgtrace_bin, "dump", "-t", str(p)], capture_output=True, text=True, check=True).stdout
    assert [l.split()[1] for l in out.splitlines()] == ["0.000000500", "0.002000000"]
    out = subprocess.run([hgtrace_bin, "dump", "--hz", "2e9", str(p)], capture_output=True, text=True,
                         check=True).stdout
    assert out.splitlines()[1].split()[1] == "0.001000000"
    bad = subprocess.run([hgtrace_bin, "dump", "--hz", "fast", str(p)], capture_output=True, text=True)
    assert bad.returncode == 1 and "--hz fast" in bad.stderr

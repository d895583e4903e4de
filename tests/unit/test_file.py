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
    return subprocess.run([hgtrace_bin, "dump", "-s", str(path)], capture_output=True, text=True)


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

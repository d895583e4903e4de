"""What `hourglass report` refuses, `hgtrace dump` must say (issue 37, item 1):
a damaged recording or trace may be printed as far as it can be read, but
then one line on stderr names the file, the offset and the problem, and the
status is 3, the merger's for the same file (docs/exit-status.md, "READABLE
BUT INCOMPLETE"). The rules are the library's, so that the two agree.

The files are small real runs (the fuzz corpus's pairs: recordings of the
6.1 guest cut to their first records), damaged as tests/fuzz/py/damage.py
damages the run directories of out/ (its own reproducer of the issue).
"""
import os
import re
import subprocess

import pytest

from conftest import TOP

import damage as D  # tests/fuzz/py (pytest.ini)

HGMERGE = os.path.join(TOP, "build", "hgmerge")
PAIRS = os.path.join(TOP, "tests", "fuzz", "corpus", "merge")
DUMPS = ([], ["--json"], ["-s"])
READERS = [("dump",) + tuple(o) for o in DUMPS] + [("stat",)]     # every reader of one file


def run_dir(tmp_path, name="real-three-plain"):
    """a run directory (hourglass.hgl, kernel.hgt) from a pair of the corpus: (dir, hgl, hgt bytes)"""
    with open(os.path.join(PAIRS, name + ".pair"), "rb") as f:
        data = f.read()
    cut = data.find(b"HGTRACE\n")
    d = tmp_path / name
    d.mkdir()
    (d / "hourglass.hgl").write_bytes(data[:cut])
    (d / "kernel.hgt").write_bytes(data[cut:])
    return d, data[:cut], data[cut:]


def merge(d):
    return subprocess.run([HGMERGE, "--hgl", str(d / "hourglass.hgl"), "--kernel", str(d / "kernel.hgt"),
                           "--report", str(d / "r.json")], capture_output=True, text=True)


def dump(hgtrace_bin, path, *opts):
    return subprocess.run([hgtrace_bin, "dump", *opts, str(path)], capture_output=True, text=True,
                          errors="replace")


def said(p, path, *what):
    """exit 3 and stderr's lines, each naming @path and an offset, one of them saying each of @what"""
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 3, (p.returncode, p.stderr)
    assert lines and all(l.startswith(f"hgtrace: {path}: offset ") for l in lines), p.stderr
    for w in what:
        assert any(w in l for l in lines), (w, p.stderr)
    return lines


def records(p):
    """the record lines of a text dump"""
    return [l for l in p.stdout.splitlines() if l and not l.startswith("#")]


def read(hgtrace_bin, path, cmd, *opts):
    return subprocess.run([hgtrace_bin, cmd, *opts, str(path)], capture_output=True, text=True, errors="replace")


# ---- a recording whose trailer is lost, its END kept (issue 50: printed without a word) ----

@pytest.mark.parametrize("lost", ["time", "stat", "time+stat"])
def test_a_lost_trailer_with_end_kept_is_said(tmp_path, hgtrace_bin, lost):
    """hgtrace record always writes its window (the time chunk) and each CPU's stats before END
    (its metadata says its mode). A file that ends with END but lacks either was read by
    everyone as a file that never had them: now the merger refuses it, and every dump and
    stat prints what it holds, then names each part lost, at END's offset, with exit 3."""
    d, _, hgt = run_dir(tmp_path)
    chunks, _, _ = D.hgt_chunks(hgt)
    drop = [c for c in chunks if c[1] in lost.split("+")]
    end = [c for c in chunks if c[1] == "end!"][0]
    kept = b"".join(hgt[c[0]:c[0] + 16 + c[3]] for c in chunks if c not in drop)
    damaged = hgt[:chunks[0][0]] + kept
    (d / "kernel.hgt").write_bytes(damaged)
    at = end[0] - sum(16 + c[3] for c in drop)
    m = merge(d)
    want = [w for k, w in (("time", "without its time chunk"), ("stat", "without the stats of CPU 0"))
            if k in lost]
    assert m.returncode == 3 and f"kernel.hgt: offset {at}: the recording ends (END) {want[0]}" in m.stderr, m.stderr
    for cmd, *opts in READERS:
        p = read(hgtrace_bin, d / "kernel.hgt", cmd, *opts)
        lines = said(p, d / "kernel.hgt", *want)
        assert len(lines) == len(want) and all(f"offset {at}: " in l for l in lines), lines
        assert p.stdout.count("\n") > (10 if cmd == "dump" else 5), f"{cmd} {opts}: what it holds is printed"


def test_a_recording_that_never_had_a_trailer_is_read(tmp_path, hgtrace_bin):
    """What does not say a recorder's mode (hgtrace-import's files, which have no module
    counters; generated ones) need not have the trailer: read and merged as before."""
    d, _, hgt = run_dir(tmp_path)
    chunks, _, _ = D.hgt_chunks(hgt)
    stat = [c for c in chunks if c[1] == "stat"][0]
    (d / "kernel.hgt").write_bytes(D.meta_edit(hgt[:stat[0]] + hgt[stat[0] + 16 + stat[3]:], "mode", None))
    assert merge(d).returncode == 0
    for cmd, *opts in READERS:
        p = read(hgtrace_bin, d / "kernel.hgt", cmd, *opts)
        assert p.returncode == 0 and not p.stderr, (cmd, opts, p.stderr)


# ---- a stamp that its window and its neighbours contradict (issue 50: printed without a word) ----

STAMP_OUTLIERS = [
    ("high, mid-file", 8_900_000_000_000_000_000, "middle", "after the recording's window"),
    ("high, its CPU's last", 8_900_000_000_000_000_000, "last", "after the recording's window"),
    ("zero, mid-file", 0, "middle", "before the recording's window"),
]


@pytest.mark.parametrize("what, stamp, where, says", STAMP_OUTLIERS, ids=[o[0] for o in STAMP_OUTLIERS])
@pytest.mark.parametrize("window", [True, False], ids=["window", "no window"])
def test_a_stamp_out_of_place_is_said(tmp_path, hgtrace_bin, what, stamp, where, says, window):
    """One record stamped near 8.9e18 among stamps near 7e11 (below 2^63, which the reader
    checked alone), or 0: the merger refuses the file, and every dump and stat prints the
    records before it, then names it (the record's offset, its CPU, its stamp) with exit 3. With
    the window, the record is outside it; without one (a file that never had one: no mode),
    its neighbour on its CPU contradicts it, but for a CPU's last record, which nothing but a
    window bounds."""
    d, _, hgt = run_dir(tmp_path)
    chunks, _, _ = D.hgt_chunks(hgt)
    if not window:
        t = [c for c in chunks if c[1] == "time"][0]
        hgt = D.meta_edit(hgt[:t[0]] + hgt[t[0] + 16 + t[3]:], "mode", None)
        chunks, _, _ = D.hgt_chunks(hgt)
    recs = [r for c in chunks if c[1] == "chnk" for r in D.plain_records(hgt, c)]
    at = recs[len(recs) // 2] if where == "middle" else recs[-1]
    (d / "kernel.hgt").write_bytes(D.put_u64(hgt, at, stamp))
    m = merge(d)
    if not window and where == "last":
        # nothing bounds it: read as before (the merger's window check and the coverage then
        # see the records' span)
        assert "before the one before it" not in m.stderr and "recording's window" not in m.stderr
        return
    if window:
        line = f"offset {at}: a record of CPU 0 stamped TSC {stamp}, "
        assert says in m.stderr
    else:
        # the record after it goes back from it (a high stamp), or it goes back (zero)
        nxt = at + hgt[at + 9] if stamp else at
        line = f"offset {nxt}: a record of CPU 0 stamped TSC "
        assert "before the one before it" in m.stderr
    assert m.returncode == 3 and line in m.stderr, m.stderr
    # a chunk is handed out whole or not at all: the chunks before the one the reader stopped in
    bad = int(line.split()[1].rstrip(":"))
    whole = sum(c[4] for c in chunks if c[1] == "chnk" and c[0] + 16 + c[3] <= bad)
    for cmd, *opts in READERS:
        p = read(hgtrace_bin, d / "kernel.hgt", cmd, *opts)
        lines = said(p, d / "kernel.hgt")
        assert len(lines) == 1 and line in lines[0] and lines[0] == "hgtrace: " + m.stderr.strip()[9:], (lines, m)
        if cmd == "dump" and not opts:
            assert whole and len(records(p)) == whole, "the chunks before it are printed"


# ---- a recording cut short: its trailer (window, stats) and END missing ----

@pytest.mark.parametrize("where", ["the trailer", "inside the last chunk", "the END marker"])
def test_cut_short_recording_is_said(tmp_path, hgtrace_bin, where):
    """Cut at its time chunk (trailer, stats and END gone), inside its last records chunk
    (a recorder that died while writing it), or just before END: the merger refuses it,
    every dump prints what is there, then says that the recording did not finish."""
    d, _, hgt = run_dir(tmp_path)
    chunks, _, _ = D.hgt_chunks(hgt)
    kinds = [c[1] for c in chunks]
    if where == "the trailer":
        at = chunks[kinds.index("time")][0]
    elif where == "the END marker":
        at = chunks[kinds.index("end!")][0]
    else:
        last = [c for c in chunks if c[1] in D.RECORDS][-1]
        at = last[0] + 16 + last[3] // 2
    (d / "kernel.hgt").write_bytes(hgt[:at])
    m = merge(d)
    assert m.returncode == 3 and ("did not finish" in m.stderr or "truncated chunk" in m.stderr), m.stderr
    for opts in DUMPS:
        p = dump(hgtrace_bin, d / "kernel.hgt", *opts)
        said(p, d / "kernel.hgt", "did not finish" if where != "inside the last chunk" else "cut short")
        assert p.stdout.count("\n") > 10, f"dump {opts}: what could be read is printed"


def test_cut_short_trace_is_said(tmp_path, hgtrace_bin):
    """hourglass's trace without its END section (its run or writer stopped): the same."""
    d, hgl, _ = run_dir(tmp_path)
    end = [s for s in D.hgl_sections(hgl) if s[1] == "end!"][0]
    (d / "hourglass.hgl").write_bytes(hgl[:end[0]])
    m = merge(d)
    assert m.returncode == 3 and "no END section" in m.stderr, m.stderr
    for opts in DUMPS:
        p = dump(hgtrace_bin, d / "hourglass.hgl", *opts)
        said(p, d / "hourglass.hgl", "no END section")
        assert p.stdout.count("\n") > 10, f"dump {opts}: what could be read is printed"


# ---- stamped with another clock than the TSC ----

@pytest.mark.parametrize("clock", ["jiffies", "local", "mono", "as recorded (trace-cmd -C x86-tsc)"])
def test_other_clock_is_said(tmp_path, hgtrace_bin, clock):
    """`clock: jiffies` in the metadata: the merger refuses the file (nothing in it can be
    matched with hourglass's TSC stamps); dump prints every record, then says the same line
    (hgt_check_clock, one rule for both) and exits 3. It exited 0 without a word."""
    d, _, hgt = run_dir(tmp_path)
    path = d / "kernel.hgt"
    whole = records(dump(hgtrace_bin, path))
    damaged = D.meta_edit(hgt, "clock", clock)
    path.write_bytes(damaged)
    at = 16 + damaged[16:].index(b"clock: ")
    line = f"{path}: offset {at}: stamped with clock '{clock}', not the TSC"
    m = merge(d)
    assert m.returncode == 3 and m.stderr.strip() == f"hgmerge: {line}", m.stderr
    for opts in DUMPS:
        p = dump(hgtrace_bin, path, *opts)
        assert said(p, path) == [f"hgtrace: {line}"], p.stderr
    assert records(dump(hgtrace_bin, path)) == whole, "every record is printed"
    head = dump(hgtrace_bin, path, "--json").stdout.splitlines()
    assert len(head) == len(whole) + 1 and '"complete":true' in head[0]


@pytest.mark.parametrize("clock", ["tsc", "rdtsc", "x86-tsc", None])
def test_tsc_clock_is_dumped(tmp_path, hgtrace_bin, clock):
    """The TSC by any of its names, or no clock key (the module's recordings): exit 0, nothing said."""
    d, _, hgt = run_dir(tmp_path)
    (d / "kernel.hgt").write_bytes(D.meta_edit(hgt, "clock", clock))
    assert merge(d).returncode == 0
    p = dump(hgtrace_bin, d / "kernel.hgt")
    assert p.returncode == 0 and not p.stderr, p.stderr


# ---- hourglass's trace whose records contradict each other ----

@pytest.mark.parametrize("stamp", [1 << 62, (1 << 63) - 1])
def test_overlapping_intervals_are_said(tmp_path, hgtrace_bin, stamp):
    """An interval whose end (t1) ran far past the next one's start: the trace reader refuses
    it for every program (the merger said "intervals overlap at TSC ..." before it did)."""
    d, hgl, _ = run_dir(tmp_path)
    recs = [s for s in D.hgl_sections(hgl) if s[1] == "recs"][0]
    (d / "hourglass.hgl").write_bytes(D.put_u64(hgl, recs[0] + 16 + 8, stamp))
    m = merge(d)
    assert m.returncode == 3 and "before its previous one ended" in m.stderr, m.stderr
    for opts in DUMPS:
        said(dump(hgtrace_bin, d / "hourglass.hgl", *opts), d / "hourglass.hgl")


def test_wake_due_after_its_first_read_is_said(tmp_path, hgtrace_bin):
    """A wake-up due at 2^62, read first at its real time: the merger refuses the run (with
    "intervals overlap at TSC 0", the due stamp having thrown its stream out of order); dump
    must say it too."""
    d, hgl, _ = run_dir(tmp_path, "real-lat-plain")
    recs = [s for s in D.hgl_sections(hgl) if s[1] == "recs"][0]
    at = next(recs[0] + 16 + 32 * k for k in range(recs[2] // 32)
              if D.HGL_REC.unpack_from(hgl, recs[0] + 16 + 32 * k)[4] == 3)
    (d / "hourglass.hgl").write_bytes(D.put_u64(hgl, at, 1 << 62))
    m = merge(d)
    assert m.returncode == 3, m.stderr
    for opts in DUMPS:
        said(dump(hgtrace_bin, d / "hourglass.hgl", *opts), d / "hourglass.hgl")


# ---- the reproducer: no damage that the merger refuses is printed without a word ----

# what dump alone cannot tell: the two files' TSC rates disagree
NOT_ONE_FILE = re.compile(r"not the same counter\?")


@pytest.mark.parametrize("pair", ["real-three-plain", "real-lat-packed"])
def test_no_refused_damage_is_dumped_without_a_word(tmp_path, hgtrace_bin, pair):
    """Every damage of damage.py (cuts, flipped bytes, metadata, absurd stamps and counts,
    contradicted windows) of a small real run: whatever the merger refuses, dump says
    something of, but what no reader of one file can know (a TSC rate against hourglass's
    measure of it)."""
    d, _, _ = run_dir(tmp_path, pair)
    refused = 0
    silent = []
    for _, name, _, res in D.damaged_runs([str(d)], seed=37, flips=1, merger="hgmerge", quick=True):
        refused += res["report"][0] != 0
        if res["silent"] and not NOT_ONE_FILE.search(res["report"][1]):
            silent.append(f"{name}: {res['report'][1]}")
    assert refused > 40 and not silent, "\n".join(silent)

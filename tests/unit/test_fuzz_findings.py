"""What the fuzz targets (tests/fuzz) found, kept: every crash, hang or blow-up
they found is an input here, run through the product's own programs (built
without the sanitizers), and so is every seed of theirs. The programs must
answer each with exit 0, or exit 3 and a message naming the file; never a
signal, never a hang, never more memory than a file of some KiB can need.

The findings fixed in the library have their unit tests beside it
(userspace/lib/tests: stamps beyond 2^63, packed columns beyond 64 MiB);
the report JSON's in test_report_robust.py; hgtrace-import's here and in
test_import.py."""
import glob
import os
import resource
import subprocess

import pytest

from conftest import TOP

BUILD = os.path.join(TOP, "build")
CORPUS = os.path.join(TOP, "tests", "fuzz", "corpus")
FOUND = os.path.join(os.path.dirname(__file__), "data", "fuzz")
# a hang guard, not a timing: each input is a few KiB and takes milliseconds
HANG = 120


def run(cmd, cwd=None):
    """@cmd with 1 GiB of address space (a table sized by a corrupt count cannot hide)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    return subprocess.run(cmd, capture_output=True, text=True, errors="replace", preexec_fn=limit,
                          timeout=HANG, cwd=cwd)


def answered(p, path):
    """exit 0, or exit 3 and a line that names @path; never a signal or a traceback"""
    assert p.returncode in (0, 3), (p.returncode, p.stderr[-2000:])
    assert "Traceback" not in p.stderr and "out of memory" not in p.stderr, p.stderr[-2000:]
    if p.returncode == 3:
        assert path in p.stderr, p.stderr[-2000:]


def program(name):
    path = os.path.join(BUILD, name)
    if not os.access(path, os.X_OK):
        pytest.skip(f"build/{name} is not built")
    return path


def seeds(kind):
    return sorted(glob.glob(os.path.join(CORPUS, kind, "*")))


def ids(paths):
    return [os.path.basename(p) for p in paths]


@pytest.mark.parametrize("path", seeds("hgt"), ids=ids(seeds("hgt")))
def test_hgt_seed_dumped_or_refused(path, hgtrace_bin):
    answered(run([hgtrace_bin, "dump", path]), path)


@pytest.mark.parametrize("path", seeds("dat"), ids=ids(seeds("dat")))
def test_trace_dat_seed_imported_or_refused(path, tmp_path):
    out = tmp_path / "k.hgt"
    p = run([program("hgtrace-import"), path, "-o", str(out)])
    answered(p, path)
    assert out.exists() == (p.returncode == 0), p.stderr
    if out.exists():
        answered(run([os.path.join(BUILD, "hgtrace"), "dump", str(out)]), str(out))


@pytest.mark.parametrize("path", seeds("merge"), ids=ids(seeds("merge")))
def test_merge_seed_merged_or_refused(path, tmp_path):
    """fuzz_merge's input: an hourglass trace, then a .hgt from its magic on"""
    data = open(path, "rb").read()
    cut = data.find(b"HGTRACE\n")
    cut = len(data) if cut < 0 else cut
    hgl, hgt = tmp_path / "hourglass.hgl", tmp_path / "kernel.hgt"
    hgl.write_bytes(data[:cut])
    hgt.write_bytes(data[cut:])
    p = run([program("hgmerge"), "--hgl", str(hgl), "--kernel", str(hgt), "--report", str(tmp_path / "r.json"),
             "--gaps", str(tmp_path / "gaps.bin"), "--gaps-json", str(tmp_path / "gaps.jsonl")])
    assert p.returncode in (0, 3), (p.returncode, p.stderr[-2000:])
    if p.returncode == 3:
        assert str(hgl) in p.stderr or str(hgt) in p.stderr, p.stderr


@pytest.mark.parametrize("path", seeds("hgl"), ids=ids(seeds("hgl")))
def test_hourglass_trace_seed_merged_or_refused(path, tmp_path):
    """each hourglass trace seed beside a real recording (of another run: refused is fine)"""
    hgt = os.path.join(CORPUS, "hgt", "real-lat-plain.hgt")
    p = run([program("hgmerge"), "--hgl", path, "--kernel", hgt, "--report", str(tmp_path / "r.json")])
    assert p.returncode in (0, 3), (p.returncode, p.stderr[-2000:])
    assert "Traceback" not in p.stderr and "out of memory" not in p.stderr, p.stderr
    if p.returncode == 3:
        assert path in p.stderr or hgt in p.stderr, p.stderr


def test_import_record_of_length_zero(tmp_path):
    """Found by fuzz_import as a hang (10 inputs): a record on a trace.dat page whose length is
    0 (libtracecmd 3.1 says size -4) leads libtracecmd back to the same records for ever. The
    importer stops there: exit 3, the file, the CPU and the record's offset named, no output."""
    path, out = os.path.join(FOUND, "import-record-of-length-zero.dat"), tmp_path / "k.hgt"
    p = run([program("hgtrace-import"), path, "-o", str(out)])
    assert p.returncode == 3, (p.returncode, p.stderr)
    assert f"{path}: stopped after" in p.stderr and "CPU 0's record at offset 21320" in p.stderr, p.stderr
    assert not out.exists()


def test_import_headers_that_loop(tmp_path):
    """Found by fuzz_import as a hang (make check's smoke, 2026-11-27): libtracecmd's
    tracecmd_open() reads this file's headers two bytes at a time for ever, and trace-cmd
    report hangs on it the same way. The importer's watchdog (HGTRACE_IMPORT_OPEN_S, 2 s
    here, 60 by default) ends it as a bad input: exit 3 naming the file, no output."""
    path, out = os.path.join(FOUND, "import-headers-loop.dat"), tmp_path / "k.hgt"
    p = subprocess.run([program("hgtrace-import"), path, "-o", str(out)], capture_output=True, text=True,
                       errors="replace", timeout=HANG, env=dict(os.environ, HGTRACE_IMPORT_OPEN_S="2"))
    assert p.returncode == 3, (p.returncode, p.stderr)
    assert f"did not finish reading the headers of {path}" in p.stderr, p.stderr
    assert not out.exists()


def test_import_field_outside_its_record(tmp_path):
    """Found by fuzz_import as a crash of our own (SIGBUS in import_dat.c's str()): a dynamic
    string's place, read from the record, pointed beyond it, and libtraceevent hands such a
    pointer back unchecked. A field outside its record is now refused, never read: exit 3
    naming the file, not "crashed in its own code"."""
    path, out = os.path.join(FOUND, "import-field-outside-record.dat"), tmp_path / "k.hgt"
    p = run([program("hgtrace-import"), path, "-o", str(out)])
    assert p.returncode == 3, (p.returncode, p.stderr)
    assert path in p.stderr and "its own code" not in p.stderr and "crashed" not in p.stderr, p.stderr
    assert not out.exists()

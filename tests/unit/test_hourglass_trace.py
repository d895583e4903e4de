"""Hourglass's binary trace: the test writer's layout is the C header's, and
the one reader (userspace/lib, through `hgtrace dump`) refuses truncated or
corrupt files with the file and offset named."""
import os
import struct
import subprocess

import pytest

import helpers.files as F
import hgtools.recordings as H
from conftest import TOP

LAYOUT_C = r"""
#include <stddef.h>
#include <stdio.h>
#include "hgl_trace.h"
int main(void)
{
	printf("%zu %zu %zu %zu\n", sizeof(struct hgl_prelude), sizeof(struct hgl_section),
	       sizeof(struct hgl_rec), sizeof(struct hgl_end));
	printf("%zu %zu %zu %zu %zu\n", offsetof(struct hgl_rec, t2), offsetof(struct hgl_rec, thread),
	       offsetof(struct hgl_rec, type), offsetof(struct hgl_rec, flags), offsetof(struct hgl_rec, cpu));
	printf("%s|%d %d %d %d\n", HGL_MAGIC, HGL_FORMAT_MAJOR, HGL_REC_INTERVAL, HGL_REC_JOB, HGL_REC_WAKE);
	return 0;
}
"""


def test_layout_matches_header(tmp_path):
    src = tmp_path / "layout.c"
    src.write_text(LAYOUT_C)
    subprocess.run(["gcc", "-Wall", "-Werror", "-I", os.path.join(TOP, "userspace", "hourglass"),
                    "-o", str(tmp_path / "layout"), str(src)], check=True)
    out = subprocess.run([str(tmp_path / "layout")], capture_output=True, text=True, check=True).stdout
    sizes, offs, rest = out.split("\n", 2)
    assert list(map(int, sizes.split())) == [F.HGL_PRELUDE.size, F.HGL_SECTION.size, F.HGL_REC.size,
                                             F.HGL_END.size]
    assert list(map(int, offs.split())) == [16, 24, 26, 27, 28]
    magic, nums = rest.rstrip("\n").rsplit("|", 1)
    assert magic.encode() + b"\0" == F.HGL_MAGIC
    assert list(map(int, nums.split())) == [1, H.INTERVAL, H.JOB, H.WAKE]


INFO = {"threads": [{"thread": 0}, {"thread": 1}], "tsc": {"hz": 1e9}}


def make(records=((100, 200, 0, 0, 1, 0, 0), (300, 400, 0, 1, 1, 4, 1)), info=None,
         end=True, major=1, dropped=0, nrec=None):
    return F.hgl_file(records, info if info is not None else INFO, end=end, major=major, dropped=dropped,
                      nrec=nrec)


def write(tmp_path, data):
    p = tmp_path / "t.hgl"
    p.write_bytes(data)
    return str(p)


@pytest.fixture(autouse=True)
def built(hgtrace_bin):
    """The reader is hgtrace dump: built once."""


def test_reads_a_good_file(tmp_path):
    t = H.read_hgl(write(tmp_path, make()))
    assert t.complete and len(t.records) == 2 and t.info["tsc"]["hz"] == 1e9
    assert t.records[1].thread == 1 and t.records[1].flags == H.IV_LAST and t.records[1].cpu == 1


def test_unknown_sections_are_skipped(tmp_path):
    data = make()
    pre = struct.calcsize("<8sHHI")
    data = data[:pre] + F.section(b"xtra", b"future") + data[pre:]
    assert len(H.read_hgl(write(tmp_path, data)).records) == 2


@pytest.mark.parametrize("cut", [0, 5, 16, 20, 40, 100, -30, -8])
def test_truncated(tmp_path, cut):
    data = make()
    with pytest.raises(H.HglFormatError) as e:
        H.read_hgl(write(tmp_path, data[:cut] if cut else b""))
    assert "t.hgl" in str(e.value) and "offset" in str(e.value)


@pytest.mark.parametrize("data,msg", [
    (b"NOT\x1bHOURGLASS" + b"\0" * 20, "bad magic \"NOT\\x1bHOUR\""),
    (make(major=2), "format version 2.0"),
    (make(end=False), "no END section"),
    (make(nrec=5), "END says 5 records"),
    (make(records=((1, 2, 0, 0, 9, 0, 0),)), "unknown record type 9"),
    (make(records=((1, 2, 0, 7, 1, 0, 0),)), "record of thread 7"),
    (make(records=((1, 2, 0, 0, 1, 0, 50000000),)), "record on CPU 50000000, beyond the format's limit"),
    (make(info={}), "tsc is missing"),
    (make(info=b"null"), "the info section is JSON null, not an object"),
    (make(info={"tsc": {"hz": "fast"}, "threads": []}), "tsc.hz is a string, not a number"),
    (make(info={"tsc": {"hz": 0}, "threads": []}), "tsc.hz is 0, outside"),
    (make(info={"tsc": {"hz": 1e300}, "threads": []}), "tsc.hz is 1e+300, outside"),
    (make(info={"tsc": {"hz": 1e9}}), "threads is missing"),
    (make(info={"tsc": {"hz": 1e9}, "threads": [{}, {}]}), "threads[0].thread is missing"),
    (make(info={"tsc": {"hz": 1e9}, "threads": [{"thread": 0}, {"thread": 0}]}),
     "threads[1].thread is 0: threads are numbered 0..n-1"),
    (make(info={"tsc": {"hz": 1e9}, "threads": [{"thread": 0, "tid": "x"}, {"thread": 1}]}),
     "threads[0].tid is a string, not a whole number"),
    (make(info={"tsc": {"hz": 1e9}, "complete": "yes", "threads": []}), "complete is a string, not true or false"),
    (make() + b"\0" * 16, "16 bytes after the END section"),
])
def test_corrupt(tmp_path, data, msg):
    with pytest.raises(H.HglFormatError) as e:
        H.read_hgl(write(tmp_path, data))
    assert msg in str(e.value) and "t.hgl: offset" in str(e.value)


def test_bad_json(tmp_path):
    data = make().replace(b'"tsc"', b'"tsc\xff')
    with pytest.raises(H.HglFormatError) as e:
        H.read_hgl(write(tmp_path, data))
    assert "not valid JSON" in str(e.value) and "not valid UTF-8" in str(e.value)


def test_incomplete_allowed_on_request(tmp_path):
    t = H.read_hgl(write(tmp_path, make(end=False)), allow_incomplete=True)
    assert not t.complete and len(t.records) == 2


def test_dropped_marks_incomplete(tmp_path):
    t = H.read_hgl(write(tmp_path, make(dropped=12)))
    assert not t.complete and t.dropped == 12


def test_records_checked_not_returned(tmp_path):
    t = H.read_hgl(write(tmp_path, make()), records=False)
    assert t.records == [] and t.complete
    with pytest.raises(H.HglFormatError, match="record of thread 7"):
        H.read_hgl(write(tmp_path, make(records=((1, 2, 0, 7, 1, 0, 0),))), records=False)

"""The reader of hourglass's binary trace: its layout is the C header's, and
truncated or corrupt files are refused with the file and offset named."""
import json
import os
import struct
import subprocess

import pytest

import hourglass_trace as H
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
    assert list(map(int, sizes.split())) == [H._PRELUDE.size, H._SECTION.size, H._REC.size, H._END.size]
    assert list(map(int, offs.split())) == [16, 24, 26, 27, 28]
    magic, nums = rest.rstrip("\n").rsplit("|", 1)
    assert magic.encode() + b"\0" == H.MAGIC
    assert list(map(int, nums.split())) == [H.FORMAT_MAJOR, H.INTERVAL, H.JOB, H.WAKE]


def section(tag, body):
    return struct.pack("<4sIQ", tag, 0, len(body)) + body + b"\0" * (-len(body) % 8)


def make(records=((100, 200, 0, 0, 1, 0, 0), (300, 400, 0, 1, 1, 4, 1)), info=None,
         end=True, major=1, dropped=0, nrec=None):
    info = info if info is not None else {"threads": [{}, {}], "tsc": {"hz": 1e9}}
    body = b"".join(struct.pack("<QQQHBBI", *r) for r in records)
    out = struct.pack("<8sHHI", H.MAGIC, major, 0, 0)
    out += section(b"info", json.dumps(info).encode()) + section(b"recs", body)
    if end:
        out += section(b"end!", struct.pack("<QQ", len(records) if nrec is None else nrec, dropped))
    return out


def write(tmp_path, data):
    p = tmp_path / "t.hgl"
    p.write_bytes(data)
    return str(p)


def test_reads_a_good_file(tmp_path):
    t = H.read_trace(write(tmp_path, make()))
    assert t.complete and len(t.records) == 2 and t.info["tsc"]["hz"] == 1e9
    assert t.records[1].thread == 1 and t.records[1].flags == H.IV_LAST and t.records[1].cpu == 1


def test_unknown_sections_are_skipped(tmp_path):
    data = make()
    pre = struct.calcsize("<8sHHI")
    data = data[:pre] + section(b"xtra", b"future") + data[pre:]
    assert len(H.read_trace(write(tmp_path, data)).records) == 2


@pytest.mark.parametrize("cut", [0, 5, 16, 20, 40, 100, -30, -8])
def test_truncated(tmp_path, cut):
    data = make()
    with pytest.raises(H.HglFormatError) as e:
        H.read_trace(write(tmp_path, data[:cut] if cut else b""))
    assert "t.hgl" in str(e.value) and "offset" in str(e.value)


@pytest.mark.parametrize("data,msg", [
    (b"NOTHOURGLASS" + b"\0" * 20, "bad magic"),
    (make(major=2), "format version 2.0"),
    (make(end=False), "no END section"),
    (make(nrec=5), "END says 5 records"),
    (make(records=((1, 2, 0, 0, 9, 0, 0),)), "unknown record type 9"),
    (make(records=((1, 2, 0, 7, 1, 0, 0),)), "record of thread 7"),
    (make(info={}), None),
])
def test_corrupt(tmp_path, data, msg):
    if msg is None:          # an empty info is still an info: threads unknown -> 0
        with pytest.raises(H.HglFormatError):
            H.read_trace(write(tmp_path, data))
        return
    with pytest.raises(H.HglFormatError) as e:
        H.read_trace(write(tmp_path, data))
    assert msg in str(e.value)


def test_bad_json(tmp_path):
    data = make().replace(b'"tsc"', b'"tsc\xff')
    with pytest.raises(H.HglFormatError) as e:
        H.read_trace(write(tmp_path, data))
    assert "not valid JSON" in str(e.value)


def test_incomplete_allowed_on_request(tmp_path):
    t = H.read_trace(write(tmp_path, make(end=False)), allow_incomplete=True)
    assert not t.complete and len(t.records) == 2


def test_dropped_marks_incomplete(tmp_path):
    t = H.read_trace(write(tmp_path, make(dropped=12)))
    assert not t.complete and t.dropped == 12

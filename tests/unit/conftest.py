"""Shared fixtures: paths, the built binaries, a writer of synthetic .hgt files."""
import os
import struct
import subprocess

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
HGTRACE = os.path.join(TOP, "build", "hgtrace")


@pytest.fixture(scope="session")
def hgtrace_bin():
    subprocess.run(["make", "-s", "-C", os.path.join(TOP, "userspace", "recorder")], check=True)
    return HGTRACE


from hgtrace_file import pack_record as rec  # noqa: E402,F401  (tests import it from here)


def chunk(cpu, records, magic=0x6B6E6863):
    data = b"".join(records)
    return struct.pack("<IIII", magic, cpu, len(data), len(records)) + data


def hgt_file(chunks, meta="format: hgtrace 1\ntsc_khz: 1000000\n", end=True, stats=None,
             window=(1, 10**12), version=1):
    m = meta.encode()
    m += b"\0" * (8 - len(m) % 8)
    out = struct.pack("<8sII", b"HGTRACE\n", version, len(m)) + m + b"".join(chunks)
    out += struct.pack("<IIII", 0x656D6974, 0, 16, 1) + struct.pack("<QQ", *window)
    for cpu, st in (stats or {}).items():
        out += struct.pack("<IIII", 0x74617473, cpu, 48, 1) + struct.pack("<6Q", *st)
    if end:
        out += struct.pack("<IIII", 0x21646E65, 0, 0, 0)
    return out


def zchunk(cpu, records, corrupt=False):
    """A compressed chunk ("zchk"), as `hgtrace record -z` writes it."""
    import zlib
    raw = b"".join(records)
    z = zlib.compress(raw, 1)
    if corrupt:
        z = z[:len(z) // 2] + bytes(len(z) - len(z) // 2)
    body = struct.pack("<II", len(raw), len(z)) + z + b"\0" * (-len(z) % 8)
    return struct.pack("<IIII", 0x6B68637A, cpu, len(body), len(records)) + body

"""The test writers' idea of the ABI (tests/helpers/files.py) must be the C header's."""
import os
import re
import subprocess

import helpers.files as F
from conftest import TOP


def layout(tmp_path):
    exe = tmp_path / "abi_layout"
    subprocess.run(["gcc", "-Wall", "-Werror", "-I", os.path.join(TOP, "kmod", "uapi"), "-o", str(exe),
                    os.path.join(os.path.dirname(__file__), "abi_layout.c")], check=True)
    out = {}
    for line in subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines():
        _, name, value = line.split()
        out[name] = int(value)
    return out


def test_sizes_and_offsets(tmp_path):
    L = layout(tmp_path)
    assert L["hgt_rec"] == F.REC.size == 16
    assert L["hgt_chunk"] == F.CHUNK.size
    assert L["hgt_cpu_stats"] == F.STATS.size == 8 * len(F.STATS_FIELDS)
    assert (L["hgt_rec.tsc"], L["hgt_rec.type"], L["hgt_rec.len"], L["hgt_rec.flags"],
            L["hgt_rec.aux"], L["hgt_rec.arg"]) == (0, 8, 9, 10, 11, 12)
    for s in ("hgt_switch", "hgt_wake", "hgt_migrate", "hgt_nmi", "hgt_hrtimer", "hgt_comm",
              "hgt_name", "hgt_lost"):
        assert L[s] % 8 == 0, f"{s} is {L[s]} bytes: records must stay multiples of 8"
    assert L["hgt_switch.prev_state"] == 4 and L["hgt_switch.next_prio"] == 10
    assert L["hgt_comm.comm"] == 8


def test_type_numbers(tmp_path):
    L = layout(tmp_path)
    for num, name in F.RECORD_TYPES.items():
        assert L["HGT_REC_" + name.upper()] == num, name
    assert L["HGT_REC_MAX"] == max(F.RECORD_TYPES) + 1, "a record type is missing from the test writers"
    assert L["HGT_CHUNK_MAGIC"] == F.CHUNK_MAGIC


def test_type_names_are_the_readers(tmp_path, hgtrace_bin):
    """What `hgtrace dump` calls each type is what the writers' table calls it."""
    path = tmp_path / "types.hgt"
    records = [F.rec(t, t, payload=b"\0" * 32) for t in sorted(F.RECORD_TYPES)]
    path.write_bytes(F.hgt_file([F.chunk(0, records)]))
    out = subprocess.run([hgtrace_bin, "dump", str(path)], capture_output=True, text=True, check=True).stdout
    assert [l.split()[2] for l in out.splitlines()] == [F.RECORD_TYPES[t] for t in sorted(F.RECORD_TYPES)]


def test_dkms_version_is_the_abi():
    """DKMS installs the module under PACKAGE_VERSION: it must name the ABI
    the header defines, or an installed module would claim another."""
    hdr = open(os.path.join(TOP, "kmod", "uapi", "hgtrace.h")).read()
    conf = open(os.path.join(TOP, "kmod", "dkms.conf")).read()
    major = hdr.split("#define HGT_ABI_MAJOR")[1].split()[0]
    minor = hdr.split("#define HGT_ABI_MINOR")[1].split()[0]
    assert f'PACKAGE_VERSION="{major}.{minor}"' in conf
    assert 'BUILT_MODULE_NAME[0]="hgtrace"' in conf
    # and the commands docs/install.md and dkms.conf give name it (they said 1.0 and 1.1 at 1.2)
    readme = open(os.path.join(TOP, "docs", "install.md")).read()
    for text in (conf, readme):
        said = re.findall(r"hgtrace[/-](\d+\.\d+)", text)
        assert said and set(said) == {f"{major}.{minor}"}, said

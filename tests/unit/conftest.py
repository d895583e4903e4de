"""Shared fixtures: paths, the built binaries; the writers of synthetic files (tests/helpers)."""
import os
import subprocess

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
HGTRACE = os.path.join(TOP, "build", "hgtrace")
# the programs the tests start with `python3 -m` (the lab's, hgtools.lab.NAME) are this tree's
os.environ["PYTHONPATH"] = os.pathsep.join([os.path.join(TOP, "tools")]
                                           + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])


@pytest.fixture(scope="session")
def hgtrace_bin():
    subprocess.run(["make", "-s", "-C", os.path.join(TOP, "userspace", "recorder")], check=True)
    return HGTRACE


# the writers of our binary files, for the tests that import them from here
from helpers.files import chunk, hgt_file, pack_record as rec, zchunk  # noqa: E402,F401

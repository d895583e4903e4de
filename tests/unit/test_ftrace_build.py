"""hgtrace-ftrace's two builds (userspace/ftrace/Makefile): the program users run reads no
test knob from its environment, the test build that tests/guest/test_ftrace.py runs does.
Checked on the binaries make test built, by the knobs' names in them: a getenv of a name
the binary does not hold cannot happen."""
import os

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PRODUCT = os.path.join(TOP, "build", "hgtrace-ftrace")
TEST_BUILD = os.path.join(TOP, "build", "test", "hgtrace-ftrace")
KNOBS = (b"HGT_FTRACE_STOP_AT", b"HGT_FTRACE_HIDE")


@pytest.mark.skipif(not os.path.exists(PRODUCT), reason="no build/hgtrace-ftrace: make skips it without libtracefs")
def test_the_knobs_are_in_the_test_build_only():
    product, test_build = open(PRODUCT, "rb").read(), open(TEST_BUILD, "rb").read()
    assert [k for k in KNOBS if k in product] == [], "the installed recorder would read a test knob"
    assert [k for k in KNOBS if k not in test_build] == [], "the guest tests' knobs are missing from the test build"

"""`make help` lists every target a user runs: each rule of the top Makefile is in it, or is
a part of another (us-*, files, FORCE), so that a new target cannot be left out of it."""
import os
import re
import subprocess

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
# rules that are parts of others, not targets a user runs
PARTS = re.compile(r"^(us-.*|FORCE|build/.*|\$.*|\.PHONY)$")


def test_every_target_is_in_make_help():
    text = subprocess.run(["make", "-s", "--no-print-directory", "-C", TOP, "help"], capture_output=True,
                          text=True, check=True).stdout
    listed = set(re.findall(r"^make ([a-z][a-z0-9-]*)", text, re.M))
    with open(os.path.join(TOP, "Makefile")) as f:
        text_mk = re.sub(r"^define .*?^endef$", "", f.read(), flags=re.M | re.S)    # text, not rules
    rules = {m.group(1) for m in re.finditer(r"^([A-Za-z0-9_./$()-]+):(?![=])", text_mk, re.M)}
    wanted = {r for r in rules if not PARTS.match(r) and r != "all"}
    assert wanted - listed == set(), "make help does not list these targets"
    assert listed - wanted - {""} == set(), "make help lists targets the Makefile does not have"
    assert re.search(r"^make +build the programs", text, re.M)        # `make` alone, first


def test_make_alone_builds():
    """`make` with no target is `make all`, not the help that comes first in the file.

    Read from make's own database (-p) while it only prints help's recipe (-n): `make -n`
    alone would still run the module's recursive builds, which fail on a clean clone
    without kernel headers."""
    out = subprocess.run(["make", "-np", "--no-print-directory", "-C", TOP, "help"],
                         capture_output=True, text=True, check=True).stdout
    assert re.search(r"^\.DEFAULT_GOAL := all$", out, re.M)

"""The manual pages as a user meets them (issue 52, item 5): `make` builds every page README
lists and `man` finds them there the way the docs say; the synopses name every option the
commands take; `hourglass --help` names the files export writes."""
import os
import re
import shutil
import subprocess

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
MAN = os.path.join(TOP, "build", "man")


@pytest.fixture(scope="module")
def built():
    subprocess.run(["make", "-s", "-C", TOP, "man"], check=True, capture_output=True)
    return sorted(os.path.basename(p) for p in __import__("glob").glob(os.path.join(MAN, "man*", "*.[0-9]")))


def readme_pages():
    """name(N) of every page docs/install.md's install paragraph lists."""
    text = open(os.path.join(TOP, "docs", "install.md")).read()
    para = text[text.index("man pages in\n`$(PREFIX)/share/man`"):]
    para = para[:para.index("all generated from")]
    return sorted(f"{n}.{s}" for n, s in re.findall(r"([a-z][a-z-]*)\((\d)\)", para))


def test_readme_lists_every_page_make_builds(built):
    """README's list omitted hourglass-learn(1) and hourglass-results(1)."""
    assert readme_pages() == built


@pytest.mark.skipif(not shutil.which("man"), reason="needs man (man-db)")
def test_man_finds_the_built_pages_as_the_docs_say(built):
    """`MANPATH=$PWD/build/man: man NAME`, as README and docs/hourglass.md say, finds each page
    make built, not an installed one."""
    for doc in ("docs/install.md", "docs/hourglass.md"):
        assert "MANPATH=$PWD/build/man: man" in " ".join(open(os.path.join(TOP, doc)).read().split()), doc
    env = dict(os.environ, MANPATH=MAN + ":")
    for page in built:
        name, sec = page.rsplit(".", 1)
        p = subprocess.run(["man", "-w", sec, name], capture_output=True, text=True, env=env, cwd=TOP)
        # hgtrace-import(1) is a link to hgtrace(1): man names the page it leads to
        want = os.path.realpath(os.path.join(MAN, f"man{sec}", page))
        assert p.returncode == 0 and os.path.realpath(p.stdout.strip()) == want, (page, p.stdout, p.stderr)


def synopsis(doc):
    text = open(os.path.join(TOP, "docs", doc)).read()
    return re.search(r"## SYNOPSIS\n\n```\n(.*?)```", text, re.S).group(1)


def options_of(*args):
    """Every long option a command's --help lists (the lines that start with one)."""
    p = subprocess.run([os.path.join(TOP, "build", "hourglass"), *args, "--help"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    found = set(re.findall(r"^\s+(?:-\w, )?(--[a-z][a-z-]+)", p.stdout, re.M)) - {"--help"}
    assert len(found) >= 5, p.stdout
    return found


@pytest.mark.parametrize("cmd", ["record", "report"])
def test_record_and_report_synopsis_names_every_option(cmd):
    """hourglass-record(1)'s SYNOPSIS (docs/merge.md) lacked --no-kernel, --load, --profile,
    --explain, --gaps and --label."""
    lines = [x for x in synopsis("merge.md").split("\n") if x.strip()]
    mine, block = [], False
    for x in lines:
        if x.startswith("hourglass "):
            block = x.startswith(f"hourglass {cmd} ")
        if block:
            mine.append(x)
    named = set(re.findall(r"(--[a-z][a-z-]+)", " ".join(mine)))
    wanted = options_of(cmd) - {"--dir"} if cmd == "record" else options_of(cmd)
    assert wanted - named == set()


def test_help_names_what_export_writes():
    """`hourglass --help` said --perfetto OUT.json, where export writes Perfetto's protobuf and
    refuses a .json name."""
    p = subprocess.run([os.path.join(TOP, "build", "hourglass"), "--help"], capture_output=True, text=True)
    line = next(x for x in p.stdout.splitlines() if "hourglass export" in x)
    assert "--perfetto OUT.perfetto-trace" in line and "OUT.json" not in line

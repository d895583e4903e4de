"""scripts/md2man: markdown docs to man pages, and the pages make builds."""
import glob
import os
import shutil
import subprocess
import sys

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
MD2MAN = os.path.join(TOP, "scripts", "md2man")

DOC = """\
# tool(1)

## NAME

tool - does a thing

## SYNOPSIS

```
tool [-v] FILE
.starts with a dot
```

## OPTIONS

`-v`
: Verbose: **every** line, see [the format](format.md) and docs/format.md.
  A second line of the same definition.

| option | meaning |
| --- | --- |
| `-q` | quiet, a pipe \\| inside |

| a header longer than its cells | what | why |
| --- | --- | --- |
| x | a long cell that cannot fit beside the others on one line of a terminal | another long cell that has to wrap, so the table takes fixed widths |

## NOTES

- one
- two, with `a\\b`
  1. nested
- three

![a picture](img/x.png)

Plain *emphasis*, a snake_case_word and [the site](https://example.org/).
"""


def md2man(tmp_path, text, *args):
    doc = tmp_path / "tool.md"
    doc.write_text(text)
    return subprocess.run([sys.executable, MD2MAN, "--date", "2026-01-01", *args, str(doc)],
                          capture_output=True, text=True)


def test_constructs_become_man_macros(tmp_path):
    p = md2man(tmp_path, DOC, "--link", "format.md=tool-format.5")
    assert p.returncode == 0, p.stderr
    out = p.stdout.split("\n")
    assert out[0] == "'\\\" t"                      # a table: man runs tbl
    assert '.TH "TOOL" "1" "2026-01-01" "hourglass" "hourglass manual"' in out
    assert out[out.index('.SH "NAME"') + 1] == "tool \\- does a thing"
    i = out.index('.SH "SYNOPSIS"')
    assert out[i + 1:i + 6] == [".RS 4", ".nf", "tool [\\-v] FILE", "\\&.starts with a dot", ".fi"]
    i = out.index(".TP")
    assert out[i + 1] == "\\fB\\-v\\fR"
    assert ("Verbose: \\fBevery\\fR line, see the format (\\fBtool\\-format\\fR(5)) and "
            "\\fBtool\\-format\\fR(5).") in " ".join(out[i + 2:i + 5])
    assert "quiet, a pipe | inside" in "\n".join(out)
    i = out.index(".TS")
    assert out[i + 1:i + 3] == ["lb lb", "l l."] and out[i + 3] == "option\tmeaning"
    i = out.index(".TS", i + 1)                     # too wide: fixed widths, every cell wraps
    assert out[i + 1] == "lb2 lb2 lb" and out[i + 2].startswith("lw(") and out[i + 3] == "T{"
    assert out.count(".IP \\(bu 2") == 3 and '.IP "1." 3' in out
    assert "two, with \\fBa\\eb\\fR" in out
    assert "img/x.png" not in p.stdout
    text = " ".join(out)
    assert "Plain \\fIemphasis\\fR, a snake_case_word and the site <https://example.org/>." in text


def test_page_renders_without_warnings(tmp_path):
    if not shutil.which("groff"):
        pytest.skip("groff is not installed (make setup installs groff-base)")
    page = tmp_path / "tool.1"
    page.write_text(md2man(tmp_path, DOC).stdout)
    p = subprocess.run(["groff", "-man", "-t", "-ww", "-z", "-Tutf8", "-rcR=1", str(page)],
                       capture_output=True, text=True)
    assert p.returncode == 0 and p.stderr == "", p.stderr


@pytest.mark.parametrize("text,want", [
    ("# t(1)\n\n## NAME\n\nt - x\n\n```\nnever closed\n", "tool.md:7: code block never closed"),
    ("# t(1)\n\n## DESCRIPTION\n\nno name section\n", "tool.md: no '## NAME' section"),
    ("# A title\n\n## NAME\n\nt - x\n", "tool.md:1: no name(section) title"),
])
def test_bad_docs_named_with_exit_3(tmp_path, text, want):
    p = md2man(tmp_path, text)
    assert p.returncode == 3 and want in p.stderr and p.stdout == "", p.stderr


@pytest.fixture(scope="module")
def pages():
    subprocess.run(["make", "-s", "-C", TOP, "man"], check=True)
    found = sorted(glob.glob(os.path.join(TOP, "build", "man", "man*", "*")))
    assert len(found) >= 8
    return found


def test_every_page_make_builds_passes_man_and_groff(pages):
    if not shutil.which("groff") or not shutil.which("man"):
        pytest.skip("man-db and groff are not installed (make setup installs them)")
    for page in pages:
        p = subprocess.run(["groff", "-man", "-t", "-ww", "-z", "-Tutf8", "-rcR=1", page],
                           capture_output=True, text=True)
        assert p.returncode == 0 and p.stderr == "", f"{page}: {p.stderr}"
        p = subprocess.run(["man", "-l", page], capture_output=True, text=True,
                           env=dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING=""))
        assert p.returncode == 0 and p.stderr == "" and "NAME" in p.stdout, f"{page}: {p.stderr}"


def test_every_page_make_builds_passes_mandoc_lint(pages):
    if not shutil.which("mandoc"):
        pytest.skip("mandoc is not installed (apt install mandoc): lint not run")
    for page in pages:
        p = subprocess.run(["mandoc", "-T", "lint", "-W", "warning", page], capture_output=True,
                           text=True)
        assert p.returncode == 0 and p.stdout + p.stderr == "", f"{page}: {p.stdout}{p.stderr}"

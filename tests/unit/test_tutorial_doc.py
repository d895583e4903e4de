"""docs/tutorial.md is generated from the run it describes, never pasted (issue 52, item 5), and
every command README.md, docs/tutorial.md and the docs' examples show has its rule in the
doc-test (tests/demo/doc_commands.py, which runs them after make demo)."""
import os
import subprocess
import sys

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
import doc_commands  # tests/demo (pytest.ini)


def test_the_tutorial_is_its_kept_run_merged_now():
    """docs/tutorial.md is what scripts/tutorial writes from docs/tutorial-run (the runs of a
    make demo, merged again by this tree's merger): a page edited by hand, or left behind by a
    change of the merger's rules or words, differs. To bring it up to date:
    scripts/tutorial --runs docs/tutorial-run > docs/tutorial.md (or --keep out/demo after a demo)."""
    p = subprocess.run([sys.executable, os.path.join(TOP, "scripts", "tutorial"), "--runs",
                        os.path.join(TOP, "docs", "tutorial-run")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    with open(os.path.join(TOP, "docs", "tutorial.md")) as f:
        assert f.read() == p.stdout, "docs/tutorial.md is not its run's: scripts/tutorial --runs docs/tutorial-run"


@pytest.mark.parametrize("doc", doc_commands.DOCS)
def test_every_command_of_the_docs_has_one_rule(doc):
    cmds = doc_commands.parse(doc)
    assert cmds, f"{doc} shows no command"
    for c in cmds:
        rules = doc_commands.rule_of(c)
        assert len(rules) == 1, f"{doc}:{c.line}: {c.text}: {len(rules)} rules (tests/demo/doc_commands.py)"


def test_commands_are_read_from_the_code_blocks():
    md = """text `hourglass report inline` is prose
```sh
make demo   # a comment
# only a comment
scripts/vm -k 6.1 -- \\
    bash -c 'echo # not a comment'
```
```
hourglass report untagged
```
```console
$ hourglass -n 1 -q
output line
```
"""
    got = [(c.line, c.text, c.bare()) for c in doc_commands.parse("x.md", md)]
    assert got == [(3, "make demo   # a comment", "make demo"),
                   (5, "scripts/vm -k 6.1 -- bash -c 'echo # not a comment'",
                    "scripts/vm -k 6.1 -- bash -c 'echo # not a comment'"),
                   (12, "hourglass -n 1 -q", "hourglass -n 1 -q")]

"""The front door and the rooms (issue 55): what a newcomer meets first stays short, and the
tests stay tests. These check the tree's text, not a program."""
import os
import re

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# the top-level rooms, each with a README that says what it holds and what it may import
ROOMS = ("kmod", "userspace", "tools", "scripts", "docs", "tests", "bench")
SCREEN = 50                             # lines: a README read without scrolling
FRONT_DOOR = 120                        # lines of README.md
# where the text of tests/ and tools/ may name the import path's list, and why
IMPORT_PATH = {
    "tests/testpath.py": "the one set-up of the scripts' import path (pytest.ini's folders)",
    "tests/unit/test_record_startup.py": "the C hourglass's command for record, which it compares",
}


def test_every_room_has_a_readme_of_a_screen():
    long = {}
    for room in ROOMS:
        path = os.path.join(TOP, room, "README.md")
        assert os.path.isfile(path), f"{room}/ has no README.md"
        n = sum(1 for _ in open(path))
        if n > SCREEN:
            long[room] = n
    assert not long, f"READMEs longer than a screen ({SCREEN} lines): {long}"


def test_the_front_door_is_short_and_undated():
    """README.md: under FRONT_DOOR lines and no dated figure (figures live in the docs pages
    generated from their runs, which it links to)."""
    text = open(os.path.join(TOP, "README.md")).read()
    assert text.count("\n") < FRONT_DOOR, f"README.md has {text.count(chr(10))} lines"
    dated = re.findall(r".*\b20\d\d-\d\d-\d\d\b.*", text)
    assert not dated, f"README.md holds dated lines: {dated}"


def test_only_the_set_up_module_edits_the_import_path():
    """No test or tool puts folders on the import path itself: the scripts import
    tests/testpath.py (linked beside them), pytest reads pytest.ini, and the package imports
    as a package. As `git grep -l` of the list's name over tests/ and tools/ would say."""
    name = re.compile(r"\bsys\.path\b")
    found = set()
    for room in ("tests", "tools"):
        for root, dirs, files in os.walk(os.path.join(TOP, room)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for f in files:
                path = os.path.join(root, f)
                if os.path.islink(path) or f.endswith(".pyc"):
                    continue
                with open(path, errors="replace") as fh:
                    if name.search(fh.read()):
                        found.add(os.path.relpath(path, TOP))
    assert found == set(IMPORT_PATH), f"besides {sorted(IMPORT_PATH)}: {sorted(found - set(IMPORT_PATH))}"

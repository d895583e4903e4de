"""testpath - the tree's folders on the import path for the tests that run as scripts (the
guest suite, the demo's checks, the fuzzers' seeds and report target): pytest.ini's
pythonpath, read from there, so that a script imports what a unit test imports, found in the
same order. The one place in tests/ that edits the import path; a script imports it before
anything of the tree's:

    import testpath  # noqa: F401  (the tree's folders on the import path, as pytest's)

Each folder with such scripts holds a symbolic link to this file: a script's own folder comes
first on the path, so the link is found there, and this file, through its real path, finds
the tree.
"""
import configparser
import os
import sys

TOP = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def folders():
    """pytest.ini's pythonpath, each folder's absolute path, in its order."""
    ini = configparser.ConfigParser()
    ini.read(os.path.join(TOP, "pytest.ini"))
    return [os.path.join(TOP, p) for p in ini.get("pytest", "pythonpath").split()]


# first on the path in pytest.ini's order, as pytest puts them (a script's own folder, there
# already, stays first)
for _folder in reversed(folders()):
    if _folder not in sys.path:
        sys.path.insert(0, _folder)

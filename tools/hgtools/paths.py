"""paths - where hourglass's programs are (hourglass, hgtrace, hgtrace-ftrace, hgmerge, hgtrace-import).

Looked for, in order:
1. beside the binary HG_BIN names (the C `hourglass` sets it to itself
   before it runs `python3 -m hgtools`, so record starts that same hourglass);
2. in the libexec directory an installation configured (config.LIBEXEC_DIR);
3. in the source tree's build/ (this package run from tools/);
4. on PATH.
"""
from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:     # typing for the type checker alone: hourglass record's start-up (record.py)
    from typing import List, Optional

from . import config
from .errors import EXIT_ENV, HgError

# what to do about each program when it is missing
HINTS = {
    "hourglass": "make userspace",
    "hgtrace": "make userspace",
    "hgmerge": "make userspace",
    "hgtrace-import": "make userspace; it needs libtracecmd-dev",
    "hgtrace-ftrace": "make userspace; it needs libtracefs-dev and libtraceevent-dev",
}


def search_dirs() -> List[str]:
    """The directories looked in, in order (PATH comes after them)."""
    dirs = []
    hg_bin = os.environ.get("HG_BIN")
    if hg_bin:
        dirs.append(os.path.dirname(os.path.realpath(hg_bin)))
    if config.LIBEXEC_DIR:
        dirs.append(config.LIBEXEC_DIR)
    dirs.append(os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build")))
    return list(dict.fromkeys(dirs))


def locate(name: str) -> Optional[str]:
    """The path of program @name, or None."""
    if name == "hourglass" and os.environ.get("HG_BIN"):
        return os.environ["HG_BIN"]
    for d in search_dirs():
        p = os.path.join(d, name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    import shutil       # with its compression modules: only when a program is not in our directories
    return shutil.which(name)


def require(name: str) -> str:
    """The path of program @name, or an error saying where it was looked for and how to get it."""
    p = locate(name)
    if p:
        return p
    hint = HINTS.get(name, "make userspace")
    raise HgError(f"{name} not found (looked in {', '.join(search_dirs())} and PATH): {hint}", EXIT_ENV)

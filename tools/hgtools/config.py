"""config - where an installation put hourglass's helper programs.

`make install` rewrites LIBEXEC_DIR in the installed copy of this file
(for example to "/usr/lib/hourglass"); in the source tree it stays None
and the programs are found in build/ (see paths.py).
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:     # typing for the type checker alone: hourglass record's start-up (record.py)
    from typing import Optional

LIBEXEC_DIR: Optional[str] = None

"""progress - hgmerge's progress line, shown when it is wanted, and its
messages relayed so that a failure is said once, in hourglass's words.

Progress is shown when stderr is a terminal, or when HG_PROGRESS=1 (tests,
logs); HG_PROGRESS=0 silences it. hgmerge draws it (--progress); this
module only decides and relays.
"""
from __future__ import annotations

import os
import sys
from typing import IO, Optional, TextIO


def enabled(stream: Optional[TextIO] = None) -> bool:
    """Whether to ask for a progress line: HG_PROGRESS=1/0, else whether @stream is a terminal."""
    env = os.environ.get("HG_PROGRESS")
    if env is not None:
        return env == "1"
    stream = stream or sys.stderr
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class Relay:
    """Copies a child's stderr to @dst as it comes, one line behind.

    Redrawn progress (text after a carriage return, not yet ended by a
    newline) is written at once. Complete lines are written when the next
    one arrives: the last line is held, so that when the child fails its
    error line can be reworded by the caller instead of printed twice.
    """

    def __init__(self, dst: TextIO) -> None:
        self.dst = dst
        self.tail = ""
        self.held: Optional[str] = None
        self.mid_line = False       # a progress redraw was written, not yet ended by a newline

    def _line(self, line: str) -> None:
        if self.mid_line and line:
            self.dst.write("\n")
        self.dst.write(line + "\n")
        self.mid_line = False

    def feed(self, text: str) -> None:
        """Take the next piece of the child's stderr."""
        self.tail += text
        *lines, self.tail = self.tail.split("\n")
        for line in lines:
            if self.held is not None:
                self._line(self.held)
            self.held = line
        if "\r" in self.tail:
            # a progress redraw: it never is the error, show it now
            if self.held is not None:
                self._line(self.held)
                self.held = None
            self.dst.write(self.tail)
            self.tail = ""
            self.mid_line = True
        self.dst.flush()

    def pump(self, src: IO[bytes]) -> None:
        """Feed everything @src gives until it closes."""
        while True:
            data = src.read1(4096) if hasattr(src, "read1") else src.read(4096)
            if not data:
                break
            self.feed(data.decode(errors="replace"))
        if self.tail:
            self.feed("\n")

    def last_line(self, start: str = "") -> str:
        """The held line (the child's last message), taken: the caller says it its own way.
        A message glued to an unfinished progress line begins at @start (the program's name):
        what comes before it is shown as progress."""
        line, self.held = self.held, None
        line = line or ""
        at = line.find(start) if start else -1
        if at > 0:
            self.dst.write(line[:at])
            self.mid_line = True
            line = line[at:]
        if self.mid_line:
            self.dst.write("\n")
            self.mid_line = False
        self.dst.flush()
        # what a redraw left on that line is not part of the message
        return line.rsplit("\r", 1)[-1].strip()

    def flush(self) -> None:
        """Write the held line: the child succeeded and its last message is just a message."""
        if self.held is not None:
            self._line(self.held)
        elif self.mid_line:
            self.dst.write("\n")
            self.mid_line = False
        self.dst.flush()
        self.held = None

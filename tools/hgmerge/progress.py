"""progress - a one-line progress display on stderr for long analyses and
exports (never during a measurement: only the merger and exporters use it).

Shown when stderr is a terminal, or when HG_PROGRESS=1 (tests, logs);
HG_PROGRESS=0 silences it. Redrawn at most four times a second, so the
cost is one clock read per call.
"""
import os
import sys
import time


def enabled(stream=None):
    env = os.environ.get("HG_PROGRESS")
    if env is not None:
        return env == "1"
    stream = stream or sys.stderr
    return hasattr(stream, "isatty") and stream.isatty()


class Progress:
    """Progress("sweeping kernel.hgt", total).update(done) ... .done()"""

    def __init__(self, what, total, stream=None):
        self.what, self.total = what, max(total, 1)
        self.stream = stream or sys.stderr
        self.on = enabled(self.stream)
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.t0 = self.last = time.monotonic()
        self.shown = False

    def update(self, done):
        if not self.on:
            return
        now = time.monotonic()
        if now - self.last < 0.25:
            return
        self.last = now
        self._show(done, now)

    def _show(self, done, now):
        pct = min(done / self.total, 1.0) * 100
        line = f"{self.what}: {pct:5.1f}% ({now - self.t0:.1f} s)"
        # a terminal gets one line redrawn; a log gets a line per update
        self.stream.write(("\r" + line + "\033[K") if self.tty else line + "\n")
        self.stream.flush()
        self.shown = True

    def done(self):
        if self.on and self.shown:
            self._show(self.total, time.monotonic())
            if self.tty:
                self.stream.write("\n")
            self.stream.flush()


def over_stream(stream, what):
    """Iterate a kernel stream (HgtStream or FtraceStream), showing how far
    through its file the iteration is."""
    total = getattr(stream, "bytes", 0)
    p = Progress(what, total)
    if not p.on or not total:
        yield from stream
        return
    n = 0
    for item in stream:
        n += 1
        if not n & 0xFFFF:
            p.update(getattr(stream, "offset", 0))
        yield item
    p.done()

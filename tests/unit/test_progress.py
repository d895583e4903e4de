"""The progress line of long analyses and exports: shown on request or on a
terminal, throttled, silent otherwise."""
import io
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../tools"))
from hgmerge import progress  # noqa: E402


class FakeStream:
    """What over_stream needs of a kernel stream: iteration, bytes, offset."""

    def __init__(self, n, clock):
        self.n, self.bytes, self.offset, self.clock = n, n * 32, 0, clock

    def __iter__(self):
        for i in range(self.n):
            self.offset = (i + 1) * 32
            self.clock[0] += 1e-5           # 10 us an event
            yield i


def test_over_stream_shows_progress_when_asked(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    monkeypatch.setenv("HG_PROGRESS", "1")
    err = io.StringIO()
    monkeypatch.setattr(progress.sys, "stderr", err)
    items = list(progress.over_stream(FakeStream(300_000, clock), "sweeping k.hgt"))
    assert items == list(range(300_000))        # nothing lost or reordered
    lines = err.getvalue().splitlines()
    assert len(lines) >= 3 and all(l.startswith("sweeping k.hgt: ") for l in lines)
    assert lines[-1].startswith("sweeping k.hgt: 100.0%")
    pcts = [float(l.split(":")[1].split("%")[0]) for l in lines]
    assert pcts == sorted(pcts)


def test_silent_unless_asked_or_a_terminal(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    err = io.StringIO()
    monkeypatch.setattr(progress.sys, "stderr", err)
    monkeypatch.delenv("HG_PROGRESS", raising=False)
    assert len(list(progress.over_stream(FakeStream(200_000, clock), "x"))) == 200_000
    monkeypatch.setenv("HG_PROGRESS", "0")
    assert len(list(progress.over_stream(FakeStream(200_000, clock), "x"))) == 200_000
    assert err.getvalue() == ""


def test_throttled_to_four_a_second(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    monkeypatch.setenv("HG_PROGRESS", "1")
    out = io.StringIO()
    p = progress.Progress("export", 1000, stream=out)
    for i in range(1000):
        clock[0] += 0.01                     # 10 s in all
        p.update(i)
    p.done()
    n = len(out.getvalue().splitlines())
    assert 30 <= n <= 42, n                  # about 4 a second, plus the last

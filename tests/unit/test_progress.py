"""hgmerge's progress line and messages, relayed by hgtools: asked for on a
terminal or on request, shown as it comes, and a failure said once, in
hourglass's words."""
import io
import os
import stat
import subprocess
import sys

import pytest

from hgtools import engine, progress
from hgtools.errors import HgError


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_enabled_on_a_terminal_or_when_asked(monkeypatch):
    monkeypatch.delenv("HG_PROGRESS", raising=False)
    assert progress.enabled(Tty()) and not progress.enabled(io.StringIO())
    monkeypatch.setenv("HG_PROGRESS", "1")
    assert progress.enabled(io.StringIO())
    monkeypatch.setenv("HG_PROGRESS", "0")
    assert not progress.enabled(Tty())


def test_relay_shows_redraws_at_once_and_holds_the_last_line():
    out = io.StringIO()
    r = progress.Relay(out)
    r.feed("warning: one\nsweep")
    assert out.getvalue() == "", "a line is shown once the next one begins"
    r.feed("ing\n\rsweeping: 10%\033[K")
    assert out.getvalue() == "warning: one\nsweeping\n\rsweeping: 10%\033[K", "a redraw is shown at once"
    r.feed("\rsweeping: 100%\033[K\nhgmerge: run/kernel.hgt: offset 4096: bad chunk\n")
    assert "bad chunk" not in out.getvalue(), "the last line is held for the caller"
    assert r.last_line() == "hgmerge: run/kernel.hgt: offset 4096: bad chunk"
    assert out.getvalue().endswith("sweeping: 100%\033[K\n")


def test_relay_ends_a_progress_line_before_a_message():
    out = io.StringIO()
    r = progress.Relay(out)
    r.feed("\rsweeping: 50%")
    r.feed("note: half way\n")
    r.flush()
    assert out.getvalue() == "\rsweeping: 50%\nnote: half way\n"


def fake_program(tmp_path, name, script):
    p = tmp_path / name
    p.write_text("#!/bin/sh\n" + script)
    p.chmod(p.stat().st_mode | stat.S_IEXEC)
    return str(p)


def test_a_bad_input_is_one_clean_line(tmp_path, capfd):
    prog = fake_program(tmp_path, "hgmerge", "printf '\\rsweeping: 5%%' >&2\n"
                        "echo 'hgmerge: k.hgt: offset 64: chunk of CPU 70000, but the recording has 2 CPUs' >&2\n"
                        "exit 3\n")
    with pytest.raises(HgError) as e:
        engine._run([prog])
    assert e.value.status == 3
    assert str(e.value) == "k.hgt: offset 64: chunk of CPU 70000, but the recording has 2 CPUs"
    err = capfd.readouterr().err
    assert "sweeping: 5%" in err and "CPU 70000" not in err, err


def test_a_crash_is_not_called_bad_input(tmp_path):
    prog = fake_program(tmp_path, "hgmerge", "kill -SEGV $$\n")
    with pytest.raises(HgError) as e:
        engine._run([prog])
    assert e.value.status == 2 and "SIGSEGV" in str(e.value)


def test_messages_of_a_success_all_reach_stderr(tmp_path, capfd):
    prog = fake_program(tmp_path, "hgmerge", "echo 'first' >&2\necho 'second' >&2\necho 'on stdout'\n")
    engine._run([prog])
    cap = capfd.readouterr()
    assert sorted(cap.err.splitlines()) == ["first", "on stdout", "second"]
    assert cap.out == "", "the child's stdout never mixes with ours (it may be the report)"

"""tests/guest/harness.py and host_halves.py: a guest test's checks left to
the host are listed only when its guest half passed, and each runs on the
host as a TAP line of its own that fails as a guest test would."""
import importlib
import json

import pytest

HALVES = '''
def recorded(ctx):
    with open(ctx.path("data.txt"), "w") as f:
        f.write("3\\n")
    ctx.on_host(counted, ctx.path("data.txt"), 3)


def counted(ctx, path, want):
    with open(path) as f:
        got = int(f.read())
    assert got == want, f"{path}: {got}, not {want}"
    ctx.note(f"{got} as recorded")


def broken_in_guest(ctx):
    ctx.on_host(counted, "nowhere", 1)
    assert False, "the guest half failed"


def lied(ctx):
    with open(ctx.path("data.txt"), "w") as f:
        f.write("3\\n")
    ctx.on_host(counted, ctx.path("data.txt"), 4)


def crashed(ctx, *args):
    raise KeyError("the check's own bug")


def crashes_on_host(ctx):
    ctx.on_host(crashed)


def unkept(ctx):
    ctx.on_host(counted, object(), 1)
'''


@pytest.fixture
def guest(tmp_path, monkeypatch):
    """harness and host_halves with OUT in tmp_path, and the module of tests above."""
    (tmp_path / "halves_demo.py").write_text(HALVES)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.setenv("HGT_OUT", str(out))
    import harness
    import host_halves
    harness = importlib.reload(harness)
    monkeypatch.setattr(harness, "dmesg_lines", lambda: [])
    monkeypatch.setattr(harness, "unload", lambda: None)
    demo = importlib.import_module("halves_demo")
    return harness, importlib.reload(host_halves), importlib.reload(demo), out


def listed(out):
    return [json.loads(l) for l in (out / "host-halves.jsonl").read_text().splitlines()]


def test_only_a_passing_guest_half_leaves_its_host_half(guest, capsys):
    harness, _, demo, out = guest
    assert harness.main([demo.recorded, demo.broken_in_guest]) == 1
    assert [h["test"] for h in listed(out)] == ["recorded"]
    assert listed(out)[0]["args"] == [str(out / "recorded" / "data.txt"), 3]
    text = capsys.readouterr().out
    assert "ok 1 - recorded" in text and "its host half" in text and "not ok 2 - broken_in_guest" in text


def test_a_new_run_forgets_the_last_ones_halves(guest):
    harness, _, demo, out = guest
    harness.main([demo.recorded])
    harness.main([demo.broken_in_guest])
    assert listed(out) == []


def test_host_halves_pass_and_fail_as_tap(guest, capsys):
    harness, host_halves, demo, out = guest
    harness.main([demo.recorded, demo.lied, demo.crashes_on_host])
    capsys.readouterr()
    assert host_halves.main(str(out)) == 1
    text = capsys.readouterr().out
    assert "1..3" in text
    assert "ok 1 - recorded: host half" in text and "#   3 as recorded" in text
    assert "not ok 2 - lied: host half" in text and "3, not 4" in text
    assert "not ok 3 - crashes_on_host: host half" in text and "KeyError" in text
    assert "# host halves: 1 passed, 2 failed" in text
    # the host half reads what the guest half left: its folder is not wiped
    assert (out / "recorded" / "data.txt").exists()


def test_no_halves_is_a_pass_and_no_list_an_error(guest, capsys, tmp_path):
    harness, host_halves, demo, out = guest
    harness.main([demo.broken_in_guest])
    capsys.readouterr()
    assert host_halves.main(str(out)) == 0 and capsys.readouterr().out == ""
    assert host_halves.main(str(tmp_path / "none")) == 2
    assert "cannot read" in capsys.readouterr().err


def test_arguments_json_cannot_keep_fail_in_the_guest(guest, capsys):
    harness, _, demo, out = guest
    assert harness.main([demo.unkept]) == 1
    assert listed(out) == [] and "not JSON serializable" in capsys.readouterr().out

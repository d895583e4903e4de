"""tests/guest/depth.py: make check's quick guest run deals each
kernel-independent test to exactly one kernel, the same deal on every kernel."""
import importlib

import pytest


def load(monkeypatch, depth="quick", share=None):
    monkeypatch.setenv("HGT_GUEST_DEPTH", depth)
    if share:
        monkeypatch.setenv("HGT_GUEST_SHARE", share)
    import depth as mod
    return importlib.reload(mod)


def suite(mod):
    def t(name, w=None):
        f = lambda ctx: None  # noqa: E731
        f.__name__ = name
        return mod.once(w)(f) if w else f
    return [t("a"), t("b", 560), t("c", 250), t("d"), t("e", 100), t("f", 26), t("g", 8), t("h", 150)]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
def test_each_once_test_runs_on_exactly_one_kernel(monkeypatch, n):
    mod = load(monkeypatch)
    tests = suite(mod)
    ran = {}
    for i in range(n):
        monkeypatch.setenv("HGT_GUEST_SHARE", f"{i}/{n}")
        keep, note = mod.select(tests, [])
        assert [t.__name__ for t in keep if not hasattr(t, "once_seconds")] == ["a", "d"]
        for t in keep:
            if hasattr(t, "once_seconds"):
                ran.setdefault(t.__name__, []).append(i)
        assert (note is None) == (n == 1)
    assert ran == {k: ran[k] for k in "bcefgh"} and all(len(v) == 1 for v in ran.values()), ran


def test_the_deal_balances_by_weight(monkeypatch):
    mod = load(monkeypatch)
    tests = suite(mod)
    loads = [sum(t.once_seconds for t in tests if t.__name__ in mod.deal(tests, i, 2)) for i in range(2)]
    assert sorted(loads) == [534, 560], loads       # 560 alone; 250 + 150 + 100 + 26 + 8 on the other


def test_full_or_named_runs_everything(monkeypatch):
    mod = load(monkeypatch, "full", "1/4")
    tests = suite(mod)
    assert mod.select(tests, []) == (tests, None)
    mod = load(monkeypatch, "quick", "1/4")
    assert mod.select(tests, ["b"]) == (tests, None)
    assert mod.sized(1, 2) == 2


@pytest.mark.parametrize("depth,share", [("fast", None), ("quick", "4/4"), ("quick", "x")])
def test_bad_settings_are_refused(monkeypatch, depth, share):
    with pytest.raises(SystemExit):
        mod = load(monkeypatch, depth, share)
        mod.share()


def test_the_deal_starts_from_each_kernels_own_time(monkeypatch):
    """A kernel whose own suite takes longer gets fewer of the shared tests."""
    mod = load(monkeypatch)
    tests = suite(mod)
    monkeypatch.setattr(mod, "BASE_SECONDS", {"fast": 0, "slow": 600})
    # 560 to fast, 250 to fast (560 < 600), 150 and 100 to slow, 26 and 8 to fast
    assert mod.deal(tests, 0, 2, ["fast", "slow"]) == {"b", "c", "f", "g"}      # 844 in all
    assert mod.deal(tests, 1, 2, ["fast", "slow"]) == {"e", "h"}                # 850
    # a kernel not in the table starts from the mean of those that are (here 0)
    assert mod.deal(tests, 0, 2, ["fast", "other"]) == mod.deal(tests, 0, 2)


def test_core_runs_the_kernel_tests_and_its_share(monkeypatch):
    """A core kernel (HGT_GUEST_CORE) runs only CORE of the per-kernel tests, and its share of
    the @once tests, dealt as every other kernel deals them; the note names what it leaves."""
    monkeypatch.setenv("HGT_GUEST_KERNELS", "6.1 6.12 7.3")
    monkeypatch.setenv("HGT_GUEST_CORE", "6.12")
    ran = {}
    for i, k in enumerate(["6.1", "6.12", "7.3"]):
        mod = load(monkeypatch, "core" if k == "6.12" else "quick", f"{i}/3")
        monkeypatch.setattr(mod, "CORE", ("a",))
        keep, note = mod.select(suite(mod), [])
        plain = [t.__name__ for t in keep if not hasattr(t, "once_seconds")]
        assert plain == (["a"] if k == "6.12" else ["a", "d"]), (k, plain)
        if k == "6.12":
            assert note.startswith("core, kernel 2 of 3") and "run on the quick kernels: d" in note, note
        for t in keep:
            if hasattr(t, "once_seconds"):
                ran.setdefault(t.__name__, []).append(k)
    assert sorted(ran) == list("bcefgh") and all(len(v) == 1 for v in ran.values()), ran
    # the core kernel starts from its core time: 250, less than 6.1's 554 and 7.3's 690, so it
    # is dealt the heaviest test
    assert ran["b"] == ["6.12"], ran

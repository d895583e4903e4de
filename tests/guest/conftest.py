"""The guest tests under pytest: collected everywhere, run only inside a guest
booted by scripts/vm (root, a kernel that loads modules, HGT_KO naming this
kernel's hgtrace.ko). Anywhere else each is skipped, saying how to run it, so
that `pytest tests` on the host lists them without counting them as passed.

Their runner is run.py (TAP, what scripts/check-kernels reads): in a guest,
pytest runs the same tests (each module's TESTS), and the ctx fixture does
around each what run.py's harness does: a fresh Context, then unload the
module and look in the kernel log for trouble.
"""
import os

import pytest

import harness

HERE = os.path.dirname(os.path.abspath(__file__))


def in_guest():
    """What run.py checks (root, /proc/modules), and a module to load."""
    return os.geteuid() == 0 and os.path.exists("/proc/modules") and os.path.isfile(harness.KO)


def why_not(item):
    """Why @item does not run here, or None when it does."""
    module, name = item.module, item.function.__name__
    stem = os.path.basename(module.__file__)[:-3]
    runner = getattr(module, "TESTS", [])
    if item.function not in runner:
        # test_ftrace's LOCKDOWN: each needs a boot of its own, run by the module itself
        for key, tests in getattr(module, "LOCKDOWN", {}).items():
            if item.function in tests:
                return (f"needs a guest booted with lockdown (HGT_VM_APPEND, tests/guest/{stem}.py says how): "
                        f"scripts/vm -k 6.1 -- tests/guest/{stem}.py {key}")
        return f"not in {stem}.TESTS: tests/guest/run.py does not run it"
    if not in_guest():
        return f"needs the hgtrace module in a guest kernel: scripts/vm -k 6.12 -- tests/guest/run.py {name}"
    return None


def pytest_collection_modifyitems(config, items):
    # this hook sees the whole session's items: mark only this directory's
    for item in items:
        if isinstance(item, pytest.Function) and str(item.path).startswith(HERE + os.sep):
            reason = why_not(item)
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture
def ctx(request):
    c = harness.Context(request.function.__name__)
    before = len(harness.dmesg_lines())
    yield c
    for n in c.notes:
        print(n)
    harness.unload()    # a failing rmmod raises: a failure, as in run.py
    bad, traps = harness.kernel_trouble(harness.dmesg_lines()[before:])
    for line in traps[:5]:
        print(f"a program of the load faulted (the kernel is fine): {line.strip()}")
    assert not bad, "kernel log shows trouble:\n" + "\n".join(bad[:30])

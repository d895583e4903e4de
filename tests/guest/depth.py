"""depth - how much of the guest suite a run does: quick (make check) or full.

Under TCG the whole suite takes 45 to 60 minutes a kernel, four kernels two at
a time; make check must end within 50. So make check runs it quick
(HGT_GUEST_DEPTH=quick, set by scripts/check-kernels), make check-full runs
it full (the default when run.py is started by hand):

  - sized(full, quick): a test's workload, smaller when quick (fewer cycles,
    a shorter run), with the same assertions;
  - @once(seconds): a test of user-space behaviour that does not change with
    the kernel (Ctrl-C in the recorders, record's and report's handling of a
    run directory, exports) runs on one kernel of the run when quick, not on
    each. scripts/check-kernels says which: HGT_GUEST_SHARE=I/N is this
    kernel's place I among N kernels, HGT_GUEST_KERNELS their names. The
    tests are dealt by their weight (their quick time under TCG, heaviest
    first), each to the kernel with the least time so far, counting from
    what the rest of its suite takes there (BASE_SECONDS: 6.12-rt's takes a
    third longer than 6.12's), so every kernel computes the same deal and
    each test runs exactly once a run. Tests named on the command line
    always run.

What is not run here is printed as a TAP comment, never counted as passed.
"""
import os

DEPTH = os.environ.get("HGT_GUEST_DEPTH", "full")
if DEPTH not in ("quick", "full"):
    raise SystemExit(f"HGT_GUEST_DEPTH={DEPTH}: not quick or full")
QUICK = DEPTH == "quick"


# What each kernel's quick run takes without the @once tests, with the other
# boots scripts/check-kernels gives it (tsc=reliable on 6.1-rt, the lab on
# each): seconds, scripts/check-kernels of 2026-11-29 11:04, once the tests
# that read large recordings checked them on the host (harness.Context.on_host;
# only the ratios matter here)
BASE_SECONDS = {"6.1": 554, "6.1-rt": 798, "6.12": 509, "6.12-rt": 648}


def sized(full, quick):
    """@quick in a quick run, else @full."""
    return quick if QUICK else full


def once(seconds):
    """Mark a kernel-independent test, @seconds its weight (its quick time under TCG, measured)."""
    def mark(test):
        test.once_seconds = seconds
        return test
    return mark


def share():
    """(I, N) from HGT_GUEST_SHARE, or (0, 1): this run alone."""
    v = os.environ.get("HGT_GUEST_SHARE", "0/1")
    try:
        i, n = (int(x) for x in v.split("/"))
    except ValueError:
        raise SystemExit(f"HGT_GUEST_SHARE={v}: not I/N") from None
    if not 0 <= i < n:
        raise SystemExit(f"HGT_GUEST_SHARE={v}: I must be from 0 to N-1")
    return i, n


def deal(tests, i, n, kernels=()):
    """The @once tests that kernel @i of @n (named @kernels, when known) runs:
    heaviest first, each to the kernel with the least time so far (ties to
    the lowest index), starting from BASE_SECONDS."""
    known = [BASE_SECONDS[k] for k in kernels if k in BASE_SECONDS]
    mean = sum(known) / len(known) if known else 0.0
    load = [float(BASE_SECONDS.get(kernels[j], mean)) if len(kernels) == n else 0.0 for j in range(n)]
    mine = set()
    for t in sorted((t for t in tests if hasattr(t, "once_seconds")), key=lambda t: (-t.once_seconds, t.__name__)):
        k = min(range(n), key=lambda j: (load[j], j))
        load[k] += t.once_seconds
        if k == i:
            mine.add(t.__name__)
    return mine


def select(tests, named):
    """The tests this run does, and a note on the ones it leaves to other kernels."""
    if named or not QUICK:
        return tests, None
    i, n = share()
    mine = deal(tests, i, n, os.environ.get("HGT_GUEST_KERNELS", "").split())
    keep = [t for t in tests if not hasattr(t, "once_seconds") or t.__name__ in mine]
    other = [t.__name__ for t in tests if hasattr(t, "once_seconds") and t.__name__ not in mine]
    note = (f"quick, kernel {i + 1} of {n}: {len(other)} kernel-independent tests run on the other kernels "
            f"this run (make check-full runs all on each): {', '.join(other)}") if other else None
    return keep, note

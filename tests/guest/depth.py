"""depth - how much of the guest suite a run does: quick (make check), core, or full.

Under TCG the whole suite takes 45 to 60 minutes a kernel, six kernels two at
a time; make check must end within 45. So make check runs it quick
(HGT_GUEST_DEPTH=quick, set by scripts/check-kernels) on the oldest and newest
kernels, plain and PREEMPT_RT, and core on those between (HGT_GUEST_CORE: 6.12
and 6.12-rt), make check-full runs it full on each (the default when run.py is
started by hand):

  - core: only the tests of what the kernel gives the module (CORE: its
    tracepoints, its events against trace-cmd's and hgtrace-ftrace's, losses,
    microstates against schedstat, load and unload, the merge of its events),
    at quick size, and the kernel's share of the @once tests; the tests of the
    module's interface to user space (filters, the control file, hostile
    callers, ABI 1.0, CPU sets) run on the quick kernels;

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
if DEPTH not in ("quick", "core", "full"):
    raise SystemExit(f"HGT_GUEST_DEPTH={DEPTH}: not quick, core or full")
QUICK = DEPTH in ("quick", "core")

# core's tests: what the kernel gives the module, checked against the kernel's own accounts
CORE = ("test_load_and_tracepoints", "test_ftrace_agreement", "test_losses_stop_mode",
        "test_losses_overwrite_mode", "test_load_unload_cycles", "test_microstates",
        "test_lat_on_cpu_time_is_schedstat", "test_ftrace_module_agreement",
        "test_record_report_three_threads", "test_known_interrupt_source", "test_hourglass_rtc_and_kernel")


# What each kernel's quick run takes without the @once tests, with the other
# boots scripts/check-kernels gives it (tsc=reliable on 6.1-rt, the lab on
# each): seconds, scripts/check-kernels of 2026-11-29 11:04, once the tests
# that read large recordings checked them on the host (harness.Context.on_host;
# only the ratios matter here); 7.3's and 7.3-rt's from the runs of 2026-12-01
# and 12-02 (commits c0009d5, 503ed81), scaled by 6.1's in the same runs: they
# had been left out, and the mean of the others put the heaviest tests on them
BASE_SECONDS = {"6.1": 554, "6.1-rt": 798, "6.12": 509, "6.12-rt": 648, "7.3": 690, "7.3-rt": 625}
# ... and of a core run (HGT_GUEST_CORE), without its @once tests
CORE_SECONDS = {"6.12": 250, "6.12-rt": 320}


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


def core_kernels():
    """The kernels of this run that run core (HGT_GUEST_CORE, set by scripts/check-kernels)."""
    return os.environ.get("HGT_GUEST_CORE", "").split()


def base_seconds(kernel, core=()):
    """What @kernel's run takes without its @once tests (None: not measured)."""
    return (CORE_SECONDS if kernel in core else BASE_SECONDS).get(kernel)


def deal(tests, i, n, kernels=(), core=()):
    """The @once tests that kernel @i of @n (named @kernels, when known; @core of them at
    core depth) runs: heaviest first, each to the kernel with the least time so far (ties to
    the lowest index), starting from base_seconds."""
    known = [base_seconds(k, core) for k in kernels if base_seconds(k, core) is not None]
    mean = sum(known) / len(known) if known else 0.0
    load = [0.0] * n
    for j in range(n if len(kernels) == n else 0):
        b = base_seconds(kernels[j], core)
        load[j] = float(mean if b is None else b)
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
    mine = deal(tests, i, n, os.environ.get("HGT_GUEST_KERNELS", "").split(), core_kernels())
    keep = [t for t in tests if (t.__name__ in mine if hasattr(t, "once_seconds")
                                 else DEPTH != "core" or t.__name__ in CORE)]
    other = [t.__name__ for t in tests if hasattr(t, "once_seconds") and t.__name__ not in mine]
    notes = [f"{len(other)} kernel-independent tests run on the other kernels this run (make check-full runs "
             f"all on each): {', '.join(other)}"] if other else []
    if DEPTH == "core":
        left = [t.__name__ for t in tests if not hasattr(t, "once_seconds") and t.__name__ not in CORE]
        notes.append(f"core: {len(left)} tests of the module's interface run on the quick kernels: {', '.join(left)}")
    note = f"{DEPTH}, kernel {i + 1} of {n}: " + "; ".join(notes) if notes else None
    return keep, note

"""microstates - each hourglass thread's CPU time, four ways, side by side
(seed 002: tick-sampled accounting under-reports, and so may user space):

  intervals   what hourglass itself saw: the sum of its intervals
  kernel      on CPU according to the kernel's sched_switch events
  handlers    the part of that spent in interrupt handlers while it was current
  cputime     CLOCK_THREAD_CPUTIME_ID, the scheduler's nanosecond account
  schedstat   /proc/<tid>/schedstat, the same account without the slice still
              running (up to a tick stale when read by the running thread)
  rusage      getrusage(RUSAGE_THREAD) user + system time

all over the same window: hourglass reads schedstat and getrusage just
before the thread starts and just after it ends, with the TSC.
"""
HANDLER = ("irq", "vec", "softirq", "nmi")


def on_cpu(events, t0, t1):
    """Cycles on CPU in [t0, t1] from (tsc, 1 in / 0 out) switches; running at t0."""
    total, since = 0, t0
    for tsc, into in sorted(events):
        if tsc < t0 or tsc > t1:
            continue
        if into:
            since = tsc
        elif since is not None:
            total += tsc - since
            since = None
    if since is not None:
        total += t1 - since
    return total


def compare(run, kinfo):
    """From the reference sweep: handler time from the gaps, on-CPU time from the switches."""
    handler = {}
    for g in run.gaps:
        tr = g.truth
        if tr is None or tr["out"]:
            continue
        handler[g.thread] = handler.get(g.thread, 0) + sum(v for k, v in tr["comp"].items() if k[0] in HANDLER)

    def kernel(t, acc):
        sw = kinfo["switches"].get(t["tid"], [])
        return (on_cpu(sw, acc["tsc0"], acc["tsc1"]),
                sum(1 for tsc, i in sw if i and acc["tsc0"] <= tsc <= acc["tsc1"]))
    return table(run, handler, kernel)


def table(run, handler, kernel):
    """The rows: @handler {thread: cycles in handlers while current}; @kernel(thread, accounting)
    gives (cycles on CPU, switches in) over the accounting window."""
    hz = run.hz
    ns = lambda c: c / hz * 1e9
    out = []
    for t in run.threads:
        acc = t.get("accounting")
        if not acc or not t.get("tid"):
            continue
        k = t["thread"]
        cycles, ins = kernel(t, acc)
        kern = ns(cycles)
        row = {"thread": k, "tid": t["tid"], "window_ms": ns(acc["tsc1"] - acc["tsc0"]) / 1e6,
               "intervals_ns": t.get("cpu_time_ns", 0), "kernel_ns": kern,
               "handlers_ns": ns(handler.get(k, 0)),
               "cputime_ns": acc.get("thread_cputime_ns", 0),
               "schedstat_ns": acc["schedstat_on_cpu_ns"],
               "rusage_ns": acc["rusage_user_ns"] + acc["rusage_system_ns"],
               "kernel_switches_in": ins,
               "schedstat_slices": acc["schedstat_slices"]}
        for key in ("intervals_ns", "cputime_ns", "schedstat_ns", "rusage_ns"):
            row[key.replace("_ns", "_vs_kernel")] = (row[key] / kern - 1) if kern else None
        out.append(row)
    return out

"""test_hourglass - the workload inside each guest kernel: what this machine
cannot do natively (/dev/rtc), and what differs between kernels (PREEMPT_RT).

No module is involved; the harness still checks dmesg after each test.
"""
import json
import os

from harness import OUT, TOP, run

HOURGLASS = os.path.join(TOP, "build", "hourglass")


def hourglass(ctx, args):
    js = ctx.path("hourglass.json")
    p = run([HOURGLASS, *args.split(), "--json", js], timeout=120)
    with open(js) as f:
        return p.stdout, json.load(f)


def test_hourglass_rtc_and_kernel(ctx):
    """Section 5.3's RTC latency test and 5.4's RTC periodic task, shortened.
    The emulated RT kernels show up to 150 000 sub-microsecond gaps a second
    (the emulator's), which would fill the default buffer: this test is about
    the RTC, so the periodic run ignores gaps under 1 us."""
    out, js = hourglass(ctx, "-d 2s -n 1 -t 0 -p RTHIGH -w LAT 5.3ms -i RTC")
    lat = [float(l.split()[1]) for l in out.splitlines() if l.startswith("latlate:")]
    assert lat, "no RTC wake-up in 2 s"
    assert js["threads"][0]["lateness_ns"]["count"] == len(lat)
    # each wake-up sleeps 5.3 ms from the one before, to the RTC's nearest 1024 Hz tick (5 or 6
    # ticks: "give or take a tick"), and comes as late as the guest lets it: the count follows from
    # the run's length and the lateness hourglass measured, not from how fast the host runs the
    # guest (under plain emulation a slow host's guest woke 1.9 ms late on average, max 72 ms:
    # 280 wake-ups in 2 s on 6.12, 2026-12-07, where a fixed 300 to 420 failed)
    tick_us, period_us, run_us = 1e6 / 1024, 5300.0, js["duration_ns"] / 1e3
    late_us = sum(lat) / len(lat)
    fewest = run_us / (period_us + tick_us / 2 + late_us) - 2
    most = run_us / (period_us - tick_us / 2 + late_us) + 2
    assert fewest <= len(lat) <= most, \
        f"{len(lat)} RTC wake-ups in 2 s, where 5.3 ms sleeps {late_us:.0f} us late give {fewest:.0f} to {most:.0f}"
    # and they fall on the RTC's ticks: most within two of being due (a slower RTC, 64 Hz, would
    # make the median late by half its 15.6 ms tick)
    median_us = sorted(lat)[len(lat) // 2]
    assert median_us <= 2 * tick_us, f"median lateness {median_us:.0f} us"
    rt = "PREEMPT_RT" in os.uname().version or os.uname().release.endswith("-rt-amd64")
    assert js["kernel"]["preempt_rt"] == rt, (js["kernel"], os.uname())
    ctx.note(f"RTC LAT: {len(lat)} samples ({fewest:.0f} to {most:.0f} at their lateness), median lateness "
             f"{median_us:.1f} us (against the RTC's tick grid), PREEMPT_RT {rt}")
    # the paper's own command line: pinned, beside an IDLE thread on the same CPU. On PREEMPT_RT the
    # RTC's timer runs in ktimers/N below the reader, and hourglass's RTC_PIE_OFF at the end spun for
    # ever above the callback it waited for, hanging the guest, until the reader dropped to
    # SCHED_OTHER first (timers.c, rtc_off): it must end, with at most one wake-up a 5.3 ms
    cpu = (os.cpu_count() or 1) - 1
    out, js = hourglass(ctx, f"-n 2 -d 2s -t 0 -p RTHIGH -w LAT 5.3ms -i RTC -t 1 -p IDLE -w CPU -a "
                             f"--affinity {cpu}")
    pinned = [l for l in out.splitlines() if l.startswith("latlate:")]
    assert js["threads"][0]["lateness_ns"]["count"] == len(pinned)
    assert 100 <= len(pinned) <= 420, f"{len(pinned)} RTC wake-ups in 2 s, pinned to CPU {cpu}"
    ctx.note(f"RTC LAT pinned to CPU {cpu} beside an IDLE thread: {len(pinned)} samples, ended")
    out, js = hourglass(ctx, "-d 2s -n 1 -t 0 -p RTHIGH -w PERIODIC 4ms 5ms -i RTC --gap 1us")
    d = js["threads"][0]["deadlines"]
    assert 380 <= d["hit"] + d["missed"] <= 402, d
    assert f"thread 0: missed {d['missed']} deadlines, hit {d['hit']}" in out
    ctx.note(f"RTC PERIODIC 4ms 5ms: hit {d['hit']}, missed {d['missed']}")


def test_hourglass_three_threads(ctx):
    """Section 3.1's three-thread run on one CPU of the guest. A larger
    buffer (-e) than the default 300 000 records: an emulated RT kernel
    showed 282 000 intervals in the 2 s, and a full buffer fails the run."""
    out, js = hourglass(ctx, "-n 3 -d 2s -e 2000000 -t 0 -p LOW -t 1 -p NORMAL -t 2 -p HIGH -a --affinity 1")
    # the scheduler's clock of each thread: under TCG hourglass's own
    # intervals can overcount (docs/testing.md), so they are only printed
    cpu = [t["accounting"]["thread_cputime_ns"] for t in js["threads"]]
    seen = [t["cpu_time_ns"] for t in js["threads"]]
    assert cpu[2] > cpu[1] > cpu[0] > 0, (cpu, seen)
    assert all(s > 0 for s in seen), seen
    assert js["complete"] and js["tsc"]["hz"] > 1e8
    ctx.note(f"loop {js['loop_ns']:.1f} ns, GAP {js['gap_ns']:.1f} ns, clocksource {js['tsc']['clocksource']}, "
             f"CPU ms LOW/NORMAL/HIGH {cpu[0] / 1e6:.0f}/{cpu[1] / 1e6:.0f}/{cpu[2] / 1e6:.0f} "
             f"(hourglass saw {seen[0] / 1e6:.0f}/{seen[1] / 1e6:.0f}/{seen[2] / 1e6:.0f}), "
             f"gaps {sum(t['gaps'] for t in js['threads'])}")
    assert OUT


TESTS = [test_hourglass_rtc_and_kernel, test_hourglass_three_threads]

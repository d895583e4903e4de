"""hourglass's command line: every command line of the paper parses to what it
means (--dry-run prints the parsed configuration), and malformed ones are
refused with a message naming the problem."""
import json
import os
import subprocess

import pytest

from conftest import TOP

HOURGLASS = os.path.join(TOP, "build", "hourglass")
MS = 1_000_000

from paper_lines import PAPER  # noqa: E402


@pytest.fixture(scope="session")
def hourglass_bin():
    subprocess.run(["make", "-s", "-C", os.path.join(TOP, "userspace", "hourglass")], check=True)
    return HOURGLASS


def dry(hg, args):
    p = subprocess.run([hg, *args.split(), "--dry-run"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.mark.parametrize("name", PAPER)
def test_paper_command_lines_parse(hourglass_bin, name):
    c = dry(hourglass_bin, PAPER[name])
    assert c["threads_n"] == len(c["threads"]) >= 1


def test_paper_meanings(hourglass_bin):
    c = dry(hourglass_bin, PAPER["3.1 three priorities"])
    assert c["duration_ns"] == 5000 * MS
    assert [t["level"] for t in c["threads"]] == ["LOW", "NORMAL", "HIGH"]
    assert [t["priority"] for t in c["threads"]] == [10, 0, -10]
    assert all(t["workload"] == "CPU" and t["timer"] == "NATIVE" for t in c["threads"])

    c = dry(hourglass_bin, PAPER["5.1 cpu_yield"])
    assert c["threads_n"] == 10 and c["duration_ns"] == 60000 * MS
    assert all(t["workload"] == "CPU_YIELD" and t["amount_ns"] == 900_000 for t in c["threads"])

    c = dry(hourglass_bin, PAPER["5.3 lat rtc"])
    t = c["threads"][0]
    assert c["duration_ns"] == 360_000 * MS
    assert (t["workload"], t["period_ns"], t["timer"], t["policy"], t["priority"]) == \
        ("LAT", 5_300_000, "RTC", "fifo", 80)

    c = dry(hourglass_bin, PAPER["5.5 hr native"])
    t0, t1 = c["threads"]
    assert (t0["policy"], t0["priority"], t0["amount_ns"], t0["period_ns"], t0["timer"]) == \
        ("fifo", 40, 3 * MS, 8 * MS, "HR")
    assert (t1["policy"], t1["priority"], t1["amount_ns"], t1["period_ns"], t1["timer"]) == \
        ("fifo", 20, 17 * MS, 33 * MS, "NATIVE")
    assert c["duration_ns"] == 10_000 * MS, "the default duration is 10 s"

    c = dry(hourglass_bin, PAPER["5.6 over"])
    r0, r1 = (t["reservation"] for t in c["threads"])
    assert r0 == {"kind": "hard", "runtime_ns": 3_100_000, "period_ns": 8 * MS}
    assert r1 == {"kind": "hard", "runtime_ns": 17_100_000, "period_ns": 33 * MS}
    assert all(t["policy"] == "deadline" for t in c["threads"])


def test_options_and_extensions(hourglass_bin):
    c = dry(hourglass_bin, "-n 4 -d 5m -e 1000 -c -a -w CPU_SCAN_YIELD 64 87.0us -t 2 "
                           "-rs 1ms 10ms -t 3 --policy rr --prio 7 --affinity 0,2-3 -s 0.5s -f 3m "
                           "-t 1 -w CPU_PERIODIC 1ms 4ms -i POSIX --gap 250ns")
    assert c["duration_ns"] == 300_000 * MS and c["max_records"] == 1000 and c["raw_cycles"]
    assert c["gap_ns"] == 250
    t0, t1, t2, t3 = c["threads"]
    assert (t0["workload"], t0["scan_kb"], t0["amount_ns"]) == ("CPU_SCAN_YIELD", 64, 87_000)
    assert (t1["workload"], t1["amount_ns"], t1["period_ns"], t1["timer"]) == \
        ("CPU_PERIODIC", MS, 4 * MS, "POSIX")
    assert t2["reservation"] == {"kind": "soft", "runtime_ns": MS, "period_ns": 10 * MS}
    assert (t3["policy"], t3["priority"], t3["affinity"]) == ("rr", 7, "0,2-3")
    assert (t3["start_ns"], t3["finish_ns"]) == (500 * MS, 180_000 * MS)
    assert t0["affinity"] is None


BAD = [
    ("", "usage: hourglass"),
    ("-d 1s", "-n <number of threads> is required"),
    ("-n 0", "-n: 0 is out of range"),
    ("-n 2 -n 3", "-n given twice"),
    ("-n abc", "not a whole number"),
    ("-p LOW -n 2", "-p is a per-thread option: give -n"),
    ("-n 2 -p LOW", "select threads with -t <n> or -a first"),
    ("-t 0 -n 2", "-t: give -n"),
    ("-n 2 -t 2 -p LOW", "-t 2: thread numbers are 0..1"),
    ("-n 2 -t -1 -p LOW", "-t -1: thread numbers are 0..1"),
    ("-n 1 -a -p SUPER", "unknown priority 'SUPER'"),
    ("-n 1 -a -w FOO", "unknown workload 'FOO'"),
    ("-n 1 -a -w PERIODIC 3ms", "-w PERIODIC needs <amount> <period>"),
    ("-n 1 -a -w PERIODIC 3ms -i HR", "-w PERIODIC needs <amount> <period>"),
    ("-n 1 -a -w PERIODIC -3ms 8ms", "negative time"),
    ("-n 1 -a -w PERIODIC 9ms 8ms", "amount is longer than the period"),
    ("-n 1 -a -w LAT 0ms", "longer than zero"),
    ("-n 1 -a -w CPU_SCAN 0", "out of range"),
    ("-n 1 -a -w CPU_YIELD", "-w CPU_YIELD needs <amount>"),
    ("-n 1 -d 5", "no unit"),
    ("-n 1 -d -5s", "negative time"),
    ("-n 1 -d 5 parsecs", "no unit"),
    ("-n 1 -d 5parsecs", "unknown unit"),
    ("-n 1 -d 0s", "longer than zero"),
    ("-n 1 -d", "-d needs a duration"),
    ("-n 1 -a -s 20s", "-s 20s is at or after the end of the run (-d 10s)"),
    ("-n 1 -a -s 2s -f 1s", "-f must come after -s"),
    ("-n 1 -a -i MM", "Windows only"),
    ("-n 1 -a -i FAST", "unknown timer 'FAST'"),
    ("-n 1 -a -rh 9ms 8ms", "longer than the period"),
    ("-n 1 -a -rh 100ns 8ms", "at least 1.024us"),
    ("-n 1 -a -rh 3ms 8ms --affinity 0", "cannot be pinned"),
    ("-n 2 -a -w LAT 5ms -i RTC", "only one thread can use the RTC"),
    ("-n 1 -a --affinity 3-1", "bad CPU list '3-1'"),
    ("-n 1 -a --policy fifo --prio 0", "priorities are 1..99"),
    ("-n 1 -a --prio 30", "nice values are -20..19"),
    ("-n 1 -a --policy deadline", "give the reservation with -rh"),
    ("-n 1 -a --policy idle --prio 3", "SCHED_IDLE has no priority"),
    ("-n 1 -e 0", "out of range"),
    ("-n 1 --gap 0ns", "longer than zero"),
    ("-n 1 --rtc-hz 1000", "powers of two"),
    ("-n 1 -z", "unknown option '-z'"),
    ("frobnicate x", "unknown command 'frobnicate'"),
    # an option's argument that is an option: refused, never taken as a file name
    ("-n 1 -o --dry-run", "-o needs a file, but '--dry-run' that follows it is an option"),
    ("-n 1 --json -q", "--json needs a file, but '-q' that follows it is an option"),
    ("-n 1 --trace --json x", "--trace needs a file, but '--json'"),
    ("-n 1 -a -p -w CPU", "-p needs a priority, but '-w' that follows it is an option"),
    ("-n 1 -d --dry-run", "-d needs a duration, but '--dry-run'"),
    # values that parsed but meant nothing
    ("-n 1 -d 1s -a -f 3s", "thread 0: -f 3s is after the end of the run (-d 1s)"),
    ("-n 1 -a -f 3s -d 1s", "thread 0: -f 3s is after the end of the run (-d 1s)"),
    ("-n 1 -a -w CPU_SCAN 1073741824", "-w CPU_SCAN 1073741824: a working set of 1024.0 GiB"),
    ("-n 1 -a -w LAT 0.5ns", "-w LAT 0.5ns: not a whole number of nanoseconds"),
    ("-n 1 -a -w LAT 500ns", "-w LAT 500ns: a period under 1us"),
    ("-n 1 -a -w PERIODIC 100ns 900ns", "-w PERIODIC 900ns: a period under 1us"),
    ("-n 1 -d 1.5ns", "-d 1.5ns: not a whole number of nanoseconds"),
    ("-n 1 -e 4294967296", "-e 4294967296 (32 bytes a record): 128.0 GiB"),
    # the options of cyclictest and rtla
    ("-n 1 -b 0", "-b: the threshold must be longer than zero"),
    ("-n 1 -b 5parsecs", "-b 5parsecs: unknown unit"),
    ("-n 1 -b", "-b needs a threshold"),
    ("-n 1 --hist 0", "--hist: the histogram must reach further than zero"),
    ("-n 1 --bucket 5", "--bucket goes with --hist"),
    ("-n 1 --hist 2s --bucket 1ns", "more than a million buckets"),
    ("-n 1 --dma-latency soon", "--dma-latency: 'soon' is not a whole number"),
    ("-n 2 -a --affinity 0 -S", "thread 0: --affinity and --smp/--cpus both pin it"),
    ("-n 1 -a -rh 1ms 10ms --smp", "thread 0: a SCHED_DEADLINE reservation"),
    ("-n 1 --cpus 3-1", "--cpus: bad CPU list '3-1'"),
    ("-n 1 -a -w LAT 5ms -i RTC --cpus 0-1", "--smp made a copy per CPU"),
]


@pytest.mark.parametrize("args,msg", BAD)
def test_malformed(hourglass_bin, args, msg):
    p = subprocess.run([hourglass_bin, *args.split()], capture_output=True, text=True)
    assert p.returncode == 1, (args, p.returncode, p.stderr)
    assert msg in p.stderr, p.stderr
    assert p.stdout == "", "nothing on stdout when the command line is refused"


def test_help_and_version(hourglass_bin):
    p = subprocess.run([hourglass_bin, "--help"], capture_output=True, text=True)
    assert p.returncode == 0
    for word in ("-n <threads>", "-rh", "CPU_SCAN_YIELD", "RTHIGH", "TIMERFD", "--trace", "exit status",
                 "--smp", "--cpus", "--quiet", "--breaktrace", "--hist", "--bucket", "--dma-latency",
                 "record --dir DIR", "docs/exit-status.md", "130 interrupted", "5 stopped at the -b"):
        assert word in p.stdout, word
    p = subprocess.run([hourglass_bin, "--version"], capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.startswith("hourglass ")


def test_option_argument_is_never_an_option(hourglass_bin, tmp_path):
    """`-o --dry-run` once wrote a file named --dry-run and ran for 10 s: now
    nothing runs and nothing is written; ./--dry-run still names such a file."""
    p = subprocess.run([hourglass_bin, "-n", "1", "-d", "100ms", "-o", "--dry-run"], capture_output=True,
                       text=True, cwd=tmp_path, timeout=5)
    assert p.returncode == 1 and "./ before it" in p.stderr, p.stderr
    assert list(tmp_path.iterdir()) == []
    c = dry(hourglass_bin, "-n 1 -o ./--dry-run")
    assert c["threads_n"] == 1
    # negative numbers stay numbers, and get their own message
    p = subprocess.run([hourglass_bin, "-n", "1", "-a", "-w", "PERIODIC", "-3ms", "8ms"], capture_output=True,
                       text=True)
    assert p.returncode == 1 and "negative time" in p.stderr


def test_names_are_not_case_sensitive(hourglass_bin):
    upper = dry(hourglass_bin, "-n 2 -t 0 -p RTHIGH -w LAT 1ms -i HR -t 1 -p IDLE -w CPU_SCAN 8 --policy batch")
    lower = dry(hourglass_bin, "-n 2 -t 0 -p rthigh -w lat 1ms -i hr -t 1 -p Idle -w cpu_scan 8 --policy BATCH")
    assert upper["threads"] == lower["threads"]
    assert lower["threads"][0]["level"] == "RTHIGH" and lower["threads"][0]["timer"] == "HR"


def test_new_options_in_the_configuration(hourglass_bin):
    c = dry(hourglass_bin, "-n 1 -q -b 100 --hist 2ms --bucket 10")
    assert c["quiet"] and c["breaktrace_ns"] == 100_000
    assert c["hist"] == {"max_ns": 2 * MS, "bucket_ns": 10_000}
    assert c["dma_latency_us"] == 0 and not c["dma_latency_given"]
    c = dry(hourglass_bin, "-n 1 --breaktrace 0.25ms --records 500 --dma-latency off")
    assert c["breaktrace_ns"] == 250_000 and c["max_records"] == 500 and c["dma_latency_us"] == -1
    assert dry(hourglass_bin, "-n 1 --dma-latency 10")["dma_latency_us"] == 10
    c = dry(hourglass_bin, "-n 1")
    assert not c["quiet"] and c["breaktrace_ns"] is None and "hist" not in c and "smp" not in c


def test_smp_replicates_the_threads_per_cpu(hourglass_bin):
    """-S (cyclictest's --smp): the configured threads once per CPU this process
    may use, each copy pinned to its CPU; --cpus LIST (rtla -c) on those only."""
    cpus = sorted(os.sched_getaffinity(0))
    c = dry(hourglass_bin, "-n 2 -t 0 -p RTHIGH -w LAT 1ms -i HR -t 1 -w CPU --smp")
    assert c["threads_n"] == 2 * len(cpus) == len(c["threads"])
    assert c["smp"] == {"cpus": _cpulist(cpus), "threads_per_cpu": 2}
    for i, t in enumerate(c["threads"]):
        assert t["thread"] == i and t["copy_of"] == i % 2 and t["affinity"] == str(cpus[i // 2])
        assert t["workload"] == ("LAT", "CPU")[i % 2]
    c = dry(hourglass_bin, "-n 1 -a -w LAT 1ms --cpus 0")
    assert c["threads_n"] == 1 and c["threads"][0]["affinity"] == "0" and c["threads"][0]["copy_of"] == 0


def _cpulist(cpus):
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out)

"""ftrace_text - events of a trace.dat as trace-cmd reports them, for comparison.

Reads `trace-cmd report -R` (raw fields) of a file recorded with the x86-tsc
clock, so timestamps are raw TSC cycles like hgtrace's. Returns events and the
places where ftrace itself dropped events ("CPU:N [K EVENTS DROPPED]").
"""
import re
import subprocess

# trace-cmd pads the timestamp to a width, so a wide one touches the CPU: "[000]101779995265:"
LINE = re.compile(r"^\s*(?P<comm>.*?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s*(?P<ts>\d+):\s+"
                  r"(?P<event>\w+):\s*(?P<rest>.*)$")
# --stat's per-CPU counters: what is in the file is entries (left for a final
# flush, as trace-cmd record does) plus read events (read out, as extract does)
STAT_EVENTS = re.compile(r"(?:^entries|read events):\s*(\d+)", re.M)
DROP = re.compile(r"CPU:\s*(\d+)\s+\[(\d+) EVENTS DROPPED\]")
FIELD = re.compile(r"(\w+)=(\S*)")


class FtraceError(Exception):
    """trace-cmd could not read the file, or its output did not parse completely."""


def read_report(path):
    """Return (events, drops): events as dicts with cpu, ts, event and fields;
    drops as (cpu, count, index of the next event on that CPU in events)."""
    p = subprocess.run(["trace-cmd", "report", "-R", path], capture_output=True, text=True)
    if p.returncode != 0:
        raise FtraceError(f"trace-cmd report {path} failed: {p.stderr.strip()[-1000:]}")
    events, drops, pending = [], [], {}
    for line in p.stdout.splitlines():
        m = DROP.search(line)
        if m:
            cpu = int(m.group(1))
            pending[cpu] = pending.get(cpu, 0) + int(m.group(2))
            continue
        m = LINE.match(line)
        if not m:
            continue
        cpu = int(m.group("cpu"))
        ev = dict(cpu=cpu, ts=int(m.group("ts")), event=m.group("event"),
                  fields={k: v for k, v in FIELD.findall(m.group("rest"))})
        if cpu in pending:
            drops.append((cpu, pending.pop(cpu), len(events)))
        events.append(ev)
    # The parse must account for every event trace-cmd handed out: a format
    # detail the regular expression misses must fail loudly, not thin the data.
    st = subprocess.run(["trace-cmd", "report", "--stat", path], capture_output=True, text=True)
    stat = sum(int(n) for n in STAT_EVENTS.findall(st.stdout))
    if stat != len(events):
        raise FtraceError(f"parsed {len(events)} events of {path}, but trace-cmd --stat counts {stat}")
    return events, drops

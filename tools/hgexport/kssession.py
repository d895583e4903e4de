"""kssession - a KernelShark session that opens the exported trace zoomed on
one gap, with marker A at its start and marker B at its end:

    kernelshark -s SESSION.json

The gap is the first one the inferences got wrong among those the kernel
explains (not hidden, not unexplainable); else the first the kernel
explains; else the first gap.

KernelShark 2.2.1 cannot restore a session stream that is a second buffer
of a file (kshark_tep_open_buffer fails with -EFAULT, even on a session it
saved itself), so the session names two files, each opened as a top
buffer: the merged trace.dat (its ground truth) and a companion file whose
top buffer holds the same hourglass events as the merged file's `hourglass`
buffer. The layout is KernelShark's own (what File > Sessions > Export
writes): each data file with its modification time, which KernelShark
checks; a CPU plot per CPU; the visible range in nanoseconds; the markers as
rows of its table of all entries (both files merged by time).
"""
import bisect
import json
import os

ZOOM_NS = 1_000_000         # shown on each side of the gap


def focus_gap(gaps):
    """The gap to open on, as described above (or None)."""
    explained = [g for g in gaps if not g.voluntary and g.truth and
                 g.truth["class"] not in ("hidden", "unexplainable")]
    wrong = [g for g in explained if g.inferred != g.truth["class"]]
    return (wrong or explained or gaps or [None])[0]


def _stream(sid, dat, cpus, plugins):
    dat = os.path.abspath(dat)
    return {"type": "kshark.config.stream", "stream id": sid,
            "data": {"type": "kshark.config.data", "file": dat, "name": "top buffer",
                     "time": int(os.stat(dat).st_mtime)},
            "filters": {"type": "kshark.config.filter", "filter mask": 7},
            "plugins": {"type": "kshark.config.plugins", "registered": [[p, True] for p in plugins]},
            "CPUPlots": cpus, "TaskPlots": []}


def write(path, kernel_dat, hourglass_dat, entries_ns, g0_ns, g1_ns, kernel_cpus, hourglass_cpus):
    """@entries_ns: every entry's time in ns as KernelShark shows it, sorted;
    g0_ns, g1_ns: the gap. Returns the range shown."""
    last = entries_ns[-1] if entries_ns else g1_ns
    lo, hi = max(0, g0_ns - ZOOM_NS), min(last, g1_ns + ZOOM_NS)
    if hi <= lo:
        hi = lo + 2 * ZOOM_NS
    row = lambda t: min(bisect.bisect_left(entries_ns, t), max(len(entries_ns) - 1, 0))
    doc = {"type": "kshark.config.session",
           "MainWindow": [1580, 980], "Splitter": [300, 640],
           "Model": {"type": "kshark.config.model", "range": [lo, hi], "bins": 1468},
           "data streams": [_stream(0, kernel_dat, kernel_cpus, ["sched_events", "missed_events"]),
                            _stream(1, hourglass_dat, hourglass_cpus, [])],
           "ComboPlots": [],
           "Markers": {"type": "kshark.config.markers", "markA": {"isSet": True, "row": row(g0_ns)},
                       "markB": {"isSet": True, "row": row(g1_ns)}, "Active": "A"},
           "ViewTop": row(g0_ns), "ColorScheme": 0.75,
           "User Plugins": {"type": "kshark.config.plugins", "obj. files": []}}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    return lo, hi

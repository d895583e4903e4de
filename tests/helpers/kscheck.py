"""kscheck - a test helper: open a trace.dat with KernelShark's own library
(libkshark.so.2, through ctypes: Debian ships no headers) and count what it
loads, as the KernelShark GUI would; or a session file, as `kernelshark -s`
would, with the entries its markers point at.

    python3 tests/helpers/kscheck.py FILE.dat|SESSION.json

A session's data files are opened as KernelShark opens them: by the names it
gives, from the session's own folder unless told otherwise.

(Moved here from tools/hgexport/kscheck.py, which stays until the Python
exporters are removed.)"""
import ctypes
import json
import os
import sys
from collections import Counter


class Entry(ctypes.Structure):
    # struct kshark_entry (libkshark.h, KernelShark 2.2): 40 bytes
    _fields_ = [("next", ctypes.c_void_p), ("visible", ctypes.c_uint16), ("stream_id", ctypes.c_int16),
                ("event_id", ctypes.c_int16), ("cpu", ctypes.c_int16), ("pid", ctypes.c_int32),
                ("offset", ctypes.c_int64), ("ts", ctypes.c_int64)]


def _open():
    """libkshark with the prototypes used here, and its context."""
    lib = ctypes.CDLL("libkshark.so.2")
    lib.kshark_get_event_name.restype = ctypes.c_char_p
    lib.kshark_get_event_name.argtypes = [ctypes.POINTER(Entry)]
    lib.kshark_open_config_file.restype = ctypes.c_void_p
    lib.kshark_import_all_dstreams.restype = ctypes.c_ssize_t
    ctx = ctypes.c_void_p()
    if not lib.kshark_instance(ctypes.byref(ctx)):
        raise RuntimeError("kshark_instance failed")
    return lib, ctx


def load(path):
    """Returns {"entries", "streams", "events" (name -> count), "unnamed", "ts_min", "ts_max",
    "in_time_order" (the rows as KernelShark lists them, in time order)}."""
    lib, ctx = _open()
    sd = lib.kshark_open(ctx, path.encode())
    if sd < 0:
        raise RuntimeError(f"kshark_open({path}) = {sd}")
    extra = lib.kshark_tep_init_all_buffers(ctx, sd)
    rows = ctypes.POINTER(ctypes.POINTER(Entry))()
    n = lib.kshark_load_all_entries(ctx, ctypes.byref(rows))
    names, streams, unnamed = Counter(), set(), 0
    ts = []
    for i in range(max(n, 0)):
        e = rows[i]
        name = lib.kshark_get_event_name(e)
        if not name:
            unnamed += 1
        else:
            names[name.decode()] += 1
        streams.add(e.contents.stream_id)
        ts.append(e.contents.ts)
    lib.kshark_close_all(ctx)
    return {"entries": n, "streams": len(streams), "extra_buffers": extra, "events": dict(names),
            "unnamed": unnamed, "ts_min": min(ts) if ts else None, "ts_max": max(ts) if ts else None,
            "in_time_order": all(a <= b for a, b in zip(ts, ts[1:]))}


def load_session(path, cwd=None):
    """Import a session's data streams as KernelShark does (File > Sessions >
    Import), from the folder @cwd (default: the session's own: KernelShark
    resolves the relative names of its data files against its working
    directory): {"entries", "streams", "marks": {"markA"/"markB": (event
    name, ts in ns, stream)}, "visible": {event name: entries shown}}.
    Raises if KernelShark's library refuses it."""
    lib, ctx = _open()
    here = os.getcwd()
    path = os.path.abspath(path)
    os.chdir(cwd or os.path.dirname(path))
    try:
        conf = lib.kshark_open_config_file(path.encode(), b"kshark.config.session")
        if not conf:
            raise RuntimeError(f"{path}: not a KernelShark session")
        rows = ctypes.POINTER(ctypes.POINTER(Entry))()
        n = lib.kshark_import_all_dstreams(ctx, ctypes.c_void_p(conf), ctypes.byref(rows))
    finally:
        os.chdir(here)
    if n < 0:
        raise RuntimeError(f"{path}: KernelShark could not import its data streams ({n})")
    doc = json.load(open(path))
    marks = {}
    for m in ("markA", "markB"):
        mk = doc.get("Markers", {}).get(m, {})
        if mk.get("isSet") and 0 <= mk["row"] < n:
            e = rows[mk["row"]]
            marks[m] = (lib.kshark_get_event_name(e).decode(), e.contents.ts, e.contents.stream_id)
    streams = {rows[i].contents.stream_id for i in range(n)}
    # what the session's filters leave in the table (KS_TEXT_VIEW_FILTER_MASK), per stream and event
    visible = Counter()
    for i in range(n):
        e = rows[i]
        if e.contents.visible & 1:
            visible[(e.contents.stream_id, lib.kshark_get_event_name(e).decode())] += 1
    lib.kshark_close_all(ctx)
    return {"entries": n, "streams": len(streams), "marks": marks, "visible": dict(visible)}


def session_entries(path, cwd=None):
    """Every row of a session's table, both streams merged as KernelShark merges them:
    [(row, stream, event name, cpu, ts in ns, listed: shown in the table by the filters)]."""
    lib, ctx = _open()
    here = os.getcwd()
    path = os.path.abspath(path)
    os.chdir(cwd or os.path.dirname(path))
    try:
        conf = lib.kshark_open_config_file(path.encode(), b"kshark.config.session")
        rows = ctypes.POINTER(ctypes.POINTER(Entry))()
        n = lib.kshark_import_all_dstreams(ctx, ctypes.c_void_p(conf), ctypes.byref(rows))
    finally:
        os.chdir(here)
    if n < 0:
        raise RuntimeError(f"{path}: KernelShark could not import its data streams ({n})")
    out = [(i, rows[i].contents.stream_id, lib.kshark_get_event_name(rows[i]).decode(), rows[i].contents.cpu,
            rows[i].contents.ts, bool(rows[i].contents.visible & 1)) for i in range(n)]
    lib.kshark_close_all(ctx)
    return out


if __name__ == "__main__":
    print(load_session(sys.argv[1]) if sys.argv[1].endswith(".json") else load(sys.argv[1]))

"""kscheck - open a trace.dat with KernelShark's own library (libkshark.so.2,
through ctypes: Debian ships no headers) and count what it loads, as the
KernelShark GUI would. Used by the tests; also `python3 -m hgexport.kscheck FILE`."""
import ctypes
import sys
from collections import Counter


class Entry(ctypes.Structure):
    # struct kshark_entry (libkshark.h, KernelShark 2.2): 40 bytes
    _fields_ = [("next", ctypes.c_void_p), ("visible", ctypes.c_uint16), ("stream_id", ctypes.c_int16),
                ("event_id", ctypes.c_int16), ("cpu", ctypes.c_int16), ("pid", ctypes.c_int32),
                ("offset", ctypes.c_int64), ("ts", ctypes.c_int64)]


def load(path):
    """Returns {"entries", "streams", "events" (name -> count), "unnamed", "ts_min", "ts_max"}."""
    lib = ctypes.CDLL("libkshark.so.2")
    lib.kshark_get_event_name.restype = ctypes.c_char_p
    lib.kshark_get_event_name.argtypes = [ctypes.POINTER(Entry)]
    ctx = ctypes.c_void_p()
    if not lib.kshark_instance(ctypes.byref(ctx)):
        raise RuntimeError("kshark_instance failed")
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
            "unnamed": unnamed, "ts_min": min(ts) if ts else None, "ts_max": max(ts) if ts else None}


if __name__ == "__main__":
    r = load(sys.argv[1])
    print(r)

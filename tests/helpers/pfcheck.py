"""pfcheck - a test helper: read a Perfetto trace (the protobuf one hgmerge
--perfetto writes) with Perfetto's own compiled definitions (PyPI package
`perfetto`, perfetto.protos.perfetto.trace.perfetto_trace_pb2) and check
what trace_processor relies on, without trace_processor (its binary is
downloaded at run time, and this machine has no internet):

  - every packet parses, nothing in it is unknown to Perfetto's schema, and
    serializing it again gives the same bytes (fields in order, shortest
    varints): the file is what Perfetto's own builder
    (perfetto.trace_builder) would write for the same packets;
  - track descriptors: uuids unique, every parent described;
  - sequences: the first packet of each clears its incremental state and
    sets its defaults and its clock (sequence-scoped, incremental); every
    later one says it needs that state; an iid is defined on its sequence
    (in the same packet or an earlier one) before use, never redefined;
  - tracks: every slice's end on the track of its beginning, none left open,
    no end without a beginning (TYPE_SLICE_END closes the innermost open
    slice of its track, as trace_processor has it).

read(path) returns what the trace shows: tracks, slices (with their depth,
name and debug annotations), instants, trace attributes.

    python3 tests/helpers/pfcheck.py FILE.perfetto-trace
"""
import sys
from collections import Counter, defaultdict

CLEARED, NEEDS = 1, 2     # TracePacket.SequenceFlags
SEQUENCE_CLOCK = 64


def _pb():
    try:
        from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
        from perfetto.trace_builder.proto_builder import StreamingTraceProtoBuilder
        from google.protobuf import unknown_fields
    except ImportError as e:   # a requirement of the tests: scripts/setup.sh installs it
        raise ImportError(f"{e}: pip install perfetto protobuf") from e
    return pb, StreamingTraceProtoBuilder, unknown_fields


def _unknown(msg, unknown_fields, where="TracePacket"):
    """Fields of @msg (recursively) that Perfetto's schema does not have."""
    out = [f"{where}: field {f.field_number}" for f in unknown_fields.UnknownFieldSet(msg)]
    for fd, v in msg.ListFields():
        if fd.message_type is not None:
            for m in (v if fd.is_repeated else [v]):
                out += _unknown(m, unknown_fields, f"{where}.{fd.name}")
    return out


class _Bytes:
    def __init__(self):
        self.data = bytearray()

    def write(self, b):
        self.data += b


def _value(a, strings):
    kind = a.WhichOneof("value")
    if kind == "string_value_iid":
        assert a.string_value_iid in strings, f"annotation string iid {a.string_value_iid} not defined"
        return strings[a.string_value_iid]
    return getattr(a, kind)


def read(path):
    pb, Builder, unknown_fields = _pb()
    data = open(path, "rb").read()
    trace = pb.Trace()
    trace.ParseFromString(data)
    out = _Bytes()
    builder = Builder(out)
    for p in trace.packet:
        bad = _unknown(p, unknown_fields)
        assert not bad, bad
        builder.write_packet(p)
    assert bytes(out.data) == data, "not the bytes Perfetto's own builder writes for these packets"

    tracks, attrs, seqs = {}, {}, {}
    events = []                   # (uuid, seq, ts, type, name, annotations) in file order
    for p in trace.packet:
        kind = p.WhichOneof("data")
        seq = p.trusted_packet_sequence_id
        if kind == "track_descriptor":
            td = p.track_descriptor
            assert td.uuid not in tracks, f"track {td.uuid} described twice"
            tracks[td.uuid] = td
        elif kind == "trace_attributes":
            for a in p.trace_attributes.attribute:
                attrs[a.key] = getattr(a, a.WhichOneof("value"))
        if not seq:
            assert kind in ("track_descriptor", "trace_attributes"), f"a {kind} packet outside any sequence"
            continue
        st = seqs.get(seq)
        if st is None:
            assert p.sequence_flags & CLEARED, f"sequence {seq}: its first packet does not clear its state"
            d = p.trace_packet_defaults
            assert p.HasField("trace_packet_defaults") and d.timestamp_clock_id == SEQUENCE_CLOCK
            clocks = {c.clock_id: c for c in p.clock_snapshot.clocks}
            assert clocks[SEQUENCE_CLOCK].is_incremental and 6 in clocks, "its clock: incremental, on BOOTTIME"
            assert p.clock_snapshot.primary_trace_clock == pb.BUILTIN_CLOCK_BOOTTIME
            st = seqs[seq] = {"ts": clocks[SEQUENCE_CLOCK].timestamp - clocks[6].timestamp,
                              "track": d.track_event_defaults.track_uuid,
                              "names": {}, "ann_names": {}, "strings": {}}
        else:
            assert p.sequence_flags == NEEDS, f"sequence {seq}: flags {p.sequence_flags} after its first packet"
            assert not p.HasField("clock_snapshot") and not p.HasField("trace_packet_defaults")
        idata = p.interned_data
        for entries, table, attr in ((idata.event_names, "names", "name"),
                                     (idata.debug_annotation_names, "ann_names", "name"),
                                     (idata.debug_annotation_string_values, "strings", "str")):
            for e in entries:
                assert e.iid and e.iid not in st[table], f"sequence {seq}: iid {e.iid} defined twice"
                v = getattr(e, attr)
                st[table][e.iid] = v.decode() if isinstance(v, bytes) else v
        if kind != "track_event":
            continue
        st["ts"] += p.timestamp           # deltas on the sequence's incremental clock
        te = p.track_event
        if te.HasField("name_iid"):
            assert te.name_iid in st["names"], f"sequence {seq}: name iid {te.name_iid} used before defined"
            name = st["names"][te.name_iid]
        else:
            name = te.name
        anns = {}
        for a in te.debug_annotations:
            assert a.name_iid in st["ann_names"], f"annotation name iid {a.name_iid} not defined"
            anns[st["ann_names"][a.name_iid]] = _value(a, st["strings"])
        uuid = te.track_uuid if te.HasField("track_uuid") else st["track"]
        assert uuid in tracks, f"an event on track {uuid}, which no descriptor names"
        events.append((uuid, seq, st["ts"], te.type, name, anns))

    for td in tracks.values():
        assert not td.HasField("parent_uuid") or td.parent_uuid in tracks, f"{td.name}: no parent {td.parent_uuid}"
    # one sequence per track: its file order is its time order, the order trace_processor parses it in
    seq_of = {}
    for uuid, seq, *_ in events:
        assert seq_of.setdefault(uuid, seq) == seq, f"track {uuid} written by two sequences"

    slices, instants, open_ = [], [], defaultdict(list)
    last = {}
    for uuid, seq, ts, typ, name, anns in events:
        assert ts >= last.get(uuid, 0), f"track {uuid}: time goes back at {ts}"
        last[uuid] = ts
        stack = open_[uuid]
        if typ == pb.TrackEvent.TYPE_SLICE_BEGIN:
            stack.append({"track": uuid, "ts": ts, "name": name, "args": anns, "depth": len(stack)})
        elif typ == pb.TrackEvent.TYPE_SLICE_END:
            assert stack, f"track {uuid}: an end at {ts} with no slice open"
            s = stack.pop()
            s["dur"] = ts - s["ts"]
            slices.append(s)
        elif typ == pb.TrackEvent.TYPE_INSTANT:
            instants.append({"track": uuid, "ts": ts, "name": name, "args": anns, "depth": len(stack)})
        else:
            raise AssertionError(f"track {uuid}: an event of type {typ}")
    left = {u: [s["name"] for s in st] for u, st in open_.items() if st}
    assert not left, f"slices never ended: {left}"
    return {"tracks": tracks, "slices": slices, "instants": instants, "attributes": attrs,
            "events": len(events), "packets": len(trace.packet), "bytes": len(data)}


def main(argv):
    t = read(argv[1])
    names = {u: td.name for u, td in t["tracks"].items()}
    per = Counter(names[s["track"]] for s in t["slices"])
    print(f"{argv[1]}: {t['packets']} packets, {t['bytes']} bytes, {t['events']} track events, "
          f"{len(t['slices'])} slices, {len(t['instants'])} instants: every check passed")
    for name, n in sorted(per.items()):
        print(f"  {name}: {n} slices")


if __name__ == "__main__":
    main(sys.argv)

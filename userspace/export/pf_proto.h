/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pf_proto.h - the protobuf wire format, as much as the Perfetto writer
 * needs: varints, tags, and length-delimited fields whose length is patched
 * in when they close. No library: the writer encodes straight into its
 * output buffer.
 *
 * The field numbers are Perfetto's, from protos/perfetto/trace/ in the
 * perfetto repository (file named above each group). A field is written in
 * the order of its number within its message, and every varint in its
 * shortest form, so that a protobuf library that parses the file and
 * serializes it again gives back the same bytes (the tests check it).
 */
#ifndef PF_PROTO_H
#define PF_PROTO_H

#include <stdint.h>
#include <string.h>

enum pb_wire { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

#define PB_TAG(field, wire)	((uint32_t)(field) << 3 | (wire))

/* trace.proto */
#define F_TRACE_PACKET			1
/* trace_packet.proto: TracePacket */
#define F_PKT_CLOCK_SNAPSHOT		6
#define F_PKT_TIMESTAMP			8
#define F_PKT_SEQUENCE_ID		10	/* trusted_packet_sequence_id */
#define F_PKT_TRACK_EVENT		11
#define F_PKT_INTERNED_DATA		12
#define F_PKT_SEQUENCE_FLAGS		13
#define F_PKT_DEFAULTS			59	/* trace_packet_defaults */
#define F_PKT_TRACK_DESCRIPTOR		60
#define F_PKT_TRACE_ATTRIBUTES		126
#define SEQ_INCREMENTAL_STATE_CLEARED	1
#define SEQ_NEEDS_INCREMENTAL_STATE	2
/* trace_packet_defaults.proto: TracePacketDefaults; track_event.proto: TrackEventDefaults */
#define F_DEF_TRACK_EVENT_DEFAULTS	11
#define F_DEF_TIMESTAMP_CLOCK_ID	58
#define F_TED_TRACK_UUID		11
/* clock_snapshot.proto: ClockSnapshot, ClockSnapshot.Clock; common/builtin_clock.proto */
#define F_CS_CLOCKS			1
#define F_CS_PRIMARY_TRACE_CLOCK	2
#define F_CLK_ID			1
#define F_CLK_TIMESTAMP			2
#define F_CLK_IS_INCREMENTAL		3
#define BUILTIN_CLOCK_BOOTTIME		6
#define SEQUENCE_CLOCK_FIRST		64	/* 64..127: scoped to the packet's sequence */
/* track_event/track_event.proto: TrackEvent */
#define F_TE_DEBUG_ANNOTATIONS		4
#define F_TE_TYPE			9
#define F_TE_NAME_IID			10
#define F_TE_TRACK_UUID			11
#define F_TE_NAME			23
#define TYPE_SLICE_BEGIN		1
#define TYPE_SLICE_END			2
#define TYPE_INSTANT			3
/* track_event/debug_annotation.proto: DebugAnnotation */
#define F_DA_NAME_IID			1
#define F_DA_BOOL			2
#define F_DA_UINT			3
#define F_DA_INT			4
#define F_DA_STRING			6
#define F_DA_STRING_IID			17
/* track_event/track_descriptor.proto: TrackDescriptor */
#define F_TD_UUID			1
#define F_TD_NAME			2
#define F_TD_PARENT_UUID		5
#define F_TD_CHILD_ORDERING		11
#define F_TD_SIBLING_ORDER_RANK		12
#define F_TD_DESCRIPTION		14
#define F_TD_SIBLING_MERGE		15
#define CHILD_ORDERING_EXPLICIT		3
#define SIBLING_MERGE_BEHAVIOR_NONE	2
/* interned_data/interned_data.proto: InternedData (EventName, DebugAnnotationName: iid 1,
 * name 2; profiling/profile_common.proto InternedString: iid 1, str 2) */
#define F_ID_EVENT_NAMES		2
#define F_ID_DEBUG_ANNOTATION_NAMES	3
#define F_ID_DEBUG_ANNOTATION_STRINGS	29
#define F_INTERNED_IID			1
#define F_INTERNED_NAME			2
/* common/trace_attributes.proto: TraceAttributes, TraceAttributes.Attribute */
#define F_TA_ATTRIBUTE			1
#define F_ATTR_KEY			1
#define F_ATTR_LONG			2
#define F_ATTR_STRING			3

/* pb_varint - @v in base 128, least significant group first; returns the end */
static inline uint8_t *pb_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline unsigned pb_varint_len(uint64_t v)
{
	unsigned n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline uint8_t *pb_tag(uint8_t *p, unsigned field, enum pb_wire wire)
{
	return pb_varint(p, PB_TAG(field, wire));
}

static inline uint8_t *pb_uint(uint8_t *p, unsigned field, uint64_t v)
{
	return pb_varint(pb_tag(p, field, PB_VARINT), v);
}

/* an int64 field: negative values are ten bytes, two's complement (not zigzag: not sint64) */
static inline uint8_t *pb_int(uint8_t *p, unsigned field, int64_t v)
{
	return pb_uint(p, field, (uint64_t)v);
}

static inline uint8_t *pb_bytes(uint8_t *p, unsigned field, const void *s, size_t n)
{
	p = pb_varint(pb_tag(p, field, PB_LEN), n);
	memcpy(p, s, n);
	return p + n;
}

/*
 * pb_open - the tag of a length-delimited field whose contents follow: one byte is kept for
 * the length, the common case. Returns where the length goes; write the contents at +1.
 */
static inline uint8_t *pb_open(uint8_t *p, unsigned field)
{
	return pb_tag(p, field, PB_LEN);
}

/* pb_close - the field opened at @len_at ends at @end: its length written, the contents moved
 * on when the length takes more than the byte kept for it. Returns the new end. */
static inline uint8_t *pb_close(uint8_t *len_at, uint8_t *end)
{
	size_t n = end - (len_at + 1);
	unsigned k;

	if (__builtin_expect(n < 0x80, 1)) {
		*len_at = (uint8_t)n;
		return end;
	}
	k = pb_varint_len(n);
	memmove(len_at + k, len_at + 1, n);
	pb_varint(len_at, n);
	return end + k - 1;
}

#endif

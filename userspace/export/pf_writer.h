/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pf_writer.h - a Perfetto trace (protos/perfetto/trace/trace.proto: a
 * Trace, that is a sequence of TracePackets) written through one buffer:
 * track descriptors, trace attributes, and TrackEvents on packet sequences.
 *
 * A sequence (struct pf_seq) is one track written in time order. Its first
 * packet clears its incremental state and sets its defaults: the track, and
 * a clock of its own whose timestamps are deltas from the packet before
 * (ClockSnapshot.Clock.is_incremental), started at 0 on BOOTTIME, the
 * trace's clock. Every later packet says it needs that state
 * (SEQ_NEEDS_INCREMENTAL_STATE), as TracePacketDefaults require. Names go
 * through the string table (pf_intern.h): a packet that uses a string its
 * sequence has not had yet brings the InternedData entry. So a slice's end
 * is 13 bytes and its beginning 15, names included.
 *
 *	pfw_init(&w, fd);
 *	pfw_track(&w, uuid, parent, "CPU 0", 0, NULL);
 *	struct pf_seq s = { .uuid = uuid, .id = 1 };
 *	pfw_event(&w, &s, ns, TYPE_SLICE_BEGIN, pfw_name(&w, PF_EVENT_NAME, "irq 30", 6), NULL, 0);
 *	pfw_event(&w, &s, ns + 800, TYPE_SLICE_END, 0, NULL, 0);
 *	pfw_flush(&w); pfw_seq_free(&s); pfw_free(&w);
 */
#ifndef PF_WRITER_H
#define PF_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include "pf_intern.h"
#include "pf_proto.h"

#define PFW_BUF		(256 << 10)
#define PFW_PACKET_MAX	8192	/* room kept for one packet: a few names of PF_NAME_MAX at most */
#define PFW_PEND_MAX	16	/* new InternedData entries one packet can bring */
#define PFW_TEXT_MAX	2048	/* bytes of a description or an attribute's string kept */
#define PFW_ANNS	8	/* debug annotations an event has at most */
#define PFW_ANN_MAX	24	/* bytes of one encoded (all numbers: varints of 10 bytes at most) */
#define PFW_ANN_COPY	64	/* encoded annotations up to this long are copied as this many bytes */

struct pf_seq {
	uint64_t last_ns;	/* the timestamp of its last packet: the next is a delta from it */
	uint64_t uuid;		/* its track */
	uint64_t *emitted;	/* bit iid: the sequence has had the string's InternedData entry */
	uint32_t nwords;
	uint32_t id;		/* trusted_packet_sequence_id: not 0, unique in the trace */
	int started;
	uint8_t idfield[8];	/* the id's field as written, from the start on: every packet has it */
	unsigned idlen;
};

enum pf_ann_kind { PFA_UINT, PFA_INT, PFA_BOOL, PFA_STRING };

/* a debug annotation: its name's iid (PF_ANNOTATION_NAME) and its value */
struct pf_ann {
	uint32_t name;
	uint32_t kind;		/* enum pf_ann_kind */
	uint64_t v;		/* PFA_STRING: the iid of a PF_ANNOTATION_STRING */
};

struct pf_writer {
	int fd;
	int err_no;		/* the first failure (a write, memory); sticky */
	uint8_t *buf;
	size_t len;
	struct pf_strtab strs;
	uint32_t pend[PFW_PEND_MAX];	/* the packet being written: its new InternedData entries */
	unsigned npend;
	char inl[PF_NAME_MAX];	/* the last name the table could not take: written inline */
	unsigned inl_len;
	uint64_t events;	/* TrackEvents written */
	uint64_t inline_names;
};

/* pfw_init - a writer to @fd with a string table of @max_strings and @max_bytes at most */
int pfw_init(struct pf_writer *w, int fd, uint32_t max_strings, size_t max_bytes);
void pfw_free(struct pf_writer *w);
void pfw_seq_free(struct pf_seq *s);
/* pfw_flush - write out what the buffer holds; 0, or -1 with w->err_no */
int pfw_flush(struct pf_writer *w);

/* pfw_name - the iid of a name, any bytes (made valid UTF-8, cut at PF_NAME_MAX); 0 when the
 * table is full, the name kept in w->inl for the next pfw_event */
uint32_t pfw_name(struct pf_writer *w, enum pf_dict dict, const char *s, size_t n);

/* pfw_track - a TrackDescriptor: @parent 0 for a group whose children are ordered by their
 * @rank; @description may be NULL */
void pfw_track(struct pf_writer *w, uint64_t uuid, uint64_t parent, const char *name, int rank,
	       const char *description);
/* pfw_attribute - a trace attribute (TraceAttributes): a string @s, or @v when @s is NULL */
void pfw_attribute(struct pf_writer *w, const char *key, const char *s, int64_t v);

void pfw_seq_start(struct pf_writer *w, struct pf_seq *s);
void pfw_use_slow(struct pf_writer *w, struct pf_seq *s, uint32_t iid);
uint8_t *pfw_interned(struct pf_writer *w, uint8_t *p);

static inline uint8_t *pfw_room(struct pf_writer *w)
{
	if (__builtin_expect(w->len + PFW_PACKET_MAX > PFW_BUF, 0))
		pfw_flush(w);
	return w->buf + w->len;
}

/* the string @iid is used by the packet being written on @s */
static inline void pfw_use(struct pf_writer *w, struct pf_seq *s, uint32_t iid)
{
	uint32_t k = iid >> 6;

	if (__builtin_expect(k >= s->nwords || !(s->emitted[k] >> (iid & 63) & 1), 0))
		pfw_use_slow(w, s, iid);
}

/* the packet's start: its tag, a byte for its length (returned), the timestamp's delta and the
 * sequence's id */
static inline uint8_t *pfw_head(struct pf_writer *w, struct pf_seq *s, uint64_t ns, uint8_t **p)
{
	uint8_t *q, *pkt;

	if (__builtin_expect(!s->started, 0))
		pfw_seq_start(w, s);
	if (__builtin_expect(ns < s->last_ns, 0))
		ns = s->last_ns;	/* a delta cannot be negative: the caller's order is kept */
	q = pfw_room(w);
	pkt = pb_open(q, F_TRACE_PACKET);
	q = pb_uint(pkt + 1, F_PKT_TIMESTAMP, ns - s->last_ns);
	memcpy(q, s->idfield, sizeof(s->idfield));
	*p = q + s->idlen;
	s->last_ns = ns;
	return pkt;
}

/* the packet's end: its new strings, its flags, its length */
static inline void pfw_tail(struct pf_writer *w, uint8_t *pkt, uint8_t *p)
{
	static const uint8_t flags[2] = { PB_TAG(F_PKT_SEQUENCE_FLAGS, PB_VARINT), SEQ_NEEDS_INCREMENTAL_STATE };

	if (__builtin_expect(w->npend, 0))
		p = pfw_interned(w, p);
	memcpy(p, flags, 2);
	w->len = pb_close(pkt, p + 2) - w->buf;
	w->events++;
}

/* pfw_end - the end of the slice open on @s's track, at @ns: the commonest packet, written
 * byte by byte (it brings no string, and is always shorter than 128 bytes) */
static inline void pfw_end(struct pf_writer *w, struct pf_seq *s, uint64_t ns)
{
	static const uint8_t tail[8] = { PB_TAG(F_PKT_TRACK_EVENT, PB_LEN), 2, PB_TAG(F_TE_TYPE, PB_VARINT),
					 TYPE_SLICE_END, PB_TAG(F_PKT_SEQUENCE_FLAGS, PB_VARINT),
					 SEQ_NEEDS_INCREMENTAL_STATE };
	uint8_t *q, *p;

	if (__builtin_expect(!s->started, 0))
		pfw_seq_start(w, s);
	if (__builtin_expect(ns < s->last_ns, 0))
		ns = s->last_ns;
	q = pfw_room(w);
	q[0] = PB_TAG(F_TRACE_PACKET, PB_LEN);
	q[2] = PB_TAG(F_PKT_TIMESTAMP, PB_VARINT);
	p = pb_varint(q + 3, ns - s->last_ns);
	s->last_ns = ns;
	memcpy(p, s->idfield, sizeof(s->idfield));
	p += s->idlen;
	memcpy(p, tail, sizeof(tail));
	p += 6;
	q[1] = (uint8_t)(p - q - 2);
	w->len = p - w->buf;
	w->events++;
}

/* pfw_begin - a slice named @name (an iid, or 0 for w->inl) begins on @s's track at @ns */
static inline void pfw_begin(struct pf_writer *w, struct pf_seq *s, uint64_t ns, uint32_t name)
{
	uint8_t *p, *pkt = pfw_head(w, s, ns, &p), *te;

	te = pb_open(p, F_PKT_TRACK_EVENT);
	p = pb_uint(te + 1, F_TE_TYPE, TYPE_SLICE_BEGIN);
	if (__builtin_expect(name != 0, 1)) {
		pfw_use(w, s, name);
		p = pb_uint(p, F_TE_NAME_IID, name);
	} else {
		p = pb_bytes(p, F_TE_NAME, w->inl, w->inl_len);
	}
	pfw_tail(w, pkt, pb_close(te, p));
}

/*
 * pfw_annotations - @na debug annotations, encoded into @out (PFW_ANN_MAX bytes per
 * annotation): what pfw_event_encoded takes. The strings they use are marked as used by the
 * next packet on @s, which must be that event's. Returns the length.
 */
unsigned pfw_annotations(struct pf_writer *w, struct pf_seq *s, const struct pf_ann *a, unsigned na, uint8_t *out);

/* pfw_event_encoded - pfw_event with its annotations already encoded (@ann, @len bytes, readable
 * up to PFW_ANN_COPY bytes at least): the same annotations on many events are encoded once */
static inline void pfw_event_encoded(struct pf_writer *w, struct pf_seq *s, uint64_t ns, unsigned type,
				     uint32_t name, const uint8_t *ann, unsigned len)
{
	uint8_t *p, *pkt = pfw_head(w, s, ns, &p), *te;

	te = pb_open(p, F_PKT_TRACK_EVENT);
	/* a copy of a size known here is a few moves, not a call: the room and @ann allow it */
	if (__builtin_expect(len <= PFW_ANN_COPY, 1))
		memcpy(te + 1, ann, PFW_ANN_COPY);
	else
		memcpy(te + 1, ann, len);
	p = pb_uint(te + 1 + len, F_TE_TYPE, type);
	if (name) {
		pfw_use(w, s, name);
		p = pb_uint(p, F_TE_NAME_IID, name);
	} else if (type != TYPE_SLICE_END) {
		p = pb_bytes(p, F_TE_NAME, w->inl, w->inl_len);
	}
	pfw_tail(w, pkt, pb_close(te, p));
}

/*
 * pfw_event - a TrackEvent on @s's track at @ns (not before the sequence's last): @type
 * (TYPE_SLICE_BEGIN, _END, TYPE_INSTANT), its name @name (an iid; 0: w->inl; none for an end)
 * and @na (at most PFW_ANNS) debug annotations @a
 */
static inline void pfw_event(struct pf_writer *w, struct pf_seq *s, uint64_t ns, unsigned type, uint32_t name,
			     const struct pf_ann *a, unsigned na)
{
	uint8_t ann[PFW_ANNS * PFW_ANN_MAX];

	pfw_event_encoded(w, s, ns, type, name, ann, na ? pfw_annotations(w, s, a, na, ann) : 0);
}

#endif

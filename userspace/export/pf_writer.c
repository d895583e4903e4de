// SPDX-License-Identifier: GPL-2.0
/*
 * pf_writer.c - the Perfetto trace writer's packets other than events, and
 * its slow paths (pf_writer.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hg_io.h"
#include "out_tmp.h"
#include "pf_writer.h"

int pfw_init(struct pf_writer *w, int fd, uint32_t max_strings, size_t max_bytes)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->buf = malloc(PFW_BUF);
	if (!w->buf || pf_strtab_init(&w->strs, max_strings, max_bytes)) {
		pfw_free(w);
		return -1;
	}
	return 0;
}

void pfw_free(struct pf_writer *w)
{
	free(w->buf);
	w->buf = NULL;
	pf_strtab_free(&w->strs);
}

void pfw_seq_free(struct pf_seq *s)
{
	free(s->emitted);
	s->emitted = NULL;
	s->nwords = 0;
}

int pfw_flush(struct pf_writer *w)
{
	if (w->len && !w->err_no && hg_write_all(w->fd, w->buf, w->len))
		w->err_no = errno ? errno : EIO;
	w->len = 0;
	return w->err_no ? -1 : 0;
}

uint32_t pfw_name(struct pf_writer *w, enum pf_dict dict, const char *s, size_t n)
{
	char clean[PF_NAME_MAX];
	size_t k = pf_utf8_clean(clean, sizeof(clean), s, n);
	uint32_t iid = pf_intern(&w->strs, dict, clean, k);

	if (!iid) {
		memcpy(w->inl, clean, k);
		w->inl_len = k;
		w->inline_names++;
	}
	return iid;
}

/* the first packet of a sequence (pf_writer.h says what and why) */
void pfw_seq_start(struct pf_writer *w, struct pf_seq *s)
{
	uint8_t *p = pfw_room(w), *pkt, *cs, *clk, *def, *ted;

	pkt = pb_open(p, F_TRACE_PACKET);
	cs = pb_open(pkt + 1, F_PKT_CLOCK_SNAPSHOT);
	clk = pb_open(cs + 1, F_CS_CLOCKS);
	p = pb_uint(clk + 1, F_CLK_ID, BUILTIN_CLOCK_BOOTTIME);
	p = pb_uint(p, F_CLK_TIMESTAMP, 0);
	p = pb_close(clk, p);
	clk = pb_open(p, F_CS_CLOCKS);
	p = pb_uint(clk + 1, F_CLK_ID, SEQUENCE_CLOCK_FIRST);
	p = pb_uint(p, F_CLK_TIMESTAMP, 0);
	p = pb_uint(p, F_CLK_IS_INCREMENTAL, 1);
	p = pb_close(clk, p);
	p = pb_uint(p, F_CS_PRIMARY_TRACE_CLOCK, BUILTIN_CLOCK_BOOTTIME);
	p = pb_close(cs, p);
	p = pb_uint(p, F_PKT_SEQUENCE_ID, s->id);
	p = pb_uint(p, F_PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE);
	def = pb_open(p, F_PKT_DEFAULTS);
	ted = pb_open(def + 1, F_DEF_TRACK_EVENT_DEFAULTS);
	p = pb_uint(ted + 1, F_TED_TRACK_UUID, s->uuid);
	p = pb_close(ted, p);
	p = pb_uint(p, F_DEF_TIMESTAMP_CLOCK_ID, SEQUENCE_CLOCK_FIRST);
	p = pb_close(def, p);
	w->len = pb_close(pkt, p) - w->buf;
	memset(s->idfield, 0, sizeof(s->idfield));
	s->idlen = pb_uint(s->idfield, F_PKT_SEQUENCE_ID, s->id) - s->idfield;
	/* a cleared state: the sequence has had no interned string */
	if (s->emitted)
		memset(s->emitted, 0, s->nwords * sizeof(*s->emitted));
	s->started = 1;
	s->last_ns = 0;
}

/* a string the sequence has not had: marked, and brought by the packet being written */
void pfw_use_slow(struct pf_writer *w, struct pf_seq *s, uint32_t iid)
{
	uint32_t k = iid >> 6;

	if (k >= s->nwords) {
		uint32_t n = s->nwords ? s->nwords : 16;
		uint64_t *e;

		while (n <= k)
			n *= 2;
		e = realloc(s->emitted, n * sizeof(*e));
		if (!e) {
			w->err_no = ENOMEM;
			return;
		}
		memset(e + s->nwords, 0, (n - s->nwords) * sizeof(*e));
		s->emitted = e;
		s->nwords = n;
	}
	if (s->emitted[k] >> (iid & 63) & 1)
		return;
	if (w->npend == PFW_PEND_MAX) {
		w->err_no = EOVERFLOW;	/* never: no packet uses that many strings */
		return;
	}
	s->emitted[k] |= 1ULL << (iid & 63);
	w->pend[w->npend++] = iid;
}

/* the packet's InternedData: its new strings, by dictionary in field order */
uint8_t *pfw_interned(struct pf_writer *w, uint8_t *p)
{
	static const unsigned field[PF_DICTS] = {
		[PF_EVENT_NAME] = F_ID_EVENT_NAMES,
		[PF_ANNOTATION_NAME] = F_ID_DEBUG_ANNOTATION_NAMES,
		[PF_ANNOTATION_STRING] = F_ID_DEBUG_ANNOTATION_STRINGS,
	};
	uint8_t *id = pb_open(p, F_PKT_INTERNED_DATA), *e;
	unsigned d, i, len;

	p = id + 1;
	for (d = 0; d < PF_DICTS; d++)
		for (i = 0; i < w->npend; i++) {
			const char *s;

			if (pf_str_dict(&w->strs, w->pend[i]) != d)
				continue;
			s = pf_str(&w->strs, w->pend[i], &len);
			e = pb_open(p, field[d]);
			p = pb_uint(e + 1, F_INTERNED_IID, w->pend[i]);
			p = pb_bytes(p, F_INTERNED_NAME, s, len);
			p = pb_close(e, p);
		}
	w->npend = 0;
	return pb_close(id, p);
}

unsigned pfw_annotations(struct pf_writer *w, struct pf_seq *s, const struct pf_ann *a, unsigned na, uint8_t *out)
{
	uint8_t *p = out, *da;
	unsigned i;

	/* started first: a start clears what the sequence has had */
	if (!s->started)
		pfw_seq_start(w, s);
	for (i = 0; i < na && i < PFW_ANNS; i++) {
		da = pb_open(p, F_TE_DEBUG_ANNOTATIONS);
		pfw_use(w, s, a[i].name);
		p = pb_uint(da + 1, F_DA_NAME_IID, a[i].name);
		switch (a[i].kind) {
		case PFA_UINT:
			p = pb_uint(p, F_DA_UINT, a[i].v);
			break;
		case PFA_INT:
			p = pb_int(p, F_DA_INT, (int64_t)a[i].v);
			break;
		case PFA_BOOL:
			p = pb_uint(p, F_DA_BOOL, !!a[i].v);
			break;
		default:
			pfw_use(w, s, (uint32_t)a[i].v);
			p = pb_uint(p, F_DA_STRING_IID, a[i].v);
			break;
		}
		p = pb_close(da, p);
	}
	return p - out;
}

void pfw_track(struct pf_writer *w, uint64_t uuid, uint64_t parent, const char *name, int rank,
	       const char *description)
{
	uint8_t *p = pfw_room(w), *pkt, *td;
	char clean[PFW_TEXT_MAX];

	pkt = pb_open(p, F_TRACE_PACKET);
	td = pb_open(pkt + 1, F_PKT_TRACK_DESCRIPTOR);
	p = pb_uint(td + 1, F_TD_UUID, uuid);
	p = pb_bytes(p, F_TD_NAME, clean, pf_utf8_clean(clean, PF_NAME_MAX, name, strlen(name)));
	if (parent)
		p = pb_uint(p, F_TD_PARENT_UUID, parent);
	else
		p = pb_uint(p, F_TD_CHILD_ORDERING, CHILD_ORDERING_EXPLICIT);
	p = pb_uint(p, F_TD_SIBLING_ORDER_RANK, (uint64_t)(int64_t)rank);
	if (description)
		p = pb_bytes(p, F_TD_DESCRIPTION, clean,
			     pf_utf8_clean(clean, sizeof(clean), description, strnlen(description, sizeof(clean))));
	/* two CPUs or threads never share a track, whatever their names */
	if (parent)
		p = pb_uint(p, F_TD_SIBLING_MERGE, SIBLING_MERGE_BEHAVIOR_NONE);
	p = pb_close(td, p);
	w->len = pb_close(pkt, p) - w->buf;
}

void pfw_attribute(struct pf_writer *w, const char *key, const char *s, int64_t v)
{
	uint8_t *p = pfw_room(w), *pkt, *ta, *at;
	char clean[PFW_TEXT_MAX];

	pkt = pb_open(p, F_TRACE_PACKET);
	ta = pb_open(pkt + 1, F_PKT_TRACE_ATTRIBUTES);
	at = pb_open(ta + 1, F_TA_ATTRIBUTE);
	p = pb_bytes(at + 1, F_ATTR_KEY, clean, pf_utf8_clean(clean, PF_NAME_MAX, key, strlen(key)));
	if (s)
		p = pb_bytes(p, F_ATTR_STRING, clean, pf_utf8_clean(clean, sizeof(clean), s, strnlen(s, sizeof(clean))));
	else
		p = pb_int(p, F_ATTR_LONG, v);
	p = pb_close(at, p);
	p = pb_close(ta, p);
	w->len = pb_close(pkt, p) - w->buf;
}

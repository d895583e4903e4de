// SPDX-License-Identifier: GPL-2.0
/*
 * convert.c - pages and events to records, LOST records in place (see convert.h).
 */
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>
#include <kbuffer.h>
#include "hg_hgt_write.h"
#include "evmap.h"
#include "spool.h"
#include "convert.h"

#define CANDIDATES	5		/* page boundaries a drop seen while reading may lie at */

/*
 * The sub-buffer header (events/header_page on x86_64): u64 timestamp, then
 * the commit word, whose low 27 bits are the data size and bits 30 and 31 say
 * that events were missed before this page and that their count follows the
 * data (kernel/trace/ring_buffer.c, RB_MISSED_*).
 */
#define PAGE_HDR	16
#define COMMIT_SIZE	((1u << 27) - 1)
#define MISSED_EVENTS	(1u << 31)
#define MISSED_STORED	(1u << 30)

struct lost_rec {
	struct hgt_rec h;
	struct hgt_lost l;
};

int conv_init(struct conv *cv, struct hgev_map *map, struct kbuffer *kbuf, struct hgt_writer *w,
	      int ncpus, unsigned long buffer_kb, size_t psize)
{
	memset(cv, 0, sizeof(*cv));
	cv->map = map;
	cv->kbuf = kbuf;
	cv->w = w;
	cv->ncpus = ncpus;
	cv->psize = psize;
	/* the kernel rounds a CPU's buffer to whole sub-buffers of psize - header bytes of data */
	cv->buffer_pages = (buffer_kb * 1024 + psize - PAGE_HDR - 1) / (psize - PAGE_HDR);
	cv->cpu = calloc(ncpus, sizeof(*cv->cpu));
	cv->peek = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	return cv->cpu && cv->peek ? 0 : -1;
}

void conv_free(struct conv *cv)
{
	int cpu;

	for (cpu = 0; cv->cpu && cpu < cv->ncpus; cpu++) {
		free(cv->cpu[cpu].out);
		free(cv->cpu[cpu].holes);
		free(cv->cpu[cpu].marks);
		free(cv->cpu[cpu].passes);
	}
	free(cv->cpu);
	cv->cpu = NULL;
	if (cv->peek)
		kbuffer_free(cv->peek);
	cv->peek = NULL;
}

/* grow - make room for @n more items of @size in *@p; -1 when out of memory */
static int grow(void **p, size_t *cap, size_t used, size_t n, size_t size)
{
	size_t want = *cap ? *cap : 64;
	void *np;

	if (used + n <= *cap)
		return 0;
	while (want < used + n)
		want *= 2;
	np = realloc(*p, want * size);
	if (!np)
		return -1;
	*p = np;
	*cap = want;
	return 0;
}

static void add_mark(struct conv *cv, struct conv_cpu *c, int64_t page, uint64_t pos, uint64_t count,
		     uint8_t aux, uint8_t estimated, uint8_t span)
{
	if (!count)
		return;
	if (grow((void **)&c->marks, &c->marks_cap, c->nmarks, 1, sizeof(*c->marks))) {
		cv->error = 1;
		return;
	}
	c->marks[c->nmarks++] = (struct conv_mark){ page, pos, count, aux, estimated, span };
}

/* put_lost - a LOST record into @c's records; returns its offset there */
static size_t put_lost(struct conv *cv, struct conv_cpu *c, uint64_t ts, uint64_t count, uint8_t aux)
{
	struct lost_rec r;
	size_t at = c->used;

	if (grow((void **)&c->out, &c->cap, c->used, sizeof(r), 1)) {
		cv->error = 1;
		return (size_t)-1;
	}
	memset(&r, 0, sizeof(r));
	r.h.tsc = ts;
	r.h.type = HGT_REC_LOST;
	r.h.len = sizeof(r);
	r.h.aux = aux;
	r.l.count = count;
	memcpy(c->out + c->used, &r, sizeof(r));
	c->used += sizeof(r);
	if (aux)
		c->lost_over += count;
	else
		c->lost_refused += count;
	return at;
}

void conv_pass_begin(struct conv *cv, int cpu, const struct tfs_stats *s, int64_t page)
{
	struct conv_cpu *c = &cv->cpu[cpu];
	uint64_t pos = page < 0 ? c->events + s->entries : s->entries;

	c->s = *s;
	c->start_page = page < 0 ? 0 : page;
	/* the buffer filled while nobody read it: the drops follow all it held */
	add_mark(cv, c, page, pos, s->dropped - c->prev.dropped, 0, 0, 0);
	add_mark(cv, c, page, pos, s->commit_overrun - c->prev.commit_overrun, 0, 1, 0);
}

void conv_page_read(struct conv *cv, int cpu, const struct tfs_stats *s, uint64_t page)
{
	struct conv_cpu *c = &cv->cpu[cpu];
	uint64_t n = s->dropped - c->s.dropped + s->commit_overrun - c->s.commit_overrun;
	/* from three pages short of a buffer on to one past it */
	uint64_t at = page + cv->buffer_pages > 3 ? page + cv->buffer_pages - 3 : 0;

	/*
	 * Full while @page was read: the writer stopped a buffer's worth of
	 * pages further on. Our pages are not exactly the kernel's (a page read
	 * while the writer was on it comes in two parts), so the LOST record
	 * goes at the boundary with the longest pause among the few around
	 * there: the writer stood still from the drop until a page was freed
	 * (a guest run had it one page short of a buffer on).
	 */
	add_mark(cv, c, at > page + 1 ? at : page + 1, 0, n, 0, 1, CANDIDATES);
	c->s = *s;
}

/* resolve_holes - give the LOST records of a finished drain that had no count what the counter says */
static void resolve_holes(struct conv_cpu *c, const struct tfs_stats *t)
{
	uint64_t rest = t->overrun > c->lost_over ? t->overrun - c->lost_over : 0;
	size_t i;

	for (i = 0; i < c->nholes; i++) {
		struct lost_rec *r = (struct lost_rec *)(c->out + c->holes[i]);

		r->l.count = i == 0 ? rest : 0;
		c->estimated += r->l.count != 0;	/* the others are dropped when written */
	}
	c->lost_over += rest;
	c->nholes = 0;
}

void conv_pass_end(struct conv *cv, int cpu, const struct tfs_stats *t, int64_t page)
{
	struct conv_cpu *c = &cv->cpu[cpu];
	uint64_t dd = t->dropped - c->s.dropped, dco = t->commit_overrun - c->s.commit_overrun;

	if (page < 0) {
		/* events were converted as they came: the drain's drops go after them */
		add_mark(cv, c, -1, c->events, dd + dco, 0, 1, 0);
		resolve_holes(c, t);
	} else {
		uint64_t at = c->start_page + cv->buffer_pages;

		/* not seen page by page (the reader does so in stop mode only): a buffer after the start */
		add_mark(cv, c, at < (uint64_t)page ? (int64_t)at : page, 0, dd + dco, 0, 1, 0);
		if (grow((void **)&c->passes, &c->passes_cap, c->npasses, 1, sizeof(*c->passes)))
			cv->error = 1;
		else
			c->passes[c->npasses++] = (struct conv_pass){ (uint64_t)page, *t };
	}
	c->prev = *t;
}

/* page_span - the first and last stamps of a page's events; 0 if it has none */
static int page_span(struct conv *cv, char *page, uint64_t *first, uint64_t *last)
{
	unsigned long long ts;
	int n = 0;

	if (kbuffer_load_subbuffer(cv->peek, page) < 0)
		return 0;
	for (void *d = kbuffer_read_event(cv->peek, &ts); d; d = kbuffer_next_event(cv->peek, &ts)) {
		if (!n++)
			*first = ts;
		*last = ts;
	}
	return n;
}

/*
 * arm - the marks that belong in page @page now know their event's number
 *
 * A mark with candidates goes to the boundary, of @page and the pages held
 * after it, with the longest pause in the events before it.
 */
static void arm(struct conv *cv, struct conv_cpu *c, struct spool *sp, int cpu, uint64_t page)
{
	size_t i;

	for (i = 0; i < c->nmarks; i++) {
		struct conv_mark *m = &c->marks[i];
		uint64_t best = page, last = c->last_ts, first, lst, pause = 0, p;

		if (m->page < 0 || (uint64_t)m->page > page)
			continue;
		for (p = page; m->span && sp && c->events && p < page + m->span && p < spool_next(sp, cpu); p++) {
			if (!page_span(cv, spool_page(sp, cpu, p), &first, &lst))
				continue;
			if (first - last > pause) {
				pause = first - last;
				best = p;
			}
			last = lst;
		}
		m->span = 0;
		if (best > page) {
			m->page = best;
			continue;
		}
		m->pos += c->events;
		m->page = -1;
	}
}

/* emit_due - the LOST records due before event number @upto (all of them with UINT64_MAX) */
static void emit_due(struct conv *cv, struct conv_cpu *c, uint64_t upto, uint64_t ts)
{
	size_t i = 0;

	while (i < c->nmarks && c->marks[i].page < 0 && c->marks[i].pos <= upto)
		i++;
	if (upto == UINT64_MAX)
		i = c->nmarks;
	if (!i)
		return;
	for (size_t k = 0; k < i; k++) {
		put_lost(cv, c, ts, c->marks[k].count, c->marks[k].aux);
		c->estimated += c->marks[k].estimated;
	}
	memmove(c->marks, c->marks + i, (c->nmarks - i) * sizeof(*c->marks));
	c->nmarks -= i;
}

void conv_event(struct conv *cv, int cpu, uint64_t ts, const void *data, int size, long long missed)
{
	struct conv_cpu *c = &cv->cpu[cpu];
	unsigned int nrec;
	size_t n;

	if (c->nmarks)
		emit_due(cv, c, c->events, ts);
	if (missed) {
		size_t at = put_lost(cv, c, ts, missed > 0 ? (uint64_t)missed : 0, 1);

		/* flagged without a count: the drain's overrun counter will tell */
		if (missed < 0 && at != (size_t)-1) {
			if (grow((void **)&c->holes, &c->holes_cap, c->nholes, 1, sizeof(*c->holes)))
				cv->error = 1;
			else
				c->holes[c->nholes++] = at;
		}
	}
	if (grow((void **)&c->out, &c->cap, c->used, HGEV_MAX_OUT, 1)) {
		cv->error = 1;
		return;
	}
	n = hgev_convert(cv->map, data, size, ts, cpu, c->out + c->used, &nrec);
	if (!n)
		c->unconverted++;
	c->used += n;
	c->records += nrec;
	c->events++;
	c->last_ts = ts;
}

/* page_missed - the page's missed-events flag: 0, the count, or -1 (flagged, no count) */
static long long page_missed(const char *page, size_t psize, uint32_t *size)
{
	uint64_t commit;
	uint32_t flags;
	uint64_t count;

	memcpy(&commit, page + 8, 8);
	flags = (uint32_t)commit;
	*size = flags & COMMIT_SIZE;
	if (*size > psize - PAGE_HDR)
		return 0;
	if (!(flags & MISSED_EVENTS))
		return 0;
	if (!(flags & MISSED_STORED) || *size + 8 > psize - PAGE_HDR)
		return -1;
	memcpy(&count, page + PAGE_HDR + *size, 8);
	return count ? (long long)count : -1;
}

int conv_pages(struct conv *cv, struct spool *sp, int cpu)
{
	struct conv_cpu *c = &cv->cpu[cpu];
	uint64_t p, end = spool_next(sp, cpu);
	size_t k = 0;

	for (p = sp->cpu[cpu].first; p < end; p++) {
		char *page = spool_page(sp, cpu, p);
		unsigned long long ts;
		long long missed;
		uint32_t size;
		void *data;

		/* a drain ended before this page: its counters settle the counts it left open */
		while (k < c->npasses && c->passes[k].end_page <= p)
			resolve_holes(c, &c->passes[k++].t);
		missed = page_missed(page, sp->psize, &size);
		if (size > sp->psize - PAGE_HDR) {
			c->bad_pages++;
			continue;
		}
		if (c->carry_missed) {
			missed = missed < 0 || c->carry_missed < 0 ? -1 : missed + c->carry_missed;
			c->carry_missed = 0;
		}
		arm(cv, c, sp, cpu, p);
		if (kbuffer_load_subbuffer(cv->kbuf, page) < 0) {
			c->bad_pages++;
			continue;
		}
		for (data = kbuffer_read_event(cv->kbuf, &ts); data; data = kbuffer_next_event(cv->kbuf, &ts)) {
			conv_event(cv, cpu, ts, data, kbuffer_event_size(cv->kbuf), missed);
			missed = 0;
		}
		if (missed)
			c->carry_missed = missed;
	}
	arm(cv, c, NULL, cpu, end);
	while (k < c->npasses && c->passes[k].end_page <= end)
		resolve_holes(c, &c->passes[k++].t);
	memmove(c->passes, c->passes + k, (c->npasses - k) * sizeof(*c->passes));
	c->npasses -= k;
	spool_release(sp, cpu);
	return cv->error ? -1 : 0;
}

void conv_finish(struct conv *cv, int cpu, uint64_t end_ts, const struct tfs_stats *final)
{
	struct conv_cpu *c = &cv->cpu[cpu];
	uint64_t ts = c->last_ts > end_ts ? c->last_ts : end_ts;

	if (c->carry_missed) {
		size_t at = put_lost(cv, c, ts, c->carry_missed > 0 ? (uint64_t)c->carry_missed : 0, 1);

		if (c->carry_missed < 0 && at != (size_t)-1 &&
		    !grow((void **)&c->holes, &c->holes_cap, c->nholes, 1, sizeof(*c->holes)))
			c->holes[c->nholes++] = at;
		c->carry_missed = 0;
	}
	resolve_holes(c, final);
	/* drops counted after the last drain, and marks whose page never came */
	add_mark(cv, c, -1, 0, final->dropped - c->prev.dropped, 0, 1, 0);
	add_mark(cv, c, -1, 0, final->commit_overrun - c->prev.commit_overrun, 0, 1, 0);
	c->prev = *final;
	emit_due(cv, c, UINT64_MAX, ts);
	/* overwritten events no flagged page told of: counted, placed at the end */
	if (final->overrun > c->lost_over) {
		put_lost(cv, c, ts, final->overrun - c->lost_over, 1);
		c->estimated++;
	}
}

void conv_put(struct conv *cv, int cpu, const void *rec, size_t len)
{
	struct conv_cpu *c = &cv->cpu[cpu];

	if (grow((void **)&c->out, &c->cap, c->used, len, 1)) {
		cv->error = 1;
		return;
	}
	memcpy(c->out + c->used, rec, len);
	c->used += len;
	c->records++;
}

/*
 * drop_empty_lost - take out LOST records whose count came to 0 (a page
 * flagged without a count where the counter then showed nothing more): a
 * marker of nothing would only widen the stretch readers distrust, and
 * readers allow no more LOST records than events lost.
 */
static void drop_empty_lost(struct conv_cpu *c)
{
	size_t in = 0, out = 0;

	while (in < c->used) {
		const struct hgt_rec *r = (const void *)(c->out + in);
		size_t len = r->len;

		if (!(r->type == HGT_REC_LOST && !((const struct hgt_lost *)(r + 1))->count)) {
			if (out != in)
				memmove(c->out + out, c->out + in, len);
			out += len;
		}
		in += len;
	}
	c->used = out;
}

int conv_flush(struct conv *cv, int cpu)
{
	struct conv_cpu *c = &cv->cpu[cpu];

	/* LOST records still waiting for their count stay until a drain's counters arrive */
	if (c->nholes)
		return 0;
	drop_empty_lost(c);
	if (hgt_writer_records(cv->w, cpu, c->out, c->used)) {
		cv->error = 1;
		return -1;
	}
	c->used = 0;
	return 0;
}

void conv_stats(const struct conv *cv, int cpu, struct hgt_cpu_stats *st)
{
	const struct conv_cpu *c = &cv->cpu[cpu];

	memset(st, 0, sizeof(*st));
	st->read = c->records;
	st->overwritten = c->lost_over;
	st->refused = c->lost_refused;
	st->written = st->read + st->overwritten;
	st->produced = st->written + st->refused;
}

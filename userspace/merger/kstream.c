// SPDX-License-Identifier: GPL-2.0
/*
 * kstream.c - the kernel's records in time order across CPUs.
 *
 * Each CPU's records are read through their own cursor (hg_hgt.h), chunk
 * after chunk in file order, and the CPUs are merged by the stamp of each
 * one's next record. A CPU's own order is kept as the file has it: a
 * record stamped before its predecessor (rare) comes where it is, and the
 * sweep counts it. Memory: one decoded chunk per CPU.
 *
 * The CPU whose record comes next is held apart from the heap of the
 * others: while its next record still comes before the heap's first, as it
 * mostly does for a few records in a row, no heap is touched. Each CPU's
 * chunk is walked here, a record at a time, without a call into the reader
 * (a call, a heap operation and a copy a record were 180 instructions an
 * event, callgrind).
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

struct kcpu {
	struct hgt_cursor *c;
	uint32_t cpu;
	const char *p, *end;		/* its chunk: p its next record, p == end used up */
};

/* a CPU with its next record's stamp: compared without reaching into the record (with 32
 * CPUs, following each entry to its record was 12% of a merge, perf) */
struct kent {
	int64_t tsc;
	uint32_t cpu;
	int i;				/* its index in v */
};

struct kstream {
	struct kcpu *v;
	int n;
	struct kent top;		/* the CPU whose record comes next; i < 0: none left (tsc INT64_MAX) */
	struct kent *heap;		/* the others with records, by the next record's stamp, then CPU */
	int nheap;
	int refill;			/* the top's chunk ran out at the record handed out last: its next
					 * is read at the next call, so that the record stays valid until
					 * then, without a copy */
	uint64_t events;
};

static int before(const struct kent *a, const struct kent *b)
{
	return a->tsc != b->tsc ? a->tsc < b->tsc : a->cpu < b->cpu;
}

/* sift_down - @e into the heap from position @i down, in place of what was there */
static void sift_down(struct kstream *k, int i, struct kent e)
{
	for (;;) {
		int c = 2 * i + 1;

		if (c >= k->nheap)
			break;
		if (c + 1 < k->nheap && before(&k->heap[c + 1], &k->heap[c]))
			c++;
		if (!before(&k->heap[c], &e))
			break;
		k->heap[i] = k->heap[c];
		i = c;
	}
	k->heap[i] = e;
}

/* refill - CPU @i's next chunk once its own is used up: 0 when it has no more records */
static int refill(struct kstream *k, int i)
{
	struct kcpu *c = &k->v[i];
	struct hg_err err;
	size_t len;
	int rc;

	while (c->p == c->end) {
		rc = hgt_cursor_next_chunk(c->c, &c->p, &len, &err);
		if (rc < 0)
			fail_err(&err);
		if (!rc) {
			c->p = c->end = NULL;
			return 0;
		}
		c->end = c->p + len;
	}
	return 1;
}

static const struct hgt_rec *rec_of(const struct kcpu *c)
{
	return (const struct hgt_rec *)c->p;
}

static int is_records(uint32_t magic)
{
	return magic == HGT_CHUNK_MAGIC || magic == HGT_ZCHUNK_MAGIC || magic == HGT_PCHUNK_MAGIC;
}

/* take_top - the first of the heap becomes the top */
static void take_top(struct kstream *k)
{
	if (!k->nheap) {
		k->top.i = -1;
		k->top.tsc = INT64_MAX;
		return;
	}
	k->top = k->heap[0];
	if (--k->nheap)
		sift_down(k, 0, k->heap[k->nheap]);
}

struct kstream *kstream_open(struct run *r)
{
	struct kstream *k = xcalloc(1, sizeof(*k));
	uint32_t ncpu = hgt_nr_cpus(r->hgt), cpu;
	char *has = xcalloc(ncpu + 1, 1);
	struct hg_err err;
	size_t i;

	for (i = 0; i < hgt_nr_chunks(r->hgt); i++) {
		const struct hgt_chunk_info *ci = hgt_chunk(r->hgt, i);

		if (is_records(ci->magic) && ci->cpu < ncpu)
			has[ci->cpu] = 1;
	}
	k->v = xcalloc(ncpu + 1, sizeof(*k->v));
	k->heap = xcalloc(ncpu + 1, sizeof(*k->heap));
	for (cpu = 0; cpu < ncpu; cpu++) {
		struct kcpu *c;

		if (!has[cpu])
			continue;
		c = &k->v[k->n];
		c->cpu = cpu;
		c->c = hgt_cursor_open(r->hgt, cpu, &err);
		if (!c->c)
			fail_err(&err);
		if (refill(k, k->n))
			k->heap[k->nheap++] = (struct kent){ (int64_t)rec_of(c)->tsc, cpu, k->n };
		k->n++;
	}
	for (i = k->nheap / 2 + 1; i-- > 0;)
		if ((int)i < k->nheap)
			sift_down(k, (int)i, k->heap[i]);
	take_top(k);
	free(has);
	return k;
}

/* swap_top - the heap's first comes before the top's next record: they change places */
static void swap_top(struct kstream *k)
{
	struct kent e = k->top;

	k->top = k->heap[0];
	sift_down(k, 0, e);
}

/* chunk_done - the top CPU's chunk is used up: its next, or the heap's first in its place */
static void chunk_done(struct kstream *k)
{
	if (!refill(k, k->top.i)) {
		take_top(k);
		return;
	}
	k->top.tsc = (int64_t)rec_of(&k->v[k->top.i])->tsc;
	if (k->nheap && before(&k->heap[0], &k->top))
		swap_top(k);
}

/*
 * advance - the top CPU past @r, the record just handed out: its next record's stamp, and the
 * heap's first in its place when that one comes first. Inline: it runs for every record.
 */
static hot_inline void advance(struct kstream *k, struct kcpu *c, const struct hgt_rec *r)
{
	c->p += r->len;
	if (unlikely(c->p == c->end)) {
		k->refill = 1;
		return;
	}
	k->top.tsc = (int64_t)rec_of(c)->tsc;
	if (k->nheap && before(&k->heap[0], &k->top)) {
		if (HG_FAST && k->nheap == 1) {
			/* two CPUs, their records interleaved (the bench's run: every record): the
			 * heap of one changes places with the top */
			struct kent e = k->top;

			k->top = k->heap[0];
			k->heap[0] = e;
		} else {
			swap_top(k);
		}
	}
}

/* settle - the top CPU's next chunk, when its last one ran out at the record handed out last */
static hot_inline void settle(struct kstream *k)
{
	if (unlikely(k->refill)) {
		k->refill = 0;
		chunk_done(k);
	}
}

int64_t kstream_peek(struct kstream *k)
{
	settle(k);
	return k->top.tsc;
}

/* hand_out - the top's record, the top moved past it */
static hot_inline void hand_out(struct kstream *k, uint32_t *cpu, const struct hgt_rec **rec)
{
	struct kcpu *c = &k->v[k->top.i];
	const struct hgt_rec *r = rec_of(c);

	*cpu = c->cpu;
	*rec = r;
	k->events++;
	advance(k, c, r);
}

int kstream_next(struct kstream *k, uint32_t *cpu, const struct hgt_rec **rec)
{
	settle(k);
	if (k->top.i < 0)
		return 0;
	hand_out(k, cpu, rec);
	return 1;
}

/*
 * kstream_next_upto - kstream_next() when the next record is stamped at most @upto (and below
 * INT64_MAX, kstream_peek()'s end): one comparison, none left being stamped INT64_MAX
 */
int kstream_next_upto(struct kstream *k, int64_t upto, uint32_t *cpu, const struct hgt_rec **rec)
{
	if (!HG_FAST) {		/* the plain way: the peek and the next */
		int64_t t = kstream_peek(k);

		return t <= upto && t != INT64_MAX ? kstream_next(k, cpu, rec) : 0;
	}
	settle(k);
	if (k->top.tsc > (upto < INT64_MAX ? upto : INT64_MAX - 1))
		return 0;
	hand_out(k, cpu, rec);
	return 1;
}

uint64_t kstream_events(const struct kstream *k)
{
	return k->events;
}

void kstream_close(struct kstream *k)
{
	int i;

	if (!k)
		return;
	for (i = 0; i < k->n; i++)
		hgt_cursor_close(k->v[i].c);
	free(k->v);
	free(k->heap);
	free(k);
}

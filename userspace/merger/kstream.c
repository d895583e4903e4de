// SPDX-License-Identifier: GPL-2.0
/*
 * kstream.c - the kernel's records in time order across CPUs.
 *
 * Each CPU's records are read through their own cursor (hg_hgt.h), chunk
 * after chunk in file order, and the CPUs are merged by the stamp of each
 * one's next record. A CPU's own order is kept as the file has it: a
 * record stamped before its predecessor (rare) comes where it is, and the
 * sweep counts it. Memory: one decoded chunk per CPU.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

struct kcpu {
	struct hgt_cursor *c;
	uint32_t cpu;
	const struct hgt_rec *rec;	/* its next record, NULL at its end */
};

/* a CPU in the heap, with its next record's stamp: compared without reaching into the
 * record (with 32 CPUs, following each entry to its record was 12% of a merge, perf) */
struct kent {
	int64_t tsc;
	uint32_t cpu;
	int i;				/* its index in v */
};

struct kstream {
	struct kcpu *v;
	int n;
	struct kent *heap;		/* by the next record's stamp, then the CPU */
	int nheap;
	int pending;			/* the CPU whose record was handed out: advanced on the next call,
					 * so that the record stays valid until then, without a copy */
	uint64_t events;
};

static int before(const struct kent *a, const struct kent *b)
{
	return a->tsc != b->tsc ? a->tsc < b->tsc : a->cpu < b->cpu;
}

static struct kent entry(const struct kstream *k, int i)
{
	return (struct kent){ (int64_t)k->v[i].rec->tsc, k->v[i].cpu, i };
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

static void advance(struct kstream *k, int i)
{
	struct hg_err err;
	int rc = hgt_cursor_next(k->v[i].c, &k->v[i].rec, &err);

	if (rc < 0)
		fail_err(&err);
	if (!rc)
		k->v[i].rec = NULL;
}

static int is_records(uint32_t magic)
{
	return magic == HGT_CHUNK_MAGIC || magic == HGT_ZCHUNK_MAGIC || magic == HGT_PCHUNK_MAGIC;
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
	k->pending = -1;
	for (cpu = 0; cpu < ncpu; cpu++) {
		struct kcpu *c;

		if (!has[cpu])
			continue;
		c = &k->v[k->n];
		c->cpu = cpu;
		c->c = hgt_cursor_open(r->hgt, cpu, &err);
		if (!c->c)
			fail_err(&err);
		advance(k, k->n);
		if (c->rec)
			k->heap[k->nheap++] = entry(k, k->n);
		k->n++;
	}
	for (i = k->nheap / 2 + 1; i-- > 0;)
		if ((int)i < k->nheap)
			sift_down(k, (int)i, k->heap[i]);
	free(has);
	return k;
}

/* settle - move on the CPU whose record was handed out (it is at the top of the heap) */
static void settle(struct kstream *k)
{
	int i = k->pending;

	if (i < 0)
		return;
	k->pending = -1;
	advance(k, i);
	if (k->v[i].rec)
		sift_down(k, 0, entry(k, i));
	else if (--k->nheap)
		sift_down(k, 0, k->heap[k->nheap]);
}

int64_t kstream_peek(struct kstream *k)
{
	settle(k);
	return k->nheap ? k->heap[0].tsc : INT64_MAX;
}

int kstream_next(struct kstream *k, uint32_t *cpu, const struct hgt_rec **rec)
{
	int i;

	settle(k);
	if (!k->nheap)
		return 0;
	i = k->heap[0].i;
	*cpu = k->v[i].cpu;
	*rec = k->v[i].rec;
	k->pending = i;
	k->events++;
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

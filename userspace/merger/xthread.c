// SPDX-License-Identifier: GPL-2.0
/*
 * xthread.c - the exporters on their own thread.
 *
 * The merge pass copies what the exporters must see (every kernel record,
 * every hourglass record, every judged gap) into a byte ring, in its own
 * order; the exporters' thread takes them out and calls ks_* and pf_*. One
 * producer, one consumer: each side publishes its position with a release
 * store every batch, so the two cores rarely touch the same line. When the
 * ring is full the merge waits, so memory stays bounded. The exporters'
 * thread keeps its own table of names, fed by the COMM and NAME records as
 * they come, which is what the names were at that point of the stream.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "xthread.h"

#define RING_BYTES	(8u << 20)
#define BATCH		(64u << 10)	/* publish after this many bytes */

enum { X_KERNEL = 1, X_HOURGLASS, X_GAP, X_END };

struct xhead {
	uint16_t kind, len;		/* len: the payload's bytes */
	uint32_t cpu;
};

struct xthread {
	unsigned char *ring;
	_Atomic uint64_t head;		/* written up to (bytes, ever growing) */
	_Atomic uint64_t tail;		/* read up to */
	uint64_t local_head, cached_tail, published;
	struct ks_export *ks;
	struct pf_export *pf;
	struct names *names;
	pthread_t tid;
	int failed;
	struct hg_err err;
};

/* put - one item into the ring, waiting for room; items never straddle the end (a pad skips it) */
static void put(struct xthread *x, uint16_t kind, uint32_t cpu, const void *p, size_t len)
{
	size_t need = (sizeof(struct xhead) + len + 7) & ~(size_t)7;
	size_t off = x->local_head % RING_BYTES;
	struct xhead h = { kind, (uint16_t)len, cpu };

	if (off + need > RING_BYTES)		/* pad to the end: the reader skips a zero kind */
		need += RING_BYTES - off;
	while (x->local_head + need - x->cached_tail > RING_BYTES) {
		atomic_store_explicit(&x->head, x->local_head, memory_order_release);
		x->published = x->local_head;
		x->cached_tail = atomic_load_explicit(&x->tail, memory_order_acquire);
		if (x->local_head + need - x->cached_tail > RING_BYTES)
			sched_yield();
	}
	if (off + (sizeof(h) + len) > RING_BYTES) {
		struct xhead pad = { 0, 0, 0 };

		memcpy(x->ring + off, &pad, sizeof(pad));
		x->local_head += RING_BYTES - off;
		need -= RING_BYTES - off;
		off = 0;
	}
	memcpy(x->ring + off, &h, sizeof(h));
	memcpy(x->ring + off + sizeof(h), p, len);
	x->local_head += need;
	if (x->local_head - x->published >= BATCH) {
		atomic_store_explicit(&x->head, x->local_head, memory_order_release);
		x->published = x->local_head;
	}
}

static void handle(struct xthread *x, const struct xhead *h, const void *p)
{
	if (x->failed)
		return;
	switch (h->kind) {
	case X_KERNEL: {
		const struct hgt_rec *r = p;

		if (r->type == HGT_REC_COMM || r->type == HGT_REC_NAME)
			names_record_in(x->names, r);
		if (x->ks && ks_kernel(x->ks, h->cpu, r, &x->err))
			x->failed = 1;
		else if (x->pf && pf_kernel(x->pf, h->cpu, r, &x->err))
			x->failed = 1;
		break;
	}
	case X_HOURGLASS:
		if (x->ks && ks_hourglass(x->ks, p, &x->err))
			x->failed = 1;
		else if (x->pf && pf_hourglass(x->pf, p, &x->err))
			x->failed = 1;
		break;
	case X_GAP:
		if (x->ks && ks_gap(x->ks, p, &x->err))
			x->failed = 1;
		else if (x->pf && pf_gap(x->pf, p, &x->err))
			x->failed = 1;
		break;
	}
}

static void *run(void *arg)
{
	struct xthread *x = arg;
	uint64_t tail = 0;

	names_use(x->names);
	for (;;) {
		uint64_t head = atomic_load_explicit(&x->head, memory_order_acquire);

		if (head == tail) {
			sched_yield();
			continue;
		}
		while (tail < head) {
			size_t off = tail % RING_BYTES;
			struct xhead h;

			memcpy(&h, x->ring + off, sizeof(h));
			if (!h.kind) {			/* padding to the ring's end */
				tail += RING_BYTES - off;
				continue;
			}
			if (h.kind == X_END) {
				atomic_store_explicit(&x->tail, tail, memory_order_release);
				return NULL;
			}
			handle(x, &h, x->ring + off + sizeof(h));
			tail += (sizeof(h) + h.len + 7) & ~(size_t)7;
		}
		atomic_store_explicit(&x->tail, tail, memory_order_release);
	}
}

struct xthread *xthread_start(struct ks_export *ks, struct pf_export *pf)
{
	struct xthread *x = xcalloc(1, sizeof(*x));

	x->ring = xmalloc(RING_BYTES);
	x->ks = ks;
	x->pf = pf;
	x->names = names_new();
	if (pthread_create(&x->tid, NULL, run, x))
		fail("cannot start the exporters' thread");
	return x;
}

void xthread_kernel(struct xthread *x, uint32_t cpu, const struct hgt_rec *r)
{
	put(x, X_KERNEL, cpu, r, r->len);
}

void xthread_hourglass(struct xthread *x, const struct hgl_rec *r)
{
	put(x, X_HOURGLASS, 0, r, sizeof(*r));
}

void xthread_gap(struct xthread *x, const struct hgg_gap *g)
{
	put(x, X_GAP, 0, g, sizeof(*g));
}

int xthread_join(struct xthread *x, struct hg_err *err)
{
	int failed;

	put(x, X_END, 0, NULL, 0);
	atomic_store_explicit(&x->head, x->local_head, memory_order_release);
	pthread_join(x->tid, NULL);
	failed = x->failed;
	if (failed)
		*err = x->err;
	free(x->ring);
	free(x);
	return failed ? -1 : 0;
}

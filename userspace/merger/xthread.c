// SPDX-License-Identifier: GPL-2.0
/*
 * xthread.c - the exporters on threads of their own.
 *
 * The merge pass copies what the exporters must see (every kernel record,
 * every hourglass record, every judged gap) into a byte ring, in its own
 * order; each exporter (the trace.dat's, the Perfetto trace's) has a thread
 * that takes them out and calls its ks_* or pf_*, so the two write their
 * files side by side instead of one after the other. One producer, one or
 * two consumers, each with its own read position: each side publishes its
 * position with a release store every batch, so the cores rarely touch the
 * same line. When the ring is full the merge waits for the slowest reader,
 * so memory stays bounded.
 *
 * A side that has nothing to do sleeps on a condition variable instead of
 * spinning: the merge, its exporters and hourglass export's Python (which
 * imports matplotlib meanwhile) are more threads than this 2-core machine
 * has, and a thread spinning in sched_yield() took the core of the one it
 * waited for (docs/merge-figures.md). A sleeper says so in a flag before it
 * looks a last time, and a publisher looks at the flag after it publishes
 * (both sequentially consistent), so a wake-up is never lost.
 *
 * Each exporter's thread keeps its own table of names, fed by the COMM and
 * NAME records as they come, which is what the names were at that point of
 * the stream.
 *
 * At the end each thread also drains its exporter (its counts are then
 * final: xthread_drained() hands them to the merge, which writes its report)
 * and puts its file together (ks_write, pf_write: the trace.dat's pages are
 * copied once more), so that the report and whatever waits for it (the HTML
 * page) need not wait for that copy. Naming the files (ks_commit, pf_commit)
 * is the caller's, once both threads are done, so that a failure of either
 * leaves no file of the other.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "xthread.h"

#define RING_BYTES	(8u << 20)
#define BATCH		(64u << 10)	/* publish after this many bytes */
#define READERS		2

enum { X_KERNEL = 1, X_HOURGLASS, X_GAP, X_END };

struct xhead {
	uint16_t kind, len;		/* len: the payload's bytes */
	uint32_t cpu;
};

/*
 * Who writes what decides the layout: a line one core writes and another reads moves between
 * them at every write. The merge wrote local_head (every item) on the line the readers read
 * the ring's address from (every item): the line moved twice an item, and put() stalled on it
 * for most of its samples (perf, the 10 M-event bench run). Each side's fields now have lines
 * of their own.
 */
struct reader {
	struct xthread *x;
	struct ks_export *ks;		/* one of the two */
	struct pf_export *pf;
	struct names *names;
	_Atomic uint64_t tail;		/* read up to */
	_Atomic int waits;		/* asleep (or about to be) for more items */
	pthread_cond_t more;
	pthread_t tid;
	int failed;
	int drained;			/* the exporter drained (or failed): under the lock */
	int drain_failed;		/* it failed before that: under the lock */
	struct ks_summary ks_sum;
	struct pf_summary pf_sum;
	struct hg_err err;
} __attribute__((aligned(64)));

struct xthread {
	/* set at the start, read by all */
	unsigned char *ring;
	int nrd;
	/* the merge's own */
	uint64_t local_head __attribute__((aligned(64)));
	uint64_t cached_tail, published;
	int ended;			/* X_END put */
	/* the merge publishes, the readers read */
	_Atomic uint64_t head __attribute__((aligned(64)));	/* written up to (bytes, ever growing) */
	_Atomic int writer_waits;	/* the merge is asleep (or about to be) for room */
	struct reader rd[READERS];	/* each on lines of its own */
	pthread_mutex_t lock;		/* only for sleeping and waking */
	pthread_cond_t room;
	pthread_cond_t drained;		/* a reader has drained its exporter */
};

/* slowest - the read position of the slowest reader */
static uint64_t slowest(struct xthread *x)
{
	uint64_t t = UINT64_MAX;
	int i;

	for (i = 0; i < x->nrd; i++) {
		uint64_t ti = atomic_load(&x->rd[i].tail);

		if (ti < t)
			t = ti;
	}
	return t;
}

/* publish_head - let the readers see everything put so far, and wake a sleeping one */
static void publish_head(struct xthread *x)
{
	int i;

	atomic_store(&x->head, x->local_head);
	x->published = x->local_head;
	for (i = 0; i < x->nrd; i++)
		if (atomic_load(&x->rd[i].waits)) {
			pthread_mutex_lock(&x->lock);
			pthread_cond_signal(&x->rd[i].more);
			pthread_mutex_unlock(&x->lock);
		}
}

/* wait_room - until the slowest reader leaves @need bytes free after local_head */
static void wait_room(struct xthread *x, size_t need)
{
	publish_head(x);
	x->cached_tail = slowest(x);
	if (x->local_head + need - x->cached_tail <= RING_BYTES)
		return;
	pthread_mutex_lock(&x->lock);
	atomic_store(&x->writer_waits, 1);
	while (x->local_head + need - (x->cached_tail = slowest(x)) > RING_BYTES)
		pthread_cond_wait(&x->room, &x->lock);
	atomic_store(&x->writer_waits, 0);
	pthread_mutex_unlock(&x->lock);
}

/* put - one item into the ring, waiting for room; items never straddle the end (a pad skips it) */
static void put(struct xthread *x, uint16_t kind, uint32_t cpu, const void *p, size_t len)
{
	size_t need = (sizeof(struct xhead) + len + 7) & ~(size_t)7;
	size_t off = x->local_head % RING_BYTES;
	struct xhead h = { kind, (uint16_t)len, cpu };

	if (off + need > RING_BYTES)		/* pad to the end: the reader skips a zero kind */
		need += RING_BYTES - off;
	if (x->local_head + need - x->cached_tail > RING_BYTES)
		wait_room(x, need);
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
	if (x->local_head - x->published >= BATCH)
		publish_head(x);
}

static void handle(struct reader *rd, const struct xhead *h, const void *p)
{
	if (rd->failed)
		return;
	switch (h->kind) {
	case X_KERNEL: {
		const struct hgt_rec *r = p;

		if (r->type == HGT_REC_COMM || r->type == HGT_REC_NAME)
			names_record_in(rd->names, r);
		if (rd->ks ? ks_kernel(rd->ks, h->cpu, r, &rd->err) : pf_kernel(rd->pf, h->cpu, r, &rd->err))
			rd->failed = 1;
		break;
	}
	case X_HOURGLASS:
		if (rd->ks ? ks_hourglass(rd->ks, p, &rd->err) : pf_hourglass(rd->pf, p, &rd->err))
			rd->failed = 1;
		break;
	case X_GAP:
		if (rd->ks ? ks_gap(rd->ks, p, &rd->err) : pf_gap(rd->pf, p, &rd->err))
			rd->failed = 1;
		break;
	}
}

/* publish_tail - let the merge reuse what @rd has read, and wake it if it waits for that */
static void publish_tail(struct reader *rd, uint64_t tail)
{
	struct xthread *x = rd->x;

	atomic_store(&rd->tail, tail);
	if (atomic_load(&x->writer_waits)) {
		pthread_mutex_lock(&x->lock);
		pthread_cond_signal(&x->room);
		pthread_mutex_unlock(&x->lock);
	}
}

/* wait_more - until the merge has put something past @tail; its head */
static uint64_t wait_more(struct reader *rd, uint64_t tail)
{
	struct xthread *x = rd->x;
	uint64_t head;

	pthread_mutex_lock(&x->lock);
	atomic_store(&rd->waits, 1);
	while ((head = atomic_load(&x->head)) == tail)
		pthread_cond_wait(&rd->more, &x->lock);
	atomic_store(&rd->waits, 0);
	pthread_mutex_unlock(&x->lock);
	return head;
}

/* the end of the stream: drain the exporter, say so, and put its file together */
static void finish(struct reader *rd)
{
	struct xthread *x = rd->x;

	if (!rd->failed &&
	    (rd->ks ? ks_drain(rd->ks, &rd->ks_sum, &rd->err) : pf_drain(rd->pf, &rd->pf_sum, &rd->err)))
		rd->failed = 1;
	pthread_mutex_lock(&x->lock);
	rd->drained = 1;
	rd->drain_failed = rd->failed;
	pthread_cond_broadcast(&x->drained);
	pthread_mutex_unlock(&x->lock);
	/* from here a failure is join's to report: the report is written meanwhile */
	if (!rd->failed && (rd->ks ? ks_write(rd->ks, &rd->err) : pf_write(rd->pf, &rd->err)))
		rd->failed = 1;
}

static void *run(void *arg)
{
	struct reader *rd = arg;
	struct xthread *x = rd->x;
	const unsigned char *ring = x->ring;
	uint64_t tail = 0, told = 0;

	names_use(rd->names);
	for (;;) {
		uint64_t head = atomic_load_explicit(&x->head, memory_order_acquire);

		if (head == tail)
			head = wait_more(rd, tail);
		while (tail < head) {
			size_t off = tail % RING_BYTES;
			struct xhead h;

			memcpy(&h, ring + off, sizeof(h));
			if (!h.kind) {			/* padding to the ring's end */
				tail += RING_BYTES - off;
				continue;
			}
			if (h.kind == X_END) {
				publish_tail(rd, tail);
				finish(rd);
				return NULL;
			}
			handle(rd, &h, ring + off + sizeof(h));
			tail += (sizeof(h) + h.len + 7) & ~(size_t)7;
			if (tail - told >= BATCH) {
				publish_tail(rd, tail);
				told = tail;
			}
		}
		publish_tail(rd, tail);
		told = tail;
	}
}

struct xthread *xthread_start(struct ks_export *ks, struct pf_export *pf)
{
	struct xthread *x = aligned_alloc(64, sizeof(*x));
	sigset_t stop, old;
	int i;

	if (!x)
		fail_env("out of memory for the exporters' threads");
	memset(x, 0, sizeof(*x));
	x->ring = xmalloc(RING_BYTES);
	pthread_mutex_init(&x->lock, NULL);
	pthread_cond_init(&x->room, NULL);
	pthread_cond_init(&x->drained, NULL);
	if (ks)
		x->rd[x->nrd++].ks = ks;
	if (pf)
		x->rd[x->nrd++].pf = pf;
	/* the stopping signals are the merge's thread's to take (main.c: it removes the
	 * temporary files, which only that thread names) */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigaddset(&stop, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &stop, &old);
	for (i = 0; i < x->nrd; i++) {
		struct reader *rd = &x->rd[i];

		rd->x = x;
		rd->names = names_new();
		pthread_cond_init(&rd->more, NULL);
		if (pthread_create(&rd->tid, NULL, run, rd)) {
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			fail_env("cannot start an exporter's thread");
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
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

/* the first failure of a reader, if any, into @err */
static int first_failure(struct xthread *x, struct hg_err *err)
{
	int i;

	for (i = 0; i < x->nrd; i++)
		if (x->rd[i].failed) {
			*err = x->rd[i].err;
			return -1;
		}
	return 0;
}

int xthread_drained(struct xthread *x, struct ks_summary *ks, struct pf_summary *pf, struct hg_err *err)
{
	int i, all;

	put(x, X_END, 0, NULL, 0);
	publish_head(x);
	pthread_mutex_lock(&x->lock);
	for (;;) {
		for (i = 0, all = 1; i < x->nrd; i++)
			all &= x->rd[i].drained;
		if (all)
			break;
		pthread_cond_wait(&x->drained, &x->lock);
	}
	pthread_mutex_unlock(&x->lock);
	x->ended = 1;
	/*
	 * Only what failed while draining: a reader that drained is now putting its file
	 * together, and a failure there (a full disk) comes after the report is whole, as
	 * --ready-fd says; xthread_join() reports it. Reading its flag now would race with it.
	 */
	for (i = 0; i < x->nrd; i++)
		if (x->rd[i].drain_failed) {
			*err = x->rd[i].err;
			return -1;
		}
	for (i = 0; i < x->nrd; i++) {
		if (x->rd[i].ks)
			*ks = x->rd[i].ks_sum;
		else
			*pf = x->rd[i].pf_sum;
	}
	return 0;
}

int xthread_join(struct xthread *x, struct hg_err *err)
{
	int i, failed;

	if (!x->ended) {
		put(x, X_END, 0, NULL, 0);
		publish_head(x);
	}
	for (i = 0; i < x->nrd; i++) {
		pthread_join(x->rd[i].tid, NULL);
		pthread_cond_destroy(&x->rd[i].more);
	}
	failed = first_failure(x, err);
	pthread_cond_destroy(&x->room);
	pthread_cond_destroy(&x->drained);
	pthread_mutex_destroy(&x->lock);
	free(x->ring);
	free(x);
	return failed;
}

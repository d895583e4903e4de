// SPDX-License-Identifier: GPL-2.0
/*
 * hgside.c - hourglass's records as one stream in time order.
 *
 * hourglass writes each thread's records in the order it made them, threads
 * interleaved in blocks. That order is time order for intervals, but not
 * for everything: a job's record (its release is its time) is written when
 * the job ends, up to a period later. Pass 0 measures, per thread, how far
 * behind the thread's newest record an older one can still come (its
 * disorder); the stream then holds each thread's records in a small heap
 * until nothing earlier can follow, and merges the threads by time.
 * Memory: the records of one disorder's span per thread.
 *
 * Each record becomes events: an interval starts (its t0) and ends (t1); a
 * wake-up opens a window at its intended expiry less the margin and closes
 * it at the first user-space read; a missed job opens a window at its
 * release and closes it at its deadline. Ends wait in a second heap.
 *
 * The common run has threads whose records are intervals only, in time order
 * (no disorder): each thread then has one event due at a time, the end of the
 * interval it started or the start of its next one, and one heap of the threads
 * by that event gives the same stream (ends first at a tie, by the order their
 * starts came; starts by thread) without the records' heaps (the simple stream,
 * HG_FAST: half the cost of a pass over hourglass's trace, callgrind).
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

static int64_t *disorder;	/* per thread, from pass 0 */
static int all_simple;		/* pass 0 saw intervals only, no disorder: the simple stream */
static int span_any;		/* pass 0 saw an interval: the first start and last end */
static int64_t span_t0, span_t1;

struct pend {
	int64_t key;
	uint64_t seq;
	struct hgl_rec rec;
};

struct heap {
	struct pend *v;
	size_t n, cap;
};

static int pend_less(const struct pend *a, const struct pend *b)
{
	return a->key != b->key ? a->key < b->key : a->seq < b->seq;
}

static void heap_push(struct heap *h, const struct pend *p)
{
	size_t i;

	if (HG_FAST && !h->n && h->cap) {	/* the common case: a thread's records hardly wait */
		h->v[0] = *p;
		h->n = 1;
		return;
	}
	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 16;
		h->v = xrealloc(h->v, h->cap * sizeof(*h->v));
	}
	i = h->n++;
	while (i && pend_less(p, &h->v[(i - 1) / 2])) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = *p;
}

static void heap_pop(struct heap *h)
{
	struct pend last;
	size_t i = 0;

	if (HG_FAST && h->n == 1) {
		h->n = 0;
		return;
	}
	last = h->v[--h->n];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && pend_less(&h->v[c + 1], &h->v[c]))
			c++;
		if (!pend_less(&h->v[c], &last))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
}

/* the time at which a record enters the stream */
static int64_t key_of(const struct run *r, const struct hgl_rec *x)
{
	if (x->type == HGL_REC_WAKE)
		return (int64_t)x->t0 - r->margin;
	return (int64_t)x->t0;
}

struct thread_stream {
	struct hgl_cursor *c;
	int done;
	int64_t frontier;	/* the newest key read */
	uint64_t tseq;
	struct heap h;
};

/* a thread in the heap of those ready, with its first record's time: compared without
 * reaching into the thread's own heap (5% of a merge with 32 threads, perf) */
struct ready {
	int64_t key;
	int t;
};

/* the simple stream: a thread's interval started (its end due) and its next record read */
struct sthread {
	struct hgl_rec cur, nxt;
	uint64_t seq;			/* cur's */
	struct hgl_cursor *c;
	int has_cur, has_nxt;
};

/* a thread in the simple stream's heap by its event due: the time, then what orders a tie (an end:
 * its start's seq; a start: the top bit and the thread) */
struct sent {
	int64_t key;
	uint64_t ord;
	int t;
};

struct hgside {
	struct run *r;
	int simple;			/* the simple stream: sth and sheap, not the rest */
	struct sthread *sth;
	struct sent *sheap;
	int nsheap;
	struct thread_stream *th;
	struct heap ends;	/* events waiting for their time: interval ends, window closes */
	uint64_t seq;
	void (*on_record)(void *ctx, const struct hgl_rec *rec);
	void *ctx;
	int have_next;		/* next merged record, if read */
	struct pend next;
	struct ready *ready;	/* threads with a record that can go, as a heap by its time */
	int nready;
};

/*
 * see_key_plain - pass 0's step for a thread's record at @k: how far behind the thread's newest
 * key (*@front) it came (its disorder, the largest), and whether it came behind at all (no
 * simple stream then); *@seen: the thread had a record before
 */
static void see_key_plain(int64_t *front, int64_t *disorder, char *seen, int64_t k)
{
	if (*seen && *front - k > *disorder)
		*disorder = *front - k;
	if (*seen && k < *front)
		all_simple = 0;
	if (!*seen || k > *front)
		*front = k;
	*seen = 1;
}

/* see_key - see_key_plain() asking once whether the thread had a record, and once how far behind
 * it came: a record at or after the newest moves the newest (to itself when as new), one behind
 * it moves the disorder. Every record of the trace comes here: pass 0's walk took 46 instructions
 * a record with see_key_plain()'s questions, 30 with these (the bench's run, callgrind) */
static hot_inline void see_key(int64_t *front, int64_t *disorder, char *seen, int64_t k)
{
	int64_t behind;

	if (unlikely(!*seen)) {
		*seen = 1;
		*front = k;
		return;
	}
	behind = *front - k;
	if (behind <= 0) {
		*front = k;
		return;
	}
	all_simple = 0;
	if (behind > *disorder)
		*disorder = behind;
}

/*
 * hgside_measure_disorder - pass 0, once a run (a second call for @r finds it done: the flag is
 * @r's, so that a process that merges run after run measures each): how late each thread's
 * records come, and the intervals' span (hgside_span), in one walk of the trace
 */
void hgside_measure_disorder(struct run *r)
{
	struct hgl_cursor *c;
	const struct hgl_rec *x;
	struct hg_err err;
	int64_t *front, t0 = 0, t1 = 0;
	char *seen;
	size_t n, i;
	int rc, any = 0;

	if (r->disorder_measured)
		return;
	r->disorder_measured = 1;
	front = xcalloc(r->nthreads + 1, sizeof(*front));
	seen = xcalloc(r->nthreads + 1, 1);
	free(disorder);
	disorder = xcalloc(r->nthreads + 1, sizeof(*disorder));
	all_simple = 1;
	c = hgl_cursor_open(r->hgl, -1, &err);
	if (!c)
		fail_err(&err);
	while ((rc = hgl_cursor_next_block(c, &x, &n, &err)) > 0)	/* a block at a time: no copy */
		for (i = 0; i < n; i++) {
			int64_t k = key_of(r, &x[i]);
			int t = x[i].thread;

			if (HG_FAST)
				see_key(&front[t], &disorder[t], &seen[t], k);
			else
				see_key_plain(&front[t], &disorder[t], &seen[t], k);
			if (x[i].type != HGL_REC_INTERVAL) {
				all_simple = 0;
			} else if (likely(any)) {
				if ((int64_t)x[i].t0 < t0)
					t0 = (int64_t)x[i].t0;
				if ((int64_t)x[i].t1 > t1)
					t1 = (int64_t)x[i].t1;
			} else {
				t0 = (int64_t)x[i].t0;
				t1 = (int64_t)x[i].t1;
				any = 1;
			}
		}
	if (rc < 0)
		fail_err(&err);
	hgl_cursor_close(c);
	free(front);
	free(seen);
	span_any = any;
	span_t0 = t0;
	span_t1 = t1;
}

int hgside_span(struct run *r, int64_t *t0, int64_t *t1)
{
	hgside_measure_disorder(r);
	if (span_any) {
		*t0 = span_t0;
		*t1 = span_t1;
	}
	return span_any;
}

/* fill - read thread @t until its heap's top can go: nothing earlier can follow */
static void fill(struct hgside *s, int t)
{
	struct thread_stream *ts = &s->th[t];
	struct hg_err err;

	while (!ts->done && (!ts->h.n || ts->h.v[0].key > ts->frontier - disorder[t])) {
		/* into an empty heap the record is read in place (the common case: a thread's
		 * records hardly wait), else beside it and pushed */
		struct pend other, *p = HG_FAST && !ts->h.n && ts->h.cap ? &ts->h.v[0] : &other;
		int rc = hgl_cursor_next(ts->c, &p->rec, &err);

		if (rc < 0)
			fail_err(&err);
		if (!rc) {
			ts->done = 1;
			break;
		}
		p->key = key_of(s->r, &p->rec);
		if (!ts->tseq || p->key > ts->frontier)
			ts->frontier = p->key;
		p->seq = ts->tseq++;
		if (p == &other)
			heap_push(&ts->h, p);
		else
			ts->h.n = 1;
	}
}

static int ready_before(const struct ready *x, const struct ready *y)
{
	return x->key != y->key ? x->key < y->key : x->t < y->t;
}

static struct ready ready_of(const struct hgside *s, int t)
{
	return (struct ready){ s->th[t].h.v[0].key, t };
}

/* ready_fix - @e into the heap of threads from position @i down, in place of what was there */
static void ready_fix(struct hgside *s, int i, struct ready e)
{
	for (;;) {
		int c = 2 * i + 1;

		if (c >= s->nready)
			break;
		if (c + 1 < s->nready && ready_before(&s->ready[c + 1], &s->ready[c]))
			c++;
		if (!ready_before(&s->ready[c], &e))
			break;
		s->ready[i] = s->ready[c];
		i = c;
	}
	s->ready[i] = e;
}

/* pick - the next record of the merged stream, across threads (ties: lower thread first) */
static int pick(struct hgside *s)
{
	int t;

	if (s->have_next)
		return 1;
	if (!s->nready)
		return 0;
	t = s->ready[0].t;
	s->next = s->th[t].h.v[0];
	heap_pop(&s->th[t].h);
	fill(s, t);
	if (s->th[t].h.n)
		ready_fix(s, 0, ready_of(s, t));
	else if (--s->nready)
		ready_fix(s, 0, s->ready[s->nready]);
	s->have_next = 1;
	return 1;
}

/* ---- the simple stream (intervals only, no disorder) ---- */

static hot_inline int sent_before(const struct sent *a, const struct sent *b)
{
	return a->key != b->key ? a->key < b->key : a->ord < b->ord;
}

/* sift - the heap's first, whose event changed, to its place */
static hot_inline void sift(struct hgside *s)
{
	struct sent e = s->sheap[0];
	int i = 0, n = s->nsheap;

	for (;;) {
		int c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && sent_before(&s->sheap[c + 1], &s->sheap[c]))
			c++;
		if (!sent_before(&s->sheap[c], &e))
			break;
		s->sheap[i] = s->sheap[c];
		i = c;
	}
	s->sheap[i] = e;
}

/* read_next - thread @t's next record into nxt */
static hot_inline void read_next(struct sthread *st)
{
	struct hg_err err;
	int rc = hgl_cursor_next(st->c, &st->nxt, &err);

	if (unlikely(rc < 0))
		fail_err(&err);
	st->has_nxt = rc;
}

static void simple_open(struct hgside *s)
{
	struct run *r = s->r;
	struct hg_err err;
	int t, i;

	s->simple = 1;
	s->sth = xcalloc(r->nthreads + 1, sizeof(*s->sth));
	s->sheap = xcalloc(r->nthreads + 1, sizeof(*s->sheap));
	for (t = 0; t < r->nthreads; t++) {
		struct sthread *st = &s->sth[t];

		st->c = hgl_cursor_open(r->hgl, t, &err);
		if (!st->c)
			fail_err(&err);
		read_next(st);
		if (st->has_nxt)
			s->sheap[s->nsheap++] = (struct sent){ (int64_t)st->nxt.t0, 1ull << 63 | (uint64_t)t, t };
	}
	/* in order already: threads by number, and their first starts sifted in from the last parent */
	for (i = s->nsheap / 2; i-- > 0;) {
		struct sent e = s->sheap[i];
		int j = i;

		for (;;) {
			int c = 2 * j + 1;

			if (c >= s->nsheap)
				break;
			if (c + 1 < s->nsheap && sent_before(&s->sheap[c + 1], &s->sheap[c]))
				c++;
			if (!sent_before(&s->sheap[c], &e))
				break;
			s->sheap[j] = s->sheap[c];
			j = c;
		}
		s->sheap[j] = e;
	}
}

/* picked - a record picked, to the on_record of hgside_open(): the calibration pass's tape_record()
 * called by name, inlined (a call by pointer for each of hourglass's records), another by pointer */
static hot_inline void picked(struct hgside *s, const struct hgl_rec *rec)
{
	if (HG_FAST && s->on_record == tape_record)
		tape_record(s->ctx, rec);
	else if (s->on_record)
		s->on_record(s->ctx, rec);
}

/* simple_next - hgside_next() of the simple stream: the first thread's event due */
static int simple_next(struct hgside *s, struct hg_ev *ev)
{
	struct sent *e = &s->sheap[0];
	struct sthread *st;

	ev->w0 = ev->w1 = 0;
	ev->wkind = 0;
	if (unlikely(!s->nsheap))
		return 0;
	st = &s->sth[e->t];
	if (st->has_cur) {		/* its interval ends: its next starts when read */
		ev->kind = HGE_END;
		ev->t = (int64_t)st->cur.t1;
		ev->seq = st->seq;
		ev->rec = st->cur;
		st->has_cur = 0;
		if (!st->has_nxt) {
			*e = s->sheap[--s->nsheap];
			if (s->nsheap)
				sift(s);
			return 1;
		}
		e->key = (int64_t)st->nxt.t0;
		e->ord = 1ull << 63 | (uint64_t)e->t;
		sift(s);
		return 1;
	}
	ev->kind = HGE_START;		/* its next interval starts: its end is due */
	ev->t = (int64_t)st->nxt.t0;
	ev->seq = s->seq++;
	ev->rec = st->nxt;
	picked(s, &ev->rec);
	st->cur = st->nxt;
	st->seq = ev->seq;
	st->has_cur = 1;
	read_next(st);
	e->key = (int64_t)st->cur.t1;
	e->ord = ev->seq;
	sift(s);
	return 1;
}

struct hgside *hgside_open(struct run *r, void (*on_record)(void *, const struct hgl_rec *), void *ctx)
{
	struct hgside *s = xcalloc(1, sizeof(*s));
	struct hg_err err;
	int t;

	hgside_measure_disorder(r);	/* done already, mostly: setup() asks for the span */
	s->r = r;
	s->on_record = on_record;
	s->ctx = ctx;
	if (HG_FAST && all_simple) {
		simple_open(s);
		return s;
	}
	s->th = xcalloc(r->nthreads + 1, sizeof(*s->th));
	s->ready = xcalloc(r->nthreads + 1, sizeof(*s->ready));
	for (t = 0; t < r->nthreads; t++) {
		s->th[t].c = hgl_cursor_open(r->hgl, t, &err);
		if (!s->th[t].c)
			fail_err(&err);
		fill(s, t);
		if (s->th[t].h.n)
			s->ready[s->nready++] = ready_of(s, t);
	}
	for (t = s->nready / 2; t >= 0; t--)
		if (t < s->nready)
			ready_fix(s, t, s->ready[t]);
	return s;
}

int64_t hgside_peek(struct hgside *s)
{
	int64_t t = INT64_MAX;

	if (s->simple)
		return s->nsheap ? s->sheap[0].key : INT64_MAX;
	if (pick(s))
		t = s->next.key;
	if (s->ends.n && s->ends.v[0].key < t)
		t = s->ends.v[0].key;
	return t;
}

/* an end waiting in s->ends: the record, and the kind in its type's place */
static void push_end(struct hgside *s, int64_t t, uint64_t seq, const struct hgl_rec *x, uint8_t kind)
{
	struct pend p = { .key = t, .seq = seq, .rec = *x };

	/* the kind travels in the low bit of seq, which orders ties: the record's own order */
	p.seq = seq << 1 | (kind == HGE_WCLOSE);
	heap_push(&s->ends, &p);
}

static void window_span(const struct run *r, const struct hgl_rec *x, int64_t *w0, int64_t *w1, uint8_t *kind)
{
	if (x->type == HGL_REC_WAKE) {
		*w0 = (int64_t)x->t0 - r->margin;
		*w1 = (int64_t)x->t1;
		*kind = 1;
	} else {
		*w0 = (int64_t)x->t0;
		*w1 = (int64_t)x->t2;
		*kind = 2;
	}
}

static int is_window(const struct run *r, const struct hgl_rec *x)
{
	if (x->type == HGL_REC_WAKE)
		return (int64_t)x->t1 > (int64_t)x->t0 - r->margin;
	return x->type == HGL_REC_JOB && (x->flags & HGL_JOB_MISSED) && x->t2 > x->t0;
}

int hgside_next(struct hgside *s, struct hg_ev *ev)
{
	int have;

	if (s->simple)
		return simple_next(s, ev);
again:
	have = pick(s);
	ev->w0 = ev->w1 = 0;	/* an interval's start and end have no window (a window's set below) */
	ev->wkind = 0;
	/* an end first when it is earlier, or at the same time (it belongs to an earlier record) */
	if (s->ends.n && (!have || s->ends.v[0].key <= s->next.key)) {
		struct pend p = s->ends.v[0];

		heap_pop(&s->ends);
		ev->t = p.key;
		ev->seq = p.seq >> 1;
		ev->rec = p.rec;
		ev->kind = p.seq & 1 ? HGE_WCLOSE : HGE_END;
		if (ev->kind == HGE_WCLOSE)
			window_span(s->r, &ev->rec, &ev->w0, &ev->w1, &ev->wkind);
		return 1;
	}
	if (!have)
		return 0;
	s->have_next = 0;
	ev->t = s->next.key;
	ev->seq = s->seq++;
	ev->rec = s->next.rec;
	picked(s, &ev->rec);
	if (ev->rec.type == HGL_REC_INTERVAL) {
		ev->kind = HGE_START;
		push_end(s, (int64_t)ev->rec.t1, ev->seq, &ev->rec, HGE_END);
		return 1;
	}
	if (is_window(s->r, &ev->rec)) {
		ev->kind = HGE_WOPEN;
		window_span(s->r, &ev->rec, &ev->w0, &ev->w1, &ev->wkind);
		ev->t = ev->w0;
		push_end(s, ev->w1, ev->seq, &ev->rec, HGE_WCLOSE);
		return 1;
	}
	/* a record that opens nothing (a job met, a wake-up too early to count): next one */
	goto again;
}

void hgside_close(struct hgside *s)
{
	int t;

	if (!s)
		return;
	for (t = 0; s->simple && t < s->r->nthreads; t++)
		hgl_cursor_close(s->sth[t].c);
	for (t = 0; !s->simple && t < s->r->nthreads; t++) {
		hgl_cursor_close(s->th[t].c);
		free(s->th[t].h.v);
	}
	free(s->sth);
	free(s->sheap);
	free(s->th);
	free(s->ready);
	free(s->ends.v);
	free(s);
}

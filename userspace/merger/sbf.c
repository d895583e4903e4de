// SPDX-License-Identifier: GPL-2.0
/*
 * sbf.c - lower and upper supply-bound functions of each thread (seed 001,
 * rt-muse): the least and the most CPU time the thread received in any
 * window of length d, for d on a log grid from 10 us to half its run.
 *
 * S(t), the CPU the thread received up to t, grows along its intervals.
 * The least supply over windows of length d is found at a window that
 * starts where the thread stops (an interval's end), the most at one that
 * starts where it starts. Each candidate window waits in a queue until
 * hourglass's stream passes its far end, where S is then known. With more
 * than SBF_WINDOWS intervals, every m-th candidate is taken, spread over the
 * run, so that the queues stay bounded: the bounds are then estimates from
 * SBF_WINDOWS windows per length, as rt-muse samples a trace.
 */
#include <math.h>
#include <stdlib.h>

#include "engine.h"
#include "hg_jsonw.h"

#define SBF_POINTS	28
#define SBF_WINDOWS	3000
#define SBF_LO_US	10.0

struct cand {
	double x;		/* where the window ends */
	double s_a;		/* S at its start */
};

struct queue {
	struct cand *v;
	size_t head, n, cap;
};

struct head {
	double x;			/* the end of the queue's first window */
	uint8_t i, kind;		/* the queue: t->q[i][kind] */
};

struct sbf_thread {
	int on;
	double d[SBF_POINTS];
	int npoints;
	double first, last;		/* the thread's run */
	uint64_t stride, seen;
	double cum;			/* S at the current interval's start */
	struct queue q[SBF_POINTS][2];	/* [d][0 lower, 1 upper] */
	double due;			/* the earliest end of a waiting window: nothing to do before */
	double best[SBF_POINTS][2];
	int have[SBF_POINTS][2];
	/* the queues with a window waiting, by the end of their first (a binary heap): an
	 * interval that settles windows looks at those queues only, not at all 2 x SBF_POINTS
	 * (which was 5% of a merge's time on the 10 M-event bench run, perf) */
	struct head heap[2 * SBF_POINTS];
	int nheap;
};

struct sbf {
	struct run *r;
	struct sbf_thread *th;
};

static void q_push(struct queue *q, double x, double s_a)
{
	if (q->n == q->cap) {
		if (q->head > q->cap / 2) {
			size_t i;

			for (i = q->head; i < q->n; i++)
				q->v[i - q->head] = q->v[i];
			q->n -= q->head;
			q->head = 0;
		} else {
			q->cap = q->cap ? 2 * q->cap : 32;
			q->v = xrealloc(q->v, q->cap * sizeof(*q->v));
		}
	}
	q->v[q->n++] = (struct cand){ x, s_a };
}

struct sbf *sbf_new(struct run *r, struct infer *in)
{
	struct sbf *s = xcalloc(1, sizeof(*s));
	int k, i;

	s->r = r;
	s->th = xcalloc(r->nthreads + 1, sizeof(*s->th));
	for (k = 0; k < r->nthreads; k++) {
		struct sbf_thread *t = &s->th[k];
		int64_t first, last;
		uint64_t n;
		double lo, hi;

		infer_thread_span(in, k, &first, &last, &n);
		if (!n || last <= first)
			continue;
		t->on = 1;
		t->first = (double)first;
		t->last = (double)last;
		t->stride = n > SBF_WINDOWS ? n / SBF_WINDOWS : 1;
		t->due = INFINITY;
		lo = SBF_LO_US * 1e-6 * r->hz;
		hi = (t->last - t->first) / 2;
		t->npoints = hi > lo ? SBF_POINTS : 1;
		for (i = 0; i < t->npoints; i++)
			t->d[i] = t->npoints > 1 ? lo * pow(hi / lo, (double)i / (SBF_POINTS - 1)) : lo;
	}
	return s;
}

static void settle(struct sbf_thread *t, int i, int kind, double s_x, double upto, int inside, double s0, double x0)
{
	struct queue *q = &t->q[i][kind];

	while (q->head < q->n && q->v[q->head].x <= upto) {
		struct cand *c = &q->v[q->head++];
		/* in the gap before the interval S is flat; inside it, S grows one to one */
		double v = (inside ? s0 + (c->x - x0) : s_x) - c->s_a;

		if (!t->have[i][kind] || (kind == 0 ? v < t->best[i][kind] : v > t->best[i][kind]))
			t->best[i][kind] = v;
		t->have[i][kind] = 1;
	}
}

static void heap_up(struct head *h, int j)
{
	while (j > 0 && h[(j - 1) / 2].x > h[j].x) {
		struct head tmp = h[j];

		h[j] = h[(j - 1) / 2];
		h[(j - 1) / 2] = tmp;
		j = (j - 1) / 2;
	}
}

static void heap_down(struct head *h, int n, int j)
{
	for (;;) {
		int l = 2 * j + 1, m = j;
		struct head tmp;

		if (l < n && h[l].x < h[m].x)
			m = l;
		if (l + 1 < n && h[l + 1].x < h[m].x)
			m = l + 1;
		if (m == j)
			return;
		tmp = h[j];
		h[j] = h[m];
		h[m] = tmp;
		j = m;
	}
}

static void q_push_window(struct sbf_thread *t, int i, int kind, double x, double s_a)
{
	struct queue *q = &t->q[i][kind];
	int was_empty = q->head == q->n;

	q_push(q, x, s_a);
	if (was_empty) {
		t->heap[t->nheap] = (struct head){ x, (uint8_t)i, (uint8_t)kind };
		heap_up(t->heap, t->nheap++);
	}
}

/* the windows ending up to @b, the end of the interval from @a: each queue's in order (the
 * queues are independent, each keeps its own bound) */
static void settle_upto(struct sbf_thread *t, double a, double b)
{
	while (t->nheap && t->heap[0].x <= b) {
		struct head *h = &t->heap[0];
		struct queue *q = &t->q[h->i][h->kind];

		/* ending before the interval: S there is what came before it; inside it, S grows
		 * one to one */
		settle(t, h->i, h->kind, t->cum, a, 0, 0, 0);
		settle(t, h->i, h->kind, 0, b, 1, t->cum, a);
		if (q->head < q->n)
			h->x = q->v[q->head].x;
		else
			t->heap[0] = t->heap[--t->nheap];
		heap_down(t->heap, t->nheap, 0);
	}
}

void sbf_interval(struct sbf *s, const struct hgl_rec *iv)
{
	struct sbf_thread *t;
	double a = (double)iv->t0, b = (double)iv->t1;
	int i, take;

	if (iv->type != HGL_REC_INTERVAL || !(t = &s->th[iv->thread])->on)
		return;
	take = t->seen++ % t->stride == 0;
	if (!take && b < t->due) {
		t->cum += b - a;
		return;
	}
	settle_upto(t, a, b);
	if (take) {
		for (i = 0; i < t->npoints; i++) {
			double d = t->d[i];

			if (a + d <= t->last)
				q_push_window(t, i, 1, a + d, t->cum);
			if (b + d <= t->last)
				q_push_window(t, i, 0, b + d, t->cum + (b - a));
		}
		/* a window from this interval's start shorter than it ends inside it */
		settle_upto(t, a, b);
	}
	t->cum += b - a;
	t->due = t->nheap ? t->heap[0].x : INFINITY;
}

void sbf_report(struct sbf *s, struct jsonw *w)
{
	struct run *r = s->r;
	int k, i, kind;
	char key[16];
	double ms = 1e3 / r->hz;

	jw_obj(w, "sbf");
	for (k = 0; k < r->nthreads; k++) {
		struct sbf_thread *t = &s->th[k];

		if (!t->on)
			continue;
		/* what is left ends after the last interval: S there is the total */
		for (i = 0; i < t->npoints; i++)
			for (kind = 0; kind < 2; kind++)
				settle(t, i, kind, t->cum, INFINITY, 0, 0, 0);
		snprintf(key, sizeof(key), "%d", k);
		jw_obj(w, key);
		jw_str(w, "name", r->th[k].name);
		jw_uint(w, "windows_per_length", t->stride > 1 ? SBF_WINDOWS : t->seen);
		jw_arr(w, "window_ms");
		for (i = 0; i < t->npoints; i++)
			jw_numf(w, NULL, t->d[i] * ms, 6);
		jw_end_arr(w);
		for (kind = 0; kind < 2; kind++) {
			jw_arr(w, kind ? "upper_ms" : "lower_ms");
			for (i = 0; i < t->npoints; i++)
				if (t->have[i][kind])
					jw_numf(w, NULL, t->best[i][kind] * ms, 6);
				else
					jw_null(w, NULL);
			jw_end_arr(w);
		}
		jw_end_obj(w);
	}
	jw_end_obj(w);
}

void sbf_free(struct sbf *s)
{
	int k, i, kind;

	if (!s)
		return;
	for (k = 0; k < s->r->nthreads; k++)
		for (i = 0; i < SBF_POINTS; i++)
			for (kind = 0; kind < 2; kind++)
				free(s->th[k].q[i][kind].v);
	free(s->th);
	free(s);
}

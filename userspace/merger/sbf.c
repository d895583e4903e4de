// SPDX-License-Identifier: GPL-2.0
/*
 * sbf.c - lower and upper supply-bound functions of each thread (seed 001,
 * rt-muse): the least and the most CPU time the thread received in any
 * window of length d, for d on a log grid from 10 us to half its run.
 *
 * S(t), the CPU the thread received up to t, grows along its intervals.
 * The least supply over windows of length d is found at a window that
 * starts where the thread stops (an interval's end), the most at one that
 * starts where it starts. Each candidate window waits until hourglass's
 * stream passes its far end, where S is then known. With more than
 * SBF_WINDOWS intervals, every m-th candidate is taken, spread over the
 * run, so that what waits stays bounded: the bounds are then estimates from
 * SBF_WINDOWS windows per length, as rt-muse samples a trace.
 *
 * A taken interval starts a window of every length and kind: what waits is
 * the taken intervals (a ring), and for each length and kind the first of
 * them whose window has not ended. An interval that passes the earliest end
 * waiting looks at each length's first; the windows of one length end in
 * the order they started. (A queue of windows per length, and a heap of the
 * queues by their first end, cost 56 window records per taken interval and
 * a heap operation per window: with 512 threads of 800 intervals each, every
 * interval taken, that was half of a merge, perf.) Which length's first ends
 * first is kept in a tournament tree: a window settled costs one walk from its
 * leaf to the root, a comparison a level (a heap's sift cost 115 instructions,
 * a third of a 1 M-event merge's figures, callgrind).
 */
#include <math.h>
#include <stdlib.h>

#include "engine.h"
#include "hg_jsonw.h"

#define SBF_POINTS	28
#define SBF_WINDOWS	3000
#define SBF_LO_US	10.0
#define SBF_LEAVES	64	/* 2 * SBF_POINTS, to a power of two: the tree's leaves */

enum { LOWER, UPPER };

/* a taken interval, whose windows start at its end (lower) and at its start (upper) */
struct taken {
	double a, b;		/* the interval */
	double cum;		/* S at its start */
};

struct sbf_thread {
	int on;
	double d[SBF_POINTS];
	int npoints;
	double first, last;		/* the thread's run */
	uint64_t stride, seen;
	double cum;			/* S at the current interval's start */
	/* the taken intervals from the oldest with a window waiting: ring[j & (cap - 1)] for
	 * j in [oldest, ntaken) (absolute numbers) */
	struct taken *ring;
	uint64_t cap, oldest, ntaken;
	uint64_t next[SBF_POINTS][2];	/* [d][kind]: the first taken interval whose window waits */
	uint64_t stop[SBF_POINTS][2];	/* ... and the first whose window would end past the run:
					 * none from there on (UINT64_MAX: none yet) */
	/* [2 d + kind]: where that first waiting window ends (INFINITY: none waits, and every
	 * leaf past the lengths) */
	double end[SBF_LEAVES];
	double start_s[SBF_LEAVES];	/* [2 d + kind]: S at that first waiting window's start (the
					 * window_end() that found its end found it: not asked again
					 * when the window is settled) */
	double due;			/* the earliest end of a waiting window: nothing to do before */
	/* the lengths and kinds (e = 2 d + kind) as a tournament by end[], node n's children 2 n
	 * and 2 n + 1, leaf SBF_LEAVES + e entry e: lose[n] is the entry that lost at node n (the
	 * one ending later of the two that ended first under its children), first the one that
	 * won them all (lead). An interval settles the few whose window ended, not all 56 (looking at
	 * every one was 8% of a merge, callgrind) */
	uint8_t lose[SBF_LEAVES];
	uint8_t lead;
	/* the least (lower) and the most (upper) supply so far: INFINITY and -INFINITY while no
	 * window has ended, which every window's supply (finite) replaces */
	double best[SBF_POINTS][2];
};

struct sbf {
	struct run *r;
	struct sbf_thread *th;
};

/*
 * tree_replay - the first entry, @e, has a new end: it plays again from its leaf up against the
 * losers on its way, the other entries' ends being what they were. A loser tree: a level costs
 * one entry read and one comparison, the end that goes up held; the winners' tree this replaced
 * read both children's winners and their ends at each level (27 M of a 1 M-event merge's
 * instructions, callgrind). Which of two equal ends wins does not matter: the windows that have
 * ended are each settled apart (settle_upto), in any order.
 */
static void tree_replay(struct sbf_thread *t, int e)
{
	double we = t->end[e];
	int n, w = e;

	for (n = (SBF_LEAVES + e) >> 1; n; n >>= 1) {
		int l = t->lose[n];
		double le = t->end[l];

		if (le < we) {
			t->lose[n] = (uint8_t)w;
			w = l;
			we = le;
		}
	}
	t->lead = (uint8_t)w;
}

/* tree_build - the tree made from end[]: each node's winner from its children's, its loser kept */
static void tree_build(struct sbf_thread *t)
{
	uint8_t win[2 * SBF_LEAVES];
	int n;

	for (n = 0; n < SBF_LEAVES; n++)
		win[SBF_LEAVES + n] = (uint8_t)n;
	for (n = SBF_LEAVES; --n > 0;) {
		uint8_t l = win[2 * n], r = win[2 * n + 1];
		int rw = t->end[r] < t->end[l];

		win[n] = rw ? r : l;
		t->lose[n] = rw ? l : r;
	}
	t->lead = win[1];
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
		for (i = 0; i < SBF_POINTS; i++) {
			t->stop[i][LOWER] = t->stop[i][UPPER] = UINT64_MAX;
			t->best[i][LOWER] = INFINITY;
			t->best[i][UPPER] = -INFINITY;
		}
		for (i = 0; i < SBF_LEAVES; i++)
			t->end[i] = INFINITY;
		lo = SBF_LO_US * 1e-6 * r->hz;
		hi = (t->last - t->first) / 2;
		t->npoints = hi > lo ? SBF_POINTS : 1;
		for (i = 0; i < t->npoints; i++)
			t->d[i] = t->npoints > 1 ? lo * pow(hi / lo, (double)i / (SBF_POINTS - 1)) : lo;
		tree_build(t);
	}
	return s;
}

/* window_end - where the window of length d[@i] and @kind from taken interval @j ends, and
 * S at its start in *s_a */
static double window_end(const struct sbf_thread *t, uint64_t j, int i, int kind, double *s_a)
{
	const struct taken *k = &t->ring[j & (t->cap - 1)];

	if (kind == UPPER) {
		*s_a = k->cum;
		return k->a + t->d[i];
	}
	*s_a = k->cum + (k->b - k->a);
	return k->b + t->d[i];
}

static void keep(struct sbf_thread *t, int i, int kind, double v)
{
	if (kind == LOWER ? v < t->best[i][kind] : v > t->best[i][kind])
		t->best[i][kind] = v;
}

/* waiting - the taken intervals of the length's and kind's windows that wait: [next, this) */
static uint64_t waiting(const struct sbf_thread *t, int i, int kind)
{
	return t->stop[i][kind] < t->ntaken ? t->stop[i][kind] : t->ntaken;
}

/*
 * settle_upto - the windows ending up to @b, the end of the interval from @a (before it S
 * is what came before it; inside it, S grows one to one); the earliest end left waiting
 * becomes t->due
 */
static void settle_upto(struct sbf_thread *t, double a, double b)
{
	double x;
	int e;

	while ((x = t->end[e = t->lead]) <= b) {
		int i = e >> 1, kind = e & 1;
		uint64_t j = t->next[i][kind], end = waiting(t, i, kind);
		double s_a = t->start_s[e];

		/* the first waiting window's end and start are kept (end[], start_s[]); the
		 * windows after it are read from their taken intervals */
		for (;;) {
			keep(t, i, kind, (x <= a ? t->cum : t->cum + (x - a)) - s_a);
			if (++j == end) {
				x = INFINITY;	/* none waits: until take() gives it a window */
				break;
			}
			x = window_end(t, j, i, kind, &s_a);
			if (x > b)
				break;
		}
		t->next[i][kind] = j;
		t->end[e] = x;
		t->start_s[e] = s_a;
		tree_replay(t, e);
	}
	t->due = t->end[t->lead];
}

/* take - the interval [@a, @b] starts a window of every length and kind that ends in the run */
static void take(struct sbf_thread *t, double a, double b)
{
	uint64_t j = t->ntaken;
	int i, kind, added = 0;

	if (j - t->oldest == t->cap) {		/* let go of what no window waits for, or grow */
		t->oldest = j;
		for (i = 0; i < t->npoints; i++)
			for (kind = 0; kind < 2; kind++)
				if (t->next[i][kind] < waiting(t, i, kind) && t->next[i][kind] < t->oldest)
					t->oldest = t->next[i][kind];
	}
	if (j - t->oldest == t->cap) {
		uint64_t cap = t->cap ? 2 * t->cap : 64, k;
		struct taken *ring = xcalloc(cap, sizeof(*ring));

		for (k = t->oldest; k < j; k++)
			ring[k & (cap - 1)] = t->ring[k & (t->cap - 1)];
		free(t->ring);
		t->ring = ring;
		t->cap = cap;
	}
	t->ring[j & (t->cap - 1)] = (struct taken){ a, b, t->cum };
	t->ntaken++;
	for (i = 0; i < t->npoints; i++) {
		if (t->stop[i][UPPER] == UINT64_MAX && !(a + t->d[i] <= t->last))
			t->stop[i][UPPER] = j;
		if (t->stop[i][LOWER] == UINT64_MAX && !(b + t->d[i] <= t->last))
			t->stop[i][LOWER] = j;
		for (kind = 0; kind < 2; kind++)
			if (t->next[i][kind] == j && j < waiting(t, i, kind)) {	/* the first to wait */
				t->end[2 * i + kind] = window_end(t, j, i, kind, &t->start_s[2 * i + kind]);
				if (!HG_FAST)	/* the plain way: the tree made anew for each */
					tree_build(t);
				added++;
			}
	}
	/* the lengths whose windows had all ended start waiting again, most of them at once: the
	 * tree made anew costs less than a walk up for each */
	if (HG_FAST && added)
		tree_build(t);
}

void sbf_interval(struct sbf *s, const struct hgl_rec *iv)
{
	struct sbf_thread *t;
	double a = (double)iv->t0, b = (double)iv->t1;
	int taken;

	if (iv->type != HGL_REC_INTERVAL || !(t = &s->th[iv->thread])->on)
		return;
	taken = t->seen++ % t->stride == 0;
	if (HG_FAST && !taken && b < t->due) {
		t->cum += b - a;
		return;
	}
	settle_upto(t, a, b);
	if (taken) {
		take(t, a, b);
		/* a window from this interval's start shorter than it ends inside it */
		settle_upto(t, a, b);
	}
	t->cum += b - a;
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
			for (kind = 0; kind < 2; kind++) {
				uint64_t j, end = waiting(t, i, kind);

				for (j = t->next[i][kind]; j < end; j++) {
					double s_a;

					window_end(t, j, i, kind, &s_a);
					keep(t, i, kind, t->cum - s_a);
				}
				t->next[i][kind] = end;
			}
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
				if (isfinite(t->best[i][kind]))	/* a window ended */
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
	int k;

	if (!s)
		return;
	for (k = 0; k < s->r->nthreads; k++)
		free(s->th[k].ring);
	free(s->th);
	free(s);
}

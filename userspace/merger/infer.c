// SPDX-License-Identifier: GPL-2.0
/*
 * infer.c - the paper's gray-box inferences from hourglass's data alone.
 *
 * The rules, their order and their arithmetic are tools/hgmerge/infer.py's
 * (read its docstring for why each rule is what it is): a switch between
 * hourglass threads; the tick, searched above length floors on the run's
 * first gaps; hidden below half the cheapest tick; the top real-time thread
 * that never blocks; long or short against a limit calibrated on the run.
 * Comparisons are done in double precision as Python compares an int with a
 * float, which is exact while stamps stay below 2^53 cycles.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"

static const double tick_ms[] = { 1.0, 2.0, 1000.0 / 300, 4.0, 10.0 };	/* HZ 1000, 500, 300, 250, 100 */
static const double floors_us[] = { 0, 0.5, 1, 2, 4, 8, 16, 32 };
#define TICK_SAMPLE 20000

/* is there a start within [t - tol, t + tol]? (infer.py's _near) */
static int near(const int64_t *s, size_t n, double t, double tol)
{
	double lo = t - tol;
	size_t a = 0, b = n;

	while (a < b) {				/* bisect_left */
		size_t m = a + (b - a) / 2;

		if ((double)s[m] < lo)
			a = m + 1;
		else
			b = m;
	}
	return a < n && (double)s[a] <= t + tol;
}

struct found { double p, tol, score; };

static struct found find_tick(const int64_t *s, size_t n, double hz)
{
	struct found best = { 0, 0, 0.0 };
	size_t c, i;

	if (n < 20)
		return best;
	for (c = 0; c < sizeof(tick_ms) / sizeof(tick_ms[0]); c++) {
		double p = tick_ms[c] * 1e-3 * hz;
		double tol = 10e-6 * hz > 0.005 * p ? 10e-6 * hz : 0.005 * p;
		long hit = 0, ctrl = 0;
		double score;

		for (i = 0; i < n; i++) {
			hit += near(s, n, s[i] + p, tol);
			ctrl += near(s, n, s[i] + 1.37 * p, tol);
		}
		score = (double)(hit - ctrl) / n;
		if (score > 0.1 && hit > 2 * (ctrl > 1 ? ctrl : 1) && score > best.score * 1.2)
			best = (struct found){ p, tol, score };
	}
	return best;
}

struct gl { int64_t g0, len; };

static int by_start(const void *a, const void *b)
{
	const struct gl *x = a, *y = b;

	if (x->g0 != y->g0)
		return x->g0 < y->g0 ? -1 : 1;
	return (x->len > y->len) - (x->len < y->len);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* the tick of one CPU from its involuntary gaps (sorted by start) */
static void find_cpu_tick(struct run *r, struct tick *t, const struct gl *gl, size_t n)
{
	size_t sample = n < TICK_SAMPLE ? n : TICK_SAMPLE, f, i, ns;
	int64_t *starts = xcalloc(sample + 1, sizeof(*starts));
	size_t seen[sizeof(floors_us) / sizeof(floors_us[0])];
	size_t nseen = 0;
	struct found best = { 0, 0, 0.0 };
	double best_floor = 0;

	for (f = 0; f < sizeof(floors_us) / sizeof(floors_us[0]); f++) {
		double floor = floors_us[f] * 1e-6 * r->hz;
		int dup = 0;

		for (ns = 0, i = 0; i < sample; i++)
			if ((double)gl[i].len >= floor)
				starts[ns++] = gl[i].g0;
		for (i = 0; i < nseen; i++)
			dup |= seen[i] == ns;
		if (dup)		/* no gap between the two floors: same answer */
			continue;
		seen[nseen++] = ns;
		if (ns < 20)
			break;
		struct found fd = find_tick(starts, ns, r->hz);

		if (fd.p != 0 && fd.score > best.score) {
			best = fd;
			best_floor = floor;
		}
	}
	free(starts);
	t->p = best.p;
	t->tol = best.tol;
	t->score = best.score;
	t->floor = best_floor;
	t->starts = xcalloc(n + 1, sizeof(*t->starts));
	for (t->n = 0, i = 0; i < n; i++)
		if ((double)gl[i].len >= best_floor)
			t->starts[t->n++] = gl[i].g0;
}

/* infer.py's _is_top_rt_never_blocking, for every thread */
static int *top_rt(struct run *r)
{
	int n = r->nthreads, k, j;
	uint32_t maxcpu = 0;
	int *top = xcalloc(n + 1, sizeof(*top));
	unsigned char *on;
	size_t i;

	for (k = 0; k < n; k++)
		for (i = 0; i < r->niv[k]; i++)
			if (r->iv[k][i].cpu > maxcpu)
				maxcpu = r->iv[k][i].cpu;
	on = xcalloc((size_t)n * (maxcpu + 1) + 1, 1);
	for (k = 0; k < n; k++)
		for (i = 0; i < r->niv[k]; i++)
			on[(size_t)k * (maxcpu + 1) + r->iv[k][i].cpu] = 1;
	for (k = 0; k < n; k++) {
		const struct thread_cfg *t = &r->th[k];

		top[k] = t->rt && t->cpu_workload;
		for (j = 0; j < n && top[k]; j++) {
			const struct thread_cfg *o = &r->th[j];
			uint32_t c;

			if (j == k || !o->rt || o->prio < t->prio)
				continue;
			for (c = 0; c <= maxcpu; c++)
				if (on[(size_t)j * (maxcpu + 1) + c] && on[(size_t)k * (maxcpu + 1) + c])
					top[k] = 0;
		}
	}
	free(on);
	return top;
}

static struct tick *tick_of(struct run *r, uint32_t cpu)
{
	size_t i;

	for (i = 0; i < r->nticks; i++)
		if (r->ticks[i].cpu == cpu)
			return &r->ticks[i];
	return NULL;
}

static double median_i64(int64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_i64);
	return n % 2 ? (double)v[n / 2] : (double)(v[n / 2 - 1] + v[n / 2]) / 2;
}

void infer_all(struct run *r)
{
	size_t i, a, b, nsw = 0, ntick = 0, tcap = 0;
	int64_t min_switch = 0, *tick_len = NULL;
	int *top = top_rt(r);
	struct gap *g;

	/* rule 1, and the gaps of each CPU for the tick (gaps are by CPU) */
	for (a = 0; a < r->ngaps; a = b) {
		size_t n = 0;
		struct gl *gl;

		for (b = a; b < r->ngaps && r->gaps[b].cpu == r->gaps[a].cpu; b++)
			n += !r->gaps[b].vol;
		if (!n)
			continue;
		gl = xcalloc(n, sizeof(*gl));
		for (n = 0, i = a; i < b; i++)
			if (!r->gaps[i].vol)
				gl[n++] = (struct gl){ r->gaps[i].g0, r->gaps[i].g1 - r->gaps[i].g0 };
		qsort(gl, n, sizeof(*gl), by_start);
		r->ticks = xrealloc(r->ticks, (r->nticks + 1) * sizeof(*r->ticks));
		r->ticks[r->nticks].cpu = r->gaps[a].cpu;
		find_cpu_tick(r, &r->ticks[r->nticks++], gl, n);
		free(gl);
	}
	for (i = 0; i < r->ngaps; i++) {
		g = &r->gaps[i];
		if (g->vol) {
			g->inferred = I_VOLUNTARY;
			g->rule = R_VOLUNTARY;
		} else if (g->next_thread != g->thread) {
			g->inferred = I_SWITCH_HG;
			g->rule = R_SWITCH;
			if (!nsw++ || g->g1 - g->g0 < min_switch)
				min_switch = g->g1 - g->g0;
		} else {
			struct tick *t = tick_of(r, g->cpu);
			int64_t len = g->g1 - g->g0;

			g->inferred = I_N;	/* decided below */
			if (t && t->p != 0 && (double)len >= t->floor &&
			    (near(t->starts, t->n, g->g0 + t->p, t->tol) || near(t->starts, t->n, g->g0 - t->p, t->tol))) {
				g->inferred = I_TIMER;
				g->rule = R_TICK;
				VEC_PUSH(tick_len, ntick, tcap, len);
			}
		}
	}
	r->switch_gaps = nsw;
	r->hidden_limit = 0;
	if (ntick >= 10) {
		qsort(tick_len, ntick, sizeof(*tick_len), cmp_i64);
		r->hidden_limit = (double)tick_len[ntick / 10] / 2;
	}
	if (nsw) {
		r->switch_limit = (double)(2 * min_switch);
		r->limit_basis = 0;
	} else if (ntick) {
		r->switch_limit = 3 * median_i64(tick_len, ntick);
		r->limit_basis = 1;
	} else {
		r->switch_limit = 50e-6 * r->hz;
		r->limit_basis = 2;
	}
	free(tick_len);
	for (i = 0; i < r->ngaps; i++) {
		double len;

		g = &r->gaps[i];
		if (g->inferred != I_N)
			continue;
		len = (double)(g->g1 - g->g0);
		if (len < r->hidden_limit) {
			g->inferred = I_HIDDEN;
			g->rule = R_HIDDEN;
		} else if (top[g->thread]) {
			g->inferred = I_INTERRUPT;
			g->rule = R_TOP_RT;
		} else if (len < r->switch_limit) {
			g->inferred = I_INTERRUPT;
			g->rule = R_SHORT;
		} else {
			g->inferred = I_SWITCH_OTHER;
			g->rule = R_LONG;
		}
	}
	free(top);
}

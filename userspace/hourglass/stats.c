// SPDX-License-Identifier: GPL-2.0
/*
 * stats.c - walk the record pool once after the run: per-thread intervals,
 * gaps, migrations and wake-up lateness.
 */
#include <stdlib.h>
#include <string.h>
#include "stats.h"

double hg_cyc_ms(const struct hg_run *run, uint64_t cycles)
{
	return (double)cycles * 1e3 / run->hz;
}

/* hg_run_ns - how long the run lasted: -d, or until it was stopped early */
uint64_t hg_run_ns(const struct hg_run *run)
{
	int64_t d;

	if (!atomic_load(&run->stop))
		return run->cfg->duration_ns;
	d = (int64_t)(run->stop_tsc - run->t0_tsc);
	if (d <= 0)
		return 0;
	return (uint64_t)((double)d * 1e9 / run->hz) < run->cfg->duration_ns ?
	       (uint64_t)((double)d * 1e9 / run->hz) : run->cfg->duration_ns;
}

/* hg_stopped_by - "SIGINT", "SIGTERM", "SIGHUP", "breaktrace", or NULL: it ran to its end */
const char *hg_stopped_by(const struct hg_run *run)
{
	switch (run->stop_signal) {
	case SIGINT: return "SIGINT";
	case SIGTERM: return "SIGTERM";
	case SIGHUP: return "SIGHUP";
	}
	return run->trip.kind ? "breaktrace" : NULL;
}

static int cmp_iv(const void *a, const void *b)
{
	const struct hgl_rec *x = *(const struct hgl_rec *const *)a;
	const struct hgl_rec *y = *(const struct hgl_rec *const *)b;

	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	return x->thread - y->thread;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* hg_percentile - nearest-rank percentile of a sorted array. */
int64_t hg_percentile(const int64_t *sorted, uint64_t n, double p)
{
	uint64_t rank;

	if (!n)
		return 0;
	rank = (uint64_t)(p / 100.0 * (double)n + 0.999999);
	if (rank < 1)
		rank = 1;
	return sorted[(rank > n ? n : rank) - 1];
}

static unsigned int log2_bucket(uint64_t ns)
{
	unsigned int b = 0;

	while (ns > 1 && b < HG_HIST_BUCKETS - 1) {
		ns >>= 1;
		b++;
	}
	return b;
}

int hg_stats_compute(struct hg_run *run, struct hg_stats *st)
{
	int n = run->cfg->nthreads, k;
	const struct hgl_rec **prev;
	uint64_t used = atomic_load(&run->pool_used), i, *cpumask;

	if (used > run->pool_cap)
		used = run->pool_cap;
	memset(st, 0, sizeof(*st));
	st->t = calloc((size_t)n, sizeof(*st->t));
	prev = calloc((size_t)n, sizeof(*prev));
	cpumask = calloc((size_t)n * 64, sizeof(uint64_t));	/* 4096 CPUs */
	st->iv = malloc(used * sizeof(*st->iv) + 1);
	if (!st->t || !prev || !cpumask || !st->iv)
		return -1;
	for (i = 0; i < used; i++) {
		const struct hgl_rec *r = &run->pool[i];
		struct hg_tstats *ts;

		if (!r->type || r->thread >= n)
			continue;	/* the unused tail of a chunk */
		st->nrecs++;
		ts = &st->t[r->thread];
		if (r->type == HGL_REC_WAKE)
			ts->nlat++;
		if (r->type == HGL_REC_JOB && (r->flags & HGL_JOB_CUT))
			ts->jobs_cut++;
		if (r->type != HGL_REC_INTERVAL)
			continue;
		st->iv[st->niv++] = r;
		ts->intervals++;
		ts->received += r->t1 - r->t0;
		cpumask[r->thread * 64 + (r->cpu & 4095) / 64] |= 1ULL << (r->cpu % 64);
		if (prev[r->thread]) {
			const struct hgl_rec *p = prev[r->thread];
			uint64_t g = r->t0 - p->t1;

			if (p->cpu != r->cpu)
				ts->migrations++;
			if (p->flags & (HGL_IV_YIELD | HGL_IV_SLEEP)) {
				ts->gaps_voluntary++;
			} else {
				ts->gaps++;
				ts->gap_sum += g;
				if (!ts->gap_min || g < ts->gap_min)
					ts->gap_min = g;
				if (g > ts->gap_max)
					ts->gap_max = g;
				ts->hist[log2_bucket((uint64_t)(hg_cyc_ms(run, g) * 1e6))]++;
			}
		}
		prev[r->thread] = r;
	}
	for (k = 0; k < n; k++) {
		struct hg_tstats *ts = &st->t[k];

		for (i = 0; i < 64; i++)
			ts->cpus_used += (uint64_t)__builtin_popcountll(cpumask[k * 64 + i]);
		if (ts->nlat && !(ts->lat = malloc(ts->nlat * sizeof(*ts->lat))))
			return -1;
		ts->nlat = 0;		/* counted again as the pass below fills it */
	}
	/* one more pass for every thread's lateness, not one per thread */
	for (i = 0; i < used; i++) {
		const struct hgl_rec *r = &run->pool[i];

		if (r->type == HGL_REC_WAKE && r->thread < n) {
			struct hg_tstats *ts = &st->t[r->thread];

			ts->lat[ts->nlat++] = (int64_t)r->t2;
		}
	}
	for (k = 0; k < n; k++)
		if (st->t[k].nlat)
			qsort(st->t[k].lat, st->t[k].nlat, sizeof(*st->t[k].lat), cmp_i64);
	qsort(st->iv, st->niv, sizeof(*st->iv), cmp_iv);
	free(prev);
	free(cpumask);
	return 0;
}

void hg_stats_free(struct hg_run *run, struct hg_stats *st)
{
	int k;

	for (k = 0; st->t && k < run->cfg->nthreads; k++)
		free(st->t[k].lat);
	free(st->t);
	free(st->iv);
}

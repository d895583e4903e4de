/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stats.h - per-thread figures computed from the records after the run.
 */
#ifndef HG_STATS_H
#define HG_STATS_H

#include "run.h"

#define HG_HIST_BUCKETS 40	/* log2 of the gap in ns: [2^k, 2^(k+1)) */

struct hg_tstats {
	uint64_t intervals, received;	/* received: cycles inside intervals */
	uint64_t gaps, gaps_voluntary;	/* between this thread's own intervals */
	uint64_t gap_min, gap_max, gap_sum;	/* involuntary gaps, cycles */
	uint64_t hist[HG_HIST_BUCKETS];
	uint64_t migrations, cpus_used;
	uint64_t nlat;
	int64_t *lat;			/* wake-up lateness, ns, sorted */
	uint64_t jobs_cut;
};

struct hg_stats {
	struct hg_tstats *t;
	const struct hgl_rec **iv;	/* all intervals, by start time */
	uint64_t niv, nrecs;
};

int hg_stats_compute(struct hg_run *run, struct hg_stats *st);
void hg_stats_free(struct hg_run *run, struct hg_stats *st);
int64_t hg_percentile(const int64_t *sorted, uint64_t n, double p);
double hg_cyc_ms(const struct hg_run *run, uint64_t cycles);
uint64_t hg_run_ns(const struct hg_run *run);
const char *hg_stopped_by(const struct hg_run *run);

#endif

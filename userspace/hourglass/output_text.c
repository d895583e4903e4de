// SPDX-License-Identifier: GPL-2.0
/*
 * output_text.c - the paper's text output (section 3.4): interval lines
 * "tid start end duration gap" in ms from the run's start, then tagged lines
 * (latlate:, thread N: missed..., summary:, warning:, error:) for scripts.
 */
#include <stdlib.h>
#include <string.h>
#include "stats.h"

static double rel_ms(const struct hg_run *run, uint64_t tsc)
{
	return ((double)(int64_t)(tsc - run->t0_tsc)) * 1e3 / run->hz;
}

static void print_intervals(struct hg_run *run, struct hg_stats *st, FILE *f, bool cycles)
{
	static uint64_t prev_end[4096];	/* per CPU: end of the last interval there */
	uint64_t i;

	memset(prev_end, 0, sizeof(prev_end));
	for (i = 0; i < st->niv; i++) {
		const struct hgl_rec *r = st->iv[i];
		unsigned int cpu = r->cpu & 4095;
		/* the gap before this interval on its CPU, as on the paper's uniprocessor */
		uint64_t prev = prev_end[cpu] ? prev_end[cpu] : run->t0_tsc;
		int64_t gap = (int64_t)(r->t0 - prev);

		if (cycles) {
			fprintf(f, "cycles: %u %llu %llu %llu %lld", r->thread,
				(unsigned long long)r->t0, (unsigned long long)r->t1,
				(unsigned long long)(r->t1 - r->t0), (long long)gap);
		} else {
			fprintf(f, "%u %.6f %.6f %.6f %.6f", r->thread, rel_ms(run, r->t0),
				rel_ms(run, r->t1), hg_cyc_ms(run, r->t1 - r->t0),
				(double)gap * 1e3 / run->hz);
		}
		if (run->cfg->cpu_column)
			fprintf(f, " %u", r->cpu);
		fputc('\n', f);
		if (r->t1 > prev_end[cpu])
			prev_end[cpu] = r->t1;
	}
}

static void print_thread_summary(struct hg_run *run, struct hg_stats *st, int k, FILE *f)
{
	struct hg_thread *t = &run->th[k];
	struct hg_tstats *ts = &st->t[k];
	const struct hg_thread_cfg *c = t->cfg;

	fprintf(f, "summary: thread %d tid %d workload %s policy %s prio %d cpu_ms %.6f intervals %llu"
		" gaps %llu voluntary %llu",
		k, t->tid, hg_workload_name(c->workload), hg_policy_name(c->sched.policy),
		c->sched.prio, hg_cyc_ms(run, ts->received), (unsigned long long)ts->intervals,
		(unsigned long long)ts->gaps, (unsigned long long)ts->gaps_voluntary);
	if (ts->gaps)
		fprintf(f, " gap_min_us %.3f gap_mean_us %.3f gap_max_us %.3f",
			hg_cyc_ms(run, ts->gap_min) * 1e3,
			hg_cyc_ms(run, ts->gap_sum) * 1e3 / (double)ts->gaps,
			hg_cyc_ms(run, ts->gap_max) * 1e3);
	fprintf(f, " migrations %llu cpus %llu", (unsigned long long)ts->migrations,
		(unsigned long long)ts->cpus_used);
	if (c->workload == HG_W_CPU_SCAN || c->workload == HG_W_CPU_SCAN_YIELD)
		fprintf(f, " work %llu", (unsigned long long)t->work_units);
	if (c->workload == HG_W_CPU_YIELD || c->workload == HG_W_CPU_SCAN_YIELD)
		fprintf(f, " yields %llu", (unsigned long long)t->yields);
	if (c->workload == HG_W_PERIODIC || c->workload == HG_W_CPU_PERIODIC)
		fprintf(f, " hit %llu missed %llu", (unsigned long long)t->jobs_hit,
			(unsigned long long)t->jobs_missed);
	if (ts->nlat)
		fprintf(f, " wakeups %llu late_min_us %.3f late_p50_us %.3f late_p99_us %.3f late_max_us %.3f",
			(unsigned long long)ts->nlat, hg_percentile(ts->lat, ts->nlat, 0) / 1e3,
			hg_percentile(ts->lat, ts->nlat, 50) / 1e3,
			hg_percentile(ts->lat, ts->nlat, 99) / 1e3,
			hg_percentile(ts->lat, ts->nlat, 100) / 1e3);
	if (t->dropped)
		fprintf(f, " dropped %llu", (unsigned long long)t->dropped);
	fputc('\n', f);
}

/*
 * print_hist - --hist: wake-up lateness per thread that woke up, as rtla
 * timerlat hist prints it (a column per thread, rows of buckets in us, the
 * empty rows left out), then over/count/min/avg/p99/max rows. Every line is
 * tagged "hist:" so that scripts reading the rest can skip it.
 */
static void print_hist(struct hg_run *run, struct hg_stats *st, FILE *f)
{
	const struct hg_config *cfg = run->cfg;
	uint64_t nb = (cfg->hist_max_ns + cfg->hist_bucket_ns - 1) / cfg->hist_bucket_ns, b, i;
	int n = cfg->nthreads, k, cols = 0, *col;
	uint64_t *count, *over, *under;

	col = calloc((size_t)n, sizeof(*col));
	for (k = 0; col && k < n; k++)
		if (st->t[k].nlat)
			col[cols++] = k;
	if (!col || !cols) {
		if (col)
			fprintf(f, "hist: no thread woke up on a timer (--hist counts LAT and PERIODIC wake-ups)\n");
		free(col);
		return;
	}
	count = calloc((size_t)(nb * (uint64_t)cols), sizeof(*count));
	over = calloc((size_t)cols, sizeof(*over));
	under = calloc((size_t)cols, sizeof(*under));
	if (!count || !over || !under) {
		fprintf(f, "hist: no memory for %llu buckets\n", (unsigned long long)nb);
		goto out;
	}
	for (k = 0; k < cols; k++) {
		const struct hg_tstats *ts = &st->t[col[k]];

		for (i = 0; i < ts->nlat; i++) {
			if (ts->lat[i] < 0)
				under[k]++;	/* early: the RTC's grid, see -i RTC */
			else if ((uint64_t)ts->lat[i] >= nb * cfg->hist_bucket_ns)
				over[k]++;
			else
				count[(uint64_t)ts->lat[i] / cfg->hist_bucket_ns * (uint64_t)cols + (uint64_t)k]++;
		}
	}
	fprintf(f, "hist: # wake-up lateness, microseconds, buckets of %g us up to %g us (--hist)\n",
		cfg->hist_bucket_ns / 1e3, (double)(nb * cfg->hist_bucket_ns) / 1e3);
	fprintf(f, "hist: Index");
	for (k = 0; k < cols; k++)
		fprintf(f, "   Thr-%03d", col[k]);
	fputc('\n', f);
	for (b = 0; b < nb; b++) {
		uint64_t any = 0;

		for (k = 0; k < cols; k++)
			any |= count[b * (uint64_t)cols + (uint64_t)k];
		if (!any)
			continue;
		fprintf(f, "hist: %-5g", (double)(b * cfg->hist_bucket_ns) / 1e3);
		for (k = 0; k < cols; k++)
			fprintf(f, " %9llu", (unsigned long long)count[b * (uint64_t)cols + (uint64_t)k]);
		fputc('\n', f);
	}
	for (k = 0; k < cols; k++)
		if (under[k])
			break;
	if (k < cols) {
		fprintf(f, "hist: under");
		for (k = 0; k < cols; k++)
			fprintf(f, " %9llu", (unsigned long long)under[k]);
		fputc('\n', f);
	}
	fprintf(f, "hist: over ");
	for (k = 0; k < cols; k++)
		fprintf(f, " %9llu", (unsigned long long)over[k]);
	fprintf(f, "\nhist: count");
	for (k = 0; k < cols; k++)
		fprintf(f, " %9llu", (unsigned long long)st->t[col[k]].nlat);
	fprintf(f, "\nhist: min  ");
	for (k = 0; k < cols; k++)
		fprintf(f, " %9.3f", hg_percentile(st->t[col[k]].lat, st->t[col[k]].nlat, 0) / 1e3);
	fprintf(f, "\nhist: avg  ");
	for (k = 0; k < cols; k++) {
		const struct hg_tstats *ts = &st->t[col[k]];
		double sum = 0;

		for (i = 0; i < ts->nlat; i++)
			sum += (double)ts->lat[i];
		fprintf(f, " %9.3f", sum / (double)ts->nlat / 1e3);
	}
	fprintf(f, "\nhist: p99  ");
	for (k = 0; k < cols; k++)
		fprintf(f, " %9.3f", hg_percentile(st->t[col[k]].lat, st->t[col[k]].nlat, 99) / 1e3);
	fprintf(f, "\nhist: max  ");
	for (k = 0; k < cols; k++)
		fprintf(f, " %9.3f", hg_percentile(st->t[col[k]].lat, st->t[col[k]].nlat, 100) / 1e3);
	fputc('\n', f);
out:
	free(count);
	free(over);
	free(under);
	free(col);
}

/* print_trip - the sample that passed -b, tagged for scripts */
static void print_trip(struct hg_run *run, FILE *f)
{
	const struct hg_trip *tr = &run->trip;

	fprintf(f, "break: thread %d %s %.3f us threshold_us %.3f at_ms %.6f until_ms %.6f cpu %u\n",
		tr->thread, tr->kind == HG_TRIP_GAP ? "gap" : "lateness", tr->value_ns / 1e3,
		run->cfg->break_ns / 1e3, rel_ms(run, tr->t0), rel_ms(run, tr->t1), tr->cpu);
}

void hg_write_text(struct hg_run *run, struct hg_stats *st, FILE *f)
{
	struct hg_config *cfg = run->cfg;
	uint64_t dropped = 0, i;
	int k;

	fprintf(f, "info: hourglass %s on Linux %s (PREEMPT_RT %s), %d CPUs online\n", HG_VERSION,
		run->kernel, run->preempt_rt ? "yes" : "no", run->cpus_online);
	fprintf(f, "info: TSC %.6f MHz (invariant %s, clocksource %s), loop %.3f us, GAP %.3f us (%s)\n",
		run->hz / 1e6, run->tsc.invariant ? "yes" : "no", run->tsc.clocksource,
		run->loop_cycles * 1e6 / run->hz, (double)run->gap_cycles * 1e6 / run->hz,
		cfg->gap_override_ns >= 0 ? "--gap" : "twice the loop");
	fputs("info: command:", f);
	for (k = 0; k < cfg->argc; k++)
		fprintf(f, " %s", cfg->argv[k]);
	fputc('\n', f);

	/* -q: the paper's per-sample lines are the bulk (21 294 lines for 2 s); the summary stays */
	if (!cfg->quiet) {
		print_intervals(run, st, f, false);
		if (cfg->raw_cycles)
			print_intervals(run, st, f, true);
		for (i = 0; i < atomic_load(&run->pool_used) && i < run->pool_cap; i++) {
			const struct hgl_rec *r = &run->pool[i];

			if (r->type == HGL_REC_WAKE && (r->flags & HGL_WAKE_LAT))
				fprintf(f, "latlate: %.6f\n", (double)(int64_t)r->t2 / 1e3);
		}
	}
	for (k = 0; k < cfg->nthreads; k++) {
		enum hg_workload w = cfg->thread[k].workload;

		if (w == HG_W_PERIODIC || w == HG_W_CPU_PERIODIC)
			fprintf(f, "thread %d: missed %llu deadlines, hit %llu\n", k,
				(unsigned long long)run->th[k].jobs_missed,
				(unsigned long long)run->th[k].jobs_hit);
	}
	if (cfg->hist_max_ns)
		print_hist(run, st, f);
	for (k = 0; k < cfg->nthreads; k++) {
		print_thread_summary(run, st, k, f);
		dropped += run->th[k].dropped;
	}
	fprintf(f, "summary: run duration_ms %.3f records %llu capacity %llu dropped %llu complete %s",
		(double)hg_run_ns(run) / 1e6, (unsigned long long)st->nrecs,
		(unsigned long long)run->pool_cap, (unsigned long long)dropped,
		dropped || run->stop_signal ? "no" : "yes");
	if (hg_stopped_by(run))
		fprintf(f, " stopped_by %s asked_ms %.3f", hg_stopped_by(run), (double)cfg->duration_ns / 1e6);
	fputc('\n', f);
	if (run->trip.kind)
		print_trip(run, f);
	for (k = 0; k < run->nwarn; k++)
		fprintf(f, "warning: %s\n", run->warn[k]);
	if (dropped)
		fprintf(f, "error: the trace buffer filled: %llu records were not kept, the trace above is incomplete (raise -e, now %llu)\n",
			(unsigned long long)dropped, (unsigned long long)cfg->max_records);
	if (run->stop_signal)
		fprintf(f, "error: interrupted by %s at %.3f ms of %.3f ms: the output holds what was measured until then\n",
			hg_stopped_by(run), (double)hg_run_ns(run) / 1e6, (double)cfg->duration_ns / 1e6);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * output_text.c - the paper's text output (section 3.4): interval lines
 * "tid start end duration gap" in ms from the run's start, then tagged lines
 * (latlate:, thread N: missed..., summary:, warning:, error:) for scripts.
 */
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

	print_intervals(run, st, f, false);
	if (cfg->raw_cycles)
		print_intervals(run, st, f, true);
	for (i = 0; i < atomic_load(&run->pool_used) && i < run->pool_cap; i++) {
		const struct hgl_rec *r = &run->pool[i];

		if (r->type == HGL_REC_WAKE && (r->flags & HGL_WAKE_LAT))
			fprintf(f, "latlate: %.6f\n", (double)(int64_t)r->t2 / 1e3);
	}
	for (k = 0; k < cfg->nthreads; k++) {
		enum hg_workload w = cfg->thread[k].workload;

		if (w == HG_W_PERIODIC || w == HG_W_CPU_PERIODIC)
			fprintf(f, "thread %d: missed %llu deadlines, hit %llu\n", k,
				(unsigned long long)run->th[k].jobs_missed,
				(unsigned long long)run->th[k].jobs_hit);
	}
	for (k = 0; k < cfg->nthreads; k++) {
		print_thread_summary(run, st, k, f);
		dropped += run->th[k].dropped;
	}
	fprintf(f, "summary: run duration_ms %.3f records %llu capacity %llu dropped %llu complete %s\n",
		(double)cfg->duration_ns / 1e6, (unsigned long long)st->nrecs,
		(unsigned long long)run->pool_cap, (unsigned long long)dropped, dropped ? "no" : "yes");
	for (k = 0; k < run->nwarn; k++)
		fprintf(f, "warning: %s\n", run->warn[k]);
	if (dropped)
		fprintf(f, "error: the trace buffer filled: %llu records were not kept, the trace above is incomplete (raise -e, now %llu)\n",
			(unsigned long long)dropped, (unsigned long long)cfg->max_records);
}

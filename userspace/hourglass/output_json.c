// SPDX-License-Identifier: GPL-2.0
/*
 * output_json.c - the JSON summary: provenance, calibration and per-thread
 * figures. The same text is the "info" section of the binary trace.
 */
#include <string.h>
#include "hg_cpulist.h"
#include "hg_jsonw.h"
#include "stats.h"

#define HG_JSON_VERSION 1

static void cpulist(const cpu_set_t *set, char *buf, size_t len)
{
	struct hg_cpuset cpus = { 0 };
	int c;

	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, set))
			hg_cpuset_add(&cpus, c);
	hg_cpulist_format(&cpus, buf, len);
	hg_cpuset_free(&cpus);
}

/* put_sysctl_us - a number from /proc/sys, or null when it cannot be read */
static void put_sysctl_us(struct jsonw *w, const char *key, const char *path)
{
	FILE *f = fopen(path, "r");
	long long v;

	if (f && fscanf(f, "%lld", &v) == 1)
		jw_int(w, key, v);
	else
		jw_null(w, key);
	if (f)
		fclose(f);
}

/* put_features - the scheduler's features, one string each as debugfs lists them; null when
 * they could not be read */
static void put_features(struct jsonw *w, const char *list)
{
	char name[128];
	const char *p = list;
	int n;

	if (!*list) {
		jw_null(w, "sched_features");
		return;
	}
	jw_arr(w, "sched_features");
	while (sscanf(p, " %127s%n", name, &n) == 1) {
		jw_str(w, NULL, name);
		p += n;
	}
	jw_end_arr(w);
}

/* begin - the document, pretty-printed: one member a line */
static void begin(struct jsonw *w, FILE *f)
{
	jw_begin(w, f);
	w->pretty = true;
	jw_obj(w, NULL);
}

/* thread_config - what the command line asked of thread @k. */
static void thread_config(struct jsonw *w, const struct hg_thread_cfg *c)
{
	char buf[256];

	jw_str(w, "workload", hg_workload_name(c->workload));
	if (c->amount_ns)
		jw_uint(w, "amount_ns", c->amount_ns);
	if (c->period_ns)
		jw_uint(w, "period_ns", c->period_ns);
	if (c->scan_kb)
		jw_uint(w, "scan_kb", c->scan_kb);
	jw_str(w, "timer", hg_timer_name(c->timer));
	jw_str(w, "policy", hg_policy_name(c->sched.policy));
	jw_int(w, "priority", c->sched.prio);
	jw_str(w, "level", c->sched.level);
	if (c->sched.policy == SCHED_DEADLINE) {
		jw_obj(w, "reservation");
		jw_str(w, "kind", c->sched.dl_soft ? "soft" : "hard");
		jw_uint(w, "runtime_ns", c->sched.dl_runtime_ns);
		jw_uint(w, "period_ns", c->sched.dl_period_ns);
		jw_end_obj(w);
	}
	if (c->has_affinity) {
		cpulist(&c->affinity, buf, sizeof(buf));
		jw_str(w, "affinity", buf);
	} else {
		jw_null(w, "affinity");
	}
	jw_uint(w, "start_ns", c->start_ns);
	jw_uint(w, "finish_ns", c->finish_ns);
	if (c->copy_of >= 0)
		jw_int(w, "copy_of", c->copy_of);	/* --smp: thread copy_of, on its own CPU */
}

/* options - the run-wide options beyond the paper's, as asked (dry run and summary alike) */
static void options(struct jsonw *w, const struct hg_config *cfg)
{
	char buf[256];

	jw_bool(w, "quiet", cfg->quiet);
	if (cfg->break_ns)
		jw_uint(w, "breaktrace_ns", cfg->break_ns);
	else
		jw_null(w, "breaktrace_ns");
	if (cfg->hist_max_ns) {
		jw_obj(w, "hist");
		jw_uint(w, "max_ns", cfg->hist_max_ns);
		jw_uint(w, "bucket_ns", cfg->hist_bucket_ns);
		jw_end_obj(w);
	}
	if (cfg->smp) {
		jw_obj(w, "smp");
		cpulist(&cfg->smp_cpus, buf, sizeof(buf));
		jw_str(w, "cpus", buf);
		jw_int(w, "threads_per_cpu", cfg->nthreads_given);
		jw_end_obj(w);
	}
}

static void command(struct jsonw *w, struct hg_config *cfg)
{
	int k;

	jw_arr(w, "command");
	for (k = 0; k < cfg->argc; k++)
		jw_str(w, NULL, cfg->argv[k]);
	jw_end_arr(w);
}

void hg_dry_run(struct hg_config *cfg, FILE *f)
{
	struct jsonw w;
	int k;

	begin(&w, f);
	jw_str(&w, "tool", "hourglass");
	jw_str(&w, "version", HG_VERSION);
	command(&w, cfg);
	jw_int(&w, "threads_n", cfg->nthreads);
	jw_uint(&w, "duration_ns", cfg->duration_ns);
	jw_uint(&w, "max_records", cfg->max_records);
	if (cfg->gap_override_ns >= 0)
		jw_int(&w, "gap_ns", cfg->gap_override_ns);
	else
		jw_null(&w, "gap_ns");
	jw_bool(&w, "raw_cycles", cfg->raw_cycles);
	jw_bool(&w, "fallback", cfg->fallback);
	options(&w, cfg);
	/* what the run would hold: -1 none (the run then says whether it could) */
	jw_int(&w, "dma_latency_us", cfg->dma_latency_us);
	jw_bool(&w, "dma_latency_given", cfg->dma_latency_given);
	jw_arr(&w, "threads");
	for (k = 0; k < cfg->nthreads; k++) {
		jw_obj(&w, NULL);
		jw_int(&w, "thread", k);
		thread_config(&w, &cfg->thread[k]);
		jw_end_obj(&w);
	}
	jw_end_arr(&w);
	jw_end_obj(&w);
}

static void latency(struct jsonw *w, struct hg_tstats *ts)
{
	static const struct { const char *k; double p; } pc[] = {
		{ "min", 0 }, { "p50", 50 }, { "p90", 90 }, { "p99", 99 }, { "p999", 99.9 },
		{ "max", 100 },
	};
	double sum = 0;
	size_t i;

	jw_obj(w, "lateness_ns");
	jw_uint(w, "count", ts->nlat);
	for (i = 0; i < sizeof(pc) / sizeof(pc[0]); i++)
		jw_int(w, pc[i].k, hg_percentile(ts->lat, ts->nlat, pc[i].p));
	for (i = 0; i < ts->nlat; i++)
		sum += (double)ts->lat[i];
	jw_num(w, "mean", sum / (double)ts->nlat);
	jw_end_obj(w);
}

static void thread_result(struct jsonw *w, struct hg_run *run, struct hg_stats *st, int k)
{
	struct hg_thread *t = &run->th[k];
	struct hg_tstats *ts = &st->t[k];
	enum hg_workload wl = t->cfg->workload;
	int b, top = 0;

	jw_int(w, "tid", t->tid);
	jw_str(w, "fallback", t->fallback[0] ? t->fallback : NULL);
	jw_uint(w, "first_tsc", t->first_tsc);
	jw_uint(w, "last_tsc", t->last_tsc);
	jw_uint(w, "cpu_time_ns", (uint64_t)(hg_cyc_ms(run, ts->received) * 1e6));
	jw_uint(w, "intervals", ts->intervals);
	jw_uint(w, "gaps", ts->gaps);
	jw_uint(w, "gaps_voluntary", ts->gaps_voluntary);
	if (ts->gaps) {
		jw_num(w, "gap_min_ns", hg_cyc_ms(run, ts->gap_min) * 1e6);
		jw_num(w, "gap_mean_ns", hg_cyc_ms(run, ts->gap_sum) * 1e6 / (double)ts->gaps);
		jw_num(w, "gap_max_ns", hg_cyc_ms(run, ts->gap_max) * 1e6);
	}
	for (b = 0; b < HG_HIST_BUCKETS; b++)
		if (ts->hist[b])
			top = b + 1;
	/* bucket b counts gaps of [2^b, 2^(b+1)) ns */
	jw_arr(w, "gap_hist_log2_ns");
	for (b = 0; b < top; b++)
		jw_uint(w, NULL, ts->hist[b]);
	jw_end_arr(w);
	jw_uint(w, "migrations", ts->migrations);
	jw_uint(w, "cpus_used", ts->cpus_used);
	if (wl == HG_W_CPU_SCAN || wl == HG_W_CPU_SCAN_YIELD)
		jw_uint(w, "work_units", t->work_units);
	if (wl == HG_W_CPU_YIELD || wl == HG_W_CPU_SCAN_YIELD)
		jw_uint(w, "yields", t->yields);
	if (wl == HG_W_PERIODIC || wl == HG_W_CPU_PERIODIC) {
		jw_obj(w, "deadlines");
		jw_uint(w, "hit", t->jobs_hit);
		jw_uint(w, "missed", t->jobs_missed);
		jw_uint(w, "cut_by_end", ts->jobs_cut);
		jw_end_obj(w);
	}
	if (ts->nlat)
		latency(w, ts);
	jw_uint(w, "dropped_records", t->dropped);
	if ((t->acct0.ok & t->acct1.ok) == 3) {
		/* the kernel's own accounting over [tsc0, tsc1] */
		jw_obj(w, "accounting");
		jw_uint(w, "tsc0", t->acct0.tsc);
		jw_uint(w, "tsc1", t->acct1.tsc);
		jw_uint(w, "thread_cputime_ns", t->acct1.cputime_ns - t->acct0.cputime_ns);
		jw_uint(w, "schedstat_on_cpu_ns", t->acct1.sched_ns - t->acct0.sched_ns);
		jw_uint(w, "schedstat_wait_ns", t->acct1.wait_ns - t->acct0.wait_ns);
		jw_uint(w, "schedstat_slices", t->acct1.slices - t->acct0.slices);
		jw_uint(w, "rusage_user_ns", t->acct1.utime_ns - t->acct0.utime_ns);
		jw_uint(w, "rusage_system_ns", t->acct1.stime_ns - t->acct0.stime_ns);
		jw_uint(w, "rusage_voluntary_switches", t->acct1.nvcsw - t->acct0.nvcsw);
		jw_uint(w, "rusage_involuntary_switches", t->acct1.nivcsw - t->acct0.nivcsw);
		jw_end_obj(w);
	}
}

void hg_write_json(struct hg_run *run, struct hg_stats *st, FILE *f)
{
	struct hg_config *cfg = run->cfg;
	uint64_t dropped = 0;
	struct jsonw w;
	int k;

	for (k = 0; k < cfg->nthreads; k++)
		dropped += run->th[k].dropped;
	begin(&w, f);
	jw_int(&w, "file_version", HG_JSON_VERSION);
	jw_str(&w, "tool", "hourglass");
	jw_str(&w, "version", HG_VERSION);
	command(&w, cfg);
	/* interrupted: what it has is right, but the run is not all there */
	jw_bool(&w, "complete", !dropped && !run->stop_signal);
	jw_str(&w, "interrupted", run->stop_signal ? hg_stopped_by(run) : NULL);
	jw_str(&w, "stopped_by", hg_stopped_by(run));
	jw_uint(&w, "start_unix_ns", run->start_wall_ns);
	jw_obj(&w, "kernel");
	jw_str(&w, "release", run->kernel);
	jw_bool(&w, "preempt_rt", run->preempt_rt);
	jw_int(&w, "cpus_online", run->cpus_online);
	/* RT throttling: real-time tasks may use rt_runtime of every rt_period; the merger's
	 * inference needs it to tell a throttled real-time thread from an interrupted one */
	put_sysctl_us(&w, "sched_rt_runtime_us", "/proc/sys/kernel/sched_rt_runtime_us");
	put_sysctl_us(&w, "sched_rt_period_us", "/proc/sys/kernel/sched_rt_period_us");
	/* the scheduler's features (HRTICK: a timer of its own ends each slice, beside the
	 * tick) and its base slice, read from debugfs before the run; null when unreadable */
	put_features(&w, run->sched_features);
	if (run->sched_base_slice_ns > 0)
		jw_int(&w, "sched_base_slice_ns", run->sched_base_slice_ns);
	else
		jw_null(&w, "sched_base_slice_ns");
	jw_end_obj(&w);
	jw_obj(&w, "tsc");
	jw_num(&w, "hz", run->hz);
	jw_num(&w, "hz_over_run", run->hz_over_run);
	jw_bool(&w, "invariant", run->tsc.invariant);
	jw_bool(&w, "constant", run->tsc.constant);
	jw_bool(&w, "nonstop", run->tsc.nonstop);
	jw_bool(&w, "rdtscp", run->tsc.has_rdtscp);
	jw_str(&w, "clocksource", run->tsc.clocksource);
	if (run->tsc.hypervisor[0])
		jw_str(&w, "hypervisor", run->tsc.hypervisor);
	else
		jw_null(&w, "hypervisor");
	jw_end_obj(&w);
	jw_num(&w, "loop_ns", run->loop_cycles * 1e9 / run->hz);
	jw_uint(&w, "loop_cycles", (uint64_t)run->loop_cycles);
	jw_uint(&w, "syscall_cycles", run->syscall_cycles);
	jw_num(&w, "gap_ns", (double)run->gap_cycles * 1e9 / run->hz);
	jw_uint(&w, "gap_cycles", run->gap_cycles);
	jw_str(&w, "gap_source", cfg->gap_override_ns >= 0 ? "option" : "calibrated");
	jw_uint(&w, "t0_tsc", run->t0_tsc);
	jw_uint(&w, "t0_monotonic_ns", run->t0_mono);
	/* a run stopped early ends where it stopped: the merger's window and shares follow */
	jw_uint(&w, "end_tsc", hg_stopped_by(run) ? run->t0_tsc + (uint64_t)((double)hg_run_ns(run) * run->hz / 1e9)
						  : run->end_tsc);
	jw_uint(&w, "duration_ns", hg_run_ns(run));
	jw_uint(&w, "duration_asked_ns", cfg->duration_ns);
	options(&w, cfg);
	if (run->trip.kind) {
		const struct hg_trip *tr = &run->trip;

		jw_obj(&w, "breaktrace");
		jw_uint(&w, "threshold_ns", cfg->break_ns);
		jw_int(&w, "thread", tr->thread);
		jw_str(&w, "kind", tr->kind == HG_TRIP_GAP ? "gap" : "lateness");
		jw_uint(&w, "value_ns", tr->value_ns);
		jw_uint(&w, "t0_tsc", tr->t0);
		jw_uint(&w, "t1_tsc", tr->t1);
		jw_uint(&w, "cpu", tr->cpu);
		jw_bool(&w, "trace_marker", run->marker_written);
		jw_int(&w, "recorder_pid", run->recorder_pid);
		jw_end_obj(&w);
	}
	if (run->dma_held_us >= 0)
		jw_int(&w, "cpu_dma_latency_us", run->dma_held_us);
	else
		jw_null(&w, "cpu_dma_latency_us");
	jw_bool(&w, "mlocked", run->mlocked);
	jw_obj(&w, "records");
	jw_uint(&w, "capacity", run->pool_cap);
	jw_uint(&w, "used", st->nrecs);
	jw_uint(&w, "dropped", dropped);
	jw_end_obj(&w);
	jw_arr(&w, "warnings");
	for (k = 0; k < run->nwarn; k++)
		jw_str(&w, NULL, run->warn[k]);
	jw_end_arr(&w);
	jw_arr(&w, "threads");
	for (k = 0; k < cfg->nthreads; k++) {
		jw_obj(&w, NULL);
		jw_int(&w, "thread", k);
		thread_config(&w, &cfg->thread[k]);
		thread_result(&w, run, st, k);
		jw_end_obj(&w);
	}
	jw_end_arr(&w);
	jw_end_obj(&w);
}

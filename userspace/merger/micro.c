// SPDX-License-Identifier: GPL-2.0
/*
 * micro.c - each hourglass thread's CPU time, five ways, over the same
 * window (seed 002: tick-sampled accounting under-reports, and so may user
 * space). hourglass reads schedstat, getrusage and its thread CPU clock with
 * the TSC just before each thread starts and just after it ends; the kernel's
 * sched_switch events give the time on CPU over exactly that window:
 *
 *   kernel     on CPU between its switches in and out (the ground truth), each
 *              side where the scheduler switched it when the recording says
 *              (ABI 1.2's lags, sweep.c), else at the tracepoint
 *   handlers   the part of it in interrupt handlers while it was current
 *   intervals  what hourglass itself saw: the sum of its intervals
 *   cputime    CLOCK_THREAD_CPUTIME_ID
 *   schedstat  /proc/<tid>/schedstat
 *   rusage     getrusage(RUSAGE_THREAD), user + system
 */
#include <stdlib.h>

#include "engine.h"
#include "hg_jsonw.h"

struct micro_thread {
	int running;
	int64_t since, total;
	uint64_t ins, handlers;
};

struct micro {
	struct run *r;
	struct infer *in;
	struct micro_thread *th;
};

struct micro *micro_new(struct run *r, struct infer *in)
{
	struct micro *m = xcalloc(1, sizeof(*m));
	int k;

	m->r = r;
	m->in = in;
	m->th = xcalloc(r->nthreads + 1, sizeof(*m->th));
	/* the thread runs when its window opens: hourglass reads its accounting from the thread */
	for (k = 0; k < r->nthreads; k++) {
		m->th[k].running = 1;
		m->th[k].since = r->info->threads[k].acct_tsc0;
	}
	return m;
}

void micro_switch(struct micro *m, int thread, int64_t tsc, int in)
{
	const struct hgl_thread *t = &m->r->info->threads[thread];
	struct micro_thread *x = &m->th[thread];

	if (!t->has_accounting || tsc < t->acct_tsc0 || tsc > t->acct_tsc1)
		return;
	if (in) {
		x->ins++;
		x->since = tsc;
		x->running = 1;
	} else if (x->running) {
		x->total += tsc - x->since;
		x->running = 0;
	}
}

void micro_handlers(struct micro *m, int thread, uint64_t cycles)
{
	m->th[thread].handlers += cycles;
}

static void vs(struct jsonw *w, const char *key, double v, double kern)
{
	if (kern > 0)
		jw_numf(w, key, v / kern - 1, 5);
	else
		jw_null(w, key);
}

void micro_report(struct micro *m, struct jsonw *w)
{
	struct run *r = m->r;
	double ns = 1e9 / r->hz;
	int k, any = 0;

	for (k = 0; k < r->nthreads; k++)
		any |= r->info->threads[k].has_accounting && r->th[k].tid;
	if (!any) {
		jw_null(w, "microstates");
		return;
	}
	jw_arr(w, "microstates");
	for (k = 0; k < r->nthreads; k++) {
		const struct hgl_thread *t = &r->info->threads[k];
		struct micro_thread *x = &m->th[k];
		double kern, rus;
		int64_t first, last;
		uint64_t nint;

		if (!t->has_accounting || !r->th[k].tid)
			continue;
		/* a thread that sleeps between wake-ups (LAT) records no intervals: nothing to compare */
		infer_thread_span(m->in, k, &first, &last, &nint);
		kern = (double)(x->total + (x->running ? t->acct_tsc1 - x->since : 0)) * ns;
		rus = t->rusage_user_ns + t->rusage_system_ns;
		jw_obj(w, NULL);
		jw_int(w, "thread", k);
		jw_str(w, "name", r->th[k].name);
		jw_uint(w, "tid", r->th[k].tid);
		jw_numf(w, "window_ms", (double)(t->acct_tsc1 - t->acct_tsc0) * ns / 1e6, 3);
		jw_numf(w, "kernel_ns", kern, 0);
		jw_numf(w, "handlers_ns", (double)x->handlers * ns, 0);
		if (nint)
			jw_numf(w, "intervals_ns", t->cpu_time_ns, 0);
		else
			jw_null(w, "intervals_ns");
		jw_numf(w, "cputime_ns", t->thread_cputime_ns, 0);
		jw_numf(w, "schedstat_ns", t->schedstat_on_cpu_ns, 0);
		jw_numf(w, "rusage_ns", rus, 0);
		vs(w, "intervals_vs_kernel", t->cpu_time_ns, nint ? kern : 0);
		vs(w, "cputime_vs_kernel", t->thread_cputime_ns, kern);
		vs(w, "schedstat_vs_kernel", t->schedstat_on_cpu_ns, kern);
		vs(w, "rusage_vs_kernel", rus, kern);
		jw_uint(w, "kernel_switches_in", x->ins);
		jw_numf(w, "schedstat_slices", t->schedstat_slices, 0);
		jw_end_obj(w);
	}
	jw_end_arr(w);
}

void micro_free(struct micro *m)
{
	if (!m)
		return;
	free(m->th);
	free(m);
}

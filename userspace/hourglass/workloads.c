// SPDX-License-Identifier: GPL-2.0
/*
 * workloads.c - the thread execution models of the paper's section 3.2.
 *
 * Every thread sets itself up (CPUs, policy, timer, working set), waits for
 * all others, sleeps until its start time and runs its model until its end
 * time. Nothing here prints or writes a file: output comes after the run.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "spin.h"
#include "timers.h"

uint64_t hg_ns_to_cycles(const struct hg_run *run, uint64_t ns)
{
	return (uint64_t)((double)ns * run->hz / 1e9);
}

/* hg_rec_refill - take the next chunk of the shared pool; count a drop if none. */
struct hgl_rec *hg_rec_refill(struct hg_thread *t)
{
	struct hg_run *run = t->run;
	uint64_t first, n;

	/* once the pool is spent, count drops without touching the shared line */
	if (t->pool_spent || (first = atomic_fetch_add(&run->pool_used, HG_CHUNK)) >= run->pool_cap) {
		t->pool_spent = true;
		t->dropped++;
		return NULL;
	}
	n = run->pool_cap - first < HG_CHUNK ? run->pool_cap - first : HG_CHUNK;
	t->rec = run->pool + first;
	t->rec_end = t->rec + n;
	return t->rec++;
}

/*
 * hg_trip - a sample passed -b: the first one stops the run. What the outside
 * must see comes first and fast: the recorder above us freezes the kernel's
 * recording (hgtrace record, on SIGUSR1), then the marker goes into ftrace's
 * buffer; then the threads are told, and the monitor.
 */
void hg_trip(struct hg_thread *t, int kind, uint64_t t0, uint64_t t1, uint64_t value_ns,
	     uint32_t cpu)
{
	struct hg_run *run = t->run;
	int none = 0;
	char msg[200];
	int n;

	if (!atomic_compare_exchange_strong(&run->tripped, &none, 1))
		return;
	if (run->recorder_pid > 0)
		kill(run->recorder_pid, SIGUSR1);
	run->trip = (struct hg_trip){ .kind = kind, .thread = t->idx, .t0 = t0, .t1 = t1,
				      .value_ns = value_ns, .cpu = cpu };
	run->stop_tsc = t1;
	if (run->marker_fd >= 0) {
		n = snprintf(msg, sizeof(msg), "hourglass: -b %.3f us passed: thread %d %s %.3f us on CPU %u, TSC %llu..%llu\n",
			     run->cfg->break_ns / 1e3, t->idx, kind == HG_TRIP_GAP ? "gap" : "wake-up late by",
			     value_ns / 1e3, cpu, (unsigned long long)t0, (unsigned long long)t1);
		run->marker_written = write(run->marker_fd, msg, (size_t)n) == n;
	}
	atomic_store(&run->stop, 1);
	pthread_kill(run->main_thread, HG_WAKE_SIGNAL);
}

/*
 * hg_gap_seen - a gap from @last to @now: the live line's figures, and -b.
 * Out of line and cold: the polling loop stays the size it was.
 */
void hg_gap_seen(struct hg_thread *t, uint64_t last, uint64_t now, uint32_t cpu)
{
	uint64_t g = now - last;

	hg_live_set(t->live_gaps, t->live_gaps + 1);
	if (g > t->live_gap_max)
		hg_live_set(t->live_gap_max, g);
	if (t->run->break_cycles && g > t->run->break_cycles)
		hg_trip(t, HG_TRIP_GAP, last, now, (uint64_t)((double)g * 1e9 / t->run->hz), cpu);
}

/* wake_record - note when a timer wake-up was due and when it happened. */
static void wake_record(struct hg_thread *t, uint64_t intended_mono, uint8_t flags,
			uint64_t *tsc_out, uint64_t *rel_tsc)
{
	uint64_t tsc, mono;
	uint32_t cpu = (uint32_t)hg_tsc_cpu(&t->run->tsc, &tsc);
	int64_t late;

	mono = hg_clock_ns(CLOCK_MONOTONIC);
	late = (int64_t)(mono - intended_mono);
	/* convert the lateness, not the absolute time: no drift between clocks */
	*rel_tsc = late >= 0 ? tsc - hg_ns_to_cycles(t->run, (uint64_t)late)
			     : tsc + hg_ns_to_cycles(t->run, (uint64_t)-late);
	hg_rec_put(t, HGL_REC_WAKE, flags | (uint8_t)(t->cfg->timer + 1), *rel_tsc, tsc,
		   (uint64_t)late, cpu);
	t->wakes++;
	hg_live_set(t->live_wakes, t->wakes);
	if (late > 0 && (uint64_t)late > t->live_late_max)
		hg_live_set(t->live_late_max, (uint64_t)late);
	if (t->run->cfg->break_ns && late > 0 && (uint64_t)late > t->run->cfg->break_ns)
		hg_trip(t, HG_TRIP_WAKE, *rel_tsc, tsc, (uint64_t)late, cpu);
	*tsc_out = tsc;
}

static void run_cpu(struct hg_thread *t, struct hg_spin *s, uint64_t end, bool scan,
		    uint64_t yield_cycles)
{
	uint64_t need;

	for (;;) {
		need = yield_cycles ? yield_cycles : UINT64_MAX;
		if (scan)
			hg_spin(t, s, &need, end, true, &t->work_units);
		else
			hg_spin(t, s, &need, end, false, NULL);
		if (s->last >= end || hg_stopping(t->run))
			break;
		/* received its amount: yield the rest of the slice */
		hg_spin_close(t, s, HGL_IV_YIELD);
		t->yields++;
		sched_yield();
		hg_spin_open(t, s);
	}
}

/* run_cpu_periodic - never blocks: a job starts as soon as the last one ends. */
static void run_cpu_periodic(struct hg_thread *t, struct hg_spin *s, uint64_t end)
{
	uint64_t amount = hg_ns_to_cycles(t->run, t->cfg->amount_ns);
	uint64_t period = hg_ns_to_cycles(t->run, t->cfg->period_ns);
	uint64_t rel = s->start, deadline, need;

	for (;;) {
		deadline = rel + period;
		need = amount;
		hg_spin(t, s, &need, deadline < end ? deadline : end, false, NULL);
		if (!need) {
			t->jobs_hit++;
			hg_rec_put(t, HGL_REC_JOB, 0, rel, s->last, deadline, s->cpu);
			rel = s->last;
		} else if (s->last >= end || hg_stopping(t->run)) {
			hg_rec_put(t, HGL_REC_JOB, HGL_JOB_CUT, rel, 0, deadline, s->cpu);
			break;
		} else {
			t->jobs_missed++;
			hg_rec_put(t, HGL_REC_JOB, HGL_JOB_MISSED, rel, 0, deadline, s->cpu);
			rel = deadline;
		}
		if (hg_stopping(t->run))
			break;		/* between two jobs: none is cut */
	}
}

/*
 * run_periodic - a job of @amount CPU every @period, sleeping on the timer
 * between jobs. A job not done by its deadline is a miss and is dropped:
 * the next one starts at once, so every period is counted exactly once.
 */
static int run_periodic(struct hg_thread *t, struct hg_spin *s, struct hg_timer *tm,
			uint64_t end)
{
	struct hg_run *run = t->run;
	uint64_t amount = hg_ns_to_cycles(run, t->cfg->amount_ns);
	uint64_t period = hg_ns_to_cycles(run, t->cfg->period_ns);
	uint64_t rel_mono = run->t0_mono + t->cfg->start_ns, intended, rel, deadline, need, tsc;
	bool first = true;

	for (;;) {
		int r = hg_timer_sleep_until(tm, rel_mono, &intended);

		if (r)
			return r < 0 ? -1 : 0;	/* 1: the run stops early, asleep between jobs */
		wake_record(t, intended, 0, &tsc, &rel);
		if (first)
			t->first_tsc = tsc;
		first = false;
		hg_spin_open(t, s);
		deadline = rel + period;
		for (;;) {
			need = amount;
			hg_spin(t, s, &need, deadline < end ? deadline : end, false, NULL);
			if (!need) {
				t->jobs_hit++;
				hg_rec_put(t, HGL_REC_JOB, 0, rel, s->last, deadline, s->cpu);
				break;
			}
			if (s->last >= end || hg_stopping(run)) {
				hg_rec_put(t, HGL_REC_JOB, HGL_JOB_CUT, rel, 0, deadline, s->cpu);
				hg_spin_close(t, s, HGL_IV_LAST);
				return 0;
			}
			t->jobs_missed++;
			hg_rec_put(t, HGL_REC_JOB, HGL_JOB_MISSED, rel, 0, deadline, s->cpu);
			rel = deadline;
			deadline += period;
			rel_mono += t->cfg->period_ns;
		}
		rel_mono += t->cfg->period_ns;
		if (deadline >= end || hg_stopping(run)) {
			hg_spin_close(t, s, HGL_IV_LAST);
			return 0;
		}
		hg_spin_close(t, s, HGL_IV_SLEEP);
	}
}

/*
 * run_lat - the latency test: sleep one period from now, note how late the
 * wake-up was, repeat. The next wake-up is computed from the current time,
 * as in the paper, so lateness does not accumulate.
 */
static int run_lat(struct hg_thread *t, struct hg_timer *tm, uint64_t end_mono)
{
	uint64_t target, intended, tsc, rel;

	for (;;) {
		int r;

		target = hg_clock_ns(CLOCK_MONOTONIC) + t->cfg->period_ns;
		if (target >= end_mono || hg_stopping(t->run))
			return 0;
		r = hg_timer_sleep_until(tm, target, &intended);
		if (r)
			return r < 0 ? -1 : 0;
		wake_record(t, intended, HGL_WAKE_LAT, &tsc, &rel);
		if (!t->first_tsc)
			t->first_tsc = tsc;
		t->last_tsc = tsc;
	}
}

/* setup - everything that may fail or fault, done before the run starts. */
static int setup(struct hg_thread *t, struct hg_timer *tm, uint8_t **scan, size_t *scan_len)
{
	struct hg_thread_cfg *c = t->cfg;

	t->tid = (pid_t)syscall(SYS_gettid);
	if (hg_apply_affinity(t) || hg_apply_sched(t))
		return -1;
	t->schedstat_fd = hg_acct_open();
	if (c->workload == HG_W_PERIODIC || c->workload == HG_W_LAT) {
		int pre = snprintf(t->err, sizeof(t->err), "thread %d: ", t->idx);

		if (hg_timer_open(tm, c->timer, t->run->cfg->rtc_hz, t->err + pre,
				  sizeof(t->err) - (size_t)pre)) {
			t->err_exit = HG_EXIT_ENV;
			return -1;
		}
		tm->stop = &t->run->stop;
		t->err[0] = 0;
	}
	if (c->workload == HG_W_CPU_SCAN || c->workload == HG_W_CPU_SCAN_YIELD) {
		*scan_len = (size_t)c->scan_kb * 1024;
		*scan = malloc(*scan_len);
		if (!*scan) {
			snprintf(t->err, sizeof(t->err), "thread %d: no memory for a %llu KB working set",
				 t->idx, (unsigned long long)c->scan_kb);
			t->err_exit = HG_EXIT_ENV;
			return -1;
		}
		/* touch it here, pinned, so its pages are local and present */
		memset(*scan, 1, *scan_len);
	}
	/* and the first chunk of records, so the first gap does not fault */
	if (hg_rec_refill(t))
		t->rec--;	/* taken to fault it in here, not used yet */
	else
		t->dropped = 0;	/* no chunk left for it: its first record will count */
	return 0;
}

void *hg_thread_main(void *arg)
{
	struct hg_thread *t = arg;
	struct hg_run *run = t->run;
	struct hg_thread_cfg *c = t->cfg;
	struct hg_timer tm = { .fd = -1 };
	struct hg_spin s = { 0 };
	uint8_t *scan = NULL;
	size_t scan_len = 0;
	uint64_t end_ns, end, start_mono;
	struct timespec ts;
	int r = 0;

	t->schedstat_fd = -1;
	setup(t, &tm, &scan, &scan_len);
	pthread_barrier_wait(&run->ready);
	pthread_barrier_wait(&run->go);
	if (atomic_load(&run->abort_run) || t->err_exit)
		goto out;

	hg_acct_read(&t->acct0, t->schedstat_fd);		/* it sleeps from here until its start */
	end_ns = c->finish_ns && c->finish_ns < run->cfg->duration_ns ? c->finish_ns
								      : run->cfg->duration_ns;
	end = run->t0_tsc + hg_ns_to_cycles(run, end_ns);
	s.scan = scan;
	s.scan_len = scan_len;

	if (c->workload == HG_W_PERIODIC) {
		r = run_periodic(t, &s, &tm, end);
	} else if (c->workload == HG_W_LAT) {
		ts = hg_ns_ts(run->t0_mono + c->start_ns);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR &&
		       !hg_stopping(run))
			;
		r = run_lat(t, &tm, run->t0_mono + end_ns);
	} else {
		start_mono = run->t0_mono + c->start_ns;
		ts = hg_ns_ts(start_mono);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR &&
		       !hg_stopping(run))
			;
		if (hg_stopping(run))
			goto done;	/* stopped before its start: it measured nothing */
		hg_spin_open(t, &s);
		t->first_tsc = s.start;
		switch (c->workload) {
		case HG_W_CPU:
			run_cpu(t, &s, end, false, 0);
			break;
		case HG_W_CPU_SCAN:
			run_cpu(t, &s, end, true, 0);
			break;
		case HG_W_CPU_YIELD:
			run_cpu(t, &s, end, false, hg_ns_to_cycles(run, c->amount_ns));
			break;
		case HG_W_CPU_SCAN_YIELD:
			run_cpu(t, &s, end, true, hg_ns_to_cycles(run, c->amount_ns));
			break;
		case HG_W_CPU_PERIODIC:
			run_cpu_periodic(t, &s, end);
			break;
		default:
			break;
		}
		hg_spin_close(t, &s, HGL_IV_LAST);
	}
done:
	if (c->workload != HG_W_LAT)
		t->last_tsc = s.last;
	hg_acct_read(&t->acct1, t->schedstat_fd);
	if (r) {
		snprintf(t->err, sizeof(t->err), "thread %d: -i %s: waiting on the timer failed: %s",
			 t->idx, hg_timer_name(c->timer), strerror(errno));
		t->err_exit = HG_EXIT_ENV;
	}
out:
	hg_timer_close(&tm);
	hg_acct_close(t->schedstat_fd);
	free(scan);
	/* the last one out wakes the monitor, which then need not poll for the end */
	if (atomic_fetch_add(&run->exited, 1) + 1 == run->cfg->nthreads && run->main_thread)
		pthread_kill(run->main_thread, HG_WAKE_SIGNAL);
	return NULL;
}

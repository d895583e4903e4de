// SPDX-License-Identifier: GPL-2.0
/*
 * monitor.c - the main thread while the workload threads run: it waits for
 * them, for Ctrl-C (SIGINT, SIGTERM, SIGHUP) and for a -b trip, and on a
 * terminal it redraws one line per thread every second, as cyclictest does.
 *
 * Those signals are blocked in every thread from the start and taken here
 * with sigtimedwait(), so no handler ever runs inside a measuring thread.
 * Without the live line the monitor sleeps from the start to the end of the
 * run: it costs the threads nothing. With it, one wake-up a second.
 *
 * To stop early the monitor sets run->stop and sends HG_KICK_SIGNAL to each
 * thread: a sleeping thread's sleep returns EINTR, a spinning one sees a gap;
 * both then find run->stop set. A thread may check the flag just before it
 * is set and go to sleep after the kick, so the kick is repeated until every
 * thread has left.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "run.h"

#define LIVE_PERIOD_NS 1000000000ULL
#define KICK_PERIOD_NS 20000000ULL

static void on_kick(int sig)
{
	(void)sig;	/* its only job is to interrupt a sleep */
}

static void stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, HG_WAKE_SIGNAL);
}

/*
 * hg_signals_setup - before any thread exists: Ctrl-C and kin wait for the
 * monitor; the kick interrupts sleeps (no SA_RESTART).
 */
void hg_signals_setup(void)
{
	struct sigaction sa;
	sigset_t set;

	stop_signals(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_kick;
	sigemptyset(&sa.sa_mask);
	sigaction(HG_KICK_SIGNAL, &sa, NULL);
}

static const char *sig_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
}

/* hg_request_stop - every thread leaves its loop at its next check */
void hg_request_stop(struct hg_run *run, int sig)
{
	if (sig && !run->stop_signal && !atomic_load(&run->tripped)) {
		run->stop_signal = sig;
		run->stop_tsc = hg_rdtsc();
	}
	atomic_store(&run->stop, 1);
}

static void kick_all(struct hg_run *run)
{
	int k;

	for (k = 0; k < run->cfg->nthreads; k++)
		pthread_kill(run->th[k].pt, HG_KICK_SIGNAL);
}

static void us(char *buf, size_t len, double v, bool have)
{
	if (have)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "-");
}

/*
 * print_live - one line per thread; on a terminal (@tty) each line clears
 * itself and @redraw moves the cursor back over the previous block first.
 * Figures are read while the threads write them.
 */
static void print_live(struct hg_run *run, FILE *f, bool tty, bool redraw)
{
	const struct hg_config *cfg = run->cfg;
	const char *clear = tty ? "\r\033[K" : "";
	double hz = run->hz, now_s;
	int k;

	if (tty && redraw)
		fprintf(f, "\033[%dA", cfg->nthreads + 1);
	now_s = (double)(hg_clock_ns(CLOCK_MONOTONIC) - run->t0_mono) / 1e9;
	if (now_s < 0)
		now_s = 0;
	fprintf(f, "%shourglass: %.1f of %.1f s   (times in us)\n", clear, now_s,
		(double)cfg->duration_ns / 1e9);
	for (k = 0; k < cfg->nthreads; k++) {
		const struct hg_thread *t = &run->th[k];
		const struct hg_thread_cfg *c = t->cfg;
		uint64_t ivs = __atomic_load_n(&t->live_ivs, __ATOMIC_RELAXED);
		uint64_t gaps = __atomic_load_n(&t->live_gaps, __ATOMIC_RELAXED);
		uint64_t gmax = __atomic_load_n(&t->live_gap_max, __ATOMIC_RELAXED);
		uint64_t wakes = __atomic_load_n(&t->live_wakes, __ATOMIC_RELAXED);
		uint64_t lmax = __atomic_load_n(&t->live_late_max, __ATOMIC_RELAXED);
		char g[24], l[24], who[24];

		us(g, sizeof(g), (double)gmax * 1e6 / hz, gaps > 0);
		us(l, sizeof(l), (double)lmax / 1e3, wakes > 0);
		snprintf(who, sizeof(who), "%s", c->sched.level ? c->sched.level :
			 hg_policy_name(c->sched.policy));
		fprintf(f, "%sT:%3d (%7d) %-8s %-14s I:%9llu G:%9llu Gmax:%9s W:%8llu Lmax:%9s\n",
			clear, k, (int)t->tid, who, hg_workload_name(c->workload), (unsigned long long)ivs,
			(unsigned long long)gaps, g, (unsigned long long)wakes, l);
	}
	fflush(f);
}


/*
 * hg_monitor - from the start of the run until every thread has left; the
 * threads are joined on return.
 */
void hg_monitor(struct hg_run *run)
{
	const struct hg_config *cfg = run->cfg;
	bool live = !cfg->quiet && isatty(STDERR_FILENO), drawn = false;
	uint64_t end = run->t0_mono + cfg->duration_ns, next_live = run->t0_mono, now, until;
	sigset_t set;
	int k, sig;

	stop_signals(&set);
	while (atomic_load(&run->exited) < cfg->nthreads) {
		struct timespec ts;

		now = hg_clock_ns(CLOCK_MONOTONIC);
		if (hg_stopping(run)) {
			kick_all(run);
			until = now + KICK_PERIOD_NS;
		} else {
			/* past the end, threads finish their last period: look again now and then */
			until = now < end ? end : now + KICK_PERIOD_NS;
			if (live && next_live < until)
				until = next_live > now ? next_live : now;
		}
		ts = hg_ns_ts(until > now ? until - now : 0);
		sig = sigtimedwait(&set, NULL, &ts);
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
			hg_request_stop(run, sig);
			fprintf(stderr, "%shourglass: %s: stopping the threads\n", live && drawn ? "\n" : "",
				sig_name(sig));
			drawn = false;
		}
		/* HG_WAKE_SIGNAL: a trip (run->stop is set) or the last thread left */
		now = hg_clock_ns(CLOCK_MONOTONIC);
		if (live && now >= next_live && now >= run->t0_mono) {
			print_live(run, stderr, true, drawn);
			drawn = true;
			next_live = now + LIVE_PERIOD_NS;
		}
	}
	for (k = 0; k < cfg->nthreads; k++)
		pthread_join(run->th[k].pt, NULL);
	/* the last figures stay on the screen; stopped by a signal, they are the summary */
	if (live || run->stop_signal)
		print_live(run, stderr, live, live && drawn);
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lab.h - what the lab's loads share: the TSC, pinning, a real-time policy,
 * a stop flag set by SIGTERM/SIGINT, periodic absolute sleeps, and the stamps
 * file each load writes when it stops.
 *
 * A load's expectation comes from its own stamps: each event it caused (a
 * job, an IPI sent, a packet sent, a read completed) with the TSC read just
 * before and just after it, so that the lab counts the events that fell
 * inside hourglass's run and never needs the kernel module's recording.
 *
 * Stamps file (text): '#' lines of key=value (program, parameters, cpu,
 * tsc_hz), then one line per event: "START_TSC END_TSC".
 */
#ifndef LAB_H
#define LAB_H

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <x86intrin.h>

static volatile sig_atomic_t lab_stop;

static void lab_on_signal(int sig)
{
	(void)sig;
	lab_stop = 1;
}

/* lab_signals - SIGTERM and SIGINT end the main loop; a sleep they interrupt returns at once */
static inline void lab_signals(void)
{
	struct sigaction sa = { .sa_handler = lab_on_signal };

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

static inline uint64_t lab_tsc(void)
{
	unsigned int aux;

	return __rdtscp(&aux);
}

static inline int64_t lab_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* lab_tsc_hz - the TSC's rate against CLOCK_MONOTONIC over 100 ms */
static inline double lab_tsc_hz(void)
{
	int64_t n0 = lab_now_ns(), n1;
	uint64_t t0 = lab_tsc(), t1;
	struct timespec d = { 0, 100000000 };

	while (nanosleep(&d, &d) && errno == EINTR && !lab_stop)
		;
	n1 = lab_now_ns();
	t1 = lab_tsc();
	return (double)(t1 - t0) * 1e9 / (double)(n1 - n0);
}

/* lab_pin - run on @cpu only (-1: leave the affinity alone); 0 or -1 with a message */
static inline int lab_pin(int cpu, const char *prog)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "%s: cannot run on CPU %d: %s\n", prog, cpu, strerror(errno));
		return -1;
	}
	return 0;
}

/* lab_fifo - SCHED_FIFO at @prio (0: stay time-sharing) and memory locked */
static inline int lab_fifo(int prio, const char *prog)
{
	struct sched_param sp = { .sched_priority = prio };

	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		fprintf(stderr, "%s: mlockall: %s (going on)\n", prog, strerror(errno));
	if (prio > 0 && sched_setscheduler(0, SCHED_FIFO, &sp)) {
		fprintf(stderr, "%s: cannot use SCHED_FIFO %d: %s\n", prog, prio, strerror(errno));
		return -1;
	}
	return 0;
}

/* lab_sleep_until - absolute sleep on CLOCK_MONOTONIC; nonzero once told to stop */
static inline int lab_sleep_until(const struct timespec *t)
{
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL) == EINTR)
		if (lab_stop)
			return 1;
	return lab_stop;
}

static inline void lab_advance(struct timespec *t, int64_t ns)
{
	t->tv_nsec += ns % 1000000000LL;
	t->tv_sec += ns / 1000000000LL + t->tv_nsec / 1000000000LL;
	t->tv_nsec %= 1000000000LL;
}

/* lab_parse_ns - "7ms", "400us", "1s", "250000ns" (a bare number is microseconds); -1 if bad */
static inline int64_t lab_parse_ns(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v < 0)
		return -1;
	if (!strcmp(end, "s"))
		return (int64_t)(v * 1e9);
	if (!strcmp(end, "ms"))
		return (int64_t)(v * 1e6);
	if (!strcmp(end, "us") || !*end)
		return (int64_t)(v * 1e3);
	if (!strcmp(end, "ns"))
		return (int64_t)v;
	return -1;
}

struct lab_stamps {
	uint64_t (*ev)[2];
	size_t n, cap;
};

/* lab_stamps_init - room for @cap events, touched now so that recording one never faults */
static inline int lab_stamps_init(struct lab_stamps *s, size_t cap)
{
	s->ev = calloc(cap, sizeof(*s->ev));
	s->n = 0;
	s->cap = cap;
	if (!s->ev)
		return -1;
	memset(s->ev, 0, cap * sizeof(*s->ev));
	return 0;
}

/* lab_stamp - one event; counted even when the buffer is full (the file says how many were not kept) */
static inline void lab_stamp(struct lab_stamps *s, uint64_t t0, uint64_t t1)
{
	if (s->n < s->cap) {
		s->ev[s->n][0] = t0;
		s->ev[s->n][1] = t1;
	}
	s->n++;
}

/* lab_stamps_write - the stamps file (see the top); @head is the '#' lines' content; 0 or -1 */
static inline int lab_stamps_write(const struct lab_stamps *s, const char *path, const char *head,
				   double tsc_hz)
{
	FILE *f = fopen(path, "w");
	size_t i, kept = s->n < s->cap ? s->n : s->cap;

	if (!f) {
		fprintf(stderr, "lab: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "%s# tsc_hz=%.0f\n# events=%zu\n# not_kept=%zu\n", head, tsc_hz, s->n, s->n - kept);
	for (i = 0; i < kept; i++)
		fprintf(f, "%llu %llu\n", (unsigned long long)s->ev[i][0], (unsigned long long)s->ev[i][1]);
	if (fclose(f)) {
		fprintf(stderr, "lab: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * timers.h - the timers a PERIODIC or LAT thread can sleep on (-i).
 */
#ifndef HG_TIMERS_H
#define HG_TIMERS_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include "hourglass.h"

struct hg_timer {
	enum hg_timer_kind kind;
	int fd;			/* TIMERFD, RTC */
	timer_t posix;		/* POSIX */
	bool posix_made;
	sigset_t sigs;
	uint64_t tick_ns;	/* RTC */
	uint64_t phase_ns;	/* RTC: CLOCK_MONOTONIC of the first tick seen */
	bool have_phase;
	const atomic_int *stop;	/* set: a sleep interrupted by a signal ends when it is */
};

/* Signal that POSIX timers send; blocked in every thread of the process. */
#define HG_TIMER_SIGNAL (SIGRTMIN + 1)

int hg_timer_open(struct hg_timer *tm, enum hg_timer_kind kind, int rtc_hz,
		  char *err, size_t errlen);
/* hg_timer_sleep_until - 0 woken, 1 the run is stopping (no wake-up to record), -1 error */
int hg_timer_sleep_until(struct hg_timer *tm, uint64_t target_ns, uint64_t *intended_ns);
/* hg_timer_close - from the thread that used @tm, its run over: an RTC timer leaves it SCHED_OTHER */
void hg_timer_close(struct hg_timer *tm);

#endif

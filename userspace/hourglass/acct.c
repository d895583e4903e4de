// SPDX-License-Identifier: GPL-2.0
/*
 * acct.c - what the kernel's own accounting says about a thread, read before
 * and after its run: schedstat (nanosecond on-CPU time, as the scheduler
 * charges it) and getrusage (user and system time, sampled or precise
 * depending on CONFIG_VIRT_CPU_ACCOUNTING). The merger sets them beside the
 * intervals and the kernel's events (seed 002: the accounting under-reports).
 */
#include <stdio.h>
#include <time.h>
#include <sys/resource.h>
#include "run.h"

void hg_acct_read(struct hg_acct *a)
{
	struct rusage ru;
	FILE *f;

	struct timespec ts;

	a->tsc = hg_rdtsc();
	a->ok = 0;
	/* the scheduler's account including the running slice (schedstat lags it) */
	if (!clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		a->cputime_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	f = fopen("/proc/thread-self/schedstat", "r");
	if (f) {
		unsigned long long on, wait, slices;

		if (fscanf(f, "%llu %llu %llu", &on, &wait, &slices) == 3) {
			a->sched_ns = on;
			a->wait_ns = wait;
			a->slices = slices;
			a->ok |= 1;
		}
		fclose(f);
	}
	if (!getrusage(RUSAGE_THREAD, &ru)) {
		a->utime_ns = (uint64_t)ru.ru_utime.tv_sec * 1000000000ULL + (uint64_t)ru.ru_utime.tv_usec * 1000;
		a->stime_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000ULL + (uint64_t)ru.ru_stime.tv_usec * 1000;
		a->nvcsw = (uint64_t)ru.ru_nvcsw;
		a->nivcsw = (uint64_t)ru.ru_nivcsw;
		a->ok |= 2;
	}
}

// SPDX-License-Identifier: GPL-2.0
/*
 * stamp.c - print CLOCK_MONOTONIC in ns, then sleep the seconds given (if
 * any): the first thing a command does once exec'd, for bench/ftrace_start.py
 * to time a recorder's start-up (the clock is the same in every process).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct timespec ts;
	double s = argc > 1 ? atof(argv[1]) : 0;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("%lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	fflush(stdout);
	if (s > 0) {
		ts.tv_sec = (time_t)s;
		ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
	}
	return 0;
}

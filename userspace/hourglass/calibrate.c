// SPDX-License-Identifier: GPL-2.0
/*
 * calibrate.c - how long one iteration of the polling loop takes here, the
 * base of the GAP threshold (the paper: about twice the loop time); and the
 * cheapest trip into the kernel and back, the floor of every kernel path.
 */
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "run.h"

#define HIST 4096
#define SAMPLES 400000

/*
 * hg_measure_loop - median TSC delta between successive reads of a loop as
 * light as hg_spin's. The median ignores the reads an interrupt split.
 */
double hg_measure_loop(uint64_t *hist_over)
{
	static uint32_t hist[HIST];
	uint64_t last, now, d, seen = 0;
	int i;

	memset(hist, 0, sizeof(hist));
	*hist_over = 0;
	last = hg_rdtsc();
	for (i = 0; i < SAMPLES; i++) {
		now = hg_rdtsc();
		d = now - last;
		last = now;
		if (d < HIST)
			hist[d]++;
		else
			(*hist_over)++;
	}
	for (d = 0; d < HIST; d++) {
		seen += hist[d];
		if (seen * 2 >= SAMPLES)
			return (double)d;
	}
	return (double)HIST;
}

#define SYSCALL_SAMPLES 2000

/*
 * hg_measure_syscall - the fewest TSC cycles a system call that does nothing
 * (getppid) took, between two reads of the TSC: the kernel's entry and exit,
 * the cheapest path into the kernel there is. A gap shorter than that ran no
 * kernel code (the merger's rule 3). The minimum: an interrupt or a switch
 * only ever adds to a sample.
 */
uint64_t hg_measure_syscall(void)
{
	uint64_t best = UINT64_MAX, t0, t1;
	int i;

	for (i = 0; i < SYSCALL_SAMPLES; i++) {
		t0 = hg_rdtsc();
		syscall(SYS_getppid);
		t1 = hg_rdtsc();
		if (t1 - t0 < best)
			best = t1 - t0;
	}
	return best;
}

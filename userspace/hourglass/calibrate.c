// SPDX-License-Identifier: GPL-2.0
/*
 * calibrate.c - how long one iteration of the polling loop takes here, the
 * base of the GAP threshold (the paper: about twice the loop time).
 */
#include <string.h>
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

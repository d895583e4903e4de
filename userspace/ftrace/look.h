/* SPDX-License-Identifier: GPL-2.0 */
/*
 * look.h - when hgtrace-ftrace looks at the buffers next.
 *
 * The drainer wakes on its own timer (record.c). Every wake-up is charged to
 * the traced CPUs (on one CPU, to the workload itself), so it wakes no more
 * often than keeping the buffers from overflowing needs.
 */
#ifndef HG_FTRACE_LOOK_H
#define HG_FTRACE_LOOK_H

#include <stdint.h>
#include "ftrace.h"

/* the buffer a look every -i is sized for: the default -b */
#define FT_LOOK_BUFFER_BYTES	((uint64_t)FT_BUFFER_KB_DEFAULT * 1024)
/* the longest wait between two looks, whatever the room: -d, Ctrl-C's summary and the
 * counters stay timely */
#define FT_LOOK_MAX_S		1.0
/* the same with the kernel waking the drainer at --drain-at on every traced CPU: the
 * timer is then only the pace rule and the counters' clock */
#define FT_LOOK_KERNEL_MAX_S	10.0

struct ft_look {
	double interval;		/* -i: seconds */
	uint64_t buffer_bytes;		/* a CPU's buffer, as the kernel sized it */
	uint64_t drain_bytes;		/* --drain-at as bytes: 0 reads at every look */
	int kernel_wakes;		/* the kernel wakes the drainer at --drain-at on every traced CPU */
};

/*
 * ft_look_next - seconds until the next look, given the fullest CPU's unread bytes
 * after this look (@unread) and the fastest CPU's fill rate since the last one
 * (@rate, bytes a second)
 */
double ft_look_next(const struct ft_look *l, uint64_t unread, double rate);

#endif

// SPDX-License-Identifier: GPL-2.0
/*
 * look.c - when hgtrace-ftrace looks at the buffers next (look.h).
 *
 * A look every -i (100 ms) keeps a buffer of the default 2 MiB from
 * overflowing under any burst that takes longer than one interval to fill it:
 * up to 20 MiB a second a CPU. A buffer with more free room survives that same
 * burst for longer, so it can be looked at less often, in proportion to its
 * room: a 20 MiB buffer with 1 MiB unread, after 0.9 s. That is what trace-cmd
 * gets from the kernel's wake-up at buffer_percent without asking, and what a
 * timer has to earn by arithmetic. Two more bounds: the pace (at the rate it
 * filled since the last look, the fastest buffer must not reach --drain-at
 * within two waits, so the pace rule of record.c still sees it coming) and
 * FT_LOOK_MAX_S. A wait is never shorter than -i: below the default buffer
 * size, or with --drain-at 0, every look is -i apart, as before.
 *
 * When the kernel wakes the drainer at --drain-at on every traced CPU (tfs.h
 * kernel_wakes), a buffer filling up is the kernel's to see, as it is for
 * trace-cmd's readers, which have no timer at all: the room rule is then not
 * needed, and the timer keeps the pace rule (a buffer filling fast is still read
 * before the watermark, leaving a late reader its room) and looks at least every
 * FT_LOOK_KERNEL_MAX_S for the counters. Each look it saves is a wake-up on the
 * traced CPUs (docs/hgtrace-ftrace.md, FIGURES).
 */
#include "look.h"

double ft_look_next(const struct ft_look *l, uint64_t unread, double rate)
{
	double cap = l->kernel_wakes ? FT_LOOK_KERNEL_MAX_S : FT_LOOK_MAX_S;
	double wait, room, pace;

	if (!l->drain_bytes || l->interval >= cap)
		return l->interval;
	if (l->kernel_wakes) {
		/* a pass a flood cut short left a buffer past the watermark: soon */
		wait = unread >= l->drain_bytes ? l->interval : cap;
	} else {
		room = unread < l->buffer_bytes ? (double)(l->buffer_bytes - unread) : 0;
		wait = l->interval * room / (double)FT_LOOK_BUFFER_BYTES;
	}
	if (rate > 0) {
		pace = unread < l->drain_bytes ? (double)(l->drain_bytes - unread) / rate / 2 : 0;
		if (pace < wait)
			wait = pace;
	}
	if (wait > cap)
		wait = cap;
	return wait < l->interval ? l->interval : wait;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * sched_switch.c - Ftrace's sched_switch fields to the module's record
 * (hg_sched_switch.h says why).
 */
#include "hg_sched_switch.h"
#include "hgtrace.h"

/*
 * sched_switch reports prev_state through __trace_sched_switch_state()
 * (include/trace/events/sched.h, 4.14 to 6.12 at least): TASK_REPORT_MAX
 * (0x100) when preempted, else 1 << (task_state_index - 1), which gives the
 * TASK_* bit itself for the states up to TASK_PARKED, TASK_REPORT_IDLE (0x80)
 * for TASK_IDLE, and EXIT_DEAD/EXIT_ZOMBIE for a task that is exiting.
 */
#define FT_REPORT_MAX	0x100
#define FT_REPORT_IDLE	0x80
#define FT_EXIT_DEAD	0x10
#define FT_EXIT_ZOMBIE	0x20
#define TASK_IDLE_BITS	0x402		/* TASK_UNINTERRUPTIBLE | TASK_NOLOAD */
#define TASK_DEAD_BIT	0x80		/* what the module sees as the dying task's last prev_state */

struct hg_switch_state hg_switch_from_ftrace(uint64_t reported, int64_t next_prio)
{
	struct hg_switch_state s = { (uint32_t)reported, 0, 0 };

	if (reported & FT_REPORT_MAX) {
		s.flags = HGT_SWITCH_PREEMPT;
		s.prev_state = 0;
	} else if (reported & FT_REPORT_IDLE) {
		s.prev_state = TASK_IDLE_BITS;
	} else if (reported & (FT_EXIT_DEAD | FT_EXIT_ZOMBIE)) {
		s.prev_state = TASK_DEAD_BIT;
	}
	/* the event has no policy: 6 deadline (prio -1), 1 real-time (FIFO or RR), 0 fair */
	s.policy = next_prio < 0 ? 6 : next_prio < 100 ? 1 : 0;
	return s;
}

// SPDX-License-Identifier: GPL-2.0
/* test_sched_switch.c - Ftrace's sched_switch prev_state and next_prio as the module records them */
#include "tap.h"
#include "hg_sched_switch.h"
#include "hgtrace.h"

static int is(uint64_t reported, int64_t prio, uint32_t state, uint8_t flags, uint8_t policy)
{
	struct hg_switch_state s = hg_switch_from_ftrace(reported, prio);

	return s.prev_state == state && s.flags == flags && s.policy == policy;
}

int main(void)
{
	ok(is(0x100, 120, 0, HGT_SWITCH_PREEMPT, 0), "preempted (TASK_REPORT_MAX): state 0 and the flag");
	ok(is(0x101, 120, 0, HGT_SWITCH_PREEMPT, 0), "the preempted bit wins over a state bit");
	ok(is(0, 120, 0, 0, 0) && is(1, 120, 1, 0, 0) && is(2, 120, 2, 0, 0),
	   "running, interruptible, uninterruptible: the TASK_* bit itself, no flag");
	ok(is(0x80, 120, 0x402, 0, 0), "TASK_REPORT_IDLE: TASK_UNINTERRUPTIBLE | TASK_NOLOAD");
	ok(is(0x10, 120, 0x80, 0, 0) && is(0x20, 120, 0x80, 0, 0), "EXIT_DEAD, EXIT_ZOMBIE: the dying task's 0x80");
	ok(is(1, -1, 1, 0, 6) && is(1, 0, 1, 0, 1) && is(1, 99, 1, 0, 1) && is(1, 100, 1, 0, 0),
	   "policy from next's priority: deadline, real-time, fair");
	return tap_done();
}

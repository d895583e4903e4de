/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hg_sched_switch.h - a sched_switch event as Ftrace reports it (the
 * tracepoint's format, in tracefs or a trace.dat) turned into what the
 * module records for it (HGT_REC_SWITCH), so that a run recorded by
 * hgtrace-ftrace or imported from trace-cmd reads as one recorded by the
 * module: one conversion for both (they disagreed until 2026-11-28: the
 * importer copied prev_state as reported, and the merger read a preempted
 * task's 0x100 as a task that blocked).
 */
#ifndef HG_SCHED_SWITCH_H
#define HG_SCHED_SWITCH_H

#include <stdint.h>

struct hg_switch_state {
	uint32_t prev_state;	/* hgt_switch.prev_state: the TASK_* bits the module sees */
	uint8_t flags;		/* hgt_rec.flags: HGT_SWITCH_PREEMPT when prev was preempted */
	uint8_t policy;		/* hgt_rec.aux: next's policy, as far as its priority tells */
};

/*
 * hg_switch_from_ftrace - @reported, sched_switch's prev_state field, and
 * @next_prio, its next_prio field, as the module would have recorded them
 */
struct hg_switch_state hg_switch_from_ftrace(uint64_t reported, int64_t next_prio);

#endif

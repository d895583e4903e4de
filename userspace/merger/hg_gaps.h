/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hg_gaps.h - one record per gap: what the merger decided about it, the
 * contract between the rules (hgmerge) and every output (the report, the
 * exporters, `hgmerge --gaps FILE`). Format: docs/gap-stream.md.
 *
 * File: struct hgg_header, then struct hgg_gap records in the order gaps
 * close (per CPU in time order), then struct hgg_trailer. Little endian.
 * A new minor version only appends fields to hgg_gap (rec_size says how big
 * a record is) or adds enum values; a new major is incompatible.
 */
#ifndef HG_GAPS_H
#define HG_GAPS_H

#include <stdint.h>

#define HGG_MAGIC	"HGGAPS\n"	/* 8 bytes with the NUL */
#define HGG_MAJOR	1
#define HGG_MINOR	4

/* what a stretch of a gap is charged to */
enum hgg_comp_kind {
	HGG_K_SELF,		/* nothing recorded: the gap's own thread (its kernel entry and exit, a
				 * page fault), or time below the kernel (hypervisor, emulator, SMI) */
	HGG_K_TASK,		/* id = pid (0 idle, -1 unknown) */
	HGG_K_IRQ,		/* id = irq */
	HGG_K_VEC,		/* id = enum hgt_vec (0 the local timer) */
	HGG_K_SOFTIRQ,		/* id = softirq vector */
	HGG_K_NMI,
	HGG_K_TURN,		/* 1.4: another vCPU's turn (id = its CPU, -1 several): where the vCPUs take
				 * turns on one host thread, another CPU recorded events in this stretch */
	HGG_K_N
};

/* the actual class (from the kernel) and what the inference may say */
enum hgg_class {
	HGG_C_SWITCH_HG,	/* switched out for another hourglass thread */
	HGG_C_SWITCH_OTHER,	/* switched out for another task, or idle */
	HGG_C_TIMER,		/* the local timer interrupt took most of it */
	HGG_C_INTERRUPT,	/* a device irq, a softirq, an IPI, an NMI */
	HGG_C_HIDDEN,		/* nothing recorded on the CPU for most of it (all of it, or more than
				 * half and more than HGG_UNRECORDED_FLOOR_US): hypervisor, emulator,
				 * SMI, another vCPU's turn */
	HGG_C_OTHER,		/* kernel events, but no handler or task to charge */
	HGG_C_UNEXPLAINABLE,	/* outside the recording window, or events lost on the CPU */
	HGG_C_VOLUNTARY,	/* inferred only: the thread asked for it (yield, sleep) */
	HGG_C_N
};

/* the finer kind of the actual cause */
enum hgg_kind {
	HGG_KD_IRQ, HGG_KD_SOFTIRQ, HGG_KD_NMI, HGG_KD_IPI, HGG_KD_TIMER, HGG_KD_SWITCH_HG,
	HGG_KD_SWITCH_OTHER, HGG_KD_IDLE, HGG_KD_HIDDEN, HGG_KD_OTHER, HGG_KD_UNEXPLAINABLE,
	HGG_KD_TURN,		/* 1.4: hidden, most of it another vCPU's turn (steal of a known kind) */
	HGG_KD_N
};

/* which inference rule decided (docs/merge.md, "The inferences") */
enum hgg_rule {
	HGG_R_VOLUNTARY, HGG_R_SWITCH, HGG_R_TICK, HGG_R_HIDDEN, HGG_R_TOP_RT, HGG_R_SHORT, HGG_R_LONG,
	HGG_R_HRTICK,		/* 2b: the scheduler's own timer (HRTICK), within a slice of a switch */
	HGG_R_MODEL,		/* 1.3: a profile's model (hgmerge --classes), in the rules' place */
	HGG_R_N
};

/* why the kernel's account says what it says */
enum hgg_why {
	HGG_W_NONE, HGG_W_WINDOW, HGG_W_LOST, HGG_W_HIDDEN, HGG_W_OTHER, HGG_W_OUT,
	HGG_W_NO_RECORDING,	/* 1.2: merged without the kernel's recording (hgmerge --no-kernel) */
	HGG_W_UNRECORDED,	/* 1.4: kernel events, but nothing recorded for most of it */
	HGG_W_N
};

/* hgg_gap.flags */
#define HGG_F_OUT	0x01	/* the thread was switched out in the gap (out_* set) */
#define HGG_F_PREEMPTED	0x02	/* ... and was runnable (preempted), else it blocked */
#define HGG_F_IN	0x04	/* the thread was switched back in within the gap */
#define HGG_F_MIGRATED	0x08	/* a sched_migrate_task of the thread fell in the gap */
#define HGG_F_PRIMARY	0x10	/* primary_* names the largest explained component */
#define HGG_F_TICK	0x20	/* 1.1: the local timer's handler is among the components (tick_cycles) */

#define HGG_COMPS	4	/* components listed, largest first */

/*
 * A gap is named after a kernel cause only when the kernel recorded most of it: one whose time
 * with nothing recorded on its CPU (self_cycles) and other vCPUs' turns (turn_cycles) is more
 * than HGG_UNRECORDED_SHARE of it and more than HGG_UNRECORDED_FLOOR_US is hidden, whatever its
 * events say (docs/merge.md, "The ground truth of a gap"). The floor: a kernel entry and exit
 * around a handler cost a few microseconds on the emulated guests' instruction-count clock, so
 * a short tick's gap is half unrecorded without anything hidden in it.
 */
#define HGG_UNRECORDED_SHARE	0.5
#define HGG_UNRECORDED_FLOOR_US	20.0

struct hgg_comp {
	int32_t id;
	uint8_t kind;		/* enum hgg_comp_kind */
	uint8_t pad[3];
	uint64_t cycles;
};				/* 16 bytes */

struct hgg_header {
	char magic[8];
	uint16_t major, minor;
	uint32_t rec_size;	/* sizeof(struct hgg_gap) of the writer */
	double tsc_hz;
	uint64_t base_tsc;	/* the one time base of every output: t = (tsc - base_tsc) / tsc_hz */
	uint32_t nthreads, ncpus;
};				/* 40 bytes */

struct hgg_gap {
	uint64_t g0, g1;	/* TSC: thread's last read before the gap, the next thread's first after */
	uint32_t cpu;
	uint16_t thread, next_thread;	/* hourglass thread numbers */
	uint8_t vol;		/* 0, 1 yield, 2 sleep: the thread asked for it */
	uint8_t inferred;	/* enum hgg_class */
	uint8_t rule;		/* enum hgg_rule */
	uint8_t cls;		/* enum hgg_class: the actual class */
	uint8_t kind;		/* enum hgg_kind */
	uint8_t why;		/* enum hgg_why */
	uint8_t flags;		/* HGG_F_* */
	uint8_t ncomp;		/* comp[] entries used */
	uint32_t n_events;	/* kernel events inside the gap on its CPU */
	uint32_t out_pid;	/* HGG_F_OUT: the task switched in */
	uint32_t out_state;	/* HGG_F_OUT: sched_switch's prev_state */
	uint8_t primary_kind;	/* HGG_F_PRIMARY: enum hgg_comp_kind */
	uint8_t pad[3];
	int32_t primary_id;
	uint64_t self_cycles;	/* charged to the thread itself */
	uint64_t explained_cycles;	/* charged to anything else */
	uint64_t handler_cycles;	/* of which irq, vector, softirq and NMI handlers */
	struct hgg_comp comp[HGG_COMPS];
	/* 1.1 */
	uint64_t switch_path_cycles;	/* charged to hourglass's threads: the leaving one's own time (self)
					 * and any hourglass thread's kernel time in the gap (the coming one's
					 * entry): a switch's own cost, without handlers or other tasks */
	uint64_t tick_cycles;		/* charged to the local timer interrupt's handler */
	/* 1.4 */
	uint64_t turn_cycles;		/* charged to other vCPUs' turns (HGG_K_TURN); self_cycles no
					 * longer holds them */
	int32_t turn_cpu;		/* the CPU whose turn that was, -1 several or none */
	uint32_t pad2;
};				/* 176 bytes */

/*
 * The judgement's two sets of gaps, for the merger's report and the exporters alike (one
 * rule: the Perfetto trace's matrix and the KernelShark session's focus counted their own,
 * and the session called a gap of class other explained, which the report does not):
 *
 * hgg_in_matrix - a gap the confusion matrix counts: involuntary, an actual class from
 * switch_hg to other, an inferred one from switch_hg to hidden
 * hgg_explained - a gap the kernel explains: involuntary, and neither hidden, other
 * nor unexplainable (the report's "the kernel explains N of the M others")
 */
static inline int hgg_in_matrix(const struct hgg_gap *g)
{
	return !g->vol && g->cls < HGG_C_UNEXPLAINABLE && g->inferred < HGG_C_OTHER;
}

static inline int hgg_explained(const struct hgg_gap *g)
{
	return !g->vol && g->cls < HGG_C_HIDDEN;
}

struct hgg_trailer {
	char magic[8];		/* "HGGEND\n" */
	uint64_t nr_gaps;
};

#endif

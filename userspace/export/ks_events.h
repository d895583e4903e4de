/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ks_events.h - the events of the KernelShark export: the kernel's standard
 * ones (sched, irq, irq_vectors, timer, nmi) in the top buffer, so that
 * KernelShark's sched_events plugin draws task graphs, and hourglass's own
 * in buffer "hourglass", with the fields docs/export.md lists.
 */
#ifndef KS_EVENTS_H
#define KS_EVENTS_H

#include "hgtrace.h"
#include "tracedat_writer.h"

/* field indices, in declaration order */
enum { SW_PREV_COMM, SW_PREV_PID, SW_PREV_PRIO, SW_PREV_STATE, SW_NEXT_COMM, SW_NEXT_PID, SW_NEXT_PRIO };
enum { WK_COMM, WK_PID, WK_PRIO, WK_TARGET_CPU };
enum { MG_COMM, MG_PID, MG_PRIO, MG_ORIG_CPU, MG_DEST_CPU };
enum { EX_COMM, EX_PID, EX_PRIO };
enum { IRQ_IRQ, IRQ_NAME };		/* irq_handler_entry */
enum { IRQX_IRQ, IRQX_RET };		/* irq_handler_exit */
enum { SI_VEC };
enum { VEC_VECTOR };
enum { HRT_HRTIMER, HRT_NOW, HRT_FUNCTION };
enum { HRTX_HRTIMER };
enum { NMI_HANDLER, NMI_DELTA_NS, NMI_HANDLED };
enum { IVS_THREAD };
enum { IVE_THREAD, IVE_DURATION_NS, IVE_ENDED_BY };
enum { GAP_THREAD, GAP_NEXT_THREAD, GAP_LENGTH_NS, GAP_AGREE, GAP_INFERRED, GAP_ACTUAL, GAP_CAUSE };
enum { REL_THREAD, REL_DEADLINE_NS };
enum { DONE_THREAD, DONE_RESPONSE_NS };
enum { MISS_THREAD };
enum { WAKE_THREAD, WAKE_LATENESS_NS, WAKE_TIMER };

struct ks_events {
	struct td_event sw, waking, wakeup, wakeup_new, migrate, exit;
	struct td_event irq_entry, irq_exit, softirq_entry, softirq_exit;
	struct td_event vec_entry[HGT_VEC_MAX], vec_exit[HGT_VEC_MAX];
	struct td_event hrt_entry, hrt_exit, nmi;
	struct td_event iv_start, iv_end, gap, release, done, miss, wake;
};

/* hourglass's events as KernelShark names them ("system/name"), every one declared below */
#define KS_HOURGLASS_NEVENTS	7
extern const char *const ks_hourglass_events[KS_HOURGLASS_NEVENTS];

/* ks_events_declare - declare every event in @w, and buffer "hourglass"; its index in *hg_buf */
int ks_events_declare(struct td_writer *w, struct ks_events *e, int *hg_buf, struct hg_err *err);

#endif

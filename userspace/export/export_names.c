// SPDX-License-Identifier: GPL-2.0
/*
 * export_names.c - the names of the per-gap enums and of the kernel's
 * vectors and softirqs: every output spells them the same way.
 */
#include "export.h"

const char *const hgg_class_name[HGG_C_N] = {
	[HGG_C_SWITCH_HG] = "switch_hg",
	[HGG_C_SWITCH_OTHER] = "switch_other",
	[HGG_C_TIMER] = "timer",
	[HGG_C_INTERRUPT] = "interrupt",
	[HGG_C_HIDDEN] = "hidden",
	[HGG_C_OTHER] = "other",
	[HGG_C_UNEXPLAINABLE] = "unexplainable",
	[HGG_C_VOLUNTARY] = "voluntary",
};

const char *const hgg_kind_name[HGG_KD_N] = {
	[HGG_KD_IRQ] = "irq",
	[HGG_KD_SOFTIRQ] = "softirq",
	[HGG_KD_NMI] = "nmi",
	[HGG_KD_IPI] = "ipi",
	[HGG_KD_TIMER] = "timer",
	[HGG_KD_SWITCH_HG] = "switch_hg",
	[HGG_KD_SWITCH_OTHER] = "switch_other",
	[HGG_KD_IDLE] = "idle",
	[HGG_KD_HIDDEN] = "hidden",
	[HGG_KD_OTHER] = "other",
	[HGG_KD_UNEXPLAINABLE] = "unexplainable",
};

/* the kernel's irq_vectors tracepoints drop the _entry/_exit: "local_timer" */
const char *const hgt_vector_name[HGT_VEC_MAX] = {
	[HGT_VEC_LOCAL_TIMER] = "local_timer",
	[HGT_VEC_RESCHEDULE] = "reschedule",
	[HGT_VEC_CALL_FUNCTION] = "call_function",
	[HGT_VEC_CALL_FUNCTION_SINGLE] = "call_function_single",
	[HGT_VEC_IRQ_WORK] = "irq_work",
	[HGT_VEC_X86_PLATFORM_IPI] = "x86_platform_ipi",
	[HGT_VEC_SPURIOUS_APIC] = "spurious_apic",
	[HGT_VEC_ERROR_APIC] = "error_apic",
	[HGT_VEC_THERMAL_APIC] = "thermal_apic",
};

/* the kernel's softirq vectors (include/linux/interrupt.h), in order */
const char *const softirq_name[10] = {
	"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
};

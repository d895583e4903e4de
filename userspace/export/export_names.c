// SPDX-License-Identifier: GPL-2.0
/*
 * export_names.c - the names of the per-gap enums: every output spells them the
 * same way (the kernel's vectors and softirqs: the library, hg_hgt.h).
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
	[HGG_KD_TURN] = "turn",
};

/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * hgtrace_vectors.h - the x86 vectors hgtrace records, listed once for the module and the
 * tools: hgtrace.ko's probes (kmod/probes.c), hgtrace-ftrace's events (userspace/ftrace/
 * evmap.c) and the names the readers print (userspace/lib/hgt_read.c) all expand this list.
 *
 * HGT_VECTORS(X) calls X(name, vec) for each vector: @name is the stem of its irq_vectors
 * tracepoints (name_entry, name_exit; also the name tools print), @vec its enum hgt_vec,
 * the value a HGT_REC_VEC_* record carries in its flags.
 *
 * No version of its own: the ABI is enum hgt_vec's values, which hgtrace.h sets and
 * versions; this header only pairs each of them with its tracepoint's name, the same pairs
 * the module and the tools each wrote out before. A vector added means a new enum hgt_vec
 * value, and so a new HGT_ABI_MINOR in hgtrace.h, as before; the check below keeps the
 * list and the enum the same length.
 */
#ifndef _UAPI_HGTRACE_VECTORS_H
#define _UAPI_HGTRACE_VECTORS_H

#include "hgtrace.h"

#define HGT_VECTORS(X)						\
	X(local_timer, HGT_VEC_LOCAL_TIMER)			\
	X(reschedule, HGT_VEC_RESCHEDULE)			\
	X(call_function, HGT_VEC_CALL_FUNCTION)			\
	X(call_function_single, HGT_VEC_CALL_FUNCTION_SINGLE)	\
	X(irq_work, HGT_VEC_IRQ_WORK)				\
	X(x86_platform_ipi, HGT_VEC_X86_PLATFORM_IPI)		\
	X(spurious_apic, HGT_VEC_SPURIOUS_APIC)			\
	X(error_apic, HGT_VEC_ERROR_APIC)			\
	X(thermal_apic, HGT_VEC_THERMAL_APIC)

#define HGT_VECTORS_ONE_(name, vec)	+ 1
_Static_assert(0 HGT_VECTORS(HGT_VECTORS_ONE_) == HGT_VEC_MAX,
	       "HGT_VECTORS lists every enum hgt_vec value once");
#undef HGT_VECTORS_ONE_

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat.h - every kernel API difference hgtrace.ko depends on, in one place.
 *
 * Each entry names the release that changed the thing. Logic files never test
 * LINUX_VERSION_CODE themselves; they call the wrappers below. Supported:
 * 6.1 and 6.12, plain and PREEMPT_RT (Debian's packages).
 */
#ifndef HGT_COMPAT_H
#define HGT_COMPAT_H

#include <linux/version.h>
#include <linux/sched.h>
#include <linux/ring_buffer.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#error "hgtrace needs Linux 6.1 or later"
#endif

/*
 * ring_buffer_unlock_commit() lost its event argument in 6.2 (commit
 * "ring_buffer: Remove unused 'event' parameter"). We write with
 * ring_buffer_write(), whose prototype did not change, so the probes need no
 * wrapper; the reserve/commit pair is avoided on purpose.
 */
static inline int hgt_rb_write(struct trace_buffer *rb, unsigned long len, void *data)
{
	return ring_buffer_write(rb, len, data);
}

/*
 * Task state: task_struct::state became __state in 5.14; both supported
 * releases have __state. TASK_RTLOCK_WAIT (5.15) marks a PREEMPT_RT task
 * blocked on a sleeping spinlock: for microstates it is an uninterruptible wait.
 */
#ifndef TASK_RTLOCK_WAIT
#define TASK_RTLOCK_WAIT	0
#endif

/*
 * Tracepoint probes run with preemption disabled on both releases (6.13 made
 * syscall tracepoints faultable and preemptible; we do not support it yet),
 * so smp_processor_id() in a probe is stable.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#warning "hgtrace: syscall tracepoints may run preemptible since 6.13; not validated"
#endif

#endif /* HGT_COMPAT_H */

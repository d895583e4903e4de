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

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#error "hgtrace needs Linux 6.1 or later"
#endif

/*
 * Task state: task_struct::state became __state in 5.14; both supported
 * releases have __state. TASK_RTLOCK_WAIT (5.15) marks a PREEMPT_RT task
 * blocked on a sleeping spinlock: for microstates it is an uninterruptible wait.
 */
#ifndef TASK_RTLOCK_WAIT
#define TASK_RTLOCK_WAIT	0
#endif

/*
 * The scheduler's clock at a task's last accounting, sched_entity::exec_start
 * (msa.c, msa_sched_at). Not an API but a field, read for what the scheduler
 * does with it: update_curr() moves it to rq_clock_task() each time it sums a
 * running task's time, and each class's set_next_task() sets it when the task
 * is picked, so prev's run ends and next's begins there, which is what
 * /proc/<pid>/schedstat sums. Checked in the source and in guests of 6.1 and
 * 6.12, plain and PREEMPT_RT (docs/testing.md, test_microstates); on 6.1 the
 * idle task's is left stale (idle is never accounted). Other releases
 * (6.2-6.11, 6.13 and later) read it the same way, unchecked: a renamed field
 * fails the build here, not elsewhere, and a value that is stale or has come
 * to mean something else is older than this CPU's last switch, or no clock
 * read at all (msa.c, sched_lag_ns), which msa.c counts
 * ("at sched_switch (stale clock)" in /proc/hgtrace/msa) before placing that
 * side at the tracepoint, as it did before it used the field.
 */
static inline u64 hgt_sched_exec_start(const struct task_struct *p)
{
	return p->se.exec_start;
}

/*
 * Releases this module was validated on: 6.1 and 6.12. Newer ones build, with
 * a notice at build time (main.c) and at load, not an error, so that -Werror
 * builds still work. The one change known to matter: since 6.13 syscall
 * tracepoints may call their probes preemptible. Ours hold interrupts off
 * from their stamp to their write (probes.c, HGT_IRQS_OFF), so the CPU they
 * write to cannot change under them, but nobody has run them there.
 */
#define HGT_VALIDATED_RELEASES	"6.1, 6.12"
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define HGT_RELEASE_UNVALIDATED	1
#else
#define HGT_RELEASE_UNVALIDATED	0
#endif

#endif /* HGT_COMPAT_H */

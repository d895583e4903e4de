/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat.h - every kernel API difference hgtrace.ko depends on, in one place.
 *
 * Each entry names the release that changed the thing, or, where the thing
 * itself can be asked (a tracepoint's prototype), asks it. Logic files never
 * test LINUX_VERSION_CODE themselves; they call the wrappers below. Validated:
 * 6.1, 6.12 and 7.3, plain and PREEMPT_RT (Debian's packages; docs/testing.md).
 */
#ifndef HGT_COMPAT_H
#define HGT_COMPAT_H

#include <linux/version.h>
#include <linux/sched.h>
#include <linux/hrtimer.h>
#include <linux/tracepoint.h>
#include <generated/utsrelease.h>

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
 * 6.12, plain and PREEMPT_RT, and in guests of 7.3, plain and PREEMPT_RT
 * (docs/testing.md, test_microstates: within 0.04% of schedstat per thread);
 * on 6.1 the idle task's is left stale (idle is never accounted). Other
 * releases read it the same way, unchecked: a renamed field
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
 * hrtimer::function became __private after 6.12 (7.3's own tracepoints read it
 * with ACCESS_PRIVATE). Reading it through ACCESS_PRIVATE is right on every
 * release: where the field is a plain one the macro is a cast to its own type.
 */
static inline void *hgt_hrtimer_function(struct hrtimer *t)
{
	return READ_ONCE(ACCESS_PRIVATE(t, function));
}

/*
 * Tracepoint prototypes, asked of the kernel itself. Each tracepoint declares
 * check_trace_callback_type_NAME(void (*cb)(void *data, PROTO)); HGT_TP_TAKES(name,
 * fn) is true when probe fn has exactly that type. Where a prototype changed,
 * probes.c has one probe for each form and HGT_TP_PICK() registers the one this
 * kernel takes: keyed on the prototype, not on a version number, so a distribution
 * kernel that took a change early (a backport) or late still gets the right probe.
 * Changes known (6.12 has the first form of each, 7.3 the second; which release
 * in between made each was not checked, and need not be: the prototype decides):
 *
 *   sched_process_exit     (p)  ->  (p, bool group_dead)
 *   hrtimer_expire_entry   (t, ktime_t *now)  ->  (t, ktime_t now)
 *
 * The probes read neither group_dead nor now, so both forms record the same.
 *
 * A kernel whose tracepoint matches no probe fails the build with one line from
 * HGT_TP_CHECK naming the tracepoint, the kernel and what to do, not a wall of
 * compiler errors. `make HGT_TP_SKIP="name ..."` builds the module without those
 * probes: it loads, says in dmesg and /proc/hgtrace/status that their events are
 * not recorded, and readers see them missing from the events available.
 */
#define HGT_TP_TAKES(name, fn) \
	__builtin_types_compatible_p(typeof(&check_trace_callback_type_##name), \
				     void (*)(typeof(&(fn))))
/* 1 when the build was asked to leave tracepoint name out (HGT_TP_SKIP) */
#define HGT_TP_SKIPPED(name)	__is_defined(HGT_SKIP_##name)
#define HGT_TP_CHECK(name, ...) \
	_Static_assert(HGT_TP_SKIPPED(name) || HGT_TP_ANY(name, __VA_ARGS__), \
		       "hgtrace: tracepoint " #name " of Linux " UTS_RELEASE \
		       " takes arguments no probe of this module takes: kmod/compat.h lists the " \
		       "forms it knows; add this one there (and a probe in probes.c), or build " \
		       "without it: make HGT_TP_SKIP=" #name " (its events are then not recorded)")
#define HGT_TP_ANY(name, ...) \
	CONCATENATE(HGT_TP_ANY_, COUNT_ARGS(__VA_ARGS__))(name, __VA_ARGS__)
#define HGT_TP_ANY_1(name, a)		HGT_TP_TAKES(name, a)
#define HGT_TP_ANY_2(name, a, b)	(HGT_TP_TAKES(name, a) || HGT_TP_TAKES(name, b))
/* the probe this kernel takes of two forms (the first where neither fits: HGT_TP_CHECK fails) */
#define HGT_TP_PICK(name, a, b) \
	__builtin_choose_expr(HGT_TP_TAKES(name, b), (void *)(b), (void *)(a))
/* the probe to register for name: NULL when the build left it out (HGT_TP_SKIP) */
#define HGT_TP_PROBE(name, p)	(HGT_TP_SKIPPED(name) ? NULL : (p))

/*
 * Probes called preemptible. Up to 6.12 a tracepoint called its probes with
 * preemption disabled (guard(preempt_notrace)); 7.3 calls them under SRCU
 * (guard(srcu_fast_notrace), include/linux/tracepoint.h), and syscall
 * tracepoints under RCU tasks trace since 6.13. Where the call site itself is
 * preemptible (sched_process_exit in do_exit, sys_enter and sys_exit; on
 * PREEMPT_RT the softirqs and soft hrtimers too), the task can be preempted
 * between two callbacks of one call: on 7.3 trace-cmd's event of a task's exit
 * was 78 ms ahead of the module's, on another CPU, when the module's probe came
 * second. So the probes register ahead of every other callback (a priority
 * above TRACEPOINT_DEFAULT_PRIO, tracepoints.c): the stamp is read first, and
 * only an interrupt's preemption right at the call can delay it, as it always
 * could. Another tracer's callback after ours may still be delayed so.
 */
#define HGT_TP_PRIO	(TRACEPOINT_DEFAULT_PRIO + 100)

/*
 * Releases this module was validated on (docs/testing.md): 6.1, 6.12 and 7.3,
 * plain and PREEMPT_RT. Others build, with a notice at build time (main.c) and
 * at load, not an error, so that -Werror builds still work. Known to matter
 * since 6.13: syscall tracepoints may call their probes preemptible; ours hold
 * interrupts off from their stamp to their write (probes.c, HGT_IRQS_OFF), so
 * the CPU they write to cannot change under them (checked on 7.3).
 */
#define HGT_VALIDATED_RELEASES	"6.1, 6.12, 7.3"
#define HGT_RELEASE_IS(a, b) \
	(LINUX_VERSION_CODE >= KERNEL_VERSION(a, b, 0) && LINUX_VERSION_CODE < KERNEL_VERSION(a, b + 1, 0))
#define HGT_RELEASE_UNVALIDATED	(!HGT_RELEASE_IS(6, 1) && !HGT_RELEASE_IS(6, 12) && !HGT_RELEASE_IS(7, 3))

#endif /* HGT_COMPAT_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * policy.c - put a thread on its CPUs and under its scheduling policy, and
 * say exactly what is missing when the kernel refuses.
 */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "run.h"

#ifndef SCHED_FLAG_RECLAIM
#define SCHED_FLAG_RECLAIM 0x02
#endif

/* glibc 2.36 has no wrapper for sched_setattr(2); this is its ABI. */
struct hg_sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
};

static const char *what_of(const struct hg_sched *s, char *buf, size_t len)
{
	if (s->policy == SCHED_DEADLINE)
		snprintf(buf, len, "%s (SCHED_DEADLINE %.3f ms every %.3f ms%s)",
			 s->dl_soft ? "-rs" : "-rh", s->dl_runtime_ns / 1e6, s->dl_period_ns / 1e6,
			 s->dl_soft ? ", reclaiming" : "");
	else if (s->level)
		snprintf(buf, len, "-p %s (SCHED_%s %s %d)", s->level,
			 s->policy == SCHED_FIFO ? "FIFO" : s->policy == SCHED_IDLE ? "IDLE" : "OTHER",
			 s->policy == SCHED_FIFO ? "priority" : "nice", s->prio);
	else
		snprintf(buf, len, "--policy %s --prio %d", hg_policy_name(s->policy), s->prio);
	return buf;
}

/* refuse - say what the thread needs, or note the fallback when allowed. */
static int refuse(struct hg_thread *t, int err, const char *how)
{
	char what[128];

	what_of(&t->cfg->sched, what, sizeof(what));
	if (t->run->cfg->fallback && (err == EPERM || err == EACCES)) {
		snprintf(t->fallback, sizeof(t->fallback), "%s refused (%s); running as SCHED_OTHER nice 0 instead",
			 what, strerror(err));
		return 0;
	}
	snprintf(t->err, sizeof(t->err), "thread %d: %s: %s%s", t->idx, what, strerror(err), how);
	t->err_exit = HG_EXIT_ENV;
	return -1;
}

int hg_apply_sched(struct hg_thread *t)
{
	const struct hg_sched *s = &t->cfg->sched;
	struct sched_param sp = { 0 };
	int e;

	if (s->policy == SCHED_DEADLINE) {
		struct hg_sched_attr a = {
			.size = sizeof(a),
			.sched_policy = SCHED_DEADLINE,
			.sched_flags = s->dl_soft ? SCHED_FLAG_RECLAIM : 0,
			.sched_runtime = s->dl_runtime_ns,
			.sched_deadline = s->dl_period_ns,
			.sched_period = s->dl_period_ns,
		};

		if (!syscall(SYS_sched_setattr, 0, &a, 0))
			return 0;
		switch (errno) {
		case EPERM:
			return refuse(t, errno, " (SCHED_DEADLINE needs root or CAP_SYS_NICE; --fallback runs without the reservation)");
		case EBUSY:
			return refuse(t, errno, " (admission control: the reservations exceed the bandwidth in /proc/sys/kernel/sched_rt_runtime_us per sched_rt_period_us, on all CPUs together)");
		default:
			return refuse(t, errno, " (the kernel refused these parameters)");
		}
	}
	if (s->policy == SCHED_FIFO || s->policy == SCHED_RR) {
		sp.sched_priority = s->prio;
		e = pthread_setschedparam(pthread_self(), s->policy, &sp);
		if (!e)
			return 0;
		return refuse(t, e, " (real-time policies need root, CAP_SYS_NICE, or 'ulimit -r' at least the priority; --fallback runs at NORMAL instead)");
	}
	e = pthread_setschedparam(pthread_self(), s->policy, &sp);
	if (e)
		return refuse(t, e, "");
	/* nice is per thread on Linux: setpriority on the thread id */
	if ((s->policy == SCHED_OTHER || s->policy == SCHED_BATCH) && s->prio &&
	    setpriority(PRIO_PROCESS, (id_t)t->tid, s->prio))
		return refuse(t, errno, " (negative nice needs root, CAP_SYS_NICE or 'ulimit -e'; --fallback runs at nice 0)");
	return 0;
}

int hg_apply_affinity(struct hg_thread *t)
{
	if (!t->cfg->has_affinity)
		return 0;
	if (!sched_setaffinity(0, sizeof(t->cfg->affinity), &t->cfg->affinity))
		return 0;
	snprintf(t->err, sizeof(t->err), "thread %d: --affinity: %s%s", t->idx, strerror(errno),
		 errno == EINVAL ? " (no CPU of that list is online and allowed to this process)" : "");
	t->err_exit = HG_EXIT_ENV;
	return -1;
}

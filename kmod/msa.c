// SPDX-License-Identifier: GPL-2.0
/*
 * msa.c - per-thread microstate accounting (Chubb, seed 002), from tracepoints.
 *
 * Each traced thread has an entry in a fixed open-addressing table keyed by
 * pid, allocated while stopped so that probes never allocate. At every
 * transition the TSC time since the last one is added to the state being
 * left. States: on CPU (user, or sys when syscalls are traced), runnable on a
 * run queue, interruptible sleep, uninterruptible sleep, interrupted (a hard
 * irq on its CPU, or a softirq run in its context), stopped, dead.
 *
 * A thread is accounted from the first event that names it: from its birth
 * when it was created while recording (sched_wakeup_new), otherwise from its
 * first sighting. Entries are never removed during a recording.
 *
 * Only threads selected by the pid filter are accounted: with no filter every
 * task on the machine would compete for the table, and a full table would
 * make every probe search it. Lookups stop after HGT_MSA_PROBE_MAX slots for
 * the same reason; a thread that finds no slot is counted in msa_overflow.
 */
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/vmalloc.h>
#include <linux/seq_file.h>
#include <linux/math64.h>
#include <asm/msr.h>
#include <asm/tsc.h>
#include "hgtrace.h"
#include "compat.h"

struct hgt_msa_ent {
	atomic_t pid;		/* 0: free (the idle tasks, pid 0, are never accounted) */
	raw_spinlock_t lock;	/* probes on several CPUs touch one thread */
	s32 tgid;
	u8 state;		/* enum hgt_msa_state */
	u8 in_sys;		/* between sys_enter and sys_exit */
	u16 soft_depth;		/* softirqs running in this thread's context */
	u32 nr_switches;
	u8 acct_state;		/* the state accounted from acct_tsc to last_tsc */
	u64 first_tsc;		/* 0 until initialised */
	u64 last_tsc;		/* last transition */
	u64 acct_tsc;		/* the transition before it */
	u64 cycles[HGT_MSA_NR];
};

#define HGT_MSA_PROBE_MAX	64

static struct hgt_msa_ent *tab;
static u32 cap;			/* power of two */

/*
 * Counters of the table and of msa_sched_at(): tasks that found no slot;
 * switch sides placed at the scheduler's clock, their lag, stale ones; and
 * sides that fell before the thread's last transition (an irq exit after the
 * scheduler's clock read) with the cycles by which they did, and of those the
 * ones that fell before the transition before it too (left). Per CPU, summed
 * when read: a counter shared by every CPU would put one cache line on every
 * traced switch of the machine. Probes add with this_cpu_add(), one
 * instruction that no interrupt on this CPU can split.
 */
struct hgt_msa_counters {
	u64 overflow;
	u64 lag_n, lag_ns, lag_stale;
	u64 lag_before, lag_before_cyc, lag_before_left;
};
static DEFINE_PER_CPU(struct hgt_msa_counters, msa_cnt);
/*
 * the scheduler's clock as the last sched_switch probe on this CPU read it (0:
 * none yet); written by that probe, in line (probes.c)
 */
DEFINE_PER_CPU(u64, hgt_last_switch_ns);

/* msa_counters_sum - every CPU's counters added up; exact once stopped */
static void msa_counters_sum(struct hgt_msa_counters *sum)
{
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const struct hgt_msa_counters *c = per_cpu_ptr(&msa_cnt, cpu);

		sum->overflow += READ_ONCE(c->overflow);
		sum->lag_n += READ_ONCE(c->lag_n);
		sum->lag_ns += READ_ONCE(c->lag_ns);
		sum->lag_stale += READ_ONCE(c->lag_stale);
		sum->lag_before += READ_ONCE(c->lag_before);
		sum->lag_before_cyc += READ_ONCE(c->lag_before_cyc);
		sum->lag_before_left += READ_ONCE(c->lag_before_left);
	}
}

/* msa_counters_zero - stopped only: no probe may be adding */
static void msa_counters_zero(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(&msa_cnt, cpu), 0, sizeof(struct hgt_msa_counters));
}

int hgt_msa_alloc(u32 capacity)
{
	struct hgt_msa_ent *t;
	u32 i;

	capacity = roundup_pow_of_two(clamp_t(u32, capacity, 16, 1u << 20));
	if (!hgt_mem_fits(array_size(capacity, sizeof(*t))))
		return -ENOMEM;
	/* RETRY_MAYFAIL: fail rather than wake the OOM killer */
	t = __vmalloc(array_size(capacity, sizeof(*t)),
		      GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN | __GFP_RETRY_MAYFAIL);
	if (!t)
		return -ENOMEM;
	hgt_msa_free();
	tab = t;
	cap = capacity;
	hgt.msa_capacity = capacity;
	for (i = 0; i < cap; i++)
		raw_spin_lock_init(&tab[i].lock);
	msa_counters_zero();
	return 0;
}

void hgt_msa_free(void)
{
	vfree(tab);
	tab = NULL;
	cap = 0;
}

/* hgt_msa_reset - forget every thread; stopped only */
void hgt_msa_reset(void)
{
	u32 i;

	if (!tab)
		return;
	memset(tab, 0, array_size(cap, sizeof(*tab)));
	for (i = 0; i < cap; i++)
		raw_spin_lock_init(&tab[i].lock);
	msa_counters_zero();
}

u64 hgt_msa_overflow(void)
{
	struct hgt_msa_counters sum;

	msa_counters_sum(&sum);
	return sum.overflow;
}

/*
 * msa_active - are microstates kept in this recording?
 *
 * Only with a pid filter, which cannot change while recording. The probes
 * ask the filter in line before they call a hook (probes.c, hgt_msa_on), so
 * that the default recording (no filter) makes no call here on its hottest
 * paths (every switch, every irq edge); every hook asks again, for the table.
 */
static inline bool msa_active(void)
{
	return tab && READ_ONCE(hgt.filter.nr);
}

/* msa_find - the entry of a pid, created on demand when create is set */
static struct hgt_msa_ent *msa_find(pid_t pid, bool create)
{
	u32 i, slot;

	if (!msa_active() || pid <= 0)
		return NULL;
	slot = hash_32(pid, ilog2(cap));
	for (i = 0; i < min_t(u32, cap, HGT_MSA_PROBE_MAX); i++, slot = (slot + 1) & (cap - 1)) {
		int cur = atomic_read(&tab[slot].pid);

		if (cur == pid)
			return &tab[slot];
		if (cur)
			continue;
		if (!create)
			return NULL;
		cur = atomic_cmpxchg(&tab[slot].pid, 0, pid);
		if (cur == 0 || cur == pid)
			return &tab[slot];
	}
	if (create)
		this_cpu_inc(msa_cnt.overflow);
	return NULL;
}

/* msa_set - account the time since the last transition, then change state; lock held */
static void msa_set(struct hgt_msa_ent *e, u64 tsc, u8 state, s32 tgid)
{
	if (!e->first_tsc) {
		e->first_tsc = tsc;
		e->last_tsc = tsc;
		e->acct_tsc = tsc;
		e->acct_state = state;
		e->tgid = tgid;
		e->state = state;
		return;
	}
	if (e->state == HGT_MSA_DEAD)
		return;
	/* stamps taken on different CPUs may be a few cycles out of order */
	if (tsc > e->last_tsc) {
		e->cycles[e->state] += tsc - e->last_tsc;
		e->acct_tsc = e->last_tsc;
		e->acct_state = e->state;
		e->last_tsc = tsc;
	}
	e->state = state;
}

/*
 * msa_set_side - msa_set() for one side of a switch placed at the scheduler's
 * clock. When a wake-up inside an irq makes the scheduler skip its next clock
 * update (rq_clock_skip_update), that clock read lies inside the irq, before
 * the irq's exit: schedstat ends the current thread's run there and gives
 * the rest of the irq to the next thread. So does this: the time accounted
 * since the side (to the state before the irq's exit) is taken back, and the
 * thread is in its new state from the side on. Only one transition back; a
 * side further back is left at the last transition (counted apart). Both
 * kinds are counted, with the cycles.
 * Until 2026-11-26 that time stayed the interrupted time of the thread that
 * was current: 0.1-0.8% above schedstat per thread in the 6.1 guests, and
 * past the 1% of test_microstates when the host stretched the irqs.
 */
static void msa_set_side(struct hgt_msa_ent *e, u64 tsc, u8 state, s32 tgid)
{
	if (e->first_tsc && tsc < e->last_tsc && e->state != HGT_MSA_DEAD) {
		u64 back = e->last_tsc - tsc;

		this_cpu_inc(msa_cnt.lag_before);
		this_cpu_add(msa_cnt.lag_before_cyc, back);
		if (tsc >= e->acct_tsc) {
			e->cycles[e->acct_state] -= back;
			e->last_tsc = tsc;
		} else {
			this_cpu_inc(msa_cnt.lag_before_left);
		}
	}
	msa_set(e, tsc, state, tgid);
}

static u8 msa_oncpu_state(struct hgt_msa_ent *e, int hard_depth)
{
	if (hard_depth > 0 || e->soft_depth > 0)
		return HGT_MSA_INTERRUPTED;
	return e->in_sys ? HGT_MSA_ONCPU_SYS : HGT_MSA_ONCPU_USER;
}

static bool msa_is_oncpu(u8 state)
{
	return state == HGT_MSA_ONCPU_USER || state == HGT_MSA_ONCPU_SYS ||
	       state == HGT_MSA_INTERRUPTED;
}

/* msa_offcpu_state - what a thread leaving the CPU becomes, from sched_switch */
static u8 msa_offcpu_state(unsigned int prev_state, bool preempt)
{
	if (preempt || !(prev_state & TASK_REPORT))
		return (prev_state & (TASK_DEAD | EXIT_DEAD | EXIT_ZOMBIE)) ?
			HGT_MSA_DEAD : HGT_MSA_RUNNABLE;
	if (prev_state & (TASK_DEAD | EXIT_DEAD | EXIT_ZOMBIE))
		return HGT_MSA_DEAD;
	if (prev_state & (__TASK_STOPPED | __TASK_TRACED))
		return HGT_MSA_STOPPED;
	if (prev_state & TASK_UNINTERRUPTIBLE)
		return HGT_MSA_DISK;
	return HGT_MSA_SLEEP;
}

/*
 * The longest lag taken as a clock read of this switch: on hardware the pick
 * and sched_switch are microseconds apart with interrupts off; under
 * emulation a host stall between them was seen to reach 20 ms (three guests
 * on two cores), which a bound of 10 ms took for a stale field.
 */
#define MSA_LAG_MAX_NS	NSEC_PER_SEC

/*
 * sched_lag_ns - how long before @now's clock the scheduler last set @p's
 * se.exec_start, or -1 when that field is stale: set before the last switch
 * this CPU's probe saw (every pick and every accounting of a running task
 * sets it, so the one of this switch is newer: the idle task's before 6.6 is
 * not), below 0, or beyond MSA_LAG_MAX_NS (not a clock read at all).
 */
static s64 sched_lag_ns(struct task_struct *p, const struct hgt_sched_clocks *now)
{
	u64 at = hgt_sched_exec_start(p);
	s64 ns = (s64)(now->ns - at);

	if (ns < 0 || ns > MSA_LAG_MAX_NS || at < this_cpu_read(hgt_last_switch_ns))
		return -1;
	return ns;
}

/*
 * msa_sched_at - the TSC at which the scheduler switched p out or in
 *
 * __schedule() updates the run queue's clock before it picks next; prev's
 * runtime is summed up to that instant (update_curr() leaves it in
 * se.exec_start) and next's starts at the clock of its pick (set_next_entity()
 * and the other classes' set_next_task; compat.h says where this was
 * checked). That is the sum_exec_runtime of
 * /proc/<pid>/schedstat. The two instants differ when a newly idle CPU pulled
 * next from another one: the clock moved on while it balanced. sched_switch
 * fires later, after the pick, and under emulation a host stall can fall in
 * between; placing both sides at the tracepoint would give that time to the
 * wrong thread. So microstates take each side where the scheduler does. A
 * stale field (sched_lag_ns) leaves that side at the tracepoint, counted. The
 * scheduler's clock and the TSC are read together, once per switch, so that
 * the time the probe spends before it looks at next does not move next's side.
 */
static u64 msa_sched_at(struct task_struct *p, u64 tsc, const struct hgt_sched_clocks *now)
{
	s64 ns = sched_lag_ns(p, now);

	if (ns < 0) {
		this_cpu_inc(msa_cnt.lag_stale);
		return tsc;
	}
	this_cpu_inc(msa_cnt.lag_n);
	this_cpu_add(msa_cnt.lag_ns, ns);
	return now->tsc - div_u64((u64)ns * tsc_khz, USEC_PER_SEC);
}

void hgt_sched_clocks_read(struct hgt_sched_clocks *c)
{
	if (c->tsc)
		return;
	c->tsc = rdtsc_ordered();
	c->ns = sched_clock_cpu(smp_processor_id());
}

/*
 * lag_code - hgt_lag_code() (uapi/hgtrace.h, the code's definition) without
 * its loop: the least e that makes v >> e fit 12 bits is the bits of v beyond
 * 12, one find-last-set instead of a 7-instruction step per bit (issue 54:
 * the lags of a switch's two sides are most of 20 to 70 us, 5 or 6 steps
 * each). The same code for every v; tests/unit/test_lag_code.py compares the
 * two.
 */
static __always_inline u16 lag_code(u64 v)
{
	unsigned int e = v > 0xfff ? fls64(v) - 12 : 0;

	if (e > 15 || (e == 15 && (v >> e) == 0xfff))
		return HGT_LAG_UNKNOWN;
	return (u16)(e << 12 | (v >> e));
}

/*
 * hgt_sched_lag - how many cycles before @tsc the scheduler switched @p out
 * or in, coded for struct hgt_switch: where msa_sched_at() places that side,
 * told to readers of the records. The idle task's field is not kept before
 * 6.6, and a stale one (sched_lag_ns) or a lag beyond the code's range is
 * HGT_LAG_UNKNOWN. Below 0 (the two clocks disagree by a little) is 0, the
 * tracepoint.
 */
u16 hgt_sched_lag(struct task_struct *p, u64 tsc, struct hgt_sched_clocks *now)
{
	s64 ns, lag;

	if (is_idle_task(p))
		return HGT_LAG_UNKNOWN;
	hgt_sched_clocks_read(now);
	ns = sched_lag_ns(p, now);
	if (ns < 0)
		return HGT_LAG_UNKNOWN;
	lag = (s64)div_u64((u64)ns * tsc_khz, USEC_PER_SEC) - (s64)(now->tsc - tsc);
	return lag_code(lag > 0 ? lag : 0);
}

void hgt_msa_switch(u64 tsc, struct hgt_sched_clocks *now, struct task_struct *prev,
		    struct task_struct *next, unsigned int prev_state, bool preempt)
{
	struct hgt_msa_ent *e;
	unsigned long flags;
	bool tprev, tnext;
	u8 off;

	if (!msa_active())
		return;
	tprev = hgt_task_traced(prev);
	tnext = hgt_task_traced(next);
	if (!tprev && !tnext)
		return;
	hgt_sched_clocks_read(now);
	off = msa_offcpu_state(prev_state, preempt);
	/* PREEMPT_RT: waiting for a sleeping spinlock is a blocked, uninterruptible wait */
	if (!preempt && (prev_state & TASK_RTLOCK_WAIT))
		off = HGT_MSA_DISK;
	if (tprev && (e = msa_find(prev->pid, true))) {
		u64 at = msa_sched_at(prev, tsc, now);

		raw_spin_lock_irqsave(&e->lock, flags);
		msa_set_side(e, at, off, prev->tgid);
		e->nr_switches++;
		raw_spin_unlock_irqrestore(&e->lock, flags);
	}
	if (tnext && (e = msa_find(next->pid, true))) {
		u64 at = msa_sched_at(next, tsc, now);

		raw_spin_lock_irqsave(&e->lock, flags);
		msa_set_side(e, at, msa_oncpu_state(e, this_cpu_read(hgt_pcpu.hard_depth)), next->tgid);
		raw_spin_unlock_irqrestore(&e->lock, flags);
	}
}

void hgt_msa_wake(u64 tsc, struct task_struct *p, bool new_task)
{
	struct hgt_msa_ent *e;
	unsigned long flags;

	if (!msa_active() || !hgt_task_traced(p) || !(e = msa_find(p->pid, new_task)))
		return;
	raw_spin_lock_irqsave(&e->lock, flags);
	if (new_task || !msa_is_oncpu(e->state))
		msa_set(e, tsc, HGT_MSA_RUNNABLE, p->tgid);
	raw_spin_unlock_irqrestore(&e->lock, flags);
}

/*
 * hgt_msa_irq - hard irq (per-CPU depth) or softirq (per-thread depth) edge
 *
 * Softirq depth belongs to the thread because on PREEMPT_RT softirqs run in
 * task context and can be preempted in the middle.
 */
void hgt_msa_irq(u64 tsc, bool hard, bool entry)
{
	struct hgt_pcpu *pc;
	struct hgt_msa_ent *e;
	unsigned long flags;

	/* the irq depth matters to microstates only; it is zeroed at start */
	if (!msa_active())
		return;
	pc = this_cpu_ptr(&hgt_pcpu);
	if (hard) {
		if (entry) {
			if (pc->hard_depth++ > 0)
				return;
		} else {
			if (pc->hard_depth <= 0)
				return;		/* exit of an irq that began before we attached */
			if (--pc->hard_depth > 0)
				return;
		}
	}
	if (!current->pid || !hgt_task_traced(current))
		return;
	e = msa_find(current->pid, false);
	if (!e)
		return;
	raw_spin_lock_irqsave(&e->lock, flags);
	if (!hard) {
		if (entry)
			e->soft_depth++;
		else if (e->soft_depth)
			e->soft_depth--;
	}
	if (e->first_tsc && msa_is_oncpu(e->state))
		msa_set(e, tsc, msa_oncpu_state(e, pc->hard_depth), e->tgid);
	raw_spin_unlock_irqrestore(&e->lock, flags);
}

void hgt_msa_syscall(u64 tsc, bool entry)
{
	struct hgt_msa_ent *e;
	unsigned long flags;

	if (!msa_active() || !(e = msa_find(current->pid, false)))
		return;
	raw_spin_lock_irqsave(&e->lock, flags);
	e->in_sys = entry;
	if (e->first_tsc && msa_is_oncpu(e->state))
		msa_set(e, tsc, msa_oncpu_state(e, this_cpu_read(hgt_pcpu.hard_depth)), e->tgid);
	raw_spin_unlock_irqrestore(&e->lock, flags);
}

/* msa_snapshot - copy an entry with its open state accounted up to now */
static void msa_snapshot(struct hgt_msa_ent *e, struct hgt_msa *out)
{
	unsigned long flags;
	u64 now = rdtsc_ordered();

	raw_spin_lock_irqsave(&e->lock, flags);
	out->pid = atomic_read(&e->pid);
	out->tgid = e->tgid;
	out->state = e->state;
	out->nr_switches = e->nr_switches;
	out->first_tsc = e->first_tsc;
	memcpy(out->cycles, e->cycles, sizeof(out->cycles));
	if (e->state == HGT_MSA_DEAD) {
		out->now_tsc = e->last_tsc;
	} else {
		out->now_tsc = now > e->last_tsc ? now : e->last_tsc;
		out->cycles[e->state] += out->now_tsc - e->last_tsc;
	}
	raw_spin_unlock_irqrestore(&e->lock, flags);
}

/* hgt_msa_get - one thread's microstates; -ESRCH when it was never seen */
int hgt_msa_get(struct hgt_msa *out)
{
	struct hgt_msa_ent *e = msa_find(out->pid, false);

	if (!e || !READ_ONCE(e->first_tsc))
		return -ESRCH;
	msa_snapshot(e, out);
	return 0;
}

static u64 cyc2ns(u64 cycles)
{
	return tsc_khz ? mul_u64_u32_div(cycles, 1000000, tsc_khz) : cycles;
}

/* hgt_msa_show - the text table of /proc/hgtrace/msa, times in ns */
void hgt_msa_show(struct seq_file *m)
{
	static const char * const names[HGT_MSA_NR] = {
		"user", "sys", "runnable", "sleep", "disk", "interrupted", "stopped", "dead"
	};
	struct hgt_msa_counters c;
	struct hgt_msa s;
	u32 i, k;

	msa_counters_sum(&c);
	seq_puts(m, "# hgtrace microstates, ns (TSC at ");
	seq_printf(m, "%u kHz); state = current state\n", tsc_khz);
	seq_printf(m, "# switch sides placed at the scheduler's clock: %llu, on average %llu ns before "
		   "sched_switch; at sched_switch (stale clock): %llu\n",
		   c.lag_n, c.lag_n ? div64_u64(c.lag_ns, c.lag_n) : 0, c.lag_stale);
	seq_printf(m, "# switch sides before the thread's last transition: %llu, by %llu ns in all, "
		   "taken back but %llu (further back)\n",
		   c.lag_before, cyc2ns(c.lag_before_cyc), c.lag_before_left);
	seq_puts(m, "# pid tgid state switches");
	for (k = 0; k < HGT_MSA_NR; k++)
		seq_printf(m, " %s", names[k]);
	seq_puts(m, " total\n");
	for (i = 0; tab && i < cap; i++) {
		u64 total = 0;

		if (!atomic_read(&tab[i].pid) || !READ_ONCE(tab[i].first_tsc))
			continue;
		msa_snapshot(&tab[i], &s);
		seq_printf(m, "%d %d %s %u", s.pid, s.tgid, names[s.state], s.nr_switches);
		for (k = 0; k < HGT_MSA_NR; k++) {
			seq_printf(m, " %llu", cyc2ns(s.cycles[k]));
			total += s.cycles[k];
		}
		seq_printf(m, " %llu\n", cyc2ns(total));
	}
}

// SPDX-License-Identifier: GPL-2.0
/*
 * probes.c - one probe per tracepoint: stamp with the TSC, filter, emit.
 *
 * Every probe reads the TSC first, so the stamp is as close as possible to
 * the kernel's own tracepoint (trace-cmd's x86-tsc clock reads the same
 * counter a few instructions later). The kernel headers trace/events/NAME.h are
 * included so that HGT_TP_CHECK (compat.h) stops the build, not the machine, when
 * a tracepoint's prototype changes in some release.
 */
#include <linux/sched.h>
#include <linux/interrupt.h>
#include <linux/hrtimer.h>
#include <linux/siphash.h>
#include <linux/random.h>
#include <linux/vmalloc.h>
#include <linux/threads.h>
#include <linux/tracepoint.h>
#include <linux/kallsyms.h>
#include <linux/log2.h>
#include <linux/lockdep.h>
#include <linux/smp.h>
#include <linux/cpu.h>
#include <trace/events/sched.h>
#include <trace/events/irq.h>
#include <trace/events/timer.h>
#include <trace/events/nmi.h>
#include <trace/events/syscalls.h>
#include <trace/events/task.h>
#include <asm/trace/irq_vectors.h>
#include <asm/msr.h>
#include "hgtrace.h"
#include "compat.h"
#include "uapi/hgtrace_vectors.h"

#define HGT_IRQ_NAMED_MAX	8192	/* irqs above this are recorded but not named */
#define HGT_FUNC_SLOTS		1024	/* distinct callbacks named per recording */
#define HGT_FUNC_PROBE		8	/* slots a probe looks at before it gives up */

static siphash_key_t hgt_key;		/* keys the ids that stand for kernel pointers */

/*
 * The callbacks (hrtimer functions, NMI handlers) seen in this recording.
 * A probe only claims a slot for a new id, notes the pointer and writes a
 * NAME record whose name is still empty; the reader fills the name in when it
 * copies that record out, or hgt_funcs_resolve() when recording stops, in
 * process context: no symbol lookup and no long search inside a probe, where
 * interrupts are off. The table is open addressing keyed by the id (a keyed
 * hash, so evenly spread); a probe looks at HGT_FUNC_PROBE slots at most, and
 * an id that finds none stays unnamed and is counted.
 */
struct hgt_func {
	u32 id;			/* 0: free; claimed with cmpxchg */
	bool resolved;		/* name[] is filled; under hgt.read_lock */
	const void *fn;		/* set by the claimant before its NAME record */
	char name[sizeof(((struct hgt_name *)0)->name)];
};
static struct hgt_func funcs[HGT_FUNC_SLOTS];
static DEFINE_PER_CPU(u64, funcs_unnamed);

/* hgt_ptr_id - a stable 32-bit id for a kernel pointer that does not reveal it */
static inline u32 hgt_ptr_id(const void *p)
{
	u32 id = (u32)siphash_1u64((u64)(unsigned long)p, &hgt_key);

	return id ? id : 1;
}

/* hgt_task_traced - does the pid filter select this task? */
bool hgt_task_traced(struct task_struct *p)
{
	u32 i, nr = hgt.filter.nr;

	if (!nr)
		return true;
	for (i = 0; i < nr; i++)
		if (hgt.filter.pids[i] == p->pid || hgt.filter.pids[i] == p->tgid)
			return true;
	return false;
}

/*
 * hgt_msa_on - are microstates kept in this recording? Only with a pid filter
 * (msa.c, msa_active), which cannot change while recording. Asked here, in
 * line, before each microstate hook is called: the default recording (no
 * filter) then pays a load and a branch for microstates on its hottest paths
 * (every switch, wake-up and irq edge), not a call into msa.c that saved six
 * registers before it looked (20 instructions on 6.1, issue 54).
 */
static __always_inline bool hgt_msa_on(void)
{
	return READ_ONCE(hgt.filter.nr);
}

static inline bool hgt_cpu_on(void)
{
	return cpumask_test_cpu(smp_processor_id(), &hgt.cpus);
}

static inline void hgt_hdr(struct hgt_rec *h, u64 tsc, u8 type, u32 arg)
{
	h->tsc = tsc;
	h->type = type;
	h->len = 0;
	h->flags = 0;
	h->aux = 0;
	h->arg = arg;
}

/* comm_first - the COMM record of a pid not yet seen, unless a nested probe just wrote it */
static noinline void comm_first(u64 tsc, struct task_struct *p, pid_t pid)
{
	struct {
		struct hgt_rec h;
		struct hgt_comm c;
	} r;

	if (test_and_set_bit(pid, hgt.pid_seen))
		return;
	hgt_hdr(&r.h, tsc, HGT_REC_COMM, pid);
	r.c.tgid = p->tgid;
	r.c.pad = 0;
	/* comm may be renamed under us; a torn name is harmless, an unterminated one is not */
	memcpy(r.c.comm, p->comm, sizeof(r.c.comm));
	r.c.comm[sizeof(r.c.comm) - 1] = 0;
	hgt_emit(&r, sizeof(r));
}

/*
 * hgt_comm_once - a COMM record the first time a pid appears in the stream
 *
 * Asked twice a switch and once a wake-up, and the pid is nearly always known:
 * that test is in line, a bit test, and only a new pid calls out (issue 54: the
 * call cost 26 instructions on 6.1 even for a known pid, the record's stack
 * zeroed and guarded before the test).
 */
static __always_inline void hgt_comm_once(u64 tsc, struct task_struct *p)
{
	pid_t pid = p->pid;

	if (unlikely((u32)pid >= PID_MAX_LIMIT) || likely(test_bit(pid, hgt.pid_seen)))
		return;
	comm_first(tsc, p, pid);
}

/*
 * hgt_func_note - claim a slot for a callback's id; a NAME record, its name
 * left for the reader, the first time the id appears. NMI-safe: one cmpxchg.
 */
static void hgt_func_note(u64 tsc, u32 id, const void *fn)
{
	struct {
		struct hgt_rec h;
		struct hgt_name n;
	} r;
	u32 i, cur, slot = id & (HGT_FUNC_SLOTS - 1);

	BUILD_BUG_ON(!is_power_of_2(HGT_FUNC_SLOTS));
	for (i = 0; i < HGT_FUNC_PROBE; i++, slot = (slot + 1) & (HGT_FUNC_SLOTS - 1)) {
		cur = READ_ONCE(funcs[slot].id);
		if (cur == id)
			return;
		if (cur)
			continue;
		cur = cmpxchg(&funcs[slot].id, 0, id);
		if (cur == id)
			return;
		if (cur)
			continue;
		/* the NAME record's commit publishes fn to the reader */
		WRITE_ONCE(funcs[slot].fn, fn);
		hgt_hdr(&r.h, tsc, HGT_REC_NAME, id);
		r.h.flags = HGT_NAME_FUNC;
		memset(r.n.name, 0, sizeof(r.n.name));
		hgt_emit(&r, sizeof(r));
		return;
	}
	this_cpu_inc(funcs_unnamed);
}

/* func_find - the slot of a claimed id, NULL if none */
static struct hgt_func *func_find(u32 id)
{
	u32 i, slot = id & (HGT_FUNC_SLOTS - 1);

	for (i = 0; id && i < HGT_FUNC_PROBE; i++, slot = (slot + 1) & (HGT_FUNC_SLOTS - 1))
		if (READ_ONCE(funcs[slot].id) == id)
			return &funcs[slot];
	return NULL;
}

/*
 * func_resolve - look the symbol up once; "?" when there is none, so that no
 * raw kernel address (which sprint_symbol prints then) reaches user space
 */
static void func_resolve(struct hgt_func *f)
{
	char sym[KSYM_SYMBOL_LEN];
	const void *fn = READ_ONCE(f->fn);

	if (f->resolved)
		return;
	if (!fn || (sprint_symbol_no_offset(sym, (unsigned long)fn), !strncmp(sym, "0x", 2)))
		strscpy(sym, "?", sizeof(sym));
	memset(f->name, 0, sizeof(f->name));
	strscpy(f->name, sym, sizeof(f->name));
	f->resolved = true;
}

/*
 * hgt_func_name - the name of callback @id, for the NAME record being read
 * out; reader side, under hgt.read_lock
 */
void hgt_func_name(u32 id, char *name)
{
	struct hgt_func *f = func_find(id);

	memset(name, 0, HGT_NAME_LEN);
	if (!f) {
		strscpy(name, "?", HGT_NAME_LEN);
		return;
	}
	func_resolve(f);
	memcpy(name, f->name, HGT_NAME_LEN);
}

/* hgt_name_fill - name a callback's NAME record in a copy being read out; under hgt.read_lock */
void hgt_name_fill(struct hgt_rec *r)
{
	if (r->type == HGT_REC_NAME && r->flags == HGT_NAME_FUNC &&
	    r->len >= sizeof(*r) + HGT_NAME_LEN)
		hgt_func_name(r->arg, ((struct hgt_name *)(r + 1))->name);
}

/*
 * hgt_funcs_resolve - name every callback seen, once the probes are detached,
 * so that a callback of a module unloaded before the reader gets to its NAME
 * record is still named as it was
 */
void hgt_funcs_resolve(void)
{
	u32 i;

	mutex_lock(&hgt.read_lock);
	for (i = 0; i < HGT_FUNC_SLOTS; i++)
		if (READ_ONCE(funcs[i].id))
			func_resolve(&funcs[i]);
	mutex_unlock(&hgt.read_lock);
}

/* hgt_funcs_unnamed - callbacks left unnamed because their part of the table was full */
u64 hgt_funcs_unnamed(void)
{
	u64 n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += READ_ONCE(*per_cpu_ptr(&funcs_unnamed, cpu));
	return n;
}

/*
 * hgt_on - is recording on? Every probe asks first, inside a stretch with
 * interrupts off that lasts until its last write: the tracepoint's own (the
 * scheduler's switch and migration, hard irqs, x86 vectors) or HGT_IRQS_OFF's.
 * The probes stay attached when recording stops (HGT_IOC_OFF), and
 * hgt_probes_quiesce() knows that a probe which saw recording on has returned
 * once its CPU has taken an interrupt. NMIs are apart (probe_nmi).
 */
static __always_inline bool hgt_on(void)
{
	lockdep_assert_irqs_disabled();
	return READ_ONCE(hgt.running);
}

/*
 * Stamp order on a CPU is write order only if nothing writes between a
 * probe's stamp and its write. Most tracepoints fire with interrupts off;
 * these can fire with them on, so an interrupt there would write its records
 * first, with later stamps (seen: a tick slipped in after softirq_entry's
 * stamp, and on PREEMPT_RT after a soft hrtimer's):
 *   softirq_entry/exit     softirqs run with interrupts enabled;
 *   hrtimer_expire_*       soft hrtimers run in the timer softirq, and on
 *                          PREEMPT_RT every hrtimer not marked HARD does;
 *   sched_waking/wakeup    try_to_wake_up() on current takes no lock;
 *   sched_process_exit, sys_enter/exit   process context.
 * Those probes hold interrupts off from their stamp to their write. Where
 * interrupts are off already this costs a flags save and restore. Only an
 * NMI can still land in between (docs/hgtrace-abi.md, "Order"). Holding them
 * off also keeps a probe that its kernel calls preemptible (7.3: compat.h,
 * HGT_TP_PRIO) on one CPU from its stamp to its write.
 */
#define HGT_IRQS_OFF(call)			\
	do {					\
		unsigned long irqf;		\
						\
		local_irq_save(irqf);		\
		if (hgt_on())			\
			call;			\
		local_irq_restore(irqf);	\
	} while (0)

/* ---- scheduler ---- */

/*
 * switch_record - the SWITCH record, with the first sightings' COMM records
 * before it. The record is declared and filled here, after the lags are
 * read: the kernel's INIT_STACK_ALL_ZERO zeroes it where it is declared, and
 * filled with no call in between the compiler drops those zeroes; declared at
 * the probe's top, every switch zeroed it before the probe asked anything.
 */
static __always_inline void switch_record(u64 tsc, struct hgt_sched_clocks *now, bool preempt,
					  struct task_struct *prev, struct task_struct *next,
					  unsigned int prev_state)
{
	u16 prev_lag, next_lag;

	hgt_comm_once(tsc, prev);
	hgt_comm_once(tsc, next);
	prev_lag = hgt_sched_lag(prev, tsc, now);
	next_lag = hgt_sched_lag(next, tsc, now);
	{
		struct {
			struct hgt_rec h;
			struct hgt_switch s;
		} r;

		hgt_hdr(&r.h, tsc, HGT_REC_SWITCH, next->pid);
		r.h.flags = preempt ? HGT_SWITCH_PREEMPT : 0;
		r.h.aux = next->policy;
		r.s.prev_pid = prev->pid;
		r.s.prev_state = prev_state;
		r.s.prev_prio = prev->prio;
		r.s.next_prio = next->prio;
		r.s.prev_lag = prev_lag;
		r.s.next_lag = next_lag;
		hgt_emit(&r, sizeof(r));
	}
}

static void probe_sched_switch(void *data, bool preempt, struct task_struct *prev,
			       struct task_struct *next, unsigned int prev_state)
{
	struct hgt_sched_clocks now = { 0 };
	u64 tsc;

	if (!hgt_on())
		return;
	tsc = rdtsc_ordered();
	if (hgt_msa_on())
		hgt_msa_switch(tsc, &now, prev, next, prev_state, preempt);
	if (hgt_cpu_on() && (hgt_task_traced(prev) || hgt_task_traced(next)))
		switch_record(tsc, &now, preempt, prev, next, prev_state);
	/* this switch's clock read bounds the next lags (msa.c, sched_lag_ns) */
	if (now.tsc)
		this_cpu_write(hgt_last_switch_ns, now.ns);
}

static void sched_wake_record(u64 tsc, u8 type, struct task_struct *p)
{
	if (type != HGT_REC_WAKEUP && hgt_msa_on())
		hgt_msa_wake(tsc, p, type == HGT_REC_WAKEUP_NEW);
	if (!hgt_cpu_on() || !hgt_task_traced(p))
		return;
	hgt_comm_once(tsc, p);
	{
		/* declared after the COMM record's call: zeroed, then filled with no call between (switch_record) */
		struct {
			struct hgt_rec h;
			struct hgt_wake w;
		} r;

		hgt_hdr(&r.h, tsc, type, p->pid);
		r.w.target_cpu = task_cpu(p);
		r.w.prio = p->prio;
		r.w.pad = 0;
		hgt_emit(&r, sizeof(r));
	}
}

/* sched_waking, sched_wakeup and sched_wakeup_new share this probe; data = type */
static void probe_sched_wake(void *data, struct task_struct *p)
{
	HGT_IRQS_OFF(sched_wake_record(rdtsc_ordered(), (u8)(unsigned long)data, p));
}

static void probe_sched_migrate(void *data, struct task_struct *p, int dest_cpu)
{
	struct {
		struct hgt_rec h;
		struct hgt_migrate m;
	} r;
	u64 tsc;

	if (!hgt_on())
		return;
	tsc = rdtsc_ordered();
	if (!hgt_cpu_on() || !hgt_task_traced(p))
		return;
	hgt_comm_once(tsc, p);
	hgt_hdr(&r.h, tsc, HGT_REC_MIGRATE, p->pid);
	r.m.orig_cpu = task_cpu(p);
	r.m.dest_cpu = dest_cpu;
	r.m.pad = 0;
	hgt_emit(&r, sizeof(r));
}

/* ---- interrupts ---- */

static void probe_irq_entry(void *data, int irq, struct irqaction *action)
{
	struct hgt_rec r;
	u64 tsc;

	if (!hgt_on())
		return;
	tsc = rdtsc_ordered();
	if (hgt_msa_on())
		hgt_msa_irq(tsc, true, true);
	if (!hgt_cpu_on())
		return;
	if (irq >= 0 && irq < HGT_IRQ_NAMED_MAX && !test_bit(irq, hgt.irq_named) &&
	    !test_and_set_bit(irq, hgt.irq_named)) {
		struct {
			struct hgt_rec h;
			struct hgt_name n;
		} nr;

		hgt_hdr(&nr.h, tsc, HGT_REC_NAME, irq);
		nr.h.flags = HGT_NAME_IRQ;
		memset(nr.n.name, 0, sizeof(nr.n.name));
		strscpy(nr.n.name, action && action->name ? action->name : "?", sizeof(nr.n.name));
		hgt_emit(&nr, sizeof(nr));
	}
	hgt_hdr(&r, tsc, HGT_REC_IRQ_ENTRY, irq);
	hgt_emit(&r, sizeof(r));
}

static void probe_irq_exit(void *data, int irq, struct irqaction *action, int ret)
{
	struct hgt_rec r;
	u64 tsc;

	if (!hgt_on())
		return;
	tsc = rdtsc_ordered();
	if (hgt_cpu_on()) {
		hgt_hdr(&r, tsc, HGT_REC_IRQ_EXIT, irq);
		r.flags = ret;
		hgt_emit(&r, sizeof(r));
	}
	if (hgt_msa_on())
		hgt_msa_irq(tsc, true, false);
}

static void softirq_record(u64 tsc, u8 type, unsigned int vec)
{
	struct hgt_rec r;

	if (type == HGT_REC_SOFTIRQ_ENTRY && hgt_msa_on())
		hgt_msa_irq(tsc, false, true);
	if (hgt_cpu_on()) {
		hgt_hdr(&r, tsc, type, vec);
		hgt_emit(&r, sizeof(r));
	}
	if (type == HGT_REC_SOFTIRQ_EXIT && hgt_msa_on())
		hgt_msa_irq(tsc, false, false);
}

/* softirq_entry and softirq_exit; data = type */
static void probe_softirq(void *data, unsigned int vec)
{
	HGT_IRQS_OFF(softirq_record(rdtsc_ordered(), (u8)(unsigned long)data, vec));
}

static void sched_exit_record(u64 tsc, struct task_struct *p)
{
	struct hgt_rec r;

	if (!hgt_cpu_on() || !hgt_task_traced(p))
		return;
	hgt_comm_once(tsc, p);
	hgt_hdr(&r, tsc, HGT_REC_EXIT, p->pid);
	hgt_emit(&r, sizeof(r));
}

/* sched_process_exit in its two forms (compat.h): group_dead is not recorded */
static void probe_sched_exit(void *data, struct task_struct *p)
{
	HGT_IRQS_OFF(sched_exit_record(rdtsc_ordered(), p));
}

static void probe_sched_exit_group(void *data, struct task_struct *p, bool group_dead)
{
	HGT_IRQS_OFF(sched_exit_record(rdtsc_ordered(), p));
}

/*
 * task_rename: a task already named in the stream gets a second COMM record with
 * its new name, which readers take from there on. A kernel thread runs before it
 * is named (kthread_create names it once it waits: an irq thread created while
 * recording was named after kthreadd). The new name is the argument: the task's
 * own comm still holds the old one here. A task not yet seen is named by its
 * first sighting, the new name by then.
 */
static void task_rename_record(u64 tsc, struct task_struct *p, const char *comm)
{
	struct {
		struct hgt_rec h;
		struct hgt_comm c;
	} r;
	pid_t pid = p->pid;

	if (!hgt_cpu_on() || pid < 0 || pid >= PID_MAX_LIMIT || !test_bit(pid, hgt.pid_seen))
		return;
	hgt_hdr(&r.h, tsc, HGT_REC_COMM, pid);
	r.c.tgid = p->tgid;
	r.c.pad = 0;
	strscpy_pad(r.c.comm, comm, sizeof(r.c.comm));
	hgt_emit(&r, sizeof(r));
}

static void probe_task_rename(void *data, struct task_struct *p, const char *comm)
{
	HGT_IRQS_OFF(task_rename_record(rdtsc_ordered(), p, comm));
}

/* The x86 irq_vectors tracepoints; data = enum hgt_vec, entry and exit separate */
static void probe_vec_entry(void *data, int vector)
{
	struct hgt_rec r;
	u64 tsc;

	if (!hgt_on())
		return;
	tsc = rdtsc_ordered();
	if (hgt_msa_on())
		hgt_msa_irq(tsc, true, true);
	if (!hgt_cpu_on())
		return;
	hgt_hdr(&r, tsc, HGT_REC_VEC_ENTRY, vector);
	r.flags = (u8)(unsigned long)data;
	hgt_emit(&r, sizeof(r));
}

static void probe_vec_exit(void *data, int vector)
{
	struct hgt_rec r;
	u64 tsc;

	if (!hgt_on())
		return;
	tsc = rdtsc_ordered();
	if (hgt_cpu_on()) {
		hgt_hdr(&r, tsc, HGT_REC_VEC_EXIT, vector);
		r.flags = (u8)(unsigned long)data;
		hgt_emit(&r, sizeof(r));
	}
	if (hgt_msa_on())
		hgt_msa_irq(tsc, true, false);
}

/*
 * An NMI is not held off by interrupts being off, so the NMI probe says when it
 * is inside (NMIs do not nest), and hgt_probes_quiesce() waits for it to leave.
 * A full barrier between the mark and the flag's test, and one between the
 * flag's store and the look at the mark (kick_all_cpus_sync's): either the
 * probe sees recording off, or the quiesce sees the probe inside.
 */
static DEFINE_PER_CPU(int, nmi_inside);

static void nmi_record(void *handler, s64 delta_ns, int handled)
{
	u64 tsc = rdtsc_ordered();
	struct {
		struct hgt_rec h;
		struct hgt_nmi n;
	} r;
	u32 id;

	if (!hgt_cpu_on())
		return;
	id = hgt_ptr_id(handler);
	hgt_func_note(tsc, id, handler);
	hgt_hdr(&r.h, tsc, HGT_REC_NMI, id);
	r.n.delta_ns = delta_ns < 0 ? 0 : delta_ns > U32_MAX ? U32_MAX : (u32)delta_ns;
	r.n.handled = handled;
	hgt_emit(&r, sizeof(r));
}

/* nmi_handler fires after each NMI handler with its duration; named like a callback */
static void probe_nmi(void *data, void *handler, s64 delta_ns, int handled)
{
	this_cpu_write(nmi_inside, 1);
	smp_mb();
	if (READ_ONCE(hgt.running))
		nmi_record(handler, delta_ns, handled);
	smp_store_release(this_cpu_ptr(&nmi_inside), 0);
}

/*
 * hgt_probes_quiesce - return once no probe that saw recording on is still
 * running; hgt.running was cleared before the call
 *
 * Each probe tests the flag and writes inside one stretch with interrupts off
 * (hgt_on), so once every other CPU has taken an interrupt each has left any
 * such stretch; this CPU is in none (process context). kick_all_cpus_sync()
 * sends each an IPI and waits for it to be handled: it waits on no task, since
 * a CPU takes an IPI whatever runs there, a traced task preempted anywhere
 * included. Then the NMI probe's mark. Unlike detaching, no grace period.
 */
void hgt_probes_quiesce(void)
{
	int cpu;

	/*
	 * CPU hotplug held off: the IPIs go to online CPUs only, and a CPU going down
	 * has left the online mask while it still switches to idle (its sched_switch
	 * probe writing). Hotplug is either not begun or done with that CPU.
	 */
	cpus_read_lock();
	kick_all_cpus_sync();	/* smp_mb() first: the flag's store is seen before the IPIs */
	for_each_possible_cpu(cpu)
		while (smp_load_acquire(per_cpu_ptr(&nmi_inside, cpu)))
			cpu_relax();
	cpus_read_unlock();
}

/* ---- timers ---- */

static void hrtimer_entry_record(u64 tsc, struct hrtimer *t)
{
	struct {
		struct hgt_rec h;
		struct hgt_hrtimer t;
	} r;
	void *fn;

	if (!hgt_cpu_on())
		return;
	fn = hgt_hrtimer_function(t);
	hgt_hdr(&r.h, tsc, HGT_REC_HRTIMER_ENTRY, hgt_ptr_id(t));
	r.t.func_id = hgt_ptr_id(fn);
	r.t.pad = 0;
	hgt_func_note(tsc, r.t.func_id, fn);
	hgt_emit(&r, sizeof(r));
}

/* hrtimer_expire_entry in its two forms (compat.h): now is not recorded */
static void probe_hrtimer_entry(void *data, struct hrtimer *t, ktime_t *now)
{
	HGT_IRQS_OFF(hrtimer_entry_record(rdtsc_ordered(), t));
}

static void probe_hrtimer_entry_now(void *data, struct hrtimer *t, ktime_t now)
{
	HGT_IRQS_OFF(hrtimer_entry_record(rdtsc_ordered(), t));
}

static void hrtimer_exit_record(u64 tsc, struct hrtimer *t)
{
	struct hgt_rec r;

	if (!hgt_cpu_on())
		return;
	hgt_hdr(&r, tsc, HGT_REC_HRTIMER_EXIT, hgt_ptr_id(t));
	hgt_emit(&r, sizeof(r));
}

static void probe_hrtimer_exit(void *data, struct hrtimer *t)
{
	HGT_IRQS_OFF(hrtimer_exit_record(rdtsc_ordered(), t));
}

/* ---- system calls (off by default) ---- */

static void sys_enter_record(u64 tsc, long id)
{
	struct hgt_rec r;

	if (!hgt_task_traced(current))
		return;
	if (hgt_msa_on())
		hgt_msa_syscall(tsc, true);
	if (!hgt_cpu_on())
		return;
	hgt_hdr(&r, tsc, HGT_REC_SYS_ENTER, (u32)id);
	hgt_emit(&r, sizeof(r));
}

static void sys_exit_record(u64 tsc, long ret)
{
	struct hgt_rec r;

	if (!hgt_task_traced(current))
		return;
	if (hgt_cpu_on()) {
		hgt_hdr(&r, tsc, HGT_REC_SYS_EXIT, (u32)ret);
		hgt_emit(&r, sizeof(r));
	}
	if (hgt_msa_on())
		hgt_msa_syscall(tsc, false);
}

static void probe_sys_enter(void *data, struct pt_regs *regs, long id)
{
	HGT_IRQS_OFF(sys_enter_record(rdtsc_ordered(), id));
}

static void probe_sys_exit(void *data, struct pt_regs *regs, long ret)
{
	HGT_IRQS_OFF(sys_exit_record(rdtsc_ordered(), ret));
}

/*
 * Every probe against the kernel's own prototype of its tracepoint (compat.h):
 * one line naming the tracepoint and the kernel where none fits. The x86 vector
 * probes share one prototype; local_timer stands for them all.
 */
HGT_TP_CHECK(sched_switch, probe_sched_switch);
HGT_TP_CHECK(sched_waking, probe_sched_wake);
HGT_TP_CHECK(sched_wakeup, probe_sched_wake);
HGT_TP_CHECK(sched_wakeup_new, probe_sched_wake);
HGT_TP_CHECK(sched_migrate_task, probe_sched_migrate);
HGT_TP_CHECK(sched_process_exit, probe_sched_exit, probe_sched_exit_group);
HGT_TP_CHECK(task_rename, probe_task_rename);
HGT_TP_CHECK(irq_handler_entry, probe_irq_entry);
HGT_TP_CHECK(irq_handler_exit, probe_irq_exit);
HGT_TP_CHECK(softirq_entry, probe_softirq);
HGT_TP_CHECK(softirq_exit, probe_softirq);
HGT_TP_CHECK(local_timer_entry, probe_vec_entry);
HGT_TP_CHECK(local_timer_exit, probe_vec_exit);
HGT_TP_CHECK(nmi_handler, probe_nmi);
HGT_TP_CHECK(hrtimer_expire_entry, probe_hrtimer_entry, probe_hrtimer_entry_now);
HGT_TP_CHECK(hrtimer_expire_exit, probe_hrtimer_exit);
HGT_TP_CHECK(sys_enter, probe_sys_enter);
HGT_TP_CHECK(sys_exit, probe_sys_exit);

#define T(type)	((void *)(unsigned long)(type))
/* a tracepoint's entry: its probe, or none where the build left it out (HGT_TP_SKIP) */
#define TP(name, probe, data, ev)	{ #name, HGT_TP_PROBE(name, probe), data, ev }
/* the x86 vectors (uapi/hgtrace_vectors.h): an entry and an exit probe each */
#define VEC(name, kind) \
	TP(name##_entry, probe_vec_entry, T(kind), HGT_EV_VECTORS), \
	TP(name##_exit, probe_vec_exit, T(kind), HGT_EV_VECTORS),

const struct hgt_probe_desc hgt_probes[] = {
	TP(sched_switch, probe_sched_switch, NULL, HGT_EV_SCHED),
	TP(sched_waking, probe_sched_wake, T(HGT_REC_WAKING), HGT_EV_SCHED),
	TP(sched_wakeup, probe_sched_wake, T(HGT_REC_WAKEUP), HGT_EV_SCHED),
	TP(sched_wakeup_new, probe_sched_wake, T(HGT_REC_WAKEUP_NEW), HGT_EV_SCHED),
	TP(sched_migrate_task, probe_sched_migrate, NULL, HGT_EV_SCHED),
	TP(sched_process_exit, HGT_TP_PICK(sched_process_exit, probe_sched_exit, probe_sched_exit_group),
	   NULL, HGT_EV_SCHED),
	TP(task_rename, probe_task_rename, NULL, HGT_EV_SCHED),
	TP(irq_handler_entry, probe_irq_entry, NULL, HGT_EV_IRQ),
	TP(irq_handler_exit, probe_irq_exit, NULL, HGT_EV_IRQ),
	TP(softirq_entry, probe_softirq, T(HGT_REC_SOFTIRQ_ENTRY), HGT_EV_SOFTIRQ),
	TP(softirq_exit, probe_softirq, T(HGT_REC_SOFTIRQ_EXIT), HGT_EV_SOFTIRQ),
	HGT_VECTORS(VEC)
	TP(nmi_handler, probe_nmi, NULL, HGT_EV_NMI),
	TP(hrtimer_expire_entry, HGT_TP_PICK(hrtimer_expire_entry, probe_hrtimer_entry, probe_hrtimer_entry_now),
	   NULL, HGT_EV_HRTIMER),
	TP(hrtimer_expire_exit, probe_hrtimer_exit, NULL, HGT_EV_HRTIMER),
	TP(sys_enter, probe_sys_enter, NULL, HGT_EV_SYSCALLS),
	TP(sys_exit, probe_sys_exit, NULL, HGT_EV_SYSCALLS),
};
const unsigned int hgt_nr_probes = ARRAY_SIZE(hgt_probes);

/* hgt_probes_init - allocate the first-sighting bitmaps and the id key */
int hgt_probes_init(void)
{
	get_random_bytes(&hgt_key, sizeof(hgt_key));
	hgt.pid_seen = vzalloc(BITS_TO_LONGS(PID_MAX_LIMIT) * sizeof(long));
	hgt.irq_named = vzalloc(BITS_TO_LONGS(HGT_IRQ_NAMED_MAX) * sizeof(long));
	if (!hgt.pid_seen || !hgt.irq_named) {
		hgt_probes_exit();
		return -ENOMEM;
	}
	return 0;
}

void hgt_probes_exit(void)
{
	vfree(hgt.pid_seen);
	vfree(hgt.irq_named);
	hgt.pid_seen = NULL;
	hgt.irq_named = NULL;
}

/*
 * hgt_probes_reset - forget what was named, so a new recording is
 * self-contained; stopped, under hgt.read_lock (the reader names callbacks)
 */
void hgt_probes_reset(void)
{
	int cpu;

	bitmap_zero(hgt.pid_seen, PID_MAX_LIMIT);
	bitmap_zero(hgt.irq_named, HGT_IRQ_NAMED_MAX);
	memset(funcs, 0, sizeof(funcs));
	for_each_possible_cpu(cpu)
		*per_cpu_ptr(&funcs_unnamed, cpu) = 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * ks_export.c - the KernelShark export (export.h, ks_*): the kernel's
 * records as standard events in the top buffer, hourglass's records and
 * the judged gaps in buffer "hourglass", each CPU's stream put back in time
 * order through a bounded window, and optionally a session (ks_session.h).
 *
 * Every timestamp written is tsc - base_tsc (at least 1: KernelShark reads 0
 * as unset), with TSC2NSEC from the run's TSC frequency, so trace-cmd and
 * KernelShark show the report's seconds.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export.h"
#include "kitem.h"
#include "ks_events.h"
#include "ks_session.h"
#include "out_tmp.h"
#include "reorder.h"

#define KERNEL_HORIZON_S	2e-3	/* a kernel record may come this late and keep its place */
#define KERNEL_WINDOW_MAX	65536	/* ... unless its CPU has this many records held */
#define HG_HORIZON_MIN_S	20e-3	/* hourglass's records: at least this, see exp_run.periods */
#define HG_WINDOW_MAX		(1u << 18)
#define COMM_SLOTS		4096	/* cached task names: a switch names two tasks */
#define IRQ_SLOTS		256
#define STR_MAX			255	/* longest string field written */
#define KS_PLUGIN_FILE		"plugin-hourglass.so"	/* ks-plugin/: what the session loads */

enum hkind { HK_IV_START, HK_IV_END, HK_GAP, HK_RELEASE, HK_DONE, HK_MISS, HK_WAKE };

/* an event of buffer "hourglass" held for order */
struct hitem {
	uint64_t ts;
	uint8_t rank;
	uint8_t kind, flags, pad;
	uint16_t thread, pad2;
	uint64_t a;		/* cycles (duration, deadline, response) or the lateness in ns */
	struct hgg_gap *gap;	/* HK_GAP: a copy, back to the pool once written */
};
_Static_assert(sizeof(struct hitem) == RO_ITEM, "an hourglass event fills a reorder slot");

struct comm_slot {
	uint32_t pid;
	uint8_t valid;
	char comm[16];
};

struct irq_slot {
	uint32_t irq;
	uint8_t valid;
	uint8_t len;		/* with the NUL */
	char name[40];
};

struct ks_cpu {
	struct ro_lane win;
	struct td_lane *lane;
	uint32_t cur;		/* the task on the CPU, by the switches written so far */
};

struct ks_export {
	struct exp_run run;	/* the arrays copied below */
	uint32_t *tids;
	char **thread_names;
	char *path, *session, *companion;
	struct td_writer *td;
	struct ks_events ev;
	int hg_buf;
	double hz;
	uint32_t mult, shift;	/* TSC2NSEC */
	uint64_t first;		/* the earliest stamp written: the fewest cycles that make 1 ns */
	unsigned check_in;	/* hooks until the writer's error state is looked at again */
	struct ro_window kwin, hwin;
	struct ks_cpu *cpu;
	struct ro_lane *hlane, *glane;	/* per CPU: buffer "hourglass"'s events; its gaps (late) */
	struct td_lane **hg_lane;	/* buffer "hourglass", per CPU */
	uint8_t *hg_cpus;	/* CPUs with hourglass events */
	uint64_t hg_front, hg_swept;
	uint64_t *gap_front;	/* per CPU: the latest end of a gap handed in (rebased) */
	uint64_t early;		/* records before base_tsc */
	uint64_t hg_early;
	uint64_t kernel_events, hourglass_events, gaps, lost_events;
	struct comm_slot comm[COMM_SLOTS];
	struct irq_slot irq[IRQ_SLOTS];
	uint32_t *funcs;	/* the function ids seen (hrtimer callbacks, NMI handlers): a set */
	size_t nfuncs, capfuncs;
	int func_zero;
	struct ks_focus focus[KS_FOCUS_N];
	struct gap_block *pool;	/* gap copies free for reuse: as many as the window held at most */
	const struct ks_focus *gap;	/* the session's moment, chosen by ks_drain(); NULL: the start */
	char *plugin;		/* the hourglass plugin the session loads, or NULL */
	char *tmp_dat, *tmp_hg, *tmp_ses;	/* ks_write()'s files, until ks_commit() names them */
};

struct gap_block {
	union {
		struct hgg_gap g;
		struct gap_block *next;
	};
};

static struct hgg_gap *gap_get(struct ks_export *x)
{
	struct gap_block *b = x->pool;

	if (!b)
		return malloc(sizeof(struct gap_block));
	x->pool = b->next;
	return &b->g;
}

static void gap_put(struct ks_export *x, struct hgg_gap *g)
{
	struct gap_block *b = (struct gap_block *)g;

	if (!g)
		return;
	b->next = x->pool;
	x->pool = b;
}

static inline void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static inline void put_common(uint8_t *p, const struct td_event *e, int32_t pid)
{
	put16(p, e->id);
	put32(p + 4, (uint32_t)pid);
}

/* a char[16] field from a cached name: 15 bytes at most, zero-padded to 16 */
static inline void put_comm(uint8_t *p, const char *s16)
{
	memcpy(p, s16, 16);
}

/* a failed write is kept by the writer: looked at every few thousand hooks, and at the end */
static inline int check(struct ks_export *x, struct hg_err *err)
{
	if (__builtin_expect(--x->check_in, 1))
		return 0;
	x->check_in = 4096;
	return td_failed(x->td, err);
}

/*
 * rebase - a TSC stamp as cycles since the run's start, never below x->first: what came
 * before the start is counted in @early and written at 1 ns. Never 0 ns: KernelShark's
 * loader takes a CPU whose next entry is stamped 0 for one with nothing left, and lists
 * that CPU's whole lane after every other (seen on a demo run, its session's markers
 * then 240 ms off their gap).
 */
static uint64_t rebase(struct ks_export *x, uint64_t tsc, uint64_t *early)
{
	if (tsc >= x->run.base_tsc + x->first)
		return tsc - x->run.base_tsc;
	if (tsc < x->run.base_tsc)
		(*early)++;
	return x->first;
}

/* cycles as nanoseconds, by the file's own TSC2NSEC arithmetic */
static inline uint64_t cycles_ns(const struct ks_export *x, uint64_t c)
{
	return td_to_ns(c, x->mult, x->shift);
}

static int thread_of_pid(const struct ks_export *x, uint32_t pid)
{
	int k;

	for (k = 0; pid && k < x->run.nthreads; k++)
		if (x->tids[k] == pid)
			return k;
	return -1;
}

/* a task's name for comm fields (16 bytes, zero-padded): hg-thread-K for hourglass's, else
 * what the recording said */
static const char *comm_of(struct ks_export *x, uint32_t pid)
{
	static const char unknown[16];
	struct comm_slot *s = &x->comm[pid & (COMM_SLOTS - 1)];
	const char *name;
	int k;

	if (s->valid && s->pid == pid)
		return s->comm;
	k = thread_of_pid(x, pid);
	name = k >= 0 ? x->thread_names[k] : x->run.names.comm ? x->run.names.comm(x->run.names.ctx, pid) : NULL;
	if (!name)
		return unknown;	/* not known yet: asked again next time */
	s->pid = pid;
	s->valid = 1;
	memset(s->comm, 0, sizeof(s->comm));
	strncpy(s->comm, name, 15);
	return s->comm;
}

static const struct irq_slot *irq_of(struct ks_export *x, uint32_t irq)
{
	static const struct irq_slot none = { .len = 1 };
	struct irq_slot *s = &x->irq[irq & (IRQ_SLOTS - 1)];
	const char *name;

	if (s->valid && s->irq == irq)
		return s;
	name = x->run.names.irq ? x->run.names.irq(x->run.names.ctx, irq) : NULL;
	if (!name)
		return &none;
	s->irq = irq;
	s->valid = 1;
	s->len = strnlen(name, sizeof(s->name) - 1) + 1;
	memcpy(s->name, name, s->len - 1);
	s->name[s->len - 1] = 0;
	return s;
}

static void func_seen(struct ks_export *x, uint32_t id)
{
	size_t i;

	if (!id) {
		x->func_zero = 1;
		return;
	}
	if (2 * (x->nfuncs + 1) > x->capfuncs) {
		size_t cap = x->capfuncs ? 2 * x->capfuncs : 256;
		uint32_t *t = calloc(cap, sizeof(*t));

		if (!t)
			return;		/* the name is missing from kallsyms: %ps prints the number */
		for (i = 0; i < x->capfuncs; i++)
			if (x->funcs[i]) {
				size_t j = (x->funcs[i] * 2654435761u) & (cap - 1);

				while (t[j])
					j = (j + 1) & (cap - 1);
				t[j] = x->funcs[i];
			}
		free(x->funcs);
		x->funcs = t;
		x->capfuncs = cap;
	}
	for (i = (id * 2654435761u) & (x->capfuncs - 1); x->funcs[i]; i = (i + 1) & (x->capfuncs - 1))
		if (x->funcs[i] == id)
			return;
	x->funcs[i] = id;
	x->nfuncs++;
}

static void emit_wake(struct ks_export *x, struct td_lane *l, const struct td_event *e, const struct kitem *it,
		      uint32_t cur)
{
	uint8_t *p = td_reserve(l, it->ts, e->fixed);
	struct hgt_wake w;

	memcpy(&w, it->p, sizeof(w));
	put_common(p, e, cur);
	put_comm(p + e->off[WK_COMM], comm_of(x, it->arg));
	put32(p + e->off[WK_PID], it->arg);
	put32(p + e->off[WK_PRIO], (uint32_t)(int32_t)w.prio);
	put32(p + e->off[WK_TARGET_CPU], w.target_cpu);
}

/* one kernel record, in its CPU's time order, as its standard event */
static void emit_kernel(struct ks_export *x, struct ks_cpu *c, const struct kitem *it)
{
	const struct ks_events *ev = &x->ev;
	struct td_lane *l = c->lane;
	const struct td_event *e;
	uint8_t *p;

	switch (it->type) {
	case HGT_REC_SWITCH: {
		struct hgt_switch s;

		memcpy(&s, it->p, sizeof(s));
		e = &ev->sw;
		p = td_reserve(l, it->ts, e->fixed);
		put_common(p, e, s.prev_pid);
		put_comm(p + e->off[SW_PREV_COMM], comm_of(x, s.prev_pid));
		put32(p + e->off[SW_PREV_PID], s.prev_pid);
		put32(p + e->off[SW_PREV_PRIO], (uint32_t)(int32_t)s.prev_prio);
		put64(p + e->off[SW_PREV_STATE], s.prev_state);
		put_comm(p + e->off[SW_NEXT_COMM], comm_of(x, it->arg));
		put32(p + e->off[SW_NEXT_PID], it->arg);
		put32(p + e->off[SW_NEXT_PRIO], (uint32_t)(int32_t)s.next_prio);
		c->cur = it->arg;
		break;
	}
	case HGT_REC_WAKING:
		emit_wake(x, l, &ev->waking, it, c->cur);
		break;
	case HGT_REC_WAKEUP:
		emit_wake(x, l, &ev->wakeup, it, c->cur);
		break;
	case HGT_REC_WAKEUP_NEW:
		emit_wake(x, l, &ev->wakeup_new, it, c->cur);
		break;
	case HGT_REC_MIGRATE: {
		struct hgt_migrate m;

		memcpy(&m, it->p, sizeof(m));
		e = &ev->migrate;
		p = td_reserve(l, it->ts, e->fixed);
		put_common(p, e, c->cur);
		put_comm(p + e->off[MG_COMM], comm_of(x, it->arg));
		put32(p + e->off[MG_PID], it->arg);
		put32(p + e->off[MG_ORIG_CPU], m.orig_cpu);
		put32(p + e->off[MG_DEST_CPU], m.dest_cpu);
		break;
	}
	case HGT_REC_EXIT:
		e = &ev->exit;
		p = td_reserve(l, it->ts, e->fixed);
		put_common(p, e, c->cur);
		put_comm(p + e->off[EX_COMM], comm_of(x, it->arg));
		put32(p + e->off[EX_PID], it->arg);
		/* the pid may come back as another task */
		x->comm[it->arg & (COMM_SLOTS - 1)].valid = 0;
		break;
	case HGT_REC_IRQ_ENTRY: {
		const struct irq_slot *s = irq_of(x, it->arg);

		e = &ev->irq_entry;
		p = td_reserve(l, it->ts, (e->fixed + s->len + 3) & ~3u);
		put_common(p, e, c->cur);
		put32(p + e->off[IRQ_IRQ], it->arg);
		put32(p + e->off[IRQ_NAME], (uint32_t)s->len << 16 | e->fixed);
		memcpy(p + e->fixed, s->name, s->len);
		break;
	}
	case HGT_REC_IRQ_EXIT:
		e = &ev->irq_exit;
		p = td_reserve(l, it->ts, e->fixed);
		put_common(p, e, c->cur);
		put32(p + e->off[IRQX_IRQ], it->arg);
		put32(p + e->off[IRQX_RET], it->flags);
		break;
	case HGT_REC_SOFTIRQ_ENTRY:
	case HGT_REC_SOFTIRQ_EXIT:
		e = it->type == HGT_REC_SOFTIRQ_ENTRY ? &ev->softirq_entry : &ev->softirq_exit;
		p = td_reserve(l, it->ts, e->fixed);
		put_common(p, e, c->cur);
		put32(p + e->off[SI_VEC], it->arg);
		break;
	case HGT_REC_VEC_ENTRY:
	case HGT_REC_VEC_EXIT:
		e = it->type == HGT_REC_VEC_ENTRY ? &ev->vec_entry[it->flags] : &ev->vec_exit[it->flags];
		p = td_reserve(l, it->ts, e->fixed);
		put_common(p, e, c->cur);
		put32(p + e->off[VEC_VECTOR], it->arg);
		break;
	case HGT_REC_HRTIMER_ENTRY:
		e = &ev->hrt_entry;
		p = td_reserve(l, it->ts, e->fixed);
		put_common(p, e, c->cur);
		put64(p + e->off[HRT_HRTIMER], it->arg);
		put64(p + e->off[HRT_FUNCTION], it->p[0]);
		func_seen(x, it->p[0]);
		break;
	case HGT_REC_HRTIMER_EXIT:
		e = &ev->hrt_exit;
		p = td_reserve(l, it->ts, e->fixed);
		put_common(p, e, c->cur);
		put64(p + e->off[HRTX_HRTIMER], it->arg);
		break;
	case HGT_REC_NMI: {
		struct hgt_nmi n;

		memcpy(&n, it->p, sizeof(n));
		e = &ev->nmi;
		p = td_reserve(l, it->ts, e->fixed);
		put_common(p, e, c->cur);
		put64(p + e->off[NMI_HANDLER], it->arg);
		put64(p + e->off[NMI_DELTA_NS], n.delta_ns);
		put32(p + e->off[NMI_HANDLED], n.handled);
		func_seen(x, it->arg);
		break;
	}
	case HGT_REC_LOST: {
		uint64_t count;

		memcpy(&count, it->p, 8);
		td_lost(l, count);
		x->lost_events += count;
		return;
	}
	default:
		return;
	}
	x->kernel_events++;
}

int ks_kernel(struct ks_export *x, uint32_t cpu, const struct hgt_rec *r, struct hg_err *err)
{
	unsigned need = kitem_payload(r->type);
	struct ks_cpu *c;
	struct kitem *it;

	if (cpu >= x->run.ncpus)
		return hg_err_set(err, "kernel record of type %u at TSC %llu on CPU %u, but the run has %u CPUs",
				  r->type, (unsigned long long)r->tsc, cpu, x->run.ncpus);
	if (r->len < sizeof(*r) + need)
		return hg_err_set(err, "kernel record of type %u at TSC %llu on CPU %u: %u bytes, %zu expected",
				  r->type, (unsigned long long)r->tsc, cpu, r->len, sizeof(*r) + need);
	switch (r->type) {
	case HGT_REC_COMM:
		/* a task seen for the first time: its pid may have had another name */
		x->comm[r->arg & (COMM_SLOTS - 1)].valid = 0;
		return 0;
	case HGT_REC_NAME:
		if (r->flags == HGT_NAME_IRQ)
			x->irq[r->arg & (IRQ_SLOTS - 1)].valid = 0;
		return 0;
	case HGT_REC_VEC_ENTRY:
	case HGT_REC_VEC_EXIT:
		if (r->flags >= HGT_VEC_MAX)
			return 0;	/* a vector with no tracepoint name: no event to write it as */
		break;
	case HGT_REC_NONE:
	case HGT_REC_SYS_ENTER:
	case HGT_REC_SYS_EXIT:
		return 0;
	default:
		if (r->type >= HGT_REC_MAX)
			return 0;	/* a newer minor's record: readers skip what they do not know */
	}
	c = &x->cpu[cpu];
	it = ro_push(&x->kwin, &c->win, rebase(x, r->tsc, &x->early), 0);
	if (!it)
		return hg_err_env(err, "%s: out of memory for CPU %u's reorder window", x->path, cpu);
	kitem_fill(it, r, need);
	while ((it = ro_due(&x->kwin, &c->win, c->win.newest))) {
		emit_kernel(x, c, it);
		ro_pop(&c->win);
	}
	return check(x, err);
}

/* a string field's text and its length (without the NUL) */
struct str {
	const char *s;
	unsigned len;
};

#define STR_LIT(lit) ((struct str){ lit, sizeof(lit) - 1 })

/* the string fields of an event: where each goes after the fixed part */
static uint8_t *reserve_strings(struct td_lane *l, uint64_t ts, const struct td_event *e, const int *fields,
				const struct str *s, unsigned n)
{
	unsigned total = e->fixed, at = e->fixed, i;
	uint8_t *p;

	for (i = 0; i < n; i++)
		total += s[i].len + 1;
	p = td_reserve(l, ts, (total + 3) & ~3u);
	for (i = 0; i < n; i++) {
		put32(p + e->off[fields[i]], (s[i].len + 1) << 16 | at);
		memcpy(p + at, s[i].s, s[i].len);
		at += s[i].len + 1;
	}
	return p;
}

static struct str class_str(unsigned c)
{
	static struct str names[HGG_C_N + 1];

	if (!names[HGG_C_N].s) {
		for (unsigned k = 0; k < HGG_C_N; k++)
			names[k] = (struct str){ hgg_class_name[k], (unsigned)strlen(hgg_class_name[k]) };
		names[HGG_C_N] = STR_LIT("unknown");
	}
	return names[c < HGG_C_N ? c : HGG_C_N];
}

static void emit_gap(struct ks_export *x, struct td_lane *l, const struct hitem *it, int32_t pid)
{
	static const int fields[] = { GAP_INFERRED, GAP_ACTUAL, GAP_CAUSE };
	const struct td_event *e = &x->ev.gap;
	const struct hgg_gap *g = it->gap;
	char buf[256];
	const char *cause = x->run.names.cause ? x->run.names.cause(x->run.names.ctx, g, buf, sizeof(buf)) : NULL;
	struct str s[3] = { class_str(g->vol ? HGG_C_VOLUNTARY : g->inferred), class_str(g->cls),
			    { cause ? cause : "", cause ? (unsigned)strnlen(cause, STR_MAX) : 0 } };
	uint8_t *p = reserve_strings(l, it->ts, e, fields, s, 3);

	put_common(p, e, pid);
	put32(p + e->off[GAP_THREAD], g->thread);
	put32(p + e->off[GAP_NEXT_THREAD], g->next_thread);
	put64(p + e->off[GAP_LENGTH_NS], cycles_ns(x, g->g1 > g->g0 ? g->g1 - g->g0 : 0));
	put32(p + e->off[GAP_AGREE], !g->vol && g->inferred == g->cls);
}

/* one event of buffer "hourglass", in its CPU's time order */
static void emit_hourglass(struct ks_export *x, unsigned cpu, struct hitem *it)
{
	static const char *const timers[] = { "?", "NATIVE", "HR", "RTC", "TIMERFD", "POSIX" };
	const struct ks_events *ev = &x->ev;
	struct td_lane *l = x->hg_lane[cpu];
	int32_t pid = it->thread < x->run.nthreads ? (int32_t)x->tids[it->thread] : 0;
	const struct td_event *e;
	uint8_t *p;

	x->hg_cpus[cpu] = 1;
	switch (it->kind) {
	case HK_IV_START:
		e = &ev->iv_start;
		p = td_reserve(l, it->ts, e->fixed);
		put_common(p, e, pid);
		put32(p + e->off[IVS_THREAD], it->thread);
		break;
	case HK_IV_END: {
		static const int fields[] = { IVE_ENDED_BY };
		struct str by = it->flags & HGL_IV_YIELD ? STR_LIT("yield") : it->flags & HGL_IV_SLEEP ?
				STR_LIT("sleep") : it->flags & HGL_IV_LAST ? STR_LIT("end of run") : STR_LIT("gap");

		e = &ev->iv_end;
		p = reserve_strings(l, it->ts, e, fields, &by, 1);
		put_common(p, e, pid);
		put32(p + e->off[IVE_THREAD], it->thread);
		put64(p + e->off[IVE_DURATION_NS], cycles_ns(x, it->a));
		break;
	}
	case HK_GAP:
		emit_gap(x, l, it, pid);
		gap_put(x, it->gap);
		it->gap = NULL;
		break;
	case HK_RELEASE:
		e = &ev->release;
		p = td_reserve(l, it->ts, e->fixed);
		put_common(p, e, pid);
		put32(p + e->off[REL_THREAD], it->thread);
		put64(p + e->off[REL_DEADLINE_NS], cycles_ns(x, it->a));
		break;
	case HK_DONE:
		e = &ev->done;
		p = td_reserve(l, it->ts, e->fixed);
		put_common(p, e, pid);
		put32(p + e->off[DONE_THREAD], it->thread);
		put64(p + e->off[DONE_RESPONSE_NS], cycles_ns(x, it->a));
		break;
	case HK_MISS:
		e = &ev->miss;
		p = td_reserve(l, it->ts, e->fixed);
		put_common(p, e, pid);
		put32(p + e->off[MISS_THREAD], it->thread);
		break;
	case HK_WAKE: {
		static const int fields[] = { WAKE_TIMER };
		const char *t = timers[(it->flags & 0xf) < 5 ? (it->flags & 0xf) : 5];
		struct str timer = { t, (unsigned)strlen(t) };

		e = &ev->wake;
		p = reserve_strings(l, it->ts, e, fields, &timer, 1);
		put_common(p, e, pid);
		put32(p + e->off[WAKE_THREAD], it->thread);
		put64(p + e->off[WAKE_LATENESS_NS], it->a);
		break;
	}
	}
	x->hourglass_events++;
}

/*
 * hg_cpu_front - how far a CPU's hourglass events may be handed out: its gaps set the pace.
 * The engine judges a gap well after hourglass's records of its time (when the CPU's next
 * kernel event has come and the inference has seen a few tick periods past it: tens of
 * milliseconds in the lab's runs), and a gap must not land behind the events around it.
 * Every later gap of the CPU starts at or after the latest one's end, so what lies up to
 * that end can go. A CPU whose gaps never come goes a second behind the newest event.
 */
static uint64_t hg_cpu_front(const struct ks_export *x, unsigned cpu)
{
	uint64_t gapless = (uint64_t)x->hz, old = x->hg_front > gapless ? x->hg_front - gapless : 0;
	uint64_t g = x->gap_front[cpu] ? x->gap_front[cpu] + x->hwin.horizon + 1 : 0;

	/* due when behind both the CPU's gaps and the reorder horizon (records come late too) */
	if (g > x->hg_front)
		g = x->hg_front;
	return g > old ? g : old;
}

/* hand out a lane's due events; with @all, every event it holds */
static void hg_drain(struct ks_export *x, unsigned cpu, int all)
{
	struct ro_lane *h = &x->hlane[cpu], *g = &x->glane[cpu], *l;
	uint64_t front = hg_cpu_front(x, cpu);

	while ((l = all ? ro_pick(h, g) : ro_due2(&x->hwin, h, g, front))) {
		emit_hourglass(x, cpu, (struct hitem *)ro_at(l, 0));
		ro_pop2(l, l == h ? g : h);
	}
}

static int hg_push(struct ks_export *x, unsigned cpu, uint64_t tsc, uint8_t rank, int kind, uint16_t thread,
		   uint8_t flags, uint64_t a, struct hgg_gap *gap, struct hg_err *err)
{
	uint64_t ts = rebase(x, tsc, &x->hg_early);
	struct ro_lane *h = &x->hlane[cpu], *g = &x->glane[cpu];
	struct hitem *it = kind == HK_GAP ? ro_push2(&x->hwin, g, h, ts, rank) : ro_push2(&x->hwin, h, g, ts, rank);

	if (!it) {
		gap_put(x, gap);
		return hg_err_env(err, "%s: out of memory for the hourglass buffer's reorder window", x->path);
	}
	it->kind = kind;
	it->flags = flags;
	it->thread = thread;
	it->a = a;
	it->gap = gap;
	if (ts > x->hg_front)
		x->hg_front = ts;
	return 0;
}

/* after a push on @cpu: its due events, and now and then every lane's */
static int hg_settle(struct ks_export *x, unsigned cpu, struct hg_err *err)
{
	unsigned c;

	hg_drain(x, cpu, 0);
	if (x->hg_front - x->hg_swept > x->hwin.horizon / 4) {
		for (c = 0; c < x->run.ncpus; c++)
			hg_drain(x, c, 0);
		x->hg_swept = x->hg_front;
	}
	return check(x, err);
}

int ks_hourglass(struct ks_export *x, const struct hgl_rec *r, struct hg_err *err)
{
	int ret = 0;

	if (r->type != HGL_REC_INTERVAL && r->type != HGL_REC_JOB && r->type != HGL_REC_WAKE)
		return 0;	/* a newer minor's record */
	if (r->thread >= x->run.nthreads)
		return hg_err_set(err, "hourglass record of thread %u, but the run has %d threads", r->thread,
				  x->run.nthreads);
	if (r->cpu >= x->run.ncpus)
		return hg_err_set(err, "hourglass record of thread %u on CPU %u, but the run has %u CPUs",
				  r->thread, r->cpu, x->run.ncpus);
	switch (r->type) {
	case HGL_REC_INTERVAL:
		ret = hg_push(x, r->cpu, r->t0, 0, HK_IV_START, r->thread, 0, 0, NULL, err) ||
		      hg_push(x, r->cpu, r->t1, 1, HK_IV_END, r->thread, r->flags,
			      r->t1 > r->t0 ? r->t1 - r->t0 : 0, NULL, err);
		break;
	case HGL_REC_JOB:
		ret = hg_push(x, r->cpu, r->t0, 0, HK_RELEASE, r->thread, 0, r->t2 > r->t0 ? r->t2 - r->t0 : 0,
			      NULL, err);
		if (!ret && r->flags & HGL_JOB_MISSED)
			ret = hg_push(x, r->cpu, r->t2, 2, HK_MISS, r->thread, 0, 0, NULL, err);
		else if (!ret && r->t1)
			ret = hg_push(x, r->cpu, r->t1, 2, HK_DONE, r->thread, 0, r->t1 > r->t0 ? r->t1 - r->t0 : 0,
				      NULL, err);
		break;
	case HGL_REC_WAKE: {
		uint64_t early = 0;

		ret = hg_push(x, r->cpu, r->t1, 0, HK_WAKE, r->thread, r->flags, r->t2, NULL, err);
		ks_focus_wake(x->focus, rebase(x, r->t0, &early), rebase(x, r->t1, &early), (int64_t)r->t2, r->cpu,
			      r->thread, !!(r->flags & HGL_WAKE_LAT));
		break;
	}
	}
	return ret ? -1 : hg_settle(x, r->cpu, err);
}

int ks_gap(struct ks_export *x, const struct hgg_gap *g, struct hg_err *err)
{
	struct hgg_gap *copy;

	if (g->cpu >= x->run.ncpus)
		return hg_err_set(err, "gap of thread %u at TSC %llu on CPU %u, but the run has %u CPUs", g->thread,
				  (unsigned long long)g->g0, g->cpu, x->run.ncpus);
	if (g->thread >= x->run.nthreads)
		return hg_err_set(err, "gap at TSC %llu of thread %u, but the run has %d threads",
				  (unsigned long long)g->g0, g->thread, x->run.nthreads);
	copy = gap_get(x);
	if (!copy)
		return hg_err_env(err, "%s: out of memory", x->path);
	*copy = *g;
	if (hg_push(x, g->cpu, g->g0, 2, HK_GAP, g->thread, 0, 0, copy, err))
		return -1;
	x->gaps++;
	{
		uint64_t early = 0, end = rebase(x, g->g1, &early);

		if (end > x->gap_front[g->cpu])
			x->gap_front[g->cpu] = end;

		ks_focus_offer(x->focus, g, rebase(x, g->g0, &early), rebase(x, g->g1, &early));
	}
	return hg_settle(x, g->cpu, err);
}

static void free_export(struct ks_export *x)
{
	unsigned c;
	int k;

	if (!x)
		return;
	/* the files ks_write() put together and ks_commit() did not name: removed */
	out_discard(x->tmp_dat);
	out_discard(x->tmp_hg);
	out_discard(x->tmp_ses);
	td_destroy(x->td);
	for (c = 0; x->cpu && c < x->run.ncpus; c++)
		ro_lane_free(&x->cpu[c].win);
	for (c = 0; x->hlane && c < x->run.ncpus; c++)
		ro_lane_free(&x->hlane[c]);
	for (c = 0; x->glane && c < x->run.ncpus; c++) {
		struct hitem *it;

		while ((it = ro_first(&x->glane[c]))) {
			gap_put(x, it->gap);
			ro_pop(&x->glane[c]);
		}
		ro_lane_free(&x->glane[c]);
	}
	while (x->pool) {
		struct gap_block *b = x->pool;

		x->pool = b->next;
		free(b);
	}
	for (k = 0; x->thread_names && k < x->run.nthreads; k++)
		free(x->thread_names[k]);
	free(x->thread_names);
	free(x->tids);
	free(x->cpu);
	free(x->hlane);
	free(x->glane);
	free(x->gap_front);
	free(x->hg_cpus);
	free(x->hg_lane);
	free(x->funcs);
	free(x->path);
	free(x->session);
	free(x->companion);
	free(x->plugin);
	free(x);
}

void ks_abort(struct ks_export *x)
{
	free_export(x);		/* the pages were in unnamed files, ks_write()'s are removed */
}

char *ks_plugin_path(void)
{
	/* beside the program: build/hgmerge, build/export/export_synth; PREFIX/bin/hgmerge */
	static const char *const where[] = { "kernelshark", "../kernelshark", "../lib/hourglass/kernelshark" };
	const char *env = getenv("HG_KS_PLUGIN");
	char exe[PATH_MAX], *slash, *p;
	ssize_t n;

	if (env)
		return *env && !access(env, R_OK) ? realpath(env, NULL) : NULL;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	for (unsigned i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		if (asprintf(&p, "%s/%s/" KS_PLUGIN_FILE, exe, where[i]) < 0)
			return NULL;
		if (!access(p, R_OK)) {
			char *real = realpath(p, NULL);

			free(p);
			return real;
		}
		free(p);
	}
	return NULL;
}

struct ks_export *ks_open(const char *path, const char *session, const struct exp_run *run, struct hg_err *err)
{
	struct ks_export *x;
	size_t n = strlen(path);
	uint64_t period = 0;
	int k;

	if (n < 5 || strcmp(path + n - 4, ".dat")) {
		hg_err_set(err, "%s: KernelShark opens only files named *.dat", path);
		return NULL;
	}
	if (!run->ncpus || !(run->tsc_hz > 0) || run->nthreads < 0) {
		hg_err_set(err, "%s: a run of %u CPUs, %d threads at %g Hz cannot be exported", path, run->ncpus,
			   run->nthreads, run->tsc_hz);
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		goto oom;
	x->run = *run;
	x->check_in = 1;
	x->hz = run->tsc_hz;
	td_tsc2nsec(x->hz, &x->mult, &x->shift);
	for (x->first = 1; td_to_ns(x->first, x->mult, x->shift) < 1 && x->first < (1u << 20); x->first++)
		;
	x->path = strdup(path);
	x->tids = calloc(run->nthreads + 1, sizeof(*x->tids));
	x->thread_names = calloc(run->nthreads + 1, sizeof(char *));
	x->cpu = calloc(run->ncpus, sizeof(*x->cpu));
	x->hlane = calloc(run->ncpus, sizeof(*x->hlane));
	x->glane = calloc(run->ncpus, sizeof(*x->glane));
	x->gap_front = calloc(run->ncpus, sizeof(*x->gap_front));
	x->hg_cpus = calloc(run->ncpus, 1);
	x->hg_lane = calloc(run->ncpus, sizeof(*x->hg_lane));
	if (!x->path || !x->tids || !x->thread_names || !x->cpu || !x->hlane || !x->glane || !x->gap_front ||
	    !x->hg_cpus || !x->hg_lane)
		goto oom;
	for (k = 0; k < run->nthreads; k++) {
		char name[32];

		x->tids[k] = run->tids ? run->tids[k] : 0;
		snprintf(name, sizeof(name), "hg-thread-%d", k);
		x->thread_names[k] = strdup(run->thread_names && run->thread_names[k] ? run->thread_names[k] : name);
		if (!x->thread_names[k])
			goto oom;
		if (run->periods && run->periods[k] > period)
			period = run->periods[k];
	}
	x->run.tids = NULL;
	x->run.thread_names = NULL;
	x->run.periods = NULL;
	if (session) {
		x->session = strdup(session);
		x->companion = malloc(n + 16);
		if (!x->session || !x->companion)
			goto oom;
		sprintf(x->companion, "%.*s-hourglass.dat", (int)(n - 4), path);
		x->plugin = ks_plugin_path();
	}
	ro_init(&x->kwin, KERNEL_WINDOW_MAX, (uint64_t)(KERNEL_HORIZON_S * x->hz));
	/* a job's release is written when the job ends: a period late, or more when it overran */
	if ((double)period * 2 < HG_HORIZON_MIN_S * x->hz)
		period = (uint64_t)(HG_HORIZON_MIN_S * x->hz / 2);
	ro_init(&x->hwin, HG_WINDOW_MAX, 2 * period);
	x->td = td_create(path, run->ncpus, run->tsc_hz, err);
	if (!x->td || ks_events_declare(x->td, &x->ev, &x->hg_buf, err))
		goto fail;
	td_set_uname(x->td, run->uname);
	for (unsigned c = 0; c < run->ncpus; c++) {
		x->cpu[c].lane = td_lane(x->td, 0, c);
		x->hg_lane[c] = td_lane(x->td, x->hg_buf, c);
	}
	/* fail now, not at the end, when the folder cannot take files */
	{
		char *tmp;
		int fd = out_create(path, &tmp, err);

		if (fd < 0)
			goto fail;
		close(fd);
		out_discard(tmp);
	}
	return x;
oom:
	hg_err_env(err, "%s: out of memory", path);
fail:
	free_export(x);
	return NULL;
}

static void add_cmdline(void *arg, uint32_t pid, const char *comm)
{
	struct ks_export *x = arg;
	struct hg_err ignored;

	/* hourglass's threads are named below, as every output calls them */
	if (comm && thread_of_pid(x, pid) < 0)
		td_cmdline(x->td, pid, comm, &ignored);
}

static int by_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* the names: saved cmdlines, and kallsyms for every function id an event prints with %ps */
static int write_names(struct ks_export *x, struct hg_err *err)
{
	const struct exp_names *nm = &x->run.names;
	size_t i, n = 0;
	int k;

	if (nm->each_comm)
		nm->each_comm(nm->ctx, add_cmdline, x);
	for (k = 0; k < x->run.nthreads; k++)
		if (x->tids[k] && td_cmdline(x->td, x->tids[k], x->thread_names[k], err))
			return -1;
	for (i = 0; i < x->capfuncs; i++)
		if (x->funcs[i])
			x->funcs[n++] = x->funcs[i];
	if (n)
		qsort(x->funcs, n, sizeof(*x->funcs), by_u32);
	for (i = 0; i < n + (size_t)x->func_zero; i++) {
		uint32_t id = i < n ? x->funcs[i] : 0;
		const char *name = nm->func ? nm->func(nm->ctx, id) : NULL;
		char hex[16];

		/* an id without a name: a symbol that prints as the number did */
		if (!name || !*name) {
			snprintf(hex, sizeof(hex), "0x%x", id);
			name = hex;
		}
		if (td_kallsyms(x->td, id, name, err))
			return -1;
	}
	x->capfuncs = 0;	/* compacted above: no longer a hash set */
	return 0;
}

int ks_drain(struct ks_export *x, struct ks_summary *sum, struct hg_err *err)
{
	struct ks_cpu *c;
	struct kitem *it;
	unsigned cpu;

	memset(sum, 0, sizeof(*sum));
	for (cpu = 0; cpu < x->run.ncpus; cpu++) {
		c = &x->cpu[cpu];
		while ((it = ro_first(&c->win))) {
			emit_kernel(x, c, it);
			ro_pop(&c->win);
		}
		hg_drain(x, cpu, 1);
	}
	if (td_failed(x->td, err))
		return -1;
	sum->kernel_events = x->kernel_events;
	sum->hourglass_events = x->hourglass_events;
	sum->gaps = x->gaps;
	sum->reordered = x->kwin.reordered;
	sum->clamped = x->kwin.clamped + x->early;
	sum->hg_reordered = x->hwin.reordered;
	sum->hg_clamped = x->hwin.clamped + x->hg_early;
	sum->lost_events = x->lost_events;
	sum->cpus = x->run.ncpus;
	if (x->session) {
		/* a session for every run: on its worst wake-up, a gap, or else the trace's start */
		x->gap = ks_focus_pick(x->focus);
		sum->session_written = 1;
		sum->session_at_s = x->gap ? (double)x->gap->t0 / x->hz : 0;
		sum->session_focus = ks_focus_name(x->gap);
		sum->session_plugin = !!x->plugin;
		snprintf(sum->companion, sizeof(sum->companion), "%s", x->companion);
	}
	return 0;
}

int ks_write(struct ks_export *x, struct hg_err *err)
{
	int merged;

	if (write_names(x, err))
		return -1;
	/* one buffer: the kernel's events and hourglass's, each CPU's in time order (a second
	 * buffer makes trace-cmd 3.1.6's -F crash: td_write_merged) */
	if (td_write_merged(x->td, x->path, 0, x->hg_buf, &merged, &x->tmp_dat, err))
		return -1;
	if (x->session) {
		struct ks_session_files f = { x->session, x->path, NULL, x->companion, NULL, x->plugin };
		struct ks_session_in in = { x->td, merged, x->hg_buf, x->run.ncpus, x->hg_cpus, x->hz, x->gap,
					    { 0, 0 }, ks_hourglass_events, KS_HOURGLASS_NEVENTS };

		/* the focused threads' tasks: what the kernel did with them */
		if (x->gap) {
			int th[2] = { x->gap->thread, x->gap->next_thread };

			for (int k = 0; k < 2; k++)
				if (th[k] >= 0 && th[k] < x->run.nthreads)
					in.tasks[k] = x->tids[th[k]];
		}
		if (td_write(x->td, x->companion, x->hg_buf, NULL, 0, &x->tmp_hg, err))
			return -1;
		f.kernel_tmp = x->tmp_dat;
		f.hg_tmp = x->tmp_hg;
		if (ks_session_write(&f, &in, &x->tmp_ses, err))
			return -1;
	}
	return 0;
}

int ks_commit(struct ks_export *x, struct hg_err *err)
{
	int ret = -1;

	/* the trace.dat first, undone if a rename after it fails */
	if (out_commit(x->tmp_dat, x->path, err)) {
		free(x->tmp_dat);
		x->tmp_dat = NULL;	/* out_commit removed it */
		goto out;
	}
	free(x->tmp_dat);
	x->tmp_dat = NULL;
	if (x->session) {
		if (out_commit(x->tmp_hg, x->companion, err)) {
			free(x->tmp_hg);
			x->tmp_hg = NULL;
			unlink(x->path);
			goto out;
		}
		free(x->tmp_hg);
		x->tmp_hg = NULL;
		if (out_commit(x->tmp_ses, x->session, err)) {
			free(x->tmp_ses);
			x->tmp_ses = NULL;
			unlink(x->path);
			unlink(x->companion);
			goto out;
		}
		free(x->tmp_ses);
		x->tmp_ses = NULL;
	}
	ret = 0;
out:
	free_export(x);
	return ret;
}

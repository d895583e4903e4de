// SPDX-License-Identifier: GPL-2.0
/*
 * sweep.c - the kernel's account of every gap and window.
 *
 * Each CPU keeps its own small state, swept in time order: the task on it
 * and the stack of handlers running. A gap starts from what is known for
 * sure: its thread was running in user space on that CPU at g0. From there
 * every stretch between two events is charged to what was running: the
 * innermost handler (NMI, hard irq or x86 vector, softirq), else the task on
 * the CPU when it is not the gap's thread, else the thread itself (self:
 * kernel entry and exit around handlers, or time nothing in the guest
 * kernel accounts for). A window (a wake-up, a missed period) is charged the
 * same way without knowing the CPU's state at its start.
 *
 * A gap is judged when it has closed and the next event of its CPU has
 * come: if that event marks lost records, the loss window (from the CPU's
 * previous event) may cover the gap's end, and the gap is unexplainable.
 * Then its class, its primary cause and the inference go into one struct
 * hgg_gap for every output.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#define STACK_MAX 64

struct comp {
	int64_t id;
	int64_t v;
	uint8_t kind;
};

struct item {
	struct item *next_free;
	int window;		/* 0 a gap, else enum window kind */
	struct gapdef g;
	struct hg_ev wev;
	uint32_t tid;
	struct comp *comp;
	int ncomp, capcomp;
	int nev;
	uint32_t n_events;
	int has_out, out_preempted, has_in, has_woken, has_mig, has_tick, has_tick_le;
	int64_t out_tsc, in, woken, last_tick, last_tick_le;
	uint32_t out_pid, out_state;
	struct kev ev[SHOW_EVENTS];	/* last: item_new() clears what comes before (the first nev
					 * are all that is read) */
};

struct key {
	int64_t id;
	uint8_t kind;
};

struct cpu_state {
	int exists;
	int64_t cur;			/* the task on the CPU; -1 unknown */
	struct key stack[STACK_MAX];
	int nst;
	int64_t t, prev_tsc;
	struct item *gap;		/* the gap open on this CPU */
	struct item **win;		/* windows open on it */
	int nwin, capwin;
	struct item **pend;		/* closed gaps waiting for the CPU's next event */
	int npend, cappend;
	int have_loss;
	int64_t loss_p, loss_t;		/* the last loss window: previous event, LOST record */
	uint64_t nloss, backwards, too_deep;
};

struct sweep {
	struct run *r;
	struct infer *in;
	struct sweep_sink sink;
	struct cpu_state *cpu;
	uint32_t ncpu;
	double nmi_cycles;		/* cycles a nanosecond */
	struct item *free_items;
	struct hgg_comp *sorted;	/* scratch for a closing item's components */
	int capsorted;
};

/* cpu_add - @cpu's state, the table grown and the state made the first time */
static __attribute__((noinline)) struct cpu_state *cpu_add(struct sweep *s, uint32_t cpu)
{
	if (cpu >= s->ncpu) {
		uint32_t n = cpu + 1;

		s->cpu = xrealloc(s->cpu, n * sizeof(*s->cpu));
		memset(s->cpu + s->ncpu, 0, (n - s->ncpu) * sizeof(*s->cpu));
		s->ncpu = n;
	}
	if (!s->cpu[cpu].exists) {
		s->cpu[cpu].exists = 1;
		s->cpu[cpu].cur = -1;
	}
	return &s->cpu[cpu];
}

/* cpu_of - @cpu's state: inline, it is asked for every event */
static inline struct cpu_state *cpu_of(struct sweep *s, uint32_t cpu)
{
	if (__builtin_expect(cpu < s->ncpu && s->cpu[cpu].exists, 1))
		return &s->cpu[cpu];
	return cpu_add(s, cpu);
}

static struct item *item_new(struct sweep *s)
{
	struct item *it = s->free_items;

	if (it) {
		struct comp *comp = it->comp;
		int cap = it->capcomp;

		s->free_items = it->next_free;
		memset(it, 0, offsetof(struct item, ev));
		it->comp = comp;
		it->capcomp = cap;
		return it;
	}
	return xcalloc(1, sizeof(*it));
}

static void item_free(struct sweep *s, struct item *it)
{
	it->next_free = s->free_items;
	s->free_items = it;
}

/* add_comp_new - a component the item does not have yet */
static __attribute__((noinline)) void add_comp_new(struct item *it, uint8_t kind, int64_t id, int64_t v)
{
	if (it->ncomp == it->capcomp) {
		it->capcomp = it->capcomp ? 2 * it->capcomp : 8;
		it->comp = xrealloc(it->comp, it->capcomp * sizeof(*it->comp));
	}
	it->comp[it->ncomp++] = (struct comp){ id, v, kind };
}

/* add_comp - @v more cycles to the item's component (@kind, @id); inline: every event charges */
static inline void add_comp(struct item *it, uint8_t kind, int64_t id, int64_t v)
{
	int i;

	for (i = 0; i < it->ncomp; i++)
		if (it->comp[i].kind == kind && it->comp[i].id == id) {
			it->comp[i].v += v;
			return;
		}
	add_comp_new(it, kind, id, v);
}

static inline __attribute__((always_inline)) void charge_item(struct cpu_state *c, struct item *it, int64_t d)
{
	if (c->nst)
		add_comp(it, c->stack[c->nst - 1].kind, c->stack[c->nst - 1].id, d);
	else if (c->cur != (int64_t)it->tid)
		add_comp(it, HGG_K_TASK, c->cur, d);
	else
		add_comp(it, HGG_K_SELF, 0, d);
}

/* charge - the time since the last charge, to what ran, for everything open on the CPU */
static inline __attribute__((always_inline)) void charge(struct cpu_state *c, int64_t upto)
{
	int64_t d;
	int i;

	if (upto <= c->t)
		return;
	d = upto - c->t;
	c->t = upto;
	if (c->gap)
		charge_item(c, c->gap, d);
	for (i = 0; i < c->nwin; i++)
		charge_item(c, c->win[i], d);
}

struct sweep *sweep_new(struct run *r, struct infer *in, const struct sweep_sink *sink)
{
	struct sweep *s = xcalloc(1, sizeof(*s));

	s->r = r;
	s->in = in;
	s->sink = *sink;
	s->nmi_cycles = r->hz / 1e9;
	return s;
}

/* sorted_comps - the item's components, largest first, equal ones in the order they came */
static const struct hgg_comp *sorted_comps(struct sweep *s, const struct item *it)
{
	int i, j;


	if (it->ncomp > s->capsorted) {
		s->capsorted = it->ncomp;
		s->sorted = xrealloc(s->sorted, s->capsorted * sizeof(*s->sorted));
	}
	for (i = 0; i < it->ncomp; i++) {
		struct hgg_comp c = { .id = (int32_t)it->comp[i].id, .kind = it->comp[i].kind,
				      .cycles = it->comp[i].v > 0 ? (uint64_t)it->comp[i].v : 0 };

		for (j = i; j > 0 && s->sorted[j - 1].cycles < c.cycles; j--)
			s->sorted[j] = s->sorted[j - 1];
		s->sorted[j] = c;
	}
	return s->sorted;
}

static int is_handler(uint8_t kind)
{
	return kind == HGG_K_IRQ || kind == HGG_K_VEC || kind == HGG_K_SOFTIRQ || kind == HGG_K_NMI;
}

/* comp_kind - the finer class (enum hgg_kd) a component gives a gap: the one rule, for the
 * primary component here and for every component the report lists (judge.c) */
int comp_kind(const struct run *r, uint8_t kind, int64_t id)
{
	switch (kind) {
	case HGG_K_VEC:
		return id == 0 ? HGG_KD_TIMER : HGG_KD_IPI;
	case HGG_K_TASK:
		if (id == 0)
			return HGG_KD_IDLE;
		return id > 0 && thread_of_tid(r, (uint32_t)id) >= 0 ? HGG_KD_SWITCH_HG : HGG_KD_SWITCH_OTHER;
	case HGG_K_IRQ:
		return HGG_KD_IRQ;
	case HGG_K_SOFTIRQ:
		return HGG_KD_SOFTIRQ;
	default:
		return HGG_KD_NMI;
	}
}

static const uint8_t coarse[HGG_KD_N] = {
	[HGG_KD_IRQ] = HGG_C_INTERRUPT, [HGG_KD_SOFTIRQ] = HGG_C_INTERRUPT, [HGG_KD_NMI] = HGG_C_INTERRUPT,
	[HGG_KD_IPI] = HGG_C_INTERRUPT, [HGG_KD_TIMER] = HGG_C_TIMER, [HGG_KD_SWITCH_HG] = HGG_C_SWITCH_HG,
	[HGG_KD_SWITCH_OTHER] = HGG_C_SWITCH_OTHER, [HGG_KD_IDLE] = HGG_C_SWITCH_OTHER,
	[HGG_KD_HIDDEN] = HGG_C_HIDDEN, [HGG_KD_OTHER] = HGG_C_OTHER, [HGG_KD_UNEXPLAINABLE] = HGG_C_UNEXPLAINABLE,
};

/* judge_item - a closed gap's class, cause and inference, handed to every output */
static void judge_item(struct sweep *s, struct cpu_state *c, struct item *it)
{
	struct run *r = s->r;
	const struct gapdef *d = &it->g;
	const struct hgg_comp *sc = sorted_comps(s, it);
	struct hgg_gap g = { .g0 = (uint64_t)d->g0, .g1 = (uint64_t)d->g1, .cpu = d->cpu, .thread = d->thread,
			     .next_thread = d->next_thread, .vol = d->vol, .n_events = it->n_events };
	struct gap_detail det = { .ev = it->ev, .nev = it->nev, .comp = sc, .ncomp = it->ncomp };
	int i, primary = -1;

	for (i = 0; i < it->ncomp; i++) {
		int kd;

		if (sc[i].kind == HGG_K_SELF) {
			g.self_cycles += sc[i].cycles;
			g.switch_path_cycles += sc[i].cycles;
			continue;
		}
		/* a switch's own path: what the kernel charged to hourglass's threads themselves (the
		 * leaving one above; the coming one's kernel entry here), not handlers or other tasks */
		kd = comp_kind(r, sc[i].kind, sc[i].id);
		if (kd == HGG_KD_SWITCH_HG)
			g.switch_path_cycles += sc[i].cycles;
		if (kd == HGG_KD_TIMER) {
			g.flags |= HGG_F_TICK;	/* even when an NMI took all of its time */
			g.tick_cycles += sc[i].cycles;
		}
		if (!sc[i].cycles)
			continue;
		if (primary < 0)
			primary = i;
		g.explained_cycles += sc[i].cycles;
		if (is_handler(sc[i].kind))
			g.handler_cycles += sc[i].cycles;
	}
	for (i = 0; i < it->ncomp && i < HGG_COMPS; i++)
		g.comp[g.ncomp++] = sc[i];
	if (r->have_window && (d->g0 < r->window[0] || d->g1 > r->window[1])) {
		g.kind = HGG_KD_UNEXPLAINABLE;
		g.why = HGG_W_WINDOW;
		primary = -1;
	} else if (c->have_loss && c->loss_p < d->g1 && c->loss_t > d->g0) {
		g.kind = HGG_KD_UNEXPLAINABLE;
		g.why = HGG_W_LOST;
		primary = -1;
	} else if (primary < 0) {
		g.kind = it->n_events ? HGG_KD_OTHER : HGG_KD_HIDDEN;
		g.why = it->n_events ? HGG_W_OTHER : HGG_W_HIDDEN;
	} else {
		g.kind = comp_kind(r, sc[primary].kind, sc[primary].id);
	}
	if (primary >= 0) {
		g.flags |= HGG_F_PRIMARY;
		g.primary_kind = sc[primary].kind;
		g.primary_id = sc[primary].id;
	}
	if (it->has_out) {
		g.flags |= HGG_F_OUT | (it->out_preempted ? HGG_F_PREEMPTED : 0);
		g.out_pid = it->out_pid;
		g.out_state = it->out_state;
		/* switched out: whatever else happened, a switch; between hourglass threads when
		 * another one runs next on this CPU, even if a kernel thread ran in between
		 * (PREEMPT_RT's ktimers); else to another task, or to idle */
		if (g.kind != HGG_KD_UNEXPLAINABLE) {
			uint32_t next_tid = r->th[d->next_thread].tid;
			int nxt_hg = d->next_thread != d->thread && next_tid;

			if (nxt_hg || (it->out_pid && thread_of_tid(r, it->out_pid) >= 0))
				g.kind = HGG_KD_SWITCH_HG;
			else
				g.kind = it->out_pid == 0 ? HGG_KD_IDLE : HGG_KD_SWITCH_OTHER;
			g.why = HGG_W_OUT;
		}
	}
	g.flags |= (it->has_in ? HGG_F_IN : 0) | (it->has_mig ? HGG_F_MIGRATED : 0);
	g.cls = coarse[g.kind];
	s->sink.gap(s->sink.ctx, &g, &det);	/* the inference is decided there, when it can be */
}

/* flush - judge the CPU's closed gaps: the event that came after them is known */
static void flush(struct sweep *s, struct cpu_state *c)
{
	int i;

	for (i = 0; i < c->npend; i++) {
		judge_item(s, c, c->pend[i]);
		item_free(s, c->pend[i]);
	}
	c->npend = 0;
}

static void push_stack(struct cpu_state *c, uint8_t kind, int64_t id)
{
	if (c->nst == STACK_MAX) {	/* deeper than any kernel nests: a corrupt stream */
		c->too_deep++;
		return;
	}
	c->stack[c->nst++] = (struct key){ id, kind };
}

static void pop_stack(struct cpu_state *c, uint8_t kind, int64_t id)
{
	int i;

	/* an exit whose entry came before what we know is ignored */
	for (i = c->nst - 1; i >= 0; i--)
		if (c->stack[i].kind == kind && c->stack[i].id == id) {
			c->nst = i;
			return;
		}
}

/* current_key - what the CPU's time is being charged to, for @it */
static void current_key(const struct cpu_state *c, const struct item *it, struct comp *k)
{
	if (c->nst)
		*k = (struct comp){ c->stack[c->nst - 1].id, 0, c->stack[c->nst - 1].kind };
	else if (c->cur != (int64_t)it->tid)
		*k = (struct comp){ c->cur, 0, HGG_K_TASK };
	else
		*k = (struct comp){ 0, 0, HGG_K_SELF };
}

/* take_nmi - move up to @d cycles of component @i to the NMI; what is left to move */
static int64_t take_nmi(struct item *it, int i, int64_t d)
{
	int64_t take = it->comp[i].v < d ? it->comp[i].v : d;

	if (take <= 0)
		return d;
	it->comp[i].v -= take;
	add_comp(it, HGG_K_NMI, 0, take);	/* may move it->comp: index again after */
	return d - take;
}

/* item_nmi - an NMI in the item: its handler's time moved to it */
static __attribute__((noinline)) void item_nmi(struct sweep *s, struct cpu_state *c, struct item *it,
					       const struct hgt_rec *h, int64_t tsc)
{
	const struct hgt_nmi *n = (const void *)(h + 1);
	int64_t d = (int64_t)(n->delta_ns * s->nmi_cycles);
	int64_t start = it->window ? it->wev.w0 : it->g.g0;
	struct comp cur;
	int i;

	if (d > tsc - start)
		d = tsc - start;
	/* the handler ran just before its tracepoint: that time goes to the NMI, from what
	 * was being charged then, and if that is not enough, from what was charged before */
	current_key(c, it, &cur);
	for (i = it->ncomp; i-- > 0 && d > 0;) {
		if (it->comp[i].kind == cur.kind && it->comp[i].id == cur.id)
			d = take_nmi(it, i, d);
	}
	for (i = it->ncomp; i-- > 0 && d > 0;)
		if (it->comp[i].kind != HGG_K_NMI)
			d = take_nmi(it, i, d);
}

/* item_event - a kernel event inside an open gap or window; inline: every event has one */
static inline void item_event(struct sweep *s, struct cpu_state *c, struct item *it, const struct hgt_rec *h,
			      int64_t tsc, const struct hgt_switch *sw)
{
	it->n_events++;
	if (it->nev < SHOW_EVENTS)
		it->ev[it->nev++] = (struct kev){ tsc, h->arg, h->type, h->flags };
	switch (h->type) {
	case HGT_REC_SWITCH:
		if (sw->prev_pid == it->tid) {
			it->has_out = 1;
			it->out_tsc = tsc;
			it->out_preempted = sw->prev_state == 0 || (h->flags & HGT_SWITCH_PREEMPT);
			it->out_pid = h->arg;
			it->out_state = sw->prev_state;
		}
		if (h->arg == it->tid && !it->has_in) {
			it->has_in = 1;
			it->in = tsc;
		}
		break;
	case HGT_REC_NMI:
		item_nmi(s, c, it, h, tsc);
		break;
	case HGT_REC_MIGRATE:
		if (h->arg == it->tid)
			it->has_mig = 1;
		break;
	case HGT_REC_WAKING:
	case HGT_REC_WAKEUP:
		if (h->arg == it->tid && !it->has_woken) {
			it->has_woken = 1;
			it->woken = tsc;
		}
		break;
	case HGT_REC_VEC_ENTRY:
		if (h->flags == HGT_VEC_LOCAL_TIMER && it->window) {
			it->has_tick = 1;
			it->last_tick = tsc;
			if (!it->has_woken || tsc <= it->woken) {
				it->has_tick_le = 1;
				it->last_tick_le = tsc;
			}
		}
		break;
	}
}

/* sched_at - where the scheduler switched a side of a switch at @tsc: the tracepoint when unknown */
static int64_t sched_at(int64_t tsc, uint16_t lag)
{
	int64_t c = hgt_lag_cycles(lag);

	return c > 0 ? tsc - c : tsc;
}

void sweep_kernel(struct sweep *s, uint32_t cpu, const struct hgt_rec *h)
{
	struct cpu_state *c;
	int64_t tsc = (int64_t)h->tsc;
	const struct hgt_switch *sw = NULL;
	int i;

	if (h->type == HGT_REC_COMM || h->type == HGT_REC_NAME)
		return;
	c = cpu_of(s, cpu);
	if (tsc < c->prev_tsc)
		c->backwards++;
	if (h->type == HGT_REC_LOST) {
		/* events went missing on this CPU between its previous event and this one */
		c->have_loss = 1;
		c->loss_p = c->prev_tsc;
		c->loss_t = tsc;
		c->nloss++;
	}
	c->prev_tsc = tsc;
	if (c->npend)
		flush(s, c);
	charge(c, tsc);
	switch (h->type) {
	case HGT_REC_IRQ_ENTRY:
		push_stack(c, HGG_K_IRQ, h->arg);
		break;
	case HGT_REC_VEC_ENTRY:
		push_stack(c, HGG_K_VEC, h->flags);
		break;
	case HGT_REC_SOFTIRQ_ENTRY:
		push_stack(c, HGG_K_SOFTIRQ, h->arg);
		break;
	case HGT_REC_IRQ_EXIT:
		pop_stack(c, HGG_K_IRQ, h->arg);
		break;
	case HGT_REC_VEC_EXIT:
		pop_stack(c, HGG_K_VEC, h->flags);
		break;
	case HGT_REC_SOFTIRQ_EXIT:
		pop_stack(c, HGG_K_SOFTIRQ, h->arg);
		break;
	case HGT_REC_SWITCH: {
		int pt, nt;

		sw = (const struct hgt_switch *)(h + 1);
		c->nst = 0;		/* schedule() runs with no handler active */
		c->cur = h->arg;
		pt = sw->prev_pid ? thread_of_tid(s->r, sw->prev_pid) : -1;
		nt = h->arg ? thread_of_tid(s->r, h->arg) : -1;
		/* time on CPU runs between where the scheduler switched (ABI 1.2's lags), as
		 * schedstat's does; everything else here stays at the tracepoint */
		if (pt >= 0 && s->sink.switched)
			s->sink.switched(s->sink.ctx, pt, sched_at(tsc, sw->prev_lag), 0);
		if (nt >= 0 && s->sink.switched)
			s->sink.switched(s->sink.ctx, nt, sched_at(tsc, sw->next_lag), 1);
		break;
	}
	case HGT_REC_MIGRATE: {
		int t = h->arg ? thread_of_tid(s->r, h->arg) : -1;

		if (t >= 0 && s->sink.migrated)
			s->sink.migrated(s->sink.ctx, t, tsc);
		break;
	}
	}
	if (h->type >= HGT_REC_COMM)
		return;
	if (c->gap)
		item_event(s, c, c->gap, h, tsc, sw);
	for (i = 0; i < c->nwin; i++)
		item_event(s, c, c->win[i], h, tsc, sw);
}

void sweep_open_gap(struct sweep *s, const struct gapdef *g)
{
	struct cpu_state *c = cpu_of(s, g->cpu);
	struct item *it;

	charge(c, g->g0);
	if (c->gap)		/* cannot happen: the CPU's gaps alternate with its intervals */
		item_free(s, c->gap);
	it = item_new(s);
	it->g = *g;
	it->tid = s->r->th[g->thread].tid;
	/* known for sure: this thread ran in user space here at g0 */
	c->cur = it->tid;
	c->nst = 0;
	c->t = g->g0;
	c->gap = it;
}

void sweep_close_gap(struct sweep *s, const struct gapdef *g)
{
	struct cpu_state *c = cpu_of(s, g->cpu);
	struct item *it = c->gap;

	if (!it)
		return;
	charge(c, g->g1);
	it->g.g1 = g->g1;
	it->g.next_thread = g->next_thread;
	c->gap = NULL;
	VEC_PUSH(c->pend, c->npend, c->cappend, it);
}

void sweep_open_window(struct sweep *s, const struct hg_ev *ev)
{
	struct cpu_state *c = cpu_of(s, ev->rec.cpu);
	struct item *it;

	charge(c, ev->w0);
	it = item_new(s);
	it->window = ev->wkind;
	it->wev = *ev;
	it->tid = s->r->th[ev->rec.thread].tid;
	c->t = ev->w0;
	VEC_PUSH(c->win, c->nwin, c->capwin, it);
}

void sweep_close_window(struct sweep *s, const struct hg_ev *ev)
{
	struct cpu_state *c = cpu_of(s, ev->rec.cpu);
	struct window w = { 0 };
	struct item *it = NULL;
	int i;

	for (i = 0; i < c->nwin && c->win[i]->wev.seq != ev->seq; i++)
		;
	if (i == c->nwin)
		return;
	charge(c, ev->w1);
	it = c->win[i];
	memmove(c->win + i, c->win + i + 1, (c->nwin - i - 1) * sizeof(*c->win));
	c->nwin--;
	w.kind = it->window;
	w.thread = ev->rec.thread;
	w.cpu = ev->rec.cpu;
	w.tid = it->tid;
	w.g0 = ev->w0;
	w.g1 = ev->w1;
	w.rec = ev->rec;
	w.has_woken = it->has_woken;
	w.woken = it->woken;
	w.has_in = it->has_in;
	w.in = it->in;
	if (it->has_woken ? it->has_tick_le : it->has_tick) {
		w.has_irq = 1;
		w.irq = it->has_woken ? it->last_tick_le : it->last_tick;
	}
	w.comp = sorted_comps(s, it);
	w.ncomp = it->ncomp;
	if (s->sink.window)
		s->sink.window(s->sink.ctx, &w);
	item_free(s, it);
}

void sweep_finish(struct sweep *s)
{
	uint32_t i;

	for (i = 0; i < s->ncpu; i++) {
		struct cpu_state *c = &s->cpu[i];

		if (!c->exists)
			continue;
		flush(s, c);
		if (c->too_deep)
			warn(s->r, "CPU %u: handlers nested deeper than %d (%llu times): the stream is corrupt there",
			     i, STACK_MAX, (unsigned long long)c->too_deep);
	}
}

uint64_t sweep_backwards(const struct sweep *s)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < s->ncpu; i++)
		n += s->cpu[i].backwards;
	return n;
}

uint64_t sweep_losses(const struct sweep *s, uint32_t cpu)
{
	return cpu < s->ncpu ? s->cpu[cpu].nloss : 0;
}

void sweep_free(struct sweep *s)
{
	uint32_t i;
	struct item *it;
	int k;

	if (!s)
		return;
	for (i = 0; i < s->ncpu; i++) {
		struct cpu_state *c = &s->cpu[i];

		if (c->gap)
			item_free(s, c->gap);
		for (k = 0; k < c->nwin; k++)
			item_free(s, c->win[k]);
		free(c->win);
		free(c->pend);
	}
	while ((it = s->free_items)) {
		s->free_items = it->next_free;
		free(it->comp);
		free(it);
	}
	free(s->cpu);
	free(s->sorted);
	free(s);
}

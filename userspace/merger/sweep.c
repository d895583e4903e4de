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
 * Where the recording shows that the vCPUs take turns on one host thread
 * (turns.c; run.vcpu_turns), another CPU's events, and its hourglass
 * intervals, inside a stretch of this CPU's say that this one was not
 * running then: from the first to the last of them the stretch is charged
 * to that CPU's turn (HGG_K_TURN), not to what this CPU was doing.
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

/* a shown event is the record's header, copied whole (sweep_kernel()) */
_Static_assert(sizeof(struct kev) == sizeof(struct hgt_rec) &&
	       offsetof(struct kev, tsc) == offsetof(struct hgt_rec, tsc) &&
	       offsetof(struct kev, typ) == offsetof(struct hgt_rec, type) &&
	       offsetof(struct kev, flags) == offsetof(struct hgt_rec, flags) &&
	       offsetof(struct kev, arg) == offsetof(struct hgt_rec, arg), "struct kev is struct hgt_rec's header");

struct comp {
	int64_t id;
	int64_t v;
	uint8_t kind;
};

/* a gap or a window open on a CPU: what the kernel did in it. What every event touches first;
 * item_new() clears what a gap reads, a window's all but its events (the first nev are all
 * that is read) */
struct item {
	struct comp *comp;
	int ncomp, capcomp;
	uint32_t tid;
	int window;		/* 0 a gap, else enum window kind */
	int nev;
	uint32_t n_events;
	int64_t self_long;	/* the stretches with nothing recorded longer than the floor, added */
	int has_out, out_preempted, has_in, has_woken, has_mig;
	uint32_t out_pid, out_state;
	struct gapdef g;
	/* a window's (and what a gap sets but never reads) */
	int has_tick, has_tick_le;
	int64_t out_tsc, in, woken, last_tick, last_tick_le;
	struct wseg *seg;		/* a wake-up window's stretches (latency.c cuts its stages) */
	int nseg, capseg;
	struct hg_ev wev;
	struct item *next_free;
	struct kev ev[SHOW_EVENTS];
};

struct key {
	int64_t id;
	uint8_t kind;
};

/* a CPU's state, what every event reads first; its stack of handlers last */
struct cpu_state {
	int64_t t, prev_tsc;		/* charged up to t; the CPU's last event */
	int64_t cur;			/* the task on the CPU; -1 unknown */
	struct item *gap;		/* the gap open on this CPU */
	int nst, nwin, npend, exists;
	/* vCPU turns: another CPU ran from fa to fb inside the stretch since t (fmark); fcpu: which,
	 * -1 several; listed: on the sweep's list of CPUs with a gap or window open */
	int fmark, listed;
	int64_t fa, fb;
	int32_t fcpu;
	int have_loss;
	int64_t loss_p, loss_t;		/* the last loss window: previous event, LOST record */
	struct item **win;		/* windows open on it */
	struct item **pend;		/* closed gaps waiting for the CPU's next event */
	int capwin, cappend;
	uint64_t nloss, backwards, too_deep;
	struct key stack[STACK_MAX];
};

/* a CPU with a gap or window open (turns only) */
struct open_cpu {
	uint32_t cpu;
	struct cpu_state *c;
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
	int turns;			/* the vCPUs take turns: charge their turns (run.vcpu_turns) */
	struct open_cpu *open;		/* CPUs with a gap or window open (turns only) */
	uint32_t nopen, capopen;
	int64_t unrecorded_floor;	/* HGG_UNRECORDED_FLOOR_US in cycles */
};

/* cpu_add - @cpu's state, the table grown and the state made the first time */
static cold_path struct cpu_state *cpu_add(struct sweep *s, uint32_t cpu)
{
	if (cpu >= s->ncpu) {
		uint32_t n = cpu + 1, i;

		s->cpu = xrealloc(s->cpu, n * sizeof(*s->cpu));
		memset(s->cpu + s->ncpu, 0, (n - s->ncpu) * sizeof(*s->cpu));
		/* every state of the table made at once (a CPU that never comes has nothing to
		 * flush or warn of): cpu_of() asks only whether the table holds the CPU */
		for (i = s->ncpu; HG_FAST && i < n; i++) {
			s->cpu[i].exists = 1;
			s->cpu[i].cur = -1;
		}
		s->ncpu = n;
		for (i = 0; i < s->nopen; i++)		/* the table moved */
			s->open[i].c = &s->cpu[s->open[i].cpu];
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
	if (likely(cpu < s->ncpu && (HG_FAST || s->cpu[cpu].exists)))
		return &s->cpu[cpu];
	return cpu_add(s, cpu);
}

/* item_new - an item for a gap (@window 0: what a gap reads cleared) or a window (all but its
 * events cleared) */
static struct item *item_new(struct sweep *s, int window)
{
	struct item *it = s->free_items;

	if (unlikely(!it)) {
		/* with room for a few components from the start: add_comp() walks them without
		 * asking whether there is an array */
		it = xcalloc(1, sizeof(*it));
		it->capcomp = 8;
		it->comp = xmalloc(it->capcomp * sizeof(*it->comp));
		return it;
	}
	s->free_items = it->next_free;
	if (!HG_FAST || window) {
		struct comp *comp = it->comp;
		struct wseg *seg = it->seg;
		int cap = it->capcomp, capseg = it->capseg;

		memset(it, 0, offsetof(struct item, ev));
		it->comp = comp;
		it->capcomp = cap;
		it->seg = seg;
		it->capseg = capseg;
		return it;
	}
	it->ncomp = it->nev = it->nseg = 0;
	it->window = 0;
	it->n_events = 0;
	it->self_long = 0;
	it->has_out = it->has_in = it->has_woken = it->has_mig = it->has_tick = it->has_tick_le = 0;
	return it;
}

static void item_free(struct sweep *s, struct item *it)
{
	it->next_free = s->free_items;
	s->free_items = it;
}

/* add_comp_new - a component the item does not have yet, its room grown */
static out_of_line void add_comp_new(struct item *it, uint8_t kind, int64_t id, int64_t v)
{
	if (it->ncomp == it->capcomp) {
		it->capcomp = it->capcomp ? 2 * it->capcomp : 8;
		it->comp = xrealloc(it->comp, it->capcomp * sizeof(*it->comp));
	}
	it->comp[it->ncomp++] = (struct comp){ id, v, kind };
}

/* add_comp - @v more cycles to the item's component (@kind, @id), new ones last; inline: every
 * event charges */
static hot_inline void add_comp(struct item *it, uint8_t kind, int64_t id, int64_t v)
{
	struct comp *p = it->comp, *end = p;

	if (HG_FAST || it->ncomp)	/* NULL + 0 is undefined: every item has an array (item_new) */
		end = p + it->ncomp;
	for (; p < end; p++)
		if (p->id == id && p->kind == kind) {
			p->v += v;
			return;
		}
	if (HG_FAST && likely(it->ncomp < it->capcomp)) {
		p->id = id;
		p->v = v;
		p->kind = kind;
		it->ncomp++;
		return;
	}
	add_comp_new(it, kind, id, v);
}

/* key_of - what the CPU's time goes to, for @it: the innermost handler, another task, or nothing
 * recorded (the item's own thread) */
static inline void key_of(const struct cpu_state *c, const struct item *it, uint8_t *kind, int64_t *id)
{
	if (c->nst) {
		*kind = c->stack[c->nst - 1].kind;
		*id = c->stack[c->nst - 1].id;
	} else if (c->cur != (int64_t)it->tid) {
		*kind = HGG_K_TASK;
		*id = c->cur;
	} else {
		*kind = HGG_K_SELF;
		*id = 0;
	}
}

/* add_seg - a wake-up window's stretch [@t0, @t1) went to (@kind, @id): appended, or joined to the
 * last one when that went to the same */
static out_of_line void add_seg(struct item *it, int64_t t0, int64_t t1, uint8_t kind, int64_t id)
{
	struct wseg *l = it->nseg ? &it->seg[it->nseg - 1] : NULL;

	if (t1 <= t0)
		return;
	if (l && l->kind == kind && l->id == id && l->t1 == t0) {
		l->t1 = t1;
		return;
	}
	if (it->nseg == it->capseg) {
		it->capseg = it->capseg ? 2 * it->capseg : 16;
		it->seg = xrealloc(it->seg, it->capseg * sizeof(*it->seg));
	}
	it->seg[it->nseg++] = (struct wseg){ t0, t1, id, kind };
}

/*
 * stretch_floor - HGG_UNRECORDED_FLOOR_US in cycles (sweep_new): a stretch with nothing recorded on
 * a CPU no longer than that is the kernel's own path between two of its events (entry, exit, a
 * switch's path: a few microseconds, and tens on PREEMPT_RT's threaded handlers under the
 * emulators' instruction-count clock), not time below the kernel. One run is merged at a time.
 */
static int64_t stretch_floor;

/* charge_item - the stretch [@t0, @t1) to what ran, less [@fa, @fb) to another vCPU's turn (@fcpu)
 * when @turn; @gap: @it is the CPU's gap, never a wake-up window (a constant where it is inlined) */
static hot_inline void charge_item(struct cpu_state *c, struct item *it, int64_t t0, int64_t t1, int turn,
				   int gap)
{
	uint8_t kind;
	int64_t id;

	key_of(c, it, &kind, &id);
	if (likely(!turn)) {
		add_comp(it, kind, id, t1 - t0);
		if (kind == HGG_K_SELF && t1 - t0 > stretch_floor)
			it->self_long += t1 - t0;
		if (!gap && it->window == 1)
			add_seg(it, t0, t1, kind, id);
		return;
	}
	if (kind == HGG_K_SELF) {
		if (c->fa - t0 > stretch_floor)
			it->self_long += c->fa - t0;
		if (t1 - c->fb > stretch_floor)
			it->self_long += t1 - c->fb;
	}
	add_comp(it, kind, id, (t1 - t0) - (c->fb - c->fa));
	add_comp(it, HGG_K_TURN, c->fcpu, c->fb - c->fa);
	if (!gap && it->window == 1) {
		add_seg(it, t0, c->fa, kind, id);
		add_seg(it, c->fa, c->fb, HGG_K_TURN, c->fcpu);
		add_seg(it, c->fb, t1, kind, id);
	}
}

/* charge - the time since the last charge, to what ran, for everything open on the CPU */
static hot_inline void charge(struct cpu_state *c, int64_t upto)
{
	int64_t t0 = c->t;
	int i, turn;

	if (upto <= t0)
		return;
	c->t = upto;
	turn = c->fmark && c->fb > c->fa;
	c->fmark = 0;
	if (c->gap)
		charge_item(c, c->gap, t0, upto, turn, 1);
	for (i = 0; i < c->nwin; i++)
		charge_item(c, c->win[i], t0, upto, turn, 0);
}

/* list_open - keep @cpu on the list of CPUs with a gap or window open, or off it (turns only) */
static hot_inline void list_open(struct sweep *s, struct cpu_state *c, uint32_t cpu)
{
	int want = c->gap || c->nwin;
	uint32_t i;

	if (!s->turns || want == c->listed)
		return;
	c->listed = want;
	if (want) {
		VEC_PUSH(s->open, s->nopen, s->capopen, ((struct open_cpu){ cpu, c }));
		return;
	}
	for (i = 0; i < s->nopen && s->open[i].cpu != cpu; i++)
		;
	if (i < s->nopen)
		s->open[i] = s->open[--s->nopen];
}

/*
 * mark_turn - CPU @x ran at @tsc (an event of its, or hourglass in user space there): where the
 * vCPUs take turns, every other CPU with something open was not running then. The mark stays
 * inside the other CPU's current stretch, which its next event or gap boundary charges. Called
 * after @x's own charge up to @tsc (HG_FAST), which leaves @x no stretch after @tsc to mark.
 */
static hot_inline void mark_turn(struct sweep *s, uint32_t x, int64_t tsc)
{
	const struct open_cpu *o = s->open, *end = o + s->nopen;

	for (; o < end; o++) {
		struct cpu_state *c = o->c;

		if ((!HG_FAST && o->cpu == x) || tsc <= c->t)
			continue;
		if (!c->fmark) {
			c->fmark = 1;
			c->fa = tsc;
			c->fcpu = (int32_t)x;
		} else if (c->fcpu != (int32_t)x) {
			c->fcpu = -1;
		}
		c->fb = tsc;
	}
}

struct sweep *sweep_new(struct run *r, struct infer *in, const struct sweep_sink *sink)
{
	struct sweep *s = xcalloc(1, sizeof(*s));

	s->r = r;
	s->in = in;
	s->sink = *sink;
	s->nmi_cycles = r->hz / 1e9;
	s->turns = r->vcpu_turns.detected;
	s->unrecorded_floor = (int64_t)(HGG_UNRECORDED_FLOOR_US * 1e-6 * r->hz);
	stretch_floor = s->unrecorded_floor;
	return s;
}

/* sort_comps - the item's components into @out, largest first, equal ones in the order they came */
static hot_inline void sort_comps(const struct item *it, struct hgg_comp *out)
{
	int i, j;

	for (i = 0; i < it->ncomp; i++) {
		uint64_t v = it->comp[i].v > 0 ? (uint64_t)it->comp[i].v : 0;

		for (j = i; j > 0 && out[j - 1].cycles < v; j--)
			out[j] = out[j - 1];
		out[j] = (struct hgg_comp){ .id = (int32_t)it->comp[i].id, .kind = it->comp[i].kind, .cycles = v };
	}
}

/* sorted_comps - the item's components, largest first, in the sweep's scratch (a window's) */
static const struct hgg_comp *sorted_comps(struct sweep *s, const struct item *it)
{
	if (it->ncomp > s->capsorted) {
		s->capsorted = it->ncomp;
		s->sorted = xrealloc(s->sorted, s->capsorted * sizeof(*s->sorted));
	}
	sort_comps(it, s->sorted);
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
	case HGG_K_TURN:
		return HGG_KD_TURN;
	case HGG_K_SELF:
		return HGG_KD_HIDDEN;
	default:
		return HGG_KD_NMI;
	}
}

static const uint8_t coarse[HGG_KD_N] = {
	[HGG_KD_IRQ] = HGG_C_INTERRUPT, [HGG_KD_SOFTIRQ] = HGG_C_INTERRUPT, [HGG_KD_NMI] = HGG_C_INTERRUPT,
	[HGG_KD_IPI] = HGG_C_INTERRUPT, [HGG_KD_TIMER] = HGG_C_TIMER, [HGG_KD_SWITCH_HG] = HGG_C_SWITCH_HG,
	[HGG_KD_SWITCH_OTHER] = HGG_C_SWITCH_OTHER, [HGG_KD_IDLE] = HGG_C_SWITCH_OTHER,
	[HGG_KD_HIDDEN] = HGG_C_HIDDEN, [HGG_KD_OTHER] = HGG_C_OTHER, [HGG_KD_UNEXPLAINABLE] = HGG_C_UNEXPLAINABLE,
	[HGG_KD_TURN] = HGG_C_HIDDEN,
};

/*
 * judge_item - a closed gap's class, cause and inference, handed to every output.
 *
 * Its composition first: each part's time, the thread's own (nothing recorded on its CPU) and
 * other vCPUs' turns apart. A gap is named after a kernel cause only when the kernel recorded
 * most of it: when its stretches with no event on its CPU longer than HGG_UNRECORDED_FLOOR_US
 * (stretch_floor) and other vCPUs' turns make more than HGG_UNRECORDED_SHARE of it and more
 * than that floor, it is hidden (a turn when the turns were more than those stretches), its
 * kernel parts still listed; a switch out of the thread does not change that. Otherwise the
 * largest part names it, and a switch out decides the class.
 */
static flatten_hot void judge_item(struct sweep *s, struct cpu_state *c, struct item *it)
{
	struct run *r = s->r;
	const struct gapdef *d = &it->g;
	struct gap_room room;
	struct hgg_gap *gp;
	struct gap_detail det;
	const struct hgg_comp *sc;
	int64_t unrecorded;
	int i, primary = -1, nturn = 0;

	/* judged where it waits for its inference (main.c): nothing is copied there after */
	if (HG_FAST && s->sink.room == merge_room)	/* the merge's own: a direct call, inlined */
		merge_room(s->sink.ctx, d->cpu, it->ncomp, &room);
	else
		s->sink.room(s->sink.ctx, d->cpu, it->ncomp, &room);
	sort_comps(it, room.comp);
	memcpy(room.ev, it->ev, (size_t)it->nev * sizeof(*it->ev));
	det = (struct gap_detail){ .ev = room.ev, .nev = it->nev, .comp = room.comp, .ncomp = it->ncomp };
	sc = room.comp;
	gp = room.g;
	gp->g0 = (uint64_t)d->g0;
	gp->g1 = (uint64_t)d->g1;
	gp->cpu = d->cpu;
	gp->thread = d->thread;
	gp->next_thread = d->next_thread;
	gp->vol = d->vol;
	gp->n_events = it->n_events;
	gp->turn_cpu = -1;

	for (i = 0; i < it->ncomp; i++) {
		int kd;

		if (sc[i].kind == HGG_K_SELF) {
			gp->self_cycles += sc[i].cycles;
			gp->switch_path_cycles += sc[i].cycles;
			continue;
		}
		if (sc[i].kind == HGG_K_TURN) {
			gp->turn_cycles += sc[i].cycles;
			gp->turn_cpu = nturn++ ? -1 : sc[i].id;
			continue;
		}
		/* a switch's own path: what the kernel charged to hourglass's threads themselves (the
		 * leaving one above; the coming one's kernel entry here), not handlers or other tasks */
		kd = comp_kind(r, sc[i].kind, sc[i].id);
		if (kd == HGG_KD_SWITCH_HG)
			gp->switch_path_cycles += sc[i].cycles;
		if (kd == HGG_KD_TIMER) {
			gp->flags |= HGG_F_TICK;	/* even when an NMI took all of its time */
			gp->tick_cycles += sc[i].cycles;
		}
		if (!sc[i].cycles)
			continue;
		if (primary < 0)
			primary = i;
		gp->explained_cycles += sc[i].cycles;
		if (is_handler(sc[i].kind))
			gp->handler_cycles += sc[i].cycles;
	}
	for (i = 0; i < it->ncomp && i < HGG_COMPS; i++)
		gp->comp[gp->ncomp++] = sc[i];
	/* nothing recorded: its stretches without an event on its CPU longer than the floor, not all
	 * of them: between the events of a switch or a handler the kernel runs its own entry, exit
	 * and switch path, short stretches that add up to much of a gap on PREEMPT_RT's threaded
	 * handlers (stretch_floor) */
	unrecorded = it->self_long + (int64_t)gp->turn_cycles;
	if (r->have_window && (d->g0 < r->window[0] || d->g1 > r->window[1])) {
		gp->kind = HGG_KD_UNEXPLAINABLE;
		gp->why = HGG_W_WINDOW;
		primary = -1;
	} else if (c->have_loss && c->loss_p < d->g1 && c->loss_t > d->g0) {
		gp->kind = HGG_KD_UNEXPLAINABLE;
		gp->why = HGG_W_LOST;
		primary = -1;
	} else if (unrecorded > s->unrecorded_floor &&
		   (double)unrecorded > HGG_UNRECORDED_SHARE * (double)(d->g1 - d->g0)) {
		gp->kind = (int64_t)gp->turn_cycles > it->self_long ? HGG_KD_TURN : HGG_KD_HIDDEN;
		gp->why = it->n_events ? HGG_W_UNRECORDED : HGG_W_HIDDEN;
	} else if (primary < 0) {
		gp->kind = it->n_events ? HGG_KD_OTHER : gp->turn_cycles ? HGG_KD_TURN : HGG_KD_HIDDEN;
		gp->why = it->n_events ? HGG_W_OTHER : HGG_W_HIDDEN;
	} else {
		gp->kind = comp_kind(r, sc[primary].kind, sc[primary].id);
	}
	if (primary >= 0) {
		gp->flags |= HGG_F_PRIMARY;
		gp->primary_kind = sc[primary].kind;
		gp->primary_id = sc[primary].id;
	}
	if (it->has_out) {
		gp->flags |= HGG_F_OUT | (it->out_preempted ? HGG_F_PREEMPTED : 0);
		gp->out_pid = it->out_pid;
		gp->out_state = it->out_state;
		/* switched out: whatever else happened, a switch; between hourglass threads when
		 * another one runs next on this CPU, even if a kernel thread ran in between
		 * (PREEMPT_RT's ktimers); else to another task, or to idle. Unless the kernel
		 * recorded too little of it to say (hidden above) */
		if (gp->kind != HGG_KD_UNEXPLAINABLE && gp->kind != HGG_KD_HIDDEN && gp->kind != HGG_KD_TURN) {
			uint32_t next_tid = r->th[d->next_thread].tid;
			int nxt_hg = d->next_thread != d->thread && next_tid;

			if (nxt_hg || (it->out_pid && thread_of_tid(r, it->out_pid) >= 0))
				gp->kind = HGG_KD_SWITCH_HG;
			else
				gp->kind = it->out_pid == 0 ? HGG_KD_IDLE : HGG_KD_SWITCH_OTHER;
			gp->why = HGG_W_OUT;
		}
	}
	gp->flags |= (it->has_in ? HGG_F_IN : 0) | (it->has_mig ? HGG_F_MIGRATED : 0);
	gp->cls = coarse[gp->kind];
	/* the inference is decided there, when it can be */
	if (HG_FAST && s->sink.gap == merge_gap)
		merge_gap(s->sink.ctx, gp, &det);
	else
		s->sink.gap(s->sink.ctx, gp, &det);
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

/* seg_nmi - a wake-up window's last @d cycles before @tsc (where its stretches end) were an NMI's */
static void seg_nmi(struct item *it, int64_t tsc, int64_t d)
{
	int64_t from = tsc - d;

	while (it->nseg && it->seg[it->nseg - 1].t0 >= from)
		it->nseg--;
	if (it->nseg && it->seg[it->nseg - 1].t1 > from)
		it->seg[it->nseg - 1].t1 = from;
	from = it->nseg ? it->seg[it->nseg - 1].t1 : (from > it->wev.w0 ? from : it->wev.w0);
	add_seg(it, from, tsc, HGG_K_NMI, 0);
}

/* item_nmi - an NMI in the item: its handler's time moved to it */
static cold_path void item_nmi(struct sweep *s, struct cpu_state *c, struct item *it,
					       const struct hgt_rec *h, int64_t tsc)
{
	const struct hgt_nmi *n = (const void *)(h + 1);
	int64_t d = (int64_t)(n->delta_ns * s->nmi_cycles);
	int64_t start = it->window ? it->wev.w0 : it->g.g0;
	uint8_t kind;
	int64_t id;
	int i;

	if (d > tsc - start)
		d = tsc - start;
	/* the handler ran just before its tracepoint: that time goes to the NMI, from what
	 * was being charged then, and if that is not enough, from what was charged before */
	key_of(c, it, &kind, &id);
	for (i = it->ncomp; i-- > 0 && d > 0;) {
		if (it->comp[i].kind == kind && it->comp[i].id == id)
			d = take_nmi(it, i, d);
	}
	for (i = it->ncomp; i-- > 0 && d > 0;)
		if (it->comp[i].kind != HGG_K_NMI)
			d = take_nmi(it, i, d);
	if (it->window == 1)
		seg_nmi(it, tsc, (int64_t)(n->delta_ns * s->nmi_cycles));
}

/* item_event - a kernel event inside an open gap or window; inline: every event has one */
static inline void item_event(struct sweep *s, struct cpu_state *c, struct item *it, const struct hgt_rec *h,
			      int64_t tsc, const struct hgt_switch *sw)
{
	it->n_events++;
	if (it->nev < SHOW_EVENTS) {
		struct kev *e = &it->ev[it->nev++];

		e->tsc = tsc;
		e->arg = h->arg;
		e->typ = h->type;
		e->flags = h->flags;
	}
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

/* sweep_kernel_plain - sweep_kernel() the plain way (HG_FAST 0): one step for every record */
static void sweep_kernel_plain(struct sweep *s, uint32_t cpu, const struct hgt_rec *h)
{
	struct cpu_state *c;
	int64_t tsc = (int64_t)h->tsc;
	const struct hgt_switch *sw = NULL;
	int i;

	if (unlikely(h->type == HGT_REC_COMM || h->type == HGT_REC_NAME)) {
		if (s->sink.named)
			s->sink.named(h);
		return;
	}
	c = cpu_of(s, cpu);
	if (unlikely(tsc < c->prev_tsc))
		c->backwards++;
	if (unlikely(h->type == HGT_REC_LOST)) {
		/* events went missing on this CPU between its previous event and this one */
		c->have_loss = 1;
		c->loss_p = c->prev_tsc;
		c->loss_t = tsc;
		c->nloss++;
	}
	c->prev_tsc = tsc;
	if (c->npend)
		flush(s, c);
	if (s->turns && h->type != HGT_REC_LOST)
		mark_turn(s, cpu, tsc);
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

/* sweep_special - a record of a type from COMM on: a name (to the sink's named()), a loss, or a
 * type this merger does not know, which charges its CPU's time and does nothing else */
static cold_path void sweep_special(struct sweep *s, uint32_t cpu, const struct hgt_rec *h)
{
	struct cpu_state *c;
	int64_t tsc = (int64_t)h->tsc;

	if (h->type == HGT_REC_COMM || h->type == HGT_REC_NAME) {
		if (s->sink.named)
			s->sink.named(h);
		return;
	}
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
	if (s->turns && h->type != HGT_REC_LOST)
		mark_turn(s, cpu, tsc);
}

/*
 * sweep_kernel - a kernel event: the time since the CPU's last one charged, its handlers' stack
 * moved, and what it tells of the gap open there (item_event()'s, for the gap written out in the
 * one switch on the record's type) and of the windows. Inline: every record comes here.
 */
void sweep_kernel(struct sweep *s, uint32_t cpu, const struct hgt_rec *h)
{
	const unsigned type = h->type;
	const int64_t tsc = (int64_t)h->tsc;
	const struct hgt_switch *sw = NULL;
	struct cpu_state *c;
	struct item *it;
	int i;

	if (!HG_FAST) {
		sweep_kernel_plain(s, cpu, h);
		return;
	}
	if (unlikely(type >= HGT_REC_COMM)) {
		sweep_special(s, cpu, h);
		return;
	}
	c = cpu_of(s, cpu);
	if (unlikely(tsc < c->prev_tsc))
		c->backwards++;
	c->prev_tsc = tsc;
	if (unlikely(c->npend))
		flush(s, c);
	charge(c, tsc);
	if (s->turns)
		mark_turn(s, cpu, tsc);
	if ((it = c->gap)) {
		it->n_events++;
		if (it->nev < SHOW_EVENTS)	/* the header as it is: one copy, not four fields */
			memcpy(&it->ev[it->nev++], h, sizeof(struct kev));
	}
	switch (type) {
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
		if (it) {
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
		}
		break;
	}
	case HGT_REC_MIGRATE: {
		int t = h->arg ? thread_of_tid(s->r, h->arg) : -1;

		if (t >= 0 && s->sink.migrated)
			s->sink.migrated(s->sink.ctx, t, tsc);
		if (it && h->arg == it->tid)
			it->has_mig = 1;
		break;
	}
	case HGT_REC_NMI:
		if (it)
			item_nmi(s, c, it, h, tsc);
		break;
	case HGT_REC_WAKING:
	case HGT_REC_WAKEUP:
		if (it && h->arg == it->tid && !it->has_woken) {
			it->has_woken = 1;
			it->woken = tsc;
		}
		break;
	}
	for (i = 0; i < c->nwin; i++)
		item_event(s, c, c->win[i], h, tsc, sw);
}

flatten_hot void sweep_open_gap(struct sweep *s, const struct gapdef *g)
{
	struct cpu_state *c = cpu_of(s, g->cpu);
	struct item *it;

	charge(c, g->g0);
	if (c->gap)		/* cannot happen: the CPU's gaps alternate with its intervals */
		item_free(s, c->gap);
	it = item_new(s, 0);
	it->g = *g;
	it->tid = s->r->th[g->thread].tid;
	/* known for sure: this thread ran in user space here at g0 */
	c->cur = it->tid;
	c->nst = 0;
	c->t = g->g0;
	c->fmark = 0;
	c->gap = it;
	if (s->turns) {
		list_open(s, c, g->cpu);
		mark_turn(s, g->cpu, g->g0);	/* hourglass ran here until g0 */
	}
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
	if (s->turns) {
		list_open(s, c, g->cpu);
		mark_turn(s, g->cpu, g->g1);	/* hourglass runs here from g1 */
	}
}

void sweep_open_window(struct sweep *s, const struct hg_ev *ev)
{
	struct cpu_state *c = cpu_of(s, ev->rec.cpu);
	struct item *it;

	charge(c, ev->w0);
	it = item_new(s, ev->wkind);
	it->window = ev->wkind;
	it->wev = *ev;
	it->tid = s->r->th[ev->rec.thread].tid;
	c->t = ev->w0;
	c->fmark = 0;
	VEC_PUSH(c->win, c->nwin, c->capwin, it);
	list_open(s, c, ev->rec.cpu);
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
	w.seg = it->seg;
	w.nseg = it->nseg;
	list_open(s, c, ev->rec.cpu);
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
		free(it->seg);
		free(it);
	}
	free(s->open);
	free(s->cpu);
	free(s->sorted);
	free(s);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * pf_export.c - the merged timeline as a Perfetto trace: Perfetto's own
 * protobuf format (a Trace of TracePackets), which ui.perfetto.dev and
 * trace_processor open (export.h, pf_*; docs/export.md, "Perfetto").
 *
 * Tracks: "kernel (ground truth)" with a track per CPU (the task running
 * between switches, hard irqs, x86 vectors and softirqs as slices nested in
 * it, lost events as instants) and "hourglass" with a track per thread (its
 * intervals, its gaps named by their actual cause, with the inferred and
 * actual classes and whether they agree as debug annotations; deadline
 * misses and wake-ups as instants). Provenance and the confusion matrix are
 * trace attributes.
 *
 * Each track is written by its own packet sequence, in time order: its
 * first packet clears the sequence's incremental state and sets its
 * defaults (the track, and a sequence clock whose timestamps are deltas
 * from the packet before), so that an event costs a dozen bytes. Names are
 * interned (pf_intern.h): said once per sequence, an iid after that. Times
 * are nanoseconds from base_tsc by trace-cmd's TSC2NSEC arithmetic, the
 * trace.dat's to the nanosecond, on Perfetto's BOOTTIME clock.
 *
 * Kernel records go through a reorder window per CPU (2 ms, as the
 * trace.dat's), hourglass's events through one per thread paced by the
 * thread's gaps, which the engine judges late (hg_thread_front); memory
 * stays flat. The output goes through one buffer to a temporary name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "kitem.h"
#include "out_tmp.h"
#include "pf_writer.h"
#include "reorder.h"
#include "tracedat_writer.h"

#define KERNEL_HORIZON_S	2e-3	/* as the trace.dat's windows (ks_export.c) */
#define KERNEL_WINDOW_MAX	65536
#define HG_HORIZON_MIN_S	20e-3	/* a job's record: up to two periods late, at least this */
#define HG_GAPLESS_S		1.0	/* a thread's events wait this long for its gaps, at most */
#define HG_WINDOW_MAX		(1u << 18)
#define STACK_MAX		32	/* handlers nested on a CPU */
#define TASK_SLOTS		4096
#define IRQ_SLOTS		256
#define STR_MAX			(1u << 20)	/* strings interned at most ... */
#define STR_BYTES		(64u << 20)	/* ... and their bytes: past that, names go inline */
#define DESC_MAX		PFW_TEXT_MAX

#define UUID_KERNEL		1
#define UUID_HOURGLASS		2
#define UUID_CPU(c)		((1ULL << 32) + (c))
#define UUID_THREAD(k)		((2ULL << 32) + (k))

/* debug annotation names, interned at open */
enum ann_name { A_CPU, A_NEXT_THREAD, A_INFERRED, A_ACTUAL, A_AGREE, A_COUNT, A_LATENESS, A_N };
static const char *const ann_names[A_N] = {
	"cpu", "next_thread", "inferred", "actual", "agree", "count", "lateness_ns",
};

enum frame_kind { F_IRQ, F_VEC, F_SOFTIRQ };

struct pf_cpu {
	struct ro_lane win;
	struct pf_seq seq;
	int has_cur, seen;
	uint32_t cur;
	uint64_t newest;	/* the latest record of the CPU, whatever its type */
	uint64_t last;		/* the time of the last record handled */
	uint64_t due;		/* no record held is due before this (pf_kernel) */
	unsigned depth;
	uint8_t kind[STACK_MAX];
	uint32_t id[STACK_MAX];
};

/* what an hourglass event is, and its order among events at the same time on a thread: a
 * slice's end is written before anything at or after it, then the instants, then what begins */
enum hkind { HK_INTERVAL, HK_GAP, HK_MISS, HK_WAKE };
enum hrank { R_INSTANT, R_BEGIN };

/* an event of a thread's track held for order (reorder.h): a slice is one, its end held in it */
struct hitem {
	uint64_t ts;		/* cycles from base_tsc */
	uint8_t rank;		/* enum hrank */
	uint8_t kind;		/* enum hkind */
	uint16_t next_thread;	/* HK_GAP */
	uint8_t inferred, actual, agree, pad;	/* HK_GAP: enum hgg_class, and whether they match */
	uint32_t name;		/* HK_GAP: its name's iid */
	uint32_t cpu;		/* slices */
	union {
		uint64_t end;		/* slices: cycles from base_tsc */
		int64_t lateness;	/* HK_WAKE, ns */
	};
};
_Static_assert(sizeof(struct hitem) == RO_ITEM, "an hourglass event fills a reorder slot");

#define GAP_ANN		16	/* by (inferred, actual): the few pairs a thread has */
#define ANN_BYTES	PFW_ANN_COPY	/* five annotations of small numbers; more is not cached */

/* a thread's last annotations, encoded: the next event with the same ones copies them */
struct ann_cache {
	uint64_t key;		/* what they say, ANN_VALID set; 0: none */
	unsigned len;
	uint8_t bytes[ANN_BYTES];
};
#define ANN_VALID	(1ULL << 63)

struct pf_thread {
	struct ro_lane win, gaps;	/* its events; its gaps, which come late (reorder.h, ro_pick) */
	struct pf_seq seq;
	struct ann_cache iv_ann, gap_ann[GAP_ANN];
	int open;		/* a slice is open on the track ... */
	uint64_t open_end;	/* ... until then (cycles): its end is written before what follows */
	uint64_t due;		/* no event held is due before this (hg_drain) */
	uint64_t gap_front;	/* the latest end of a gap of the thread */
};

struct name_slot {
	uint32_t key;
	uint32_t iid;
};

/* a gap's cause as the engine named it, and the iid of the name made of it */
struct cause_slot {
	uint32_t iid;
	uint8_t len, suffix;	/* suffix: the wrong inference added to the name, or NO_SUFFIX */
	char raw[58];		/* longer causes are not cached */
};
#define NO_SUFFIX	0xff
#define CAUSE_BITS	6

struct pf_export {
	struct pf_writer w;
	char *path, *tmp;
	struct exp_run run;
	uint32_t *tids;
	uint32_t mult, shift;
	struct ro_window kwin, hwin;
	struct pf_cpu *cpu;
	struct pf_thread *thread;
	uint64_t hg_front, hg_swept;	/* the latest hourglass event pushed; when all were last drained */
	uint64_t gapless;		/* HG_GAPLESS_S in cycles */
	uint64_t early, hg_early;
	uint64_t gaps, truncated;
	uint64_t confusion[HGG_C_N][HGG_C_N];
	uint32_t ann_iid[A_N];
	uint32_t class_iid[HGG_C_N];	/* the classes' names, as annotation strings */
	uint32_t gap_class_iid[HGG_C_N];	/* "gap: CLASS": a gap whose cause is not known */
	uint32_t running_iid, miss_iid, wake_iid, lost_iid, idle_iid;
	uint32_t vec_iid[HGT_VEC_MAX], softirq_iid[10];
	struct name_slot task[TASK_SLOTS];
	struct name_slot irq[IRQ_SLOTS];
	struct cause_slot causes[1 << CAUSE_BITS];
};

static int failed(struct pf_export *x, struct hg_err *err)
{
	if (!x->w.err_no)
		return 0;
	return hg_err_env(err, "%s: cannot write %s: %s", x->path, x->tmp, strerror(x->w.err_no));
}

static uint64_t rebase(struct pf_export *x, uint64_t tsc, uint64_t *early)
{
	if (tsc >= x->run.base_tsc)
		return tsc - x->run.base_tsc;
	(*early)++;
	return 0;
}

static inline uint64_t ns_of(const struct pf_export *x, uint64_t ts)
{
	return td_to_ns(ts, x->mult, x->shift);
}

/* ---- names ---- */

static uint32_t name_iid(struct pf_export *x, enum pf_dict dict, const char *s, size_t n)
{
	return pfw_name(&x->w, dict, s, n);
}

static uint32_t fixed_iid(struct pf_export *x, enum pf_dict dict, const char *s)
{
	return pfw_name(&x->w, dict, s, strlen(s));
}

/* a task slice's name: "idle", "hg-thread-1", "comm:pid" */
static uint32_t task_iid(struct pf_export *x, uint32_t pid)
{
	struct name_slot *s = &x->task[pid & (TASK_SLOTS - 1)];
	const struct exp_names *nm = &x->run.names;
	char buf[128];
	const char *name;
	uint32_t iid;

	if (s->iid && s->key == pid)
		return s->iid;
	if (!pid)
		return x->idle_iid;
	name = nm->task ? nm->task(nm->ctx, pid, buf, sizeof(buf)) : NULL;
	if (!name) {
		const char *comm = nm->comm ? nm->comm(nm->ctx, pid) : NULL;

		snprintf(buf, sizeof(buf), "%s:%u", comm ? comm : "?", pid);
		name = buf;
	}
	iid = name_iid(x, PF_EVENT_NAME, name, strnlen(name, 1024));
	/* a name not known yet ("?:pid") is kept too: the COMM record that names the task empties
	 * the slot (pf_kernel), as a NAME record does an irq's */
	if (iid)
		*s = (struct name_slot){ pid, iid };
	return iid;
}

static uint32_t irq_iid(struct pf_export *x, uint32_t irq)
{
	struct name_slot *s = &x->irq[irq & (IRQ_SLOTS - 1)];
	const char *name;
	char buf[128];
	uint32_t iid;
	int n;

	if (s->iid && s->key == irq)
		return s->iid;
	name = x->run.names.irq ? x->run.names.irq(x->run.names.ctx, irq) : NULL;
	if (name && *name)
		n = snprintf(buf, sizeof(buf), "irq %u %s", irq, name);
	else
		n = snprintf(buf, sizeof(buf), "irq %u", irq);
	iid = name_iid(x, PF_EVENT_NAME, buf, n < (int)sizeof(buf) ? n : (int)sizeof(buf) - 1);
	/* kept named or not: a NAME record that comes later empties the slot (pf_kernel). An irq
	 * the recording never names was formatted anew for every entry: 18% of this thread's
	 * instructions on the merge bench's run (callgrind) */
	if (iid)
		*s = (struct name_slot){ irq, iid };
	return iid;
}

static uint32_t handler_iid(struct pf_export *x, unsigned kind, uint32_t id)
{
	char buf[48];

	switch (kind) {
	case F_IRQ:
		return irq_iid(x, id);
	case F_VEC:
		if (id < HGT_VEC_MAX)
			return x->vec_iid[id];
		return name_iid(x, PF_EVENT_NAME, buf, snprintf(buf, sizeof(buf), "vector kind %u", id));
	default:
		if (id < 10)
			return x->softirq_iid[id];
		return name_iid(x, PF_EVENT_NAME, buf, snprintf(buf, sizeof(buf), "softirq %u", id));
	}
}

static inline void slice_end(struct pf_export *x, struct pf_seq *s, uint64_t ns)
{
	pfw_end(&x->w, s, ns);
}

/* ---- the kernel's side ---- */

static void cpu_start(struct pf_export *x, unsigned cpu)
{
	struct pf_cpu *c = &x->cpu[cpu];
	char name[32];

	snprintf(name, sizeof(name), "CPU %u", cpu);
	pfw_track(&x->w, c->seq.uuid, UUID_KERNEL, name, (int)cpu, NULL);
	c->seen = 1;
}

/* end the handlers open on the CPU from depth @to up */
static void end_frames(struct pf_export *x, struct pf_cpu *c, unsigned to, uint64_t ns)
{
	while (c->depth > to) {
		c->depth--;
		slice_end(x, &c->seq, ns);
	}
}

static void exit_frame(struct pf_export *x, struct pf_cpu *c, uint8_t kind, uint32_t id, uint64_t ns)
{
	unsigned i = c->depth;

	/* an exit whose entry came before what we know is ignored; handlers inside the one that
	 * exits, whose exits were not recorded, end with it */
	while (i && (c->kind[i - 1] != kind || c->id[i - 1] != id))
		i--;
	if (i)
		end_frames(x, c, i - 1, ns);
}

static void enter_frame(struct pf_export *x, struct pf_cpu *c, uint8_t kind, uint32_t id, uint64_t ns)
{
	uint32_t name;

	if (c->depth == STACK_MAX)
		return;
	name = handler_iid(x, kind, id);
	c->kind[c->depth] = kind;
	c->id[c->depth++] = id;
	pfw_begin(&x->w, &c->seq, ns, name);
}

/* one kernel record, in its CPU's time order */
static void process(struct pf_export *x, unsigned cpu, const struct kitem *it)
{
	struct pf_cpu *c = &x->cpu[cpu];
	uint64_t ns = ns_of(x, it->ts);

	if (__builtin_expect(!c->seen, 0))
		cpu_start(x, cpu);
	c->last = it->ts;
	switch (it->type) {
	case HGT_REC_SWITCH: {
		uint32_t name = task_iid(x, it->arg);

		/* a handler open at a switch lost its exit: it ended by then */
		end_frames(x, c, 0, ns);
		if (c->has_cur)
			slice_end(x, &c->seq, ns);
		c->cur = it->arg;
		c->has_cur = 1;
		pfw_begin(&x->w, &c->seq, ns, name);
		break;
	}
	case HGT_REC_IRQ_ENTRY:
		enter_frame(x, c, F_IRQ, it->arg, ns);
		break;
	case HGT_REC_VEC_ENTRY:
		enter_frame(x, c, F_VEC, it->flags, ns);
		break;
	case HGT_REC_SOFTIRQ_ENTRY:
		enter_frame(x, c, F_SOFTIRQ, it->arg, ns);
		break;
	case HGT_REC_IRQ_EXIT:
		exit_frame(x, c, F_IRQ, it->arg, ns);
		break;
	case HGT_REC_VEC_EXIT:
		exit_frame(x, c, F_VEC, it->flags, ns);
		break;
	case HGT_REC_SOFTIRQ_EXIT:
		exit_frame(x, c, F_SOFTIRQ, it->arg, ns);
		break;
	case HGT_REC_EXIT:
		x->task[it->arg & (TASK_SLOTS - 1)].iid = 0;
		break;
	case HGT_REC_LOST: {
		struct pf_ann a = { x->ann_iid[A_COUNT], PFA_UINT, 0 };

		memcpy(&a.v, it->p, 8);
		pfw_event(&x->w, &c->seq, ns, TYPE_INSTANT, x->lost_iid, &a, 1);
		break;
	}
	}
}

/* what a kernel record is to the tracks, by type: one look-up for every record */
enum kclass { K_IGNORED, K_TRACKED, K_COMM, K_NAME };

static uint8_t kclass[256], kneed[256];

static void kclass_init(void)
{
	static const uint8_t tracked[] = { HGT_REC_SWITCH, HGT_REC_IRQ_ENTRY, HGT_REC_IRQ_EXIT, HGT_REC_VEC_ENTRY,
					   HGT_REC_VEC_EXIT, HGT_REC_SOFTIRQ_ENTRY, HGT_REC_SOFTIRQ_EXIT, HGT_REC_EXIT,
					   HGT_REC_LOST };
	unsigned t;

	for (t = 0; t < 256; t++)
		kneed[t] = (uint8_t)kitem_payload(t);
	for (t = 0; t < sizeof(tracked); t++)
		kclass[tracked[t]] = K_TRACKED;
	kclass[HGT_REC_COMM] = K_COMM;
	kclass[HGT_REC_NAME] = K_NAME;
}

int pf_kernel(struct pf_export *x, uint32_t cpu, const struct hgt_rec *r, struct hg_err *err)
{
	unsigned need = kneed[r->type];
	struct pf_cpu *c;
	struct kitem *it;

	if (cpu >= x->run.ncpus)
		return hg_err_set(err, "kernel record of type %u at TSC %llu on CPU %u, but the run has %u CPUs",
				  r->type, (unsigned long long)r->tsc, cpu, x->run.ncpus);
	if (r->len < sizeof(*r) + need)
		return hg_err_set(err, "kernel record of type %u at TSC %llu on CPU %u: %u bytes, %zu expected",
				  r->type, (unsigned long long)r->tsc, cpu, r->len, sizeof(*r) + need);
	c = &x->cpu[cpu];
	if (r->tsc > x->run.base_tsc && r->tsc - x->run.base_tsc > c->newest)
		c->newest = r->tsc - x->run.base_tsc;
	if (__builtin_expect(kclass[r->type] != K_TRACKED, 0)) {
		if (kclass[r->type] == K_COMM)
			x->task[r->arg & (TASK_SLOTS - 1)].iid = 0;
		else if (kclass[r->type] == K_NAME && r->flags == HGT_NAME_IRQ)
			x->irq[r->arg & (IRQ_SLOTS - 1)].iid = 0;
		return 0;	/* nothing on the tracks */
	}
	it = ro_push(&x->kwin, &c->win, rebase(x, r->tsc, &x->early), 0);
	if (!it)
		return hg_err_env(err, "%s: out of memory for CPU %u's reorder window", x->path, cpu);
	kitem_fill(it, r, need);
	/* as hg_drain: the oldest record's time is looked at again only when it may be due */
	if (c->win.newest <= c->due && c->win.n < x->kwin.max)
		return 0;
	while ((it = ro_due(&x->kwin, &c->win, c->win.newest))) {
		if (c->win.n > 8)
			__builtin_prefetch(ro_at(&c->win, 8));
		process(x, cpu, it);
		ro_pop(&c->win);
	}
	c->due = c->win.n ? ro_ts(ro_at(&c->win, 0)) + x->kwin.horizon : 0;
	return failed(x, err);
}

/* ---- hourglass's side ---- */

/* one event of a thread's track, in the track's time order */
/* what a gap's annotations say, as one number */
static inline uint64_t gap_key(const struct hitem *it)
{
	return ANN_VALID | (uint64_t)it->cpu << 24 | (uint64_t)it->next_thread << 8 | it->inferred << 5 |
	       it->actual << 1 | it->agree;
}

static void emit_hourglass(struct pf_export *x, unsigned k, const struct hitem *it)
{
	struct pf_thread *th = &x->thread[k];
	uint64_t ns = ns_of(x, it->ts), key;
	struct ann_cache *c;
	unsigned n;
	struct pf_ann a[5];

	if (th->open && th->open_end <= it->ts) {
		slice_end(x, &th->seq, ns_of(x, th->open_end));
		th->open = 0;
	}
	switch (it->kind) {
	case HK_INTERVAL:
	case HK_GAP:
		/* slices on a thread's track follow each other: one that begins before the one open
		 * has ended cuts it short (it is not nested) */
		if (th->open) {
			slice_end(x, &th->seq, ns);
			x->truncated++;
		}
		th->open = 1;
		th->open_end = it->end > it->ts ? it->end : it->ts;
		if (it->kind == HK_INTERVAL) {
			c = &th->iv_ann;
			if (c->key != (ANN_VALID | it->cpu)) {
				a[0] = (struct pf_ann){ x->ann_iid[A_CPU], PFA_UINT, it->cpu };
				c->len = pfw_annotations(&x->w, &th->seq, a, 1, c->bytes);
				c->key = ANN_VALID | it->cpu;
			}
			pfw_event_encoded(&x->w, &th->seq, ns, TYPE_SLICE_BEGIN, x->running_iid, c->bytes, c->len);
			break;
		}
		key = gap_key(it);
		c = &th->gap_ann[(it->inferred * HGG_C_N + it->actual) % GAP_ANN];
		if (c->key != key) {
			uint8_t enc[5 * PFW_ANN_MAX];

			a[0] = (struct pf_ann){ x->ann_iid[A_CPU], PFA_UINT, it->cpu };
			a[1] = (struct pf_ann){ x->ann_iid[A_NEXT_THREAD], PFA_UINT, it->next_thread };
			a[2] = (struct pf_ann){ x->ann_iid[A_INFERRED], PFA_STRING, x->class_iid[it->inferred] };
			a[3] = (struct pf_ann){ x->ann_iid[A_ACTUAL], PFA_STRING, x->class_iid[it->actual] };
			a[4] = (struct pf_ann){ x->ann_iid[A_AGREE], PFA_BOOL, it->agree };
			n = pfw_annotations(&x->w, &th->seq, a, 5, enc);
			if (n > ANN_BYTES) {
				pfw_event_encoded(&x->w, &th->seq, ns, TYPE_SLICE_BEGIN, it->name, enc, n);
				break;
			}
			memcpy(c->bytes, enc, n);
			c->len = n;
			c->key = key;
		}
		pfw_event_encoded(&x->w, &th->seq, ns, TYPE_SLICE_BEGIN, it->name, c->bytes, c->len);
		break;
	case HK_MISS:
		pfw_event(&x->w, &th->seq, ns, TYPE_INSTANT, x->miss_iid, NULL, 0);
		break;
	case HK_WAKE:
		a[0] = (struct pf_ann){ x->ann_iid[A_LATENESS], PFA_INT, (uint64_t)it->lateness };
		pfw_event(&x->w, &th->seq, ns, TYPE_INSTANT, x->wake_iid, a, 1);
		break;
	}
}

/*
 * hg_thread_front - how far a thread's events may be handed out: the gaps set the pace. A gap
 * is judged when the kernel's timeline has passed it, and comes 15 ms after hourglass's
 * records of its time in the middle, 60 ms at worst in the lab's runs: a horizon behind the
 * newest record would have to guess at that. The thread's events wait until one of its gaps
 * ends a horizon after them (jobs and wake-ups come before the gaps of their time), or, for a
 * thread whose gaps do not come, until they are HG_GAPLESS_S old.
 */
static inline uint64_t hg_thread_front(const struct pf_export *x, const struct pf_thread *th)
{
	uint64_t slack = x->gapless - x->hwin.horizon;
	uint64_t old = x->hg_front > slack ? x->hg_front - slack : 0;

	return th->gap_front > old ? th->gap_front : old;
}

/* hand out a thread's due events; with @all, every event it holds */
static void hg_drain(struct pf_export *x, unsigned k, int all)
{
	struct pf_thread *th = &x->thread[k];
	struct ro_lane *h = &th->win, *g = &th->gaps, *l;
	uint64_t front = hg_thread_front(x, th);

	/* the oldest event held is not due before th->due: not looked at until then (it has been
	 * out of the cache for a while); an older one put before it waits as long, no more */
	if (!all && front <= th->due && h->n < x->hwin.max && g->n < x->hwin.max)
		return;
	while ((l = all ? ro_pick(h, g) : ro_due2(&x->hwin, h, g, front))) {
		if (l->n > 8)
			__builtin_prefetch(ro_at(l, 8));
		emit_hourglass(x, k, (struct hitem *)ro_at(l, 0));
		ro_pop2(l, l == h ? g : h);
	}
	l = ro_pick(h, g);
	th->due = l ? ro_ts(ro_at(l, 0)) + x->hwin.horizon : 0;
}

static struct hitem *hg_push(struct pf_export *x, unsigned k, uint64_t tsc, enum hrank rank, enum hkind kind)
{
	uint64_t ts = rebase(x, tsc, &x->hg_early);
	struct pf_thread *th = &x->thread[k];
	struct ro_lane *l = kind == HK_GAP ? &th->gaps : &th->win;
	struct hitem *it;

	if (l->cap)
		__builtin_prefetch(ro_at(l, l->n + 2), 1);
	it = ro_push2(&x->hwin, l, l == &th->win ? &th->gaps : &th->win, ts, rank);

	if (it) {
		it->kind = kind;
		if (ts > x->hg_front)
			x->hg_front = ts;
	} else {
		x->w.err_no = ENOMEM;
	}
	return it;
}

/* a slice from @t0 to @t1 on thread @k's track (@b: its kind and what it shows) */
static void hg_slice(struct pf_export *x, unsigned k, uint64_t t0, uint64_t t1, const struct hitem *b)
{
	struct hitem *it = hg_push(x, k, t0, R_BEGIN, b->kind);

	if (!it)
		return;
	memcpy((uint8_t *)it + 9, (const uint8_t *)b + 9, RO_ITEM - 9);	/* all but the key */
	it->end = rebase(x, t1, &x->hg_early);
}

/* after a push on thread @k: its due events, and now and then every thread's */
static int hg_settle(struct pf_export *x, unsigned k, struct hg_err *err)
{
	int t;

	if (x->w.err_no == ENOMEM)
		return hg_err_env(err, "%s: out of memory for the hourglass side's reorder window", x->path);
	hg_drain(x, k, 0);
	if (x->hg_front - x->hg_swept > x->hwin.horizon / 4) {
		for (t = 0; t < x->run.nthreads; t++)
			hg_drain(x, t, 0);
		x->hg_swept = x->hg_front;
	}
	return failed(x, err);
}

int pf_hourglass(struct pf_export *x, const struct hgl_rec *r, struct hg_err *err)
{
	struct hitem *it;

	if (r->type != HGL_REC_INTERVAL && r->type != HGL_REC_JOB && r->type != HGL_REC_WAKE)
		return 0;	/* a newer minor's record */
	if (r->thread >= x->run.nthreads)
		return hg_err_set(err, "hourglass record of thread %u, but the run has %d threads", r->thread,
				  x->run.nthreads);
	switch (r->type) {
	case HGL_REC_INTERVAL: {
		struct hitem b = { .kind = HK_INTERVAL, .cpu = r->cpu };

		hg_slice(x, r->thread, r->t0, r->t1, &b);
		break;
	}
	case HGL_REC_JOB:
		if (r->flags & HGL_JOB_MISSED)
			hg_push(x, r->thread, r->t2, R_INSTANT, HK_MISS);
		break;
	case HGL_REC_WAKE:
		it = hg_push(x, r->thread, r->t1, R_INSTANT, HK_WAKE);
		if (it)
			it->lateness = (int64_t)r->t2;
		break;
	}
	return hg_settle(x, r->thread, err);
}

/* a gap's name: its cause as the engine names it, and the inference when it was wrong */
/* @n bytes alike: a cause is a few words long, a call to memcmp would cost more */
static inline int same(const char *a, const char *b, size_t n)
{
	uint64_t u, v;

	for (; n >= 8; a += 8, b += 8, n -= 8) {
		memcpy(&u, a, 8);
		memcpy(&v, b, 8);
		if (u != v)
			return 0;
	}
	while (n--)
		if (*a++ != *b++)
			return 0;
	return 1;
}

static uint32_t gap_iid(struct pf_export *x, const struct hgg_gap *g, int right)
{
	static const char infix[] = " (inferred ";
	char buf[256], name[PF_NAME_MAX + 64];
	unsigned suffix = !right && !g->vol ? g->inferred : NO_SUFFIX;
	const char *cause;
	struct cause_slot *c;
	uint64_t h = 0;
	size_t n;
	uint32_t iid;

	cause = x->run.names.cause ? x->run.names.cause(x->run.names.ctx, g, buf, sizeof(buf)) : NULL;
	if (!cause || !*cause)
		return x->gap_class_iid[g->cls];
	n = strnlen(cause, PF_NAME_MAX);
	/* the same few causes, millions of times: a cache of the engine's names as given */
	if (n >= 8) {
		uint64_t t;

		memcpy(&h, cause, 8);
		memcpy(&t, cause + n - 8, 8);	/* "switched to stress-ng:555": the end differs */
		h ^= t * 0xff51afd7ed558ccdULL;
	} else {
		memcpy(&h, cause, n);
	}
	h = (h ^ (n << 8 | suffix)) * 0x9e3779b97f4a7c15ULL;
	c = &x->causes[h >> (64 - CAUSE_BITS)];
	if (c->iid && c->len == n && c->suffix == suffix && same(c->raw, cause, n))
		return c->iid;
	if (suffix != NO_SUFFIX) {
		size_t k = strlen(hgg_class_name[suffix]);

		memcpy(name, cause, n);
		memcpy(name + n, infix, sizeof(infix) - 1);
		memcpy(name + n + sizeof(infix) - 1, hgg_class_name[suffix], k);
		name[n + sizeof(infix) - 1 + k] = ')';
		iid = name_iid(x, PF_EVENT_NAME, name, n + sizeof(infix) + k);
	} else {
		iid = name_iid(x, PF_EVENT_NAME, cause, n);
	}
	if (iid && n <= sizeof(c->raw)) {
		c->iid = iid;
		c->len = (uint8_t)n;
		c->suffix = (uint8_t)suffix;
		memcpy(c->raw, cause, n);
	}
	/* the item has room for an iid only: a name the full table refuses is said by its class */
	return iid ? iid : x->gap_class_iid[g->cls];
}

int pf_gap(struct pf_export *x, const struct hgg_gap *g, struct hg_err *err)
{
	int right = !g->vol && g->inferred == g->cls;
	struct hitem b = { 0 };

	if (g->thread >= x->run.nthreads)
		return hg_err_set(err, "gap at TSC %llu of thread %u, but the run has %d threads",
				  (unsigned long long)g->g0, g->thread, x->run.nthreads);
	if (g->cls >= HGG_C_N || g->inferred >= HGG_C_N)
		return hg_err_set(err, "gap at TSC %llu of thread %u: class %u, inferred %u, of %u known",
				  (unsigned long long)g->g0, g->thread, g->cls, g->inferred, HGG_C_N);
	b.kind = HK_GAP;
	b.name = gap_iid(x, g, right);
	b.cpu = g->cpu;
	b.next_thread = g->next_thread;
	b.inferred = g->vol ? HGG_C_VOLUNTARY : g->inferred;
	b.actual = g->cls;
	b.agree = right;
	hg_slice(x, g->thread, g->g0, g->g1, &b);
	{
		struct pf_thread *th = &x->thread[g->thread];
		uint64_t end = rebase(x, g->g1, &x->hg_early);

		if (end > th->gap_front)
			th->gap_front = end;
	}
	x->gaps++;
	if (hgg_in_matrix(g))
		x->confusion[g->cls][g->inferred]++;
	return hg_settle(x, g->thread, err);
}

/* ---- open, finish ---- */

static void free_export(struct pf_export *x)
{
	unsigned c;
	int k;

	if (!x)
		return;
	if (x->w.fd >= 0)
		close(x->w.fd);
	out_discard(x->tmp);
	for (c = 0; x->cpu && c < x->run.ncpus; c++) {
		ro_lane_free(&x->cpu[c].win);
		pfw_seq_free(&x->cpu[c].seq);
	}
	for (k = 0; x->thread && k < x->run.nthreads; k++) {
		ro_lane_free(&x->thread[k].win);
		ro_lane_free(&x->thread[k].gaps);
		pfw_seq_free(&x->thread[k].seq);
	}
	pfw_free(&x->w);
	free(x->cpu);
	free(x->thread);
	free(x->tids);
	free(x->path);
	free(x);
}

void pf_abort(struct pf_export *x)
{
	free_export(x);
}

/* the names every trace has: interned first, so that a full table never refuses them */
static void intern_fixed(struct pf_export *x)
{
	char buf[64];
	int k;

	for (k = 0; k < A_N; k++)
		x->ann_iid[k] = fixed_iid(x, PF_ANNOTATION_NAME, ann_names[k]);
	for (k = 0; k < HGG_C_N; k++) {
		x->class_iid[k] = fixed_iid(x, PF_ANNOTATION_STRING, hgg_class_name[k]);
		snprintf(buf, sizeof(buf), "gap: %s", hgg_class_name[k]);
		x->gap_class_iid[k] = fixed_iid(x, PF_EVENT_NAME, buf);
	}
	x->running_iid = fixed_iid(x, PF_EVENT_NAME, "running");
	x->miss_iid = fixed_iid(x, PF_EVENT_NAME, "deadline missed");
	x->wake_iid = fixed_iid(x, PF_EVENT_NAME, "wake-up");
	x->lost_iid = fixed_iid(x, PF_EVENT_NAME, "events lost");
	x->idle_iid = fixed_iid(x, PF_EVENT_NAME, "idle");
	for (k = 0; k < HGT_VEC_MAX; k++)
		x->vec_iid[k] = fixed_iid(x, PF_EVENT_NAME, hgt_vec_name(k));
	for (k = 0; k < 10; k++) {
		snprintf(buf, sizeof(buf), "softirq %s", hgt_softirq_name(k));
		x->softirq_iid[k] = fixed_iid(x, PF_EVENT_NAME, buf);
	}
}

/* the groups and the threads' tracks, and what the run was */
static void put_header(struct pf_export *x)
{
	static const char *const keys[] = {
		"hourglass.source", "hourglass.command", "hourglass.kernel", "hourglass.tsc_hz",
		"hourglass.base_tsc", "hourglass.time",
	};
	char desc[DESC_MAX], hz[32];
	const char *cmd = x->run.command ? x->run.command : "", *uname = x->run.uname ? x->run.uname : "";
	const char *s[6];
	int64_t v[6] = { 0 };
	int k;

	snprintf(desc, sizeof(desc), "The kernel's recording, the ground truth: per CPU the task running between "
		 "switches, with hard irqs, x86 vectors and softirqs nested in it; lost events as instants. "
		 "Kernel %s.", uname);
	pfw_track(&x->w, UUID_KERNEL, 0, "kernel (ground truth)", 0, desc);
	snprintf(desc, sizeof(desc), "hourglass's threads: the intervals each ran (\"running\") and each gap "
		 "between them, named by its actual cause, \"(inferred X)\" added when the inference was wrong; "
		 "deadline misses and wake-ups as instants. Command: %.1500s", cmd);
	pfw_track(&x->w, UUID_HOURGLASS, 0, "hourglass", 1, desc);
	for (k = 0; k < x->run.nthreads; k++) {
		char name[256];

		snprintf(name, sizeof(name), "%s (tid %u, %s)",
			 x->run.thread_names && x->run.thread_names[k] ? x->run.thread_names[k] : "hg-thread-?",
			 x->tids[k], x->run.workloads && x->run.workloads[k] ? x->run.workloads[k] : "?");
		pfw_track(&x->w, x->thread[k].seq.uuid, UUID_HOURGLASS, name, k, NULL);
	}
	snprintf(hz, sizeof(hz), "%.17g", x->run.tsc_hz);
	s[0] = "hourglass export";
	s[1] = cmd;
	s[2] = uname;
	s[3] = hz;
	s[4] = NULL;
	v[4] = (int64_t)x->run.base_tsc;
	s[5] = "nanoseconds from base_tsc by trace-cmd's TSC2NSEC, as the trace.dat's";
	for (k = 0; k < 6; k++)
		pfw_attribute(&x->w, keys[k], s[k], v[k]);
}

struct pf_export *pf_open(const char *path, const struct exp_run *run, struct hg_err *err)
{
	size_t n = strlen(path);
	struct pf_export *x;
	unsigned c;
	int k;

	if (n >= 5 && !strcmp(path + n - 5, ".json")) {
		hg_err_set(err, "%s: the Perfetto export is Perfetto's protobuf trace, not JSON: "
			   "name it .perfetto-trace or .pftrace", path);
		return NULL;
	}
	if (!run->ncpus || !(run->tsc_hz > 0) || run->nthreads < 0 || run->nthreads > 65536) {
		hg_err_set(err, "%s: a run of %u CPUs, %d threads at %g Hz cannot be exported", path, run->ncpus,
			   run->nthreads, run->tsc_hz);
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		hg_err_env(err, "%s: out of memory", path);
		return NULL;
	}
	x->w.fd = -1;
	x->run = *run;
	x->path = strdup(path);
	x->cpu = calloc(run->ncpus, sizeof(*x->cpu));
	x->thread = calloc(run->nthreads + 1, sizeof(*x->thread));
	x->tids = calloc(run->nthreads + 1, sizeof(*x->tids));
	if (!x->path || !x->cpu || !x->thread || !x->tids || pfw_init(&x->w, -1, STR_MAX, STR_BYTES)) {
		hg_err_env(err, "%s: out of memory", path);
		free_export(x);
		return NULL;
	}
	{
		uint64_t period = 0;

		for (k = 0; k < run->nthreads; k++) {
			x->tids[k] = run->tids ? run->tids[k] : 0;
			if (run->periods && run->periods[k] > period)
				period = run->periods[k];
			x->thread[k].seq = (struct pf_seq){ .uuid = UUID_THREAD(k), .id = 1 + run->ncpus + k };
		}
		/* a job's record comes when the job ends: a period late, or more when it overran */
		if ((double)period * 2 < HG_HORIZON_MIN_S * run->tsc_hz)
			period = (uint64_t)(HG_HORIZON_MIN_S * run->tsc_hz / 2);
		ro_init(&x->hwin, HG_WINDOW_MAX, 2 * period);
		x->gapless = (uint64_t)(HG_GAPLESS_S * run->tsc_hz);
		if (x->gapless < 2 * x->hwin.horizon)
			x->gapless = 2 * x->hwin.horizon;
	}
	x->run.tids = NULL;
	x->run.periods = NULL;
	td_tsc2nsec(run->tsc_hz, &x->mult, &x->shift);
	ro_init(&x->kwin, KERNEL_WINDOW_MAX, (uint64_t)(KERNEL_HORIZON_S * run->tsc_hz));
	for (c = 0; c < run->ncpus; c++)
		x->cpu[c].seq = (struct pf_seq){ .uuid = UUID_CPU(c), .id = 1 + c };
	intern_fixed(x);
	kclass_init();
	x->w.fd = out_create(path, &x->tmp, err);
	if (x->w.fd < 0) {
		free_export(x);
		return NULL;
	}
	put_header(x);
	x->run.thread_names = NULL;
	x->run.workloads = NULL;
	x->run.command = NULL;
	x->run.uname = NULL;
	return x;
}

/* what only the end knows: what was put back in order or moved, and the confusion matrix */
static void put_trailer(struct pf_export *x)
{
	enum { FIXED = 7, CELLS = HGG_C_UNEXPLAINABLE * HGG_C_OTHER };
	static const char *const fixed[FIXED] = {
		"hourglass.events", "hourglass.gaps", "hourglass.kernel_reordered", "hourglass.kernel_clamped",
		"hourglass.hourglass_reordered", "hourglass.hourglass_clamped", "hourglass.slices_cut",
	};
	char names[CELLS][64];
	const char *keys[FIXED + CELLS], *s[FIXED + CELLS];
	int64_t v[FIXED + CELLS];
	unsigned i = 0, a, b;

	v[0] = (int64_t)x->w.events;
	v[1] = (int64_t)x->gaps;
	v[2] = (int64_t)x->kwin.reordered;
	v[3] = (int64_t)(x->kwin.clamped + x->early);
	v[4] = (int64_t)x->hwin.reordered;
	v[5] = (int64_t)(x->hwin.clamped + x->hg_early);
	v[6] = (int64_t)x->truncated;
	for (i = 0; i < FIXED; i++) {
		keys[i] = fixed[i];
		s[i] = NULL;
	}
	/* matrix[actual][inferred], as the report's: explained classes by inferable ones */
	for (a = 0; a < HGG_C_UNEXPLAINABLE; a++)
		for (b = 0; b < HGG_C_OTHER; b++, i++) {
			snprintf(names[i - FIXED], sizeof(names[0]), "hourglass.confusion.%s.%s", hgg_class_name[a],
				 hgg_class_name[b]);
			keys[i] = names[i - FIXED];
			s[i] = NULL;
			v[i] = (int64_t)x->confusion[a][b];
		}
	for (a = 0; a < i; a++)
		pfw_attribute(&x->w, keys[a], s[a], v[a]);
}

int pf_drain(struct pf_export *x, struct pf_summary *sum, struct hg_err *err)
{
	unsigned cpu;
	struct kitem *it;
	int k;

	memset(sum, 0, sizeof(*sum));
	for (cpu = 0; cpu < x->run.ncpus; cpu++) {
		struct pf_cpu *c = &x->cpu[cpu];
		uint64_t end;

		while ((it = ro_first(&c->win))) {
			process(x, cpu, it);
			ro_pop(&c->win);
		}
		/* the task and the handlers open on the CPU ran at least until its last record */
		end = ns_of(x, c->newest > c->last ? c->newest : c->last);
		end_frames(x, c, 0, end);
		if (c->has_cur)
			slice_end(x, &c->seq, end);
	}
	for (k = 0; k < x->run.nthreads; k++) {
		hg_drain(x, k, 1);
		if (x->thread[k].open)
			slice_end(x, &x->thread[k].seq, ns_of(x, x->thread[k].open_end));
	}
	put_trailer(x);
	if (failed(x, err))
		return -1;
	sum->events = x->w.events;
	sum->gaps = x->gaps;
	sum->reordered = x->kwin.reordered;
	sum->clamped = x->kwin.clamped + x->early;
	return 0;
}

int pf_write(struct pf_export *x, struct hg_err *err)
{
	pfw_flush(&x->w);
	if (failed(x, err))
		return -1;
	if (close(x->w.fd)) {
		x->w.fd = -1;
		return hg_err_env(err, "%s: cannot write %s: %s", x->path, x->tmp, strerror(errno));
	}
	x->w.fd = -1;
	return 0;
}

int pf_commit(struct pf_export *x, struct hg_err *err)
{
	int ret = out_commit(x->tmp, x->path, err);

	free(x->tmp);
	x->tmp = NULL;		/* renamed, or removed by out_commit */
	free_export(x);
	return ret;
}

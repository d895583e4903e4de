// SPDX-License-Identifier: GPL-2.0
/*
 * sweep.c - every kernel event handed to its CPU's sweep; every gap charged,
 * classified and judged the moment it closes, so that nothing per gap
 * outlives the gap.
 *
 * The reference is tools/hgmerge/truth.py (its docstring says how time is
 * charged). Each CPU keeps the task on it and the stack of handlers running;
 * the gaps and windows of the CPU open and close in time order, several at
 * once when a window overlaps gaps. The .hgt file is read chunk by chunk with
 * the reference reader's checks and messages (tools/hgtrace_file.py).
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core.h"
#include "hgtrace.h"
#include "../recorder/hgt_file.h"

#define REC_HDR 16

struct item { int64_t g0; uint32_t seq; struct gap *g; };

struct cpu_sweep {
	struct item *items;
	size_t n, i, cap;
	struct truth **open;
	int nopen, capopen;
	int64_t cur;			/* task on the CPU; -1 unknown */
	struct key *stack;
	int nst, capst;
	int64_t t, prev_tsc;
	int64_t (*loss)[2];		/* (previous event, LOST record) */
	size_t nloss, caploss;
	uint64_t backwards;
	int exists;
};

struct sweep {
	struct run *r;
	struct judge *j;
	struct cpu_sweep *cpu;
	size_t ncpu;
	double nmi_cycles;
};

static struct cpu_sweep *cpu_of(struct sweep *s, uint32_t cpu)
{
	if (cpu >= s->ncpu) {
		size_t n = cpu + 1;

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

static int key_eq(struct key a, struct key b)
{
	return a.kind == b.kind && a.id == b.id;
}

static int comp_find(struct truth *t, struct key k)
{
	int i;

	for (i = 0; i < t->ncomp; i++)
		if (key_eq(t->comp[i].k, k))
			return i;
	if (t->ncomp == t->capcomp) {
		t->capcomp = t->capcomp ? 2 * t->capcomp : 8;
		t->comp = xrealloc(t->comp, t->capcomp * sizeof(*t->comp));
	}
	t->comp[t->ncomp] = (struct comp){ k, 0 };
	return t->ncomp++;
}

static void charge(struct cpu_sweep *c, int64_t upto)
{
	int64_t d;
	int i;

	if (upto <= c->t)
		return;
	d = upto - c->t;
	c->t = upto;
	for (i = 0; i < c->nopen; i++) {
		struct truth *t = c->open[i];
		struct key k;
		int at;

		if (c->nst)
			k = c->stack[c->nst - 1];
		else if (c->cur != (int64_t)t->g->tid)
			k = (struct key){ c->cur, K_TASK };
		else
			k = (struct key){ 0, K_SELF };
		at = comp_find(t, k);		/* before indexing: it may move t->comp */
		t->comp[at].v += d;
	}
}

/* truth.py's component_kind */
static int component_kind(const struct run *r, struct key k)
{
	switch (k.kind) {
	case K_VEC:
		return k.id == 0 ? KD_TIMER : KD_IPI;
	case K_TASK:
		if (k.id == 0)
			return KD_IDLE;
		return k.id > 0 && thread_of_tid(r, k.id) >= 0 ? KD_SWITCH_HG : KD_SWITCH_OTHER;
	case K_IRQ:
		return KD_IRQ;
	case K_SOFTIRQ:
		return KD_SOFTIRQ;
	default:
		return KD_NMI;
	}
}

static const int coarse[KD_N] = {
	[KD_IRQ] = C_INTERRUPT, [KD_SOFTIRQ] = C_INTERRUPT, [KD_NMI] = C_INTERRUPT, [KD_IPI] = C_INTERRUPT,
	[KD_TIMER] = C_TIMER, [KD_SWITCH_HG] = C_SWITCH_HG, [KD_SWITCH_OTHER] = C_SWITCH_OTHER,
	[KD_IDLE] = C_SWITCH_OTHER, [KD_HIDDEN] = C_HIDDEN, [KD_OTHER] = C_OTHER, [KD_UNEXPL] = C_UNEXPL,
};

static int lost_in(const struct cpu_sweep *c, const struct gap *g)
{
	size_t i = c->nloss;

	/* losses come in time order: only the last ones can reach the gap */
	while (i--) {
		if (c->loss[i][1] <= g->g0)
			break;
		if (c->loss[i][0] < g->g1)
			return 1;
	}
	return 0;
}

/* truth.py's classify, with the window and losses known */
static void close_gap(struct sweep *s, struct cpu_sweep *c, struct truth *t)
{
	struct run *r = s->r;
	struct gap *g = t->g;
	struct key primary = { 0, 0 };
	int kind, why = W_NONE, has_primary = 0, i;
	int64_t best = 0;

	if (g->window) {
		judge_window(s->j, g, t);
		return;
	}
	for (i = 0; i < t->ncomp; i++) {
		if (t->comp[i].k.kind == K_SELF || t->comp[i].v <= 0)
			continue;
		if (!has_primary || t->comp[i].v > best) {	/* the first of equal ones, as max() */
			primary = t->comp[i].k;
			best = t->comp[i].v;
			has_primary = 1;
		}
	}
	if (r->have_window && (g->g0 < r->window[0] || g->g1 > r->window[1])) {
		kind = KD_UNEXPL;
		why = W_WINDOW;
		has_primary = 0;
	} else if (lost_in(c, g)) {
		kind = KD_UNEXPL;
		why = W_LOST;
		has_primary = 0;
	} else if (!has_primary) {
		kind = t->n_events == 0 ? KD_HIDDEN : KD_OTHER;
		why = t->n_events == 0 ? W_HIDDEN : W_OTHER;
	} else {
		kind = component_kind(r, primary);
	}
	if (t->has_out && kind != KD_UNEXPL) {
		int nxt_hg = g->next_tid != g->tid && g->next_tid && thread_of_tid(r, g->next_tid) >= 0;

		if (nxt_hg || (t->out_pid && thread_of_tid(r, t->out_pid) >= 0))
			kind = KD_SWITCH_HG;
		else
			kind = t->out_pid == 0 ? KD_IDLE : KD_SWITCH_OTHER;
		why = W_OUT;
	}
	judge_gap(s->j, r, g, t, coarse[kind], kind, has_primary ? &primary : NULL, why);
}

static void free_truth(struct truth *t)
{
	free(t->comp);
	free(t);
}

/* open and close the gaps whose boundaries come before @tsc, in order */
static void advance(struct sweep *s, struct cpu_sweep *c, int64_t tsc, int end)
{
	for (;;) {
		int have_next = c->i < c->n, e = -1, k;
		int64_t nxt = have_next ? c->items[c->i].g0 : 0;

		for (k = 0; k < c->nopen; k++)
			if (e < 0 || c->open[k]->g->g1 < c->open[e]->g->g1)
				e = k;
		if (e >= 0 && (end || c->open[e]->g->g1 < tsc) && (!have_next || c->open[e]->g->g1 <= nxt)) {
			struct truth *t = c->open[e];

			charge(c, t->g->g1);
			memmove(c->open + e, c->open + e + 1, (c->nopen - e - 1) * sizeof(*c->open));
			c->nopen--;
			close_gap(s, c, t);
			free_truth(t);
		} else if (have_next && (end || nxt < tsc)) {
			struct gap *g = c->items[c->i++].g;
			struct truth *t = xcalloc(1, sizeof(*t));

			charge(c, g->g0);
			t->g = g;
			if (!g->window) {
				/* known for sure: this thread ran in user space here at g0 */
				c->cur = g->tid;
				c->nst = 0;
			}
			c->t = g->g0;
			if (c->nopen == c->capopen) {
				c->capopen = c->capopen ? 2 * c->capopen : 4;
				c->open = xrealloc(c->open, c->capopen * sizeof(*c->open));
			}
			c->open[c->nopen++] = t;
		} else {
			return;
		}
	}
}

static const char *kname;	/* the recording, as messages name it */
static uint32_t file_version;

static void too_short(int typ, uint32_t cpu, int64_t tsc)
{
	fail("%s: a record of type %d on CPU %u at TSC %lld is too short for its type", kname, typ, cpu,
	     (long long)tsc);
}

static void event(struct sweep *s, uint32_t cpu, const struct hgt_rec *h, const char *pay, size_t plen)
{
	struct run *r = s->r;
	struct cpu_sweep *c = cpu_of(s, cpu);
	int64_t tsc = (int64_t)h->tsc;
	int typ = h->type, k;
	uint32_t prev = 0, state = 0;

	if (tsc < c->prev_tsc)
		c->backwards++;
	if (typ == HGT_REC_LOST) {
		int64_t w[2] = { c->prev_tsc, tsc };

		if (c->nloss == c->caploss) {
			c->caploss = c->caploss ? 2 * c->caploss : 16;
			c->loss = xrealloc(c->loss, c->caploss * sizeof(*c->loss));
		}
		memcpy(c->loss[c->nloss++], w, sizeof(w));
	}
	c->prev_tsc = tsc;
	advance(s, c, tsc, 0);
	charge(c, tsc);
	switch (typ) {
	case HGT_REC_IRQ_ENTRY:
	case HGT_REC_VEC_ENTRY:
	case HGT_REC_SOFTIRQ_ENTRY: {
		struct key k2 = { typ == HGT_REC_VEC_ENTRY ? h->flags : h->arg,
				  typ == HGT_REC_IRQ_ENTRY ? K_IRQ : typ == HGT_REC_VEC_ENTRY ? K_VEC : K_SOFTIRQ };

		if (c->nst == c->capst) {
			c->capst = c->capst ? 2 * c->capst : 8;
			c->stack = xrealloc(c->stack, c->capst * sizeof(*c->stack));
		}
		c->stack[c->nst++] = k2;
		break;
	}
	case HGT_REC_IRQ_EXIT:
	case HGT_REC_VEC_EXIT:
	case HGT_REC_SOFTIRQ_EXIT: {
		struct key want = { typ == HGT_REC_VEC_EXIT ? h->flags : h->arg,
				    typ == HGT_REC_IRQ_EXIT ? K_IRQ : typ == HGT_REC_VEC_EXIT ? K_VEC : K_SOFTIRQ };
		int i;

		/* an exit whose entry came before what we know is ignored */
		for (i = c->nst - 1; i >= 0 && !key_eq(c->stack[i], want); i--)
			;
		if (i >= 0)
			c->nst = i;
		break;
	}
	case HGT_REC_SWITCH: {
		int pt, nt;

		if (plen < 12)
			too_short(typ, cpu, tsc);
		memcpy(&prev, pay, 4);
		memcpy(&state, pay + 4, 4);
		c->nst = 0;		/* schedule() runs with no handler active */
		c->cur = h->arg;
		/* every switch of an hourglass thread, for its on-CPU time */
		pt = prev ? thread_of_tid(r, prev) : -1;
		nt = h->arg ? thread_of_tid(r, h->arg) : -1;
		if (pt >= 0)
			judge_switch(s->j, pt, tsc, 0);
		if (nt >= 0)
			judge_switch(s->j, nt, tsc, 1);
		break;
	}
	}
	if (!c->nopen || typ >= HGT_REC_COMM)
		return;
	for (k = 0; k < c->nopen; k++) {
		struct truth *t = c->open[k];
		struct gap *g = t->g;

		t->n_events++;
		if (t->nev < KEEP_EVENTS)
			t->ev[t->nev++] = (struct kev){ tsc, h->arg, typ, h->flags };
		if (typ == HGT_REC_SWITCH) {
			if (prev == g->tid) {
				t->has_out = 1;
				t->out_tsc = tsc;
				t->out_preempted = state == 0 || (h->flags & HGT_SWITCH_PREEMPT);
				t->out_pid = h->arg;
				t->out_state = state;
			}
			if (h->arg == g->tid && !t->has_in) {
				t->has_in = 1;
				t->in = tsc;
			}
		} else if (typ == HGT_REC_NMI) {
			uint32_t delta;
			int64_t d, take;
			int i, n = t->ncomp, nmi;

			if (plen < 8)
				too_short(typ, cpu, tsc);
			memcpy(&delta, pay, 4);
			d = (int64_t)(delta * s->nmi_cycles);
			if (d > tsc - g->g0)
				d = tsc - g->g0;
			/* the handler ran just before its tracepoint: move that time to NMI */
			for (i = 0; i < n && d > 0; i++) {
				take = t->comp[i].v < d ? t->comp[i].v : d;
				t->comp[i].v -= take;
				nmi = comp_find(t, (struct key){ 0, K_NMI });
				t->comp[nmi].v += take;
				d -= take;
			}
		} else if ((typ == HGT_REC_WAKING || typ == HGT_REC_WAKEUP) && h->arg == g->tid && !t->has_woken) {
			t->has_woken = 1;
			t->woken = tsc;
		} else if (typ == HGT_REC_VEC_ENTRY && h->flags == 0 && g->window) {
			t->has_tick = 1;
			t->last_tick = tsc;
			if (!t->has_woken || tsc <= t->woken) {
				t->has_tick_le = 1;
				t->last_tick_le = tsc;
			}
		}
	}
}

/* the records of one chunk */
static void chunk_records(struct sweep *s, uint64_t off, uint32_t cpu, const char *buf, size_t end,
			  uint64_t *events)
{
	size_t pos = 0;

	while (pos < end) {
		struct hgt_rec h;

		if (end - pos < REC_HDR)
			fail("%s: corrupt record at offset %llu", kname, (unsigned long long)(off + pos));
		memcpy(&h, buf + pos, REC_HDR);
		if (h.len < REC_HDR || h.len % 8 || pos + h.len > end)
			fail("%s: corrupt record length %u in the chunk at offset %llu", kname, h.len,
			     (unsigned long long)off);
		++*events;
		if (h.type == HGT_REC_COMM) {
			char comm[17] = { 0 };

			if (h.len < REC_HDR + 24)
				too_short(h.type, cpu, (int64_t)h.tsc);
			memcpy(comm, buf + pos + REC_HDR + 8, 16);
			judge_comm(s->j, h.arg, comm);
		} else if (h.type == HGT_REC_NAME) {
			if (h.flags == 0) {
				char name[33] = { 0 };

				if (h.len < REC_HDR + 32)
					too_short(h.type, cpu, (int64_t)h.tsc);
				memcpy(name, buf + pos + REC_HDR, 32);
				judge_irq_name(s->j, h.arg, name);
			}
		} else {
			if (h.type == HGT_REC_MIGRATE && h.arg && thread_of_tid(s->r, h.arg) >= 0) {
				if (h.len < REC_HDR + 4)
					too_short(h.type, cpu, (int64_t)h.tsc);
				judge_kernel_migration(s->j, h.arg, (int64_t)h.tsc);
			}
			event(s, cpu, &h, buf + pos + REC_HDR, h.len - REC_HDR);
		}
		pos += h.len;
	}
}

static int by_g0(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->g0 != y->g0)
		return x->g0 < y->g0 ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static void add_item(struct sweep *s, struct gap *g)
{
	struct cpu_sweep *c = cpu_of(s, g->cpu);
	struct item it = { g->g0, g->seq, g };

	VEC_PUSH(c->items, c->n, c->cap, it);
}

static size_t xread(FILE *f, void *p, size_t n)
{
	return fread(p, 1, n, f);
}

/* the chunks of the file; with @pass 0 only the window is read */
static void read_chunks(struct sweep *s, FILE *f, uint64_t start, int pass, int complete_required)
{
	char *buf = NULL, *zbuf = NULL, *pbuf = NULL;
	size_t cap = 0, zcap = 0, pcap = 0;
	uint64_t off = start, events = 0;
	int complete = 0;

	if (fseek(f, (long)start, SEEK_SET))
		fail("%s: cannot seek", kname);
	for (;;) {
		struct hgt_chunk c;
		size_t got = xread(f, &c, sizeof(c));

		if (!got)
			break;
		if (got < sizeof(c))
			fail("%s: truncated chunk header at offset %llu", kname, (unsigned long long)off);
		if (c.magic == HGT_END_MAGIC) {
			char x;

			complete = 1;
			off += sizeof(c);
			if (xread(f, &x, 1)) {
				long here = ftell(f);

				fseek(f, 0, SEEK_END);
				fail("%s: %lld bytes of garbage after the END marker", kname,
				     (long long)(ftell(f) - here + 1));
			}
			break;
		}
		if ((c.magic != HGT_CHUNK_MAGIC && c.magic != HGT_STATS_MAGIC && c.magic != HGT_TIME_MAGIC &&
		     c.magic != HGT_ZCHUNK_MAGIC && (c.magic != HGT_PCHUNK_MAGIC || file_version < HGT_FILE_VERSION_PACKED)) ||
		    c.nr_bytes % 8)
			fail("%s: corrupt chunk at offset %llu (magic %#x)", kname, (unsigned long long)off, c.magic);
		if (pass == 0 && c.magic != HGT_TIME_MAGIC && c.magic != HGT_STATS_MAGIC) {
			if (fseek(f, c.nr_bytes, SEEK_CUR))
				fail("%s: truncated chunk at offset %llu", kname, (unsigned long long)off);
			off += sizeof(c) + c.nr_bytes;
			continue;
		}
		if (c.nr_bytes > cap) {
			cap = c.nr_bytes;
			buf = xrealloc(buf, cap);
		}
		if (xread(f, buf, c.nr_bytes) != c.nr_bytes)
			fail("%s: truncated chunk at offset %llu", kname, (unsigned long long)off);
		if (c.magic == HGT_TIME_MAGIC && pass == 0) {
			if (c.nr_bytes < 16)
				fail("%s: corrupt chunk at offset %llu (magic %#x)", kname, (unsigned long long)off,
				     c.magic);
			memcpy(s->r->window, buf, 16);
			s->r->have_window = 1;
		} else if (c.magic == HGT_STATS_MAGIC && pass == 1) {
			uint64_t st[6];

			if (c.nr_bytes < sizeof(st))
				fail("%s: corrupt chunk at offset %llu (magic %#x)", kname, (unsigned long long)off,
				     c.magic);
			memcpy(st, buf, sizeof(st));
			judge_stats(s->j, c.cpu, st);
		} else if (c.magic == HGT_ZCHUNK_MAGIC && pass == 1) {
			uint32_t raw, zb;
			uLongf out;

			if (c.nr_bytes < 8)
				fail("%s: corrupt compressed chunk at offset %llu", kname, (unsigned long long)off);
			memcpy(&raw, buf, 4);
			memcpy(&zb, buf + 4, 4);
			if (zb > c.nr_bytes - 8)
				fail("%s: corrupt compressed chunk at offset %llu: stream longer than its chunk", kname,
				     (unsigned long long)off);
			if (raw > zcap) {
				zcap = raw;
				zbuf = xrealloc(zbuf, zcap);
			}
			out = raw;
			if (uncompress((Bytef *)zbuf, &out, (const Bytef *)buf + 8, zb) != Z_OK || out != raw)
				fail("%s: corrupt compressed chunk at offset %llu", kname, (unsigned long long)off);
			chunk_records(s, off, c.cpu, zbuf, raw, &events);
		} else if (c.magic == HGT_PCHUNK_MAGIC && pass == 1) {
			const char *why;
			size_t raw;

			if (!hgt_unpack_records((const unsigned char *)buf, c.nr_bytes, c.nr_records, &pbuf, &pcap,
						&raw, &why))
				fail("%s: corrupt packed chunk at offset %llu: %s", kname, (unsigned long long)off, why);
			chunk_records(s, off, c.cpu, pbuf, raw, &events);
		} else if (c.magic == HGT_CHUNK_MAGIC && pass == 1) {
			chunk_records(s, off, c.cpu, buf, c.nr_bytes, &events);
		}
		off += sizeof(c) + c.nr_bytes;
	}
	if (pass == 1) {
		uint64_t back = 0;
		size_t i;

		for (i = 0; i < s->ncpu; i++)
			if (s->cpu[i].exists) {
				advance(s, &s->cpu[i], 0, 1);
				back += s->cpu[i].backwards;
				if (s->cpu[i].nloss)
					judge_losses(s->j, i, s->cpu[i].nloss);
			}
		judge_event_counts(s->j, events, back);
		if (!complete && complete_required)
			fail("%s: the recording did not finish (no END marker)", kname);
	}
	free(buf);
	free(zbuf);
	free(pbuf);
}

/* the name messages give the recording (main.c's --name) */
const char *sweep_display_name;

void sweep_kernel(struct run *r, struct judge *j)
{
	struct sweep s = { .r = r, .j = j, .nmi_cycles = r->hz / 1e9 };
	FILE *f = fopen(r->kernel_path, "rb");
	struct { char magic[8]; uint32_t version, meta_bytes; } p;
	char *meta;
	size_t i;

	kname = sweep_display_name ? sweep_display_name : r->kernel_path;
	if (!f)
		fail("%s: cannot open it", kname);
	if (xread(f, &p, sizeof(p)) < sizeof(p))
		fail("%s: too short to be an hgtrace recording", kname);
	if (memcmp(p.magic, "HGTRACE\n", 8))
		fail("%s: not an hgtrace recording (bad magic)", kname);
	if (p.version == HGT_FILE_VERSION_PACKED_OLD)
		fail("%s: packed by an hgtrace before 2026-11-22 (format version %u), whose coding this "
		     "reader does not read; pack the plain recording again", kname, p.version);
	if (p.version != HGT_FILE_VERSION && p.version != HGT_FILE_VERSION_PACKED)
		fail("%s: format version %u, this reader knows %d and %d", kname, p.version, HGT_FILE_VERSION,
		     HGT_FILE_VERSION_PACKED);
	file_version = p.version;
	meta = xcalloc(p.meta_bytes + 1, 1);
	if (p.meta_bytes % 8 || xread(f, meta, p.meta_bytes) != p.meta_bytes)
		fail("%s: truncated or corrupt metadata", kname);
	for (i = 0; i < r->ngaps; i++)
		add_item(&s, &r->gaps[i]);
	for (i = 0; i < r->nwins; i++)
		add_item(&s, &r->wins[i]);
	for (i = 0; i < s.ncpu; i++)
		if (s.cpu[i].exists)
			qsort(s.cpu[i].items, s.cpu[i].n, sizeof(*s.cpu[i].items), by_g0);
	/* the window first: a gap is judged when it closes, and the window is at the end */
	read_chunks(&s, f, sizeof(p) + p.meta_bytes, 0, 0);
	read_chunks(&s, f, sizeof(p) + p.meta_bytes, 1, 1);
	fclose(f);
	free(meta);
	for (i = 0; i < s.ncpu; i++) {
		free(s.cpu[i].items);
		free(s.cpu[i].open);
		free(s.cpu[i].stack);
		free(s.cpu[i].loss);
	}
	free(s.cpu);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * judge.c - the judgement, kept as running aggregates while gaps close, and
 * the output: the raw figures tools/hgmerge/core.py turns into the report.
 *
 * The reference is tools/hgmerge/judge.py (confusion matrix, causes,
 * context-switch cost, interrupt durations, migrations, disagreements) and
 * microstates.py (handlers while current, on-CPU time from switches). Only
 * what a median needs is kept per gap (its length); the disagreements and
 * windows are written out as they close.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"

/* a small hash map from a 64-bit key to an index */
struct hmap { uint64_t *k; int64_t *v; size_t cap, n; };

static size_t hslot(const struct hmap *m, uint64_t k)
{
	uint64_t h = k * 0x9e3779b97f4a7c15ull;
	size_t i = (h >> 17) & (m->cap - 1);

	while (m->v[i] >= 0 && m->k[i] != k)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static int64_t hget(struct hmap *m, uint64_t k)
{
	return m->cap ? m->v[hslot(m, k)] : -1;
}

static void hput(struct hmap *m, uint64_t k, int64_t v)
{
	size_t i;

	if (2 * (m->n + 1) > m->cap) {
		struct hmap o = *m;

		m->cap = m->cap ? 2 * m->cap : 64;
		m->k = xcalloc(m->cap, sizeof(*m->k));
		m->v = xcalloc(m->cap, sizeof(*m->v));
		memset(m->v, 0xff, m->cap * sizeof(*m->v));
		m->n = 0;
		for (i = 0; i < o.cap; i++)
			if (o.v[i] >= 0)
				hput(m, o.k[i], o.v[i]);
		free(o.k);
		free(o.v);
	}
	i = hslot(m, k);
	if (m->v[i] < 0)
		m->n++;
	m->k[i] = k;
	m->v[i] = v;
}

static uint64_t kcode(struct key k)
{
	return (uint64_t)k.kind << 56 | ((uint64_t)k.id & 0xffffffffffffffull);
}

struct i64v { int64_t *v; size_t n, cap; };

static void push(struct i64v *a, int64_t x)
{
	VEC_PUSH(a->v, a->n, a->cap, x);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* statistics.median; 0 for none (the reference's `or 0`) */
static double median(struct i64v *a)
{
	if (!a->n)
		return 0;
	qsort(a->v, a->n, sizeof(*a->v), cmp_i64);
	return a->n % 2 ? (double)a->v[a->n / 2] : (double)(a->v[a->n / 2 - 1] + a->v[a->n / 2]) / 2;
}

/* per cause (judge.py's by_primary) and per interrupt source (its irq) */
struct agg {
	struct key k;
	uint32_t first_cpu;
	int64_t first_g0, sum;
	struct i64v a, b;
};

struct aggs { struct hmap m; struct agg *v; size_t n, cap; };

static struct agg *agg_of(struct aggs *s, struct key k, const struct gap *g)
{
	int64_t i = hget(&s->m, kcode(k));

	if (i < 0) {
		struct agg a = { .k = k, .first_cpu = g->cpu, .first_g0 = g->g0 };

		VEC_PUSH(s->v, s->n, s->cap, a);
		i = s->n - 1;
		hput(&s->m, kcode(k), i);
	}
	/* the reference lists gaps by (cpu, g0): its first is the least */
	if (g->cpu < s->v[i].first_cpu || (g->cpu == s->v[i].first_cpu && g->g0 < s->v[i].first_g0)) {
		s->v[i].first_cpu = g->cpu;
		s->v[i].first_g0 = g->g0;
	}
	return &s->v[i];
}

struct name { uint64_t id; char s[33]; };

struct judge {
	struct run *r;
	uint64_t classes[C_N], confusion[C_UNEXPL][I_N], scored, voluntary, unexpl[3];
	struct aggs causes, irq;
	struct i64v sw, sw_handler, sw_only;
	uint64_t sw_true, pre, ticked, resched;
	int64_t *handlers;
	struct i64v *switches;		/* per thread: tsc * 2 + in */
	struct i64v *kmig;		/* per thread: kernel migrations' tsc */
	uint64_t nkmig;
	struct hmap comm_m, irq_m;
	struct name *names;
	size_t nnames, capnames;
	char *dis, *wins;		/* JSON, written as they close */
	size_t ldis, lwins;
	FILE *fdis, *fwins;
	uint64_t ndis, nwins;
	struct { uint32_t cpu; uint64_t st[6]; } *st;
	size_t nst, capst;
	struct { uint32_t cpu; size_t n; } *loss;
	size_t nloss, caploss;
	uint64_t events, backwards;
};

const char *const cls_name[C_N] = { "switch_hg", "switch_other", "timer", "interrupt", "hidden", "other",
				    "unexplainable" };
const char *const kind_name[KD_N] = { "irq", "softirq", "nmi", "ipi", "timer", "switch_hg", "switch_other",
				      "idle", "hidden", "other", "unexplainable" };
const char *const inf_name[I_N + 1] = { "switch_hg", "switch_other", "timer", "interrupt", "hidden",
					"voluntary" };

struct judge *judge_new(struct run *r)
{
	struct judge *j = xcalloc(1, sizeof(*j));

	j->r = r;
	j->handlers = xcalloc(r->nthreads + 1, sizeof(*j->handlers));
	j->switches = xcalloc(r->nthreads + 1, sizeof(*j->switches));
	j->kmig = xcalloc(r->nthreads + 1, sizeof(*j->kmig));
	j->fdis = open_memstream(&j->dis, &j->ldis);
	j->fwins = open_memstream(&j->wins, &j->lwins);
	if (!j->fdis || !j->fwins)
		fail("out of memory");
	return j;
}

static int64_t handler_time(const struct truth *t)
{
	int64_t h = 0;
	int i;

	for (i = 0; i < t->ncomp; i++)
		if (t->comp[i].k.kind == K_IRQ || t->comp[i].k.kind == K_VEC || t->comp[i].k.kind == K_SOFTIRQ ||
		    t->comp[i].k.kind == K_NMI)
			h += t->comp[i].v;
	return h;
}

static int has_key(const struct truth *t, struct key k)
{
	int i;

	for (i = 0; i < t->ncomp; i++)
		if (t->comp[i].k.kind == k.kind && t->comp[i].k.id == k.id)
			return 1;
	return 0;
}

static void put_comps(FILE *f, const struct truth *t)
{
	int i;

	fputs("[", f);
	for (i = 0; i < t->ncomp; i++)
		fprintf(f, "%s[%d,%lld,%lld]", i ? "," : "", t->comp[i].k.kind, (long long)t->comp[i].k.id,
			(long long)t->comp[i].v);
	fputs("]", f);
}

static void put_disagreement(struct judge *j, const struct gap *g, const struct truth *t, int cls, int kind,
			     const struct key *primary, int why)
{
	FILE *f = j->fdis;
	int i;

	fprintf(f, "%s{\"g0\":%lld,\"g1\":%lld,\"cpu\":%u,\"thread\":%u,\"next_thread\":%u,\"inferred\":\"%s\","
		"\"rule\":%d,\"class\":\"%s\",\"kind\":\"%s\",\"why\":%d,\"n_events\":%llu,",
		j->ndis++ ? ",\n" : "", (long long)g->g0, (long long)g->g1, g->cpu, g->thread, g->next_thread,
		inf_name[g->inferred], g->rule, cls_name[cls], kind_name[kind], why,
		(unsigned long long)t->n_events);
	if (primary)
		fprintf(f, "\"primary\":[%d,%lld],", primary->kind, (long long)primary->id);
	else
		fputs("\"primary\":null,", f);
	if (t->has_out)
		fprintf(f, "\"out\":[%lld,%d,%u,%u],", (long long)t->out_tsc, t->out_preempted, t->out_pid,
			t->out_state);
	else
		fputs("\"out\":null,", f);
	fputs("\"comp\":", f);
	put_comps(f, t);
	fputs(",\"events\":[", f);
	for (i = 0; i < t->nev && i < SHOW_EVENTS; i++)
		fprintf(f, "%s[%lld,%u,%u,%u]", i ? "," : "", (long long)t->ev[i].tsc, t->ev[i].typ, t->ev[i].arg,
			t->ev[i].flags);
	fputs("]}", f);
}

void judge_gap(struct judge *j, struct run *r, const struct gap *g, const struct truth *t, int cls, int kind,
	       const struct key *primary, int why)
{
	int64_t len = g->g1 - g->g0, h = handler_time(t);
	struct key ck;
	struct agg *a;

	(void)r;
	j->classes[cls]++;
	j->voluntary += g->vol != 0;
	if (cls == C_UNEXPL)
		j->unexpl[why == W_WINDOW ? 1 : 2]++;
	if (!t->has_out)
		j->handlers[g->thread] += h;
	/* causes: what the gap went to */
	if ((cls == C_SWITCH_HG || cls == C_SWITCH_OTHER) && t->has_out)
		ck = (struct key){ t->out_pid, K_OUT };
	else if (primary)
		ck = *primary;
	else
		ck = (struct key){ kind, K_KIND };
	a = agg_of(&j->causes, ck, g);
	a->sum += len;
	push(&a->a, len);
	if (g->vol || cls == C_UNEXPL)
		return;
	j->scored++;
	j->confusion[cls][g->inferred]++;
	if (g->inferred == I_SWITCH_HG) {
		push(&j->sw, len);
		if (cls == C_SWITCH_HG) {
			j->sw_true++;
			push(&j->sw_handler, h);
			push(&j->sw_only, len - h);
			if (r->th[g->thread].cpu_bound && r->th[g->next_thread].cpu_bound) {
				j->pre++;
				j->ticked += has_key(t, (struct key){ 0, K_VEC });
				j->resched += has_key(t, (struct key){ 1, K_VEC });
			}
		}
	}
	if ((g->inferred == I_TIMER || g->inferred == I_INTERRUPT) && (cls == C_TIMER || cls == C_INTERRUPT) &&
	    primary) {
		a = agg_of(&j->irq, *primary, g);
		push(&a->a, len);
		push(&a->b, h);
	}
	if ((int)g->inferred != cls)
		put_disagreement(j, g, t, cls, kind, primary, why);
}

void judge_window(struct judge *j, const struct gap *w, const struct truth *t)
{
	FILE *f = j->fwins;

	fprintf(f, "%s{\"seq\":%u,\"kind\":\"%s\",\"thread\":%u,\"tid\":%u,\"g0\":%lld,\"g1\":%lld,\"cpu\":%u,"
		"\"rec\":[%lld,%lld,%lld,%u,%u],", j->nwins++ ? ",\n" : "", w->seq, w->window == 1 ? "wake" : "miss",
		w->thread, w->tid, (long long)w->g0, (long long)w->g1, w->cpu, (long long)w->r0, (long long)w->r1,
		(long long)w->r2, w->rflags, w->rtype);
	fprintf(f, t->has_woken ? "\"woken\":%lld," : "\"woken\":null,", (long long)t->woken);
	fprintf(f, t->has_in ? "\"in\":%lld," : "\"in\":null,", (long long)t->in);
	if (t->has_woken ? t->has_tick_le : t->has_tick)
		fprintf(f, "\"irq\":%lld,", (long long)(t->has_woken ? t->last_tick_le : t->last_tick));
	else
		fputs("\"irq\":null,", f);
	fputs("\"comp\":", f);
	put_comps(f, t);
	fputs("}", f);
}

void judge_event_counts(struct judge *j, uint64_t events, uint64_t backwards)
{
	j->events = events;
	j->backwards = backwards;
}

static void set_name(struct judge *j, struct hmap *m, uint64_t id, const char *s)
{
	int64_t i = hget(m, id);

	if (i < 0) {
		struct name n = { .id = id };

		VEC_PUSH(j->names, j->nnames, j->capnames, n);
		i = j->nnames - 1;
		hput(m, id, i);
	}
	memset(j->names[i].s, 0, sizeof(j->names[i].s));
	strncpy(j->names[i].s, s, sizeof(j->names[i].s) - 1);
}

void judge_comm(struct judge *j, uint32_t pid, const char *comm)
{
	set_name(j, &j->comm_m, pid, comm);
}

void judge_irq_name(struct judge *j, uint32_t irq, const char *name)
{
	set_name(j, &j->irq_m, irq, name);
}

void judge_switch(struct judge *j, int thread, int64_t tsc, int in)
{
	push(&j->switches[thread], tsc * 2 + in);
}

void judge_kernel_migration(struct judge *j, uint32_t pid, int64_t tsc)
{
	push(&j->kmig[thread_of_tid(j->r, pid)], tsc);
	j->nkmig++;
}

void judge_losses(struct judge *j, uint32_t cpu, size_t n)
{
	VEC_PUSH(j->loss, j->nloss, j->caploss, ((typeof(*j->loss)){ cpu, n }));
}

void judge_stats(struct judge *j, uint32_t cpu, const uint64_t st[6])
{
	size_t i;

	for (i = 0; i < j->nst; i++)
		if (j->st[i].cpu == cpu)
			break;
	if (i == j->nst)
		VEC_PUSH(j->st, j->nst, j->capst, ((typeof(*j->st)){ .cpu = cpu }));
	memcpy(j->st[i].st, st, sizeof(j->st[i].st));
}

static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* a name as hex: the reader decodes it as the reference does its bytes */
static void put_hex(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++)
		fprintf(f, "%02x", (unsigned char)*s);
	fputc('"', f);
}

static void put_aggs(FILE *f, struct aggs *s, int two)
{
	size_t i;

	fputs("[", f);
	for (i = 0; i < s->n; i++) {
		struct agg *a = &s->v[i];

		fprintf(f, "%s{\"key\":[%d,%lld],\"n\":%zu,\"sum\":%lld,\"median\":%.17g,\"first\":[%u,%lld]",
			i ? ",\n" : "", a->k.kind, (long long)a->k.id, a->a.n, (long long)a->sum, median(&a->a),
			a->first_cpu, (long long)a->first_g0);
		if (two)
			fprintf(f, ",\"median_b\":%.17g", median(&a->b));
		fputs("}", f);
	}
	fputs("]", f);
}

/* microstates.py's on_cpu over one thread's switches (sorted: out before in at a tie) */
static void on_cpu(struct i64v *sw, int64_t t0, int64_t t1, int64_t *total, uint64_t *ins)
{
	int64_t since = t0;
	int running = 1;
	size_t i;

	qsort(sw->v, sw->n, sizeof(*sw->v), cmp_i64);
	*total = 0;
	*ins = 0;
	for (i = 0; i < sw->n; i++) {
		int64_t tsc = sw->v[i] >> 1;
		int in = sw->v[i] & 1;

		if (tsc < t0 || tsc > t1)
			continue;
		*ins += in;
		if (in) {
			since = tsc;
			running = 1;
		} else if (running) {
			*total += tsc - since;
			running = 0;
		}
	}
	if (running)
		*total += t1 - since;
}

static int confirmed(struct judge *j, int thread, int64_t a, int64_t b)
{
	struct i64v *m = &j->kmig[thread];
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->n && m->v[lo] <= b;
}

void judge_output(struct judge *j, struct run *r, FILE *f)
{
	size_t i, k;
	uint64_t conf = 0;
	int c, n;

	fflush(j->fdis);
	fflush(j->fwins);
	fprintf(f, "{\"version\":%d,\"gaps\":%zu,\"events\":%llu,\"backwards\":%llu,\"scored\":%llu,"
		"\"voluntary\":%llu,\n", CORE_OUTPUT_VERSION, r->ngaps, (unsigned long long)j->events,
		(unsigned long long)j->backwards, (unsigned long long)j->scored, (unsigned long long)j->voluntary);
	if (r->have_window)
		fprintf(f, "\"window\":[%lld,%lld],", (long long)r->window[0], (long long)r->window[1]);
	else
		fputs("\"window\":null,", f);
	fputs("\"stats\":{", f);
	for (i = 0; i < j->nst; i++) {
		fprintf(f, "%s\"%u\":[", i ? "," : "", j->st[i].cpu);
		for (k = 0; k < 6; k++)
			fprintf(f, "%s%llu", k ? "," : "", (unsigned long long)j->st[i].st[k]);
		fputs("]", f);
	}
	fputs("},\"losses\":{", f);
	for (i = 0; i < j->nloss; i++)
		fprintf(f, "%s\"%u\":%zu", i ? "," : "", j->loss[i].cpu, j->loss[i].n);
	fputs("},\n\"warnings\":[", f);
	for (i = 0; i < r->nwarnings; i++) {
		fputs(i ? "," : "", f);
		put_str(f, r->warnings[i]);
	}
	fputs("],\n\"comm\":{", f);
	for (i = n = 0; i < j->comm_m.cap; i++)
		if (j->comm_m.v[i] >= 0) {
			fprintf(f, "%s\"%llu\":", n++ ? "," : "", (unsigned long long)j->comm_m.k[i]);
			put_hex(f, j->names[j->comm_m.v[i]].s);
		}
	fputs("},\"irq\":{", f);
	for (i = n = 0; i < j->irq_m.cap; i++)
		if (j->irq_m.v[i] >= 0) {
			fprintf(f, "%s\"%llu\":", n++ ? "," : "", (unsigned long long)j->irq_m.k[i]);
			put_hex(f, j->names[j->irq_m.v[i]].s);
		}
	fputs("},\n\"calibration\":{\"ticks\":[", f);
	for (i = 0; i < r->nticks; i++)
		fprintf(f, "%s{\"cpu\":%u,\"p\":%.17g,\"score\":%.17g,\"floor\":%.17g}", i ? "," : "", r->ticks[i].cpu,
			r->ticks[i].p, r->ticks[i].score, r->ticks[i].floor);
	fprintf(f, "],\"switch_limit\":%.17g,\"basis\":%d,\"hidden_limit\":%.17g,\"switch_gaps\":%zu},\n",
		r->switch_limit, r->limit_basis, r->hidden_limit, r->switch_gaps);
	fputs("\"classes\":{", f);
	for (c = n = 0; c < C_N; c++)
		if (j->classes[c])
			fprintf(f, "%s\"%s\":%llu", n++ ? "," : "", cls_name[c], (unsigned long long)j->classes[c]);
	fputs("},\"confusion\":{", f);
	for (c = 0; c < C_UNEXPL; c++) {
		fprintf(f, "%s\"%s\":[", c ? "," : "", cls_name[c]);
		for (k = 0; k < I_N; k++)
			fprintf(f, "%s%llu", k ? "," : "", (unsigned long long)j->confusion[c][k]);
		fputs("]", f);
	}
	fputs("},\n\"unexplainable\":{", f);
	fprintf(f, "\"window\":%llu,\"lost\":%llu},\n", (unsigned long long)j->unexpl[1],
		(unsigned long long)j->unexpl[2]);
	fputs("\"causes\":", f);
	put_aggs(f, &j->causes, 0);
	fputs(",\n\"interrupt_durations\":", f);
	put_aggs(f, &j->irq, 1);
	fprintf(f, ",\n\"context_switch\":{\"switches\":%zu,\"shortest\":%lld,\"median\":%.17g,\"confirmed\":%llu,"
		"\"handler_median\":%.17g,\"only_median\":%.17g,\"only_shortest\":%lld,\"pre\":%llu,"
		"\"ticked\":%llu,\"resched\":%llu},\n", j->sw.n,
		(long long)(j->sw.n ? (qsort(j->sw.v, j->sw.n, 8, cmp_i64), j->sw.v[0]) : 0), median(&j->sw),
		(unsigned long long)j->sw_true, median(&j->sw_handler), median(&j->sw_only),
		(long long)(j->sw_only.n ? (qsort(j->sw_only.v, j->sw_only.n, 8, cmp_i64), j->sw_only.v[0]) : 0),
		(unsigned long long)j->pre, (unsigned long long)j->ticked, (unsigned long long)j->resched);
	for (i = 0; i < (size_t)r->nthreads; i++)
		qsort(j->kmig[i].v, j->kmig[i].n, 8, cmp_i64);
	for (i = 0; i < r->nmigr; i++)
		conf += r->th[r->migr[i].thread].tid &&
			confirmed(j, r->migr[i].thread, r->migr[i].a_t1, r->migr[i].b_t0);
	fprintf(f, "\"migrations\":{\"inferred\":%zu,\"confirmed\":%llu,\"kernel\":%llu},\n", r->nmigr,
		(unsigned long long)conf, (unsigned long long)j->nkmig);
	fputs("\"threads\":[", f);
	for (n = 0; n < r->nthreads; n++) {
		int64_t on = 0;
		uint64_t ins = 0;

		if (r->th[n].acct)
			on_cpu(&j->switches[n], r->th[n].acct0, r->th[n].acct1, &on, &ins);
		fprintf(f, "%s{\"handlers\":%lld,\"on_cpu\":%lld,\"switches_in\":%llu}", n ? "," : "",
			(long long)j->handlers[n], (long long)on, (unsigned long long)ins);
	}
	fputs("],\n\"disagreements\":[", f);
	fwrite(j->dis, 1, j->ldis, f);
	fputs("],\n\"windows\":[", f);
	fwrite(j->wins, 1, j->lwins, f);
	fputs("]}\n", f);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * judge.c - the inferences against the kernel's account, kept as running
 * figures while gaps close: the confusion matrix and each class's
 * precision, recall and F1; the causes, and the time each component took;
 * context-switch cost and interrupt durations, inferred and actual; the
 * disagreements, written out as they come into one temporary file, each
 * CPU's lines indexed, so that they are listed in CPU and time order (a file
 * per CPU ran out of open files past a thousand CPUs); what the charts draw.
 *
 * The headline scores the gaps the kernel gives a cause: a gap with no
 * kernel event at all (hidden) is time taken below the kernel, counted
 * apart as steal; a voluntary gap is not an inference; an unexplainable one
 * (outside the window, over a loss) is not guessed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "engine.h"
#include "export.h"
#include "hg_jsonw.h"

#define MAP_MS		40.0	/* the execution map shows the run's first 40 ms */
#define MAP_MAX		20000	/* rectangles per thread at most */
#define MAP_THREADS	16	/* threads the map shows at most, the first by number: a map of
				 * 512 threads was 27 MB of the report and a page no one could read */
#define SCORED		6	/* actual classes of scored gaps: switch_hg .. other */
#define INFERABLE	5	/* inferred classes: switch_hg .. hidden */

/* a figure per component or cause: (kind, id) -> aggregate */
struct agg {
	uint8_t kind;		/* enum hgg_comp_kind, or 100 + enum hgg_kind, 150 hidden (names_hidden_key),
				 * or 200: switched to */
	int64_t id;
	uint64_t n, first_cpu;
	int64_t first_g0;
	double sum;
	struct quant a, b;
	char name[96];
};

struct aggs {
	struct agg *v;
	size_t n, cap;
	size_t *slot;		/* open addressing: index + 1, 0 empty */
	size_t nslot;
	/* the aggregates asked for last, a place each by a few bits of (kind, id): a gap asks for
	 * five or six, mostly the same few (the hash's search and its records 300 bytes apart were
	 * 30 instructions an ask, callgrind); cleared when v moves */
	struct { struct agg *a; int64_t id; uint8_t kind; } seen[16];
};

static const char *const rule_name[HGG_R_N] = {
	"voluntary", "switch", "tick", "hidden", "top_rt", "short", "long", "hrtick", "model",
};

#define AGG_KIND	100
#define AGG_HIDDEN	150
#define AGG_OUT		200

static uint64_t agg_hash(uint8_t kind, int64_t id)
{
	return ((uint64_t)kind << 40 ^ (uint64_t)id) * 0x9e3779b97f4a7c15ull;
}

/* agg_add - a new aggregate for (@kind, @id), first seen in @g; the table grown to stay half
 * empty at most */
static cold_path struct agg *agg_add(struct aggs *s, uint8_t kind, int64_t id,
						     const struct hgg_gap *g)
{
	size_t i;

	if (2 * (s->n + 1) > s->nslot) {
		size_t k;

		s->nslot = s->nslot ? 2 * s->nslot : 64;
		free(s->slot);
		s->slot = xcalloc(s->nslot, sizeof(*s->slot));
		for (k = 0; k < s->n; k++) {
			for (i = agg_hash(s->v[k].kind, s->v[k].id) >> 20 & (s->nslot - 1); s->slot[i];
			     i = (i + 1) & (s->nslot - 1))
				;
			s->slot[i] = k + 1;
		}
	}
	for (i = agg_hash(kind, id) >> 20 & (s->nslot - 1); s->slot[i]; i = (i + 1) & (s->nslot - 1))
		;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
		memset(s->seen, 0, sizeof(s->seen));
	}
	memset(&s->v[s->n], 0, sizeof(s->v[s->n]));
	s->v[s->n].kind = kind;
	s->v[s->n].id = id;
	s->v[s->n].first_cpu = g->cpu;
	s->v[s->n].first_g0 = (int64_t)g->g0;
	s->slot[i] = ++s->n;
	return &s->v[s->n - 1];
}

/* agg_of - the aggregate of (@kind, @id), made if new; @g is a gap it takes: ties in the
 * tables are ordered by the first gap, in CPU then time order. Inline: several a gap. */
static inline struct agg *agg_of(struct aggs *s, uint8_t kind, int64_t id, const struct hgg_gap *g)
{
	unsigned k = (unsigned)(kind * 5 + (uint64_t)id) & 15;
	struct agg *a = NULL;
	size_t i;

	if (HG_FAST && s->seen[k].a && s->seen[k].id == id && s->seen[k].kind == kind) {
		a = s->seen[k].a;
		goto found;
	}
	if (!s->nslot)
		return agg_add(s, kind, id, g);
	for (i = agg_hash(kind, id) >> 20 & (s->nslot - 1); s->slot[i]; i = (i + 1) & (s->nslot - 1)) {
		a = &s->v[s->slot[i] - 1];
		if (a->kind == kind && a->id == id)
			break;
	}
	if (!s->slot[i])
		return agg_add(s, kind, id, g);
	s->seen[k].a = a;
	s->seen[k].id = id;
	s->seen[k].kind = kind;
found:
	if (g->cpu < a->first_cpu || (g->cpu == a->first_cpu && (int64_t)g->g0 < a->first_g0)) {
		a->first_cpu = g->cpu;
		a->first_g0 = (int64_t)g->g0;
	}
	return a;
}

static void aggs_free(struct aggs *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		quant_free(&s->v[i].a);
		quant_free(&s->v[i].b);
	}
	free(s->v);
	free(s->slot);
}

struct map_thread {
	struct { double t0, t1; } *iv;
	size_t niv, capiv;
	struct { double t0, t1; uint8_t cls, wrong; } *gap;
	size_t ngap, capgap;
};

/* the CPUs a judge counts apart; gaps on CPUs beyond are counted on the last */
#define CPU_SEEN_WORDS	64

struct judge {
	struct run *r;
	const char *tmpdir;
	uint64_t total, voluntary, scored, unexpl[HGG_W_N], classes[HGG_C_N], rules[HGG_R_N];
	uint64_t inferred_all[HGG_C_N];	/* every involuntary gap's inference, judged or not */
	uint64_t explained;		/* hgg_explained() gaps */
	uint64_t m[SCORED][INFERABLE];
	uint64_t hidden_gaps;
	double hidden_cycles;
	/* the gaps' composition (judged gaps): nothing recorded on their CPU, other vCPUs' turns;
	 * the gaps named hidden for it although the kernel recorded events in them, and the turns */
	double unrecorded_cycles, turn_cycles;
	uint64_t mostly_unrecorded, turn_gaps;
	/* the CPUs the judged gaps were on: the run's time is that many CPUs' (run_cpu_cycles) */
	uint64_t cpu_seen[CPU_SEEN_WORDS];
	uint32_t ncpu_seen;
	/* the longest involuntary gap the kernel judged, and what it was made of */
	int have_longest;
	struct hgg_gap longest;
	struct { char what[64]; uint64_t cycles; } longest_part[HGG_COMPS];
	int nlongest_part;
	struct aggs causes, lost, irq;
	struct quant sw, sw_handler, sw_only;
	uint64_t sw_true, pre, ticked, resched;
	uint64_t mig_inferred, mig_confirmed, mig_kernel;
	FILE *dis;		/* the disagreements, a JSON line each, as they came */
	uint64_t dis_bytes;
	FILE *line;		/* one line, put together in memory (line_buf, line_len) */
	char *line_buf;
	size_t line_len;
	/* per CPU: where each of its lines is in the file, and its length without the newline */
	struct dis_lines { struct { uint64_t at; uint32_t len; } *v; size_t n, cap; } *dis_cpu;
	uint32_t ndis_cpu;
	uint64_t ndis;
	int64_t map0, map1;
	struct map_thread *map;
	struct loghist switch_hist, gap_hist[HGG_C_N];
	struct load_fig { uint64_t caused, touched; double caused_cycles, charged_cycles; struct quant len; } *load;
	uint32_t max_cpu;
	int any_cpu;
	/* per CPU, the kernel's tick: the starts of its timer gaps' spacing, the longest handler */
	struct ktick { int have; int64_t last; uint64_t gaps, handler_max; struct quant apart; } *ktick;
	uint32_t nktick;
};

/* see_cpu - a judged gap was on @cpu */
static void see_cpu(struct judge *j, uint32_t cpu)
{
	uint32_t b = cpu < 64 * CPU_SEEN_WORDS ? cpu : 64 * CPU_SEEN_WORDS - 1;
	uint64_t bit = 1ULL << (b % 64);

	if (!(j->cpu_seen[b / 64] & bit)) {
		j->cpu_seen[b / 64] |= bit;
		j->ncpu_seen++;
	}
}

/*
 * run_cpu_cycles - the run's time on the CPUs its gaps were on: its length times their number.
 * Gaps of threads on two CPUs add up to as much as twice the run (in the icount2 guests each
 * vCPU's turns are half of the other's time): a share of the run's length alone would pass 1.
 */
static double run_cpu_cycles(const struct judge *j)
{
	return j->r->info->duration_ns * 1e-9 * j->r->hz * (j->ncpu_seen ? j->ncpu_seen : 1);
}

/* of_run - how the summary's shares name their whole: "the run", or its CPUs' time */
static const char *of_run(const struct judge *j, char *buf, size_t len)
{
	if (j->ncpu_seen <= 1)
		return "the run";
	snprintf(buf, len, "the run's time on its %u CPUs", j->ncpu_seen);
	return buf;
}

struct judge *judge_new(struct run *r, const char *tmpdir)
{
	struct judge *j = xcalloc(1, sizeof(*j));

	j->r = r;
	j->tmpdir = tmpdir;
	j->map = xcalloc(r->nthreads + 1, sizeof(*j->map));
	j->load = xcalloc(labels_count() + 1, sizeof(*j->load));
	j->map0 = r->info->t0_tsc;
	j->map1 = j->map0 + (int64_t)(MAP_MS * 1e-3 * r->hz);
	if (r->info->duration_ns > 0 && r->info->duration_ns < MAP_MS * 1e6)
		j->map1 = j->map0 + (int64_t)(r->info->duration_ns * 1e-9 * r->hz);
	return j;
}

/* dis_begin - the memory stream a disagreement's line is written to */
static FILE *dis_begin(struct judge *j)
{
	if (!j->line && !(j->line = open_memstream(&j->line_buf, &j->line_len)))
		fail("out of memory for a disagreement: %s", strerror(errno));
	rewind(j->line);
	return j->line;
}

/* dis_end - the line written since dis_begin into the file, indexed under @cpu */
static void dis_end(struct judge *j, uint32_t cpu)
{
	struct dis_lines *l;

	if (fflush(j->line))
		fail("out of memory for a disagreement: %s", strerror(errno));
	if (!j->dis)
		j->dis = tmp_stream(j->tmpdir);
	if (fwrite(j->line_buf, 1, j->line_len, j->dis) != j->line_len)
		fail("cannot write a temporary file in %s: %s (set TMPDIR)", j->tmpdir, strerror(errno));
	if (cpu >= j->ndis_cpu) {
		uint32_t n = cpu + 1;

		j->dis_cpu = xrealloc(j->dis_cpu, n * sizeof(*j->dis_cpu));
		memset(j->dis_cpu + j->ndis_cpu, 0, (n - j->ndis_cpu) * sizeof(*j->dis_cpu));
		j->ndis_cpu = n;
	}
	l = &j->dis_cpu[cpu];
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n].at = j->dis_bytes;
	l->v[l->n++].len = (uint32_t)(j->line_len - (j->line_len && j->line_buf[j->line_len - 1] == '\n'));
	j->dis_bytes += j->line_len;
}

static int has_comp(const struct gap_detail *d, uint8_t kind, int64_t id)
{
	int i;

	for (i = 0; i < d->ncomp; i++)
		if (d->comp[i].kind == kind && d->comp[i].id == id)
			return 1;
	return 0;
}

/* describe - a kernel event inside a gap, as the disagreement lists it */
static void describe(const struct run *r, const struct kev *e, int64_t g0, char *buf, size_t len)
{
	static const char *const what[] = {
		[HGT_REC_SWITCH] = "switch to", [HGT_REC_WAKING] = "waking", [HGT_REC_WAKEUP] = "wakeup",
		[HGT_REC_WAKEUP_NEW] = "wakeup_new", [HGT_REC_MIGRATE] = "migrate", [HGT_REC_EXIT] = "exit",
		[HGT_REC_IRQ_ENTRY] = "irq", [HGT_REC_IRQ_EXIT] = "irq end", [HGT_REC_SOFTIRQ_ENTRY] = "softirq",
		[HGT_REC_SOFTIRQ_EXIT] = "softirq end", [HGT_REC_VEC_ENTRY] = "vector", [HGT_REC_VEC_EXIT] = "vector end",
		[HGT_REC_NMI] = "nmi", [HGT_REC_HRTIMER_ENTRY] = "hrtimer", [HGT_REC_HRTIMER_EXIT] = "hrtimer end",
		[HGT_REC_SYS_ENTER] = "syscall", [HGT_REC_SYS_EXIT] = "syscall end", [HGT_REC_LOST] = "lost",
	};
	char arg[96], kind[24];
	const char *n;

	if (e->typ < sizeof(what) / sizeof(what[0]) && what[e->typ])
		snprintf(kind, sizeof(kind), "%s", what[e->typ]);
	else
		snprintf(kind, sizeof(kind), "type %u", e->typ);
	arg[0] = 0;
	switch (e->typ) {
	case HGT_REC_SWITCH: case HGT_REC_WAKING: case HGT_REC_WAKEUP: case HGT_REC_WAKEUP_NEW:
	case HGT_REC_MIGRATE: case HGT_REC_EXIT:
		names_task(e->arg, arg, sizeof(arg));
		break;
	case HGT_REC_IRQ_ENTRY: case HGT_REC_IRQ_EXIT:
		n = names_irq(e->arg);
		snprintf(arg, sizeof(arg), n && *n ? "%u %s" : "%u", e->arg, n);
		break;
	case HGT_REC_SOFTIRQ_ENTRY: case HGT_REC_SOFTIRQ_EXIT:
		if ((n = softirq_text(e->arg)))
			snprintf(arg, sizeof(arg), "%s", n);
		else
			snprintf(arg, sizeof(arg), "%u", e->arg);
		break;
	case HGT_REC_VEC_ENTRY: case HGT_REC_VEC_EXIT:
		snprintf(arg, sizeof(arg), "%s", vector_name(e->flags));
		break;
	case HGT_REC_HRTIMER_ENTRY:
		break;
	}
	snprintf(buf, len, "+%.1fus %s%s%s", us_of(r, (double)(e->tsc - g0)), kind, *arg ? " " : "", arg);
}

static cold_path void put_disagreement(struct judge *j, const struct hgg_gap *g,
				       const struct gap_detail *d, struct infer *in)
{
	struct run *r = j->r;
	FILE *f = dis_begin(j);
	struct jsonw w;
	char buf[256], t[64];
	int i;

	jw_begin(&w, f);
	jw_obj(&w, NULL);
	jw_numf(&w, "t", t_of(r, (int64_t)g->g0), 6);
	jw_uint(&w, "cpu", g->cpu);
	jw_uint(&w, "thread", g->thread);
	jw_uint(&w, "next_thread", g->next_thread);
	jw_numf(&w, "length_us", us_of(r, (double)(g->g1 - g->g0)), 3);
	jw_str(&w, "inferred", hgg_class_name[g->inferred]);
	jw_str(&w, "inferred_why", infer_why(in, g, buf, sizeof(buf)));
	jw_str(&w, "rule", rule_name[g->rule]);
	jw_str(&w, "actual", hgg_class_name[g->cls]);
	jw_str(&w, "actual_kind", hgg_kind_name[g->kind]);
	jw_str(&w, "primary", g->flags & HGG_F_PRIMARY ? names_comp(g->primary_kind, g->primary_id, buf,
								      sizeof(buf)) : NULL);
	jw_str(&w, "cause", names_cause(g, buf, sizeof(buf)));	/* report 2.6 */
	if (g->why == HGG_W_OUT)
		snprintf(buf, sizeof(buf), "%s (prev_state %#x), switched to %s",
			 g->flags & HGG_F_PREEMPTED ? "preempted" : "blocked", g->out_state,
			 names_task(g->out_pid, t, sizeof(t)));
	else
		snprintf(buf, sizeof(buf), "%s", why_text[g->why]);
	jw_str(&w, "actual_why", buf);
	jw_obj(&w, "components_us");
	for (i = 0; i < d->ncomp; i++)
		if (d->comp[i].cycles)
			jw_numf(&w, names_comp(d->comp[i].kind, d->comp[i].id, t, sizeof(t)),
				us_of(r, (double)d->comp[i].cycles), 3);
	jw_end_obj(&w);
	jw_arr(&w, "events");
	for (i = 0; i < d->nev; i++) {
		describe(r, &d->ev[i], (int64_t)g->g0, buf, sizeof(buf));
		jw_str(&w, NULL, buf);
	}
	if (g->n_events > (uint32_t)d->nev) {
		snprintf(buf, sizeof(buf), "... %u more", g->n_events - d->nev);
		jw_str(&w, NULL, buf);
	}
	jw_end_arr(&w);
	jw_end_obj(&w);
	dis_end(j, g->cpu);
	j->ndis++;
}

static void map_gap(struct judge *j, const struct hgg_gap *g)
{
	struct map_thread *m = &j->map[g->thread];

	if (g->thread >= MAP_THREADS || (int64_t)g->g0 >= j->map1 || (int64_t)g->g1 <= j->map0 ||
	    m->ngap >= MAP_MAX)
		return;
	if (m->ngap == m->capgap) {
		m->capgap = m->capgap ? 2 * m->capgap : 64;
		m->gap = xrealloc(m->gap, m->capgap * sizeof(*m->gap));
	}
	m->gap[m->ngap].t0 = t_of(j->r, (int64_t)g->g0);
	m->gap[m->ngap].t1 = t_of(j->r, (int64_t)g->g1);
	m->gap[m->ngap].cls = g->cls;
	m->gap[m->ngap].wrong = !g->vol && g->cls != HGG_C_UNEXPLAINABLE && g->inferred != g->cls;
	m->ngap++;
}

void judge_interval(struct judge *j, const struct hgl_rec *iv)
{
	struct map_thread *m = &j->map[iv->thread];

	if (iv->type != HGL_REC_INTERVAL || iv->thread >= MAP_THREADS || (int64_t)iv->t0 >= j->map1 ||
	    (int64_t)iv->t1 <= j->map0 || m->niv >= MAP_MAX)
		return;
	if (m->niv == m->capiv) {
		m->capiv = m->capiv ? 2 * m->capiv : 64;
		m->iv = xrealloc(m->iv, m->capiv * sizeof(*m->iv));
	}
	m->iv[m->niv].t0 = t_of(j->r, (int64_t)iv->t0);
	m->iv[m->niv].t1 = t_of(j->r, (int64_t)iv->t1);
	m->niv++;
}

/* judge_loads - what the labelled loads did to a gap: caused it (it was switched to one, @pid as
 * names_switch_task() says, or one is its primary cause), or took part of it */
static cold_path void judge_loads(struct judge *j, const struct hgg_gap *g, int64_t pid,
				  const struct gap_detail *d)
{
	int who = -1, i;
	char *seen = NULL;

	if (pid >= 0)
		who = labels_task((uint32_t)pid);
	else if ((g->flags & HGG_F_PRIMARY) && g->cls != HGG_C_HIDDEN)	/* hidden: the load took part */
		who = labels_comp(g->primary_kind, g->primary_id);
	if (who >= 0) {
		j->load[who].caused++;
		j->load[who].caused_cycles += (double)(g->g1 - g->g0);
		quant_add(&j->load[who].len, (int64_t)(g->g1 - g->g0));
	}
	for (i = 0; i < d->ncomp; i++) {
		int l = labels_comp(d->comp[i].kind, d->comp[i].id);

		if (l < 0)
			continue;
		if (!seen)
			seen = xcalloc(labels_count(), 1);
		j->load[l].charged_cycles += (double)d->comp[i].cycles;
		if (!seen[l]++)
			j->load[l].touched++;
	}
	free(seen);
}

/*
 * judge_tick - the tick as the kernel shows it, per CPU, from every gap (voluntary and unexplainable
 * ones too): its period, the median distance between the starts of consecutive gaps the kernel
 * classes timer (a tick that falls in a gap of another class leaves one distance of two periods);
 * its longest handler, the most any one gap charged to the local timer interrupt
 */
static void judge_tick(struct judge *j, const struct hgg_gap *g)
{
	struct ktick *k;

	if (g->cpu >= j->nktick) {
		uint32_t n = g->cpu + 1;

		j->ktick = xrealloc(j->ktick, n * sizeof(*j->ktick));
		memset(j->ktick + j->nktick, 0, (n - j->nktick) * sizeof(*j->ktick));
		j->nktick = n;
	}
	k = &j->ktick[g->cpu];
	if (g->tick_cycles > k->handler_max)
		k->handler_max = g->tick_cycles;
	if (g->cls != HGG_C_TIMER)
		return;
	if (k->have)
		quant_add(&k->apart, (int64_t)g->g0 - k->last);
	k->have = 1;
	k->last = (int64_t)g->g0;
	k->gaps++;
}

/* longer - is @g longer than the longest so far: at equal length, earlier, then of a lower thread
 * (gaps close in CPU order: not the CPUs' numbers decide) */
static int longer(const struct judge *j, const struct hgg_gap *g)
{
	const struct hgg_gap *l = &j->longest;

	if (!j->have_longest || g->g1 - g->g0 != l->g1 - l->g0)
		return !j->have_longest || g->g1 - g->g0 > l->g1 - l->g0;
	return g->g0 != l->g0 ? g->g0 < l->g0 : g->thread < l->thread;
}

/* keep_longest - @g is the longest judged gap so far: it, and its largest parts by name */
static cold_path void keep_longest(struct judge *j, const struct hgg_gap *g,
				   const struct gap_detail *d)
{
	int i;

	j->have_longest = 1;
	j->longest = *g;
	j->nlongest_part = 0;
	for (i = 0; i < d->ncomp && j->nlongest_part < HGG_COMPS; i++) {
		if (!d->comp[i].cycles)
			continue;
		if (d->comp[i].kind == HGG_K_SELF)
			snprintf(j->longest_part[j->nlongest_part].what, sizeof(j->longest_part[0].what),
				 "nothing recorded");
		else
			names_comp(d->comp[i].kind, d->comp[i].id, j->longest_part[j->nlongest_part].what,
				   sizeof(j->longest_part[0].what));
		j->longest_part[j->nlongest_part++].cycles = d->comp[i].cycles;
	}
}

/* judge_gap - a decided gap into every figure; flattened: every gap comes here */
flatten_hot void judge_gap(struct judge *j, const struct hgg_gap *g, const struct gap_detail *d,
			  struct infer *in)
{
	struct run *r = j->r;
	int64_t len = (int64_t)(g->g1 - g->g0);
	int64_t pid = names_switch_task(g);	/* the task a switch gap went to, once for both tables */
	struct agg *a;
	int i;

	j->total++;
	j->explained += hgg_explained(g);
	j->classes[g->cls]++;
	j->rules[g->rule]++;
	if (!j->any_cpu || g->cpu > j->max_cpu)
		j->max_cpu = g->cpu;
	j->any_cpu = 1;
	map_gap(j, g);
	see_cpu(j, g->cpu);
	if (g->cls == HGG_C_TIMER || g->tick_cycles)
		judge_tick(j, g);
	loghist_add(&j->gap_hist[g->cls], us_of(r, (double)len));
	/* the causes: what each gap went to, whole */
	if (pid >= 0)
		a = agg_of(&j->causes, AGG_OUT, pid, g);
	else if (g->cls == HGG_C_HIDDEN)	/* never with the kernel's part alone: names.c */
		a = agg_of(&j->causes, AGG_HIDDEN, (int64_t)names_hidden_key(g), g);
	else if (g->flags & HGG_F_PRIMARY)
		a = agg_of(&j->causes, g->primary_kind, g->primary_id, g);
	else
		a = agg_of(&j->causes, AGG_KIND, g->kind, g);
	a->n++;
	a->sum += (double)len;
	quant_add(&a->a, len);
	if (!a->name[0])
		names_cause(g, a->name, sizeof(a->name));
	if (g->vol) {
		j->voluntary++;
		return;
	}
	j->inferred_all[g->inferred]++;
	/* the time lost: each component its own time */
	for (i = 0; i < d->ncomp; i++) {
		a = agg_of(&j->lost, d->comp[i].kind, d->comp[i].id, g);
		a->n++;
		a->sum += (double)d->comp[i].cycles;
	}
	if (g->cls == HGG_C_UNEXPLAINABLE) {
		j->unexpl[g->why]++;
		return;
	}
	if (labels_any())
		judge_loads(j, g, pid, d);
	if (g->cls == HGG_C_HIDDEN) {
		j->hidden_gaps++;
		j->hidden_cycles += (double)len;
	}
	if (longer(j, g))
		keep_longest(j, g, d);
	j->unrecorded_cycles += (double)g->self_cycles;
	j->turn_cycles += (double)g->turn_cycles;
	j->mostly_unrecorded += g->why == HGG_W_UNRECORDED;
	j->turn_gaps += g->kind == HGG_KD_TURN;
	j->scored++;
	if (hgg_in_matrix(g))
		j->m[g->cls][g->inferred]++;
	if (g->inferred == HGG_C_SWITCH_HG) {
		quant_add(&j->sw, len);
		loghist_add(&j->switch_hist, us_of(r, (double)len));
		if (g->cls == HGG_C_SWITCH_HG) {
			j->sw_true++;
			quant_add(&j->sw_handler, (int64_t)g->handler_cycles);
			quant_add(&j->sw_only, len - (int64_t)g->handler_cycles);
			/* a preemption between threads that never yield implies a clock interrupt (paper 4) */
			if (r->th[g->thread].cpu_bound && r->th[g->next_thread].cpu_bound) {
				j->pre++;
				j->ticked += has_comp(d, HGG_K_VEC, HGT_VEC_LOCAL_TIMER);
				j->resched += has_comp(d, HGG_K_VEC, HGT_VEC_RESCHEDULE);
			}
		}
	}
	if ((g->inferred == HGG_C_TIMER || g->inferred == HGG_C_INTERRUPT) &&
	    (g->cls == HGG_C_TIMER || g->cls == HGG_C_INTERRUPT) && (g->flags & HGG_F_PRIMARY)) {
		a = agg_of(&j->irq, g->primary_kind, g->primary_id, g);
		a->n++;
		quant_add(&a->a, len);
		quant_add(&a->b, (int64_t)g->handler_cycles);
	}
	if (g->inferred != g->cls)
		put_disagreement(j, g, d, in);
}

void judge_migration_inferred(struct judge *j, int confirmed)
{
	j->mig_inferred++;
	j->mig_confirmed += !!confirmed;
}

void judge_kernel_migration(struct judge *j)
{
	j->mig_kernel++;
}

uint64_t judge_gaps(const struct judge *j)
{
	return j->total;
}

/* ---- the report ---- */

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

static void put_ratio(struct jsonw *w, const char *key, uint64_t a, uint64_t b)
{
	if (b)
		jw_numf(w, key, ratio(a, b), 4);
	else
		jw_null(w, key);
}

/* the headline: gaps with a kernel cause (hidden ones are steal, apart) */
struct scores {
	uint64_t gaps, correct, all_gaps, all_correct;
	uint64_t actual[SCORED], inferred[INFERABLE], correct_of[INFERABLE];
	double macro_f1;
	int nf1;
};

static void scores(const struct judge *j, struct scores *s)
{
	int a, i;
	double f1sum = 0;

	memset(s, 0, sizeof(*s));
	for (a = 0; a < SCORED; a++)
		for (i = 0; i < INFERABLE; i++) {
			uint64_t n = j->m[a][i];

			s->all_gaps += n;
			s->all_correct += a == i ? n : 0;
			if (a == HGG_C_HIDDEN)
				continue;
			s->gaps += n;
			s->correct += a == i ? n : 0;
			s->actual[a] += n;
			s->inferred[i] += n;
			s->correct_of[i] += a == i ? n : 0;
		}
	/* macro F1 over the classes a gap with a kernel cause can have, where they occur */
	for (i = HGG_C_SWITCH_HG; i <= HGG_C_INTERRUPT; i++) {
		double p, r;

		if (!s->actual[i] && !s->inferred[i])
			continue;
		p = ratio(s->correct_of[i], s->inferred[i]);
		r = ratio(s->correct_of[i], s->actual[i]);
		f1sum += p + r > 0 ? 2 * p * r / (p + r) : 0;
		s->nf1++;
	}
	s->macro_f1 = s->nf1 ? f1sum / s->nf1 : 0;
}

static void report_inference(struct judge *j, struct jsonw *w, struct infer *in)
{
	struct scores s;
	int a, i;
	uint64_t col[INFERABLE] = { 0 }, row;

	scores(j, &s);
	jw_obj(w, "inference");
	jw_obj(w, "confusion");
	jw_arr(w, "actual");
	for (a = 0; a < SCORED; a++)
		jw_str(w, NULL, hgg_class_name[a]);
	jw_end_arr(w);
	jw_arr(w, "inferred");
	for (i = 0; i < INFERABLE; i++)
		jw_str(w, NULL, hgg_class_name[i]);
	jw_end_arr(w);
	jw_arr(w, "matrix");
	for (a = 0; a < SCORED; a++) {
		jw_arr(w, NULL);
		for (i = 0; i < INFERABLE; i++) {
			jw_uint(w, NULL, j->m[a][i]);
			col[i] += j->m[a][i];
		}
		jw_end_arr(w);
	}
	jw_end_arr(w);
	jw_end_obj(w);
	jw_obj(w, "headline");
	jw_uint(w, "gaps", s.gaps);
	jw_uint(w, "correct", s.correct);
	put_ratio(w, "accuracy", s.correct, s.gaps);
	jw_end_obj(w);
	jw_obj(w, "all");
	jw_uint(w, "gaps", s.all_gaps);
	jw_uint(w, "correct", s.all_correct);
	put_ratio(w, "accuracy", s.all_correct, s.all_gaps);
	jw_end_obj(w);
	/* every class: in the headline's terms, and hidden over all scored gaps */
	jw_obj(w, "classes");
	for (a = 0; a < SCORED; a++) {
		uint64_t act, inf, cor;

		for (row = 0, i = 0; i < INFERABLE; i++)
			row += j->m[a][i];
		if (a == HGG_C_HIDDEN) {
			act = row;
			inf = col[HGG_C_HIDDEN];
			cor = j->m[a][a];
		} else {
			act = s.actual[a];
			inf = a < INFERABLE ? s.inferred[a] : 0;
			cor = a < INFERABLE ? s.correct_of[a] : 0;
		}
		if (!act && !inf)
			continue;
		jw_obj(w, hgg_class_name[a]);
		jw_uint(w, "actual", act);
		jw_uint(w, "inferred", inf);
		jw_uint(w, "correct", cor);
		put_ratio(w, "precision", cor, a < INFERABLE ? inf : 0);
		put_ratio(w, "recall", cor, act);
		if (inf && act && cor)
			jw_numf(w, "f1", 2.0 * cor / (double)(inf + act), 4);
		else if (a < INFERABLE)
			jw_numf(w, "f1", 0, 4);
		else
			jw_null(w, "f1");
		jw_end_obj(w);
	}
	jw_end_obj(w);
	if (s.nf1)
		jw_numf(w, "macro_f1", s.macro_f1, 4);
	else
		jw_null(w, "macro_f1");
	/* what the inference said of every involuntary gap, the kernel's verdict known or not (a run
	 * merged without a recording: hgmerge --no-kernel) */
	jw_obj(w, "inferred_all");
	for (i = 0; i < INFERABLE; i++)
		jw_uint(w, hgg_class_name[i], j->inferred_all[i]);
	jw_end_obj(w);
	infer_report(in, j->r, w);
	jw_obj(w, "rules");
	for (i = 0; i < HGG_R_N; i++)
		jw_uint(w, rule_name[i], j->rules[i]);
	jw_end_obj(w);
	jw_end_obj(w);
}

static int by_total(const void *x, const void *y)
{
	const struct agg *a = x, *b = y;

	if (a->sum != b->sum)
		return a->sum > b->sum ? -1 : 1;
	if (a->first_cpu != b->first_cpu)
		return a->first_cpu < b->first_cpu ? -1 : 1;
	return (a->first_g0 > b->first_g0) - (a->first_g0 < b->first_g0);
}

static int by_count(const void *x, const void *y)
{
	const struct agg *a = x, *b = y;

	if (a->n != b->n)
		return a->n > b->n ? -1 : 1;
	if (a->first_cpu != b->first_cpu)
		return a->first_cpu < b->first_cpu ? -1 : 1;
	return (a->first_g0 > b->first_g0) - (a->first_g0 < b->first_g0);
}

static void report_causes(struct judge *j, struct jsonw *w)
{
	struct run *r = j->r;
	char name[96];
	size_t i;

	qsort(j->causes.v, j->causes.n, sizeof(*j->causes.v), by_total);
	free(j->causes.slot);		/* the order moved: the map is no longer valid */
	j->causes.slot = NULL;
	j->causes.nslot = 0;
	jw_arr(w, "causes");
	for (i = 0; i < j->causes.n; i++) {
		struct agg *a = &j->causes.v[i];

		jw_obj(w, NULL);
		jw_str(w, "cause", a->name);
		jw_uint(w, "gaps", a->n);
		jw_numf(w, "total_ms", us_of(r, a->sum) / 1e3, 6);
		jw_numf(w, "median_us", us_of(r, quant_median(&a->a)), 3);
		jw_end_obj(w);
	}
	jw_end_arr(w);

	qsort(j->lost.v, j->lost.n, sizeof(*j->lost.v), by_total);
	free(j->lost.slot);
	j->lost.slot = NULL;
	j->lost.nslot = 0;
	jw_arr(w, "time_lost");
	for (i = 0; i < j->lost.n; i++) {
		struct agg *a = &j->lost.v[i];
		const char *kind;

		if (a->kind == HGG_K_SELF) {
			snprintf(name, sizeof(name), "nothing recorded (the thread's own kernel entry and exit, "
				 "or time below the kernel)");
			kind = "self";
		} else {
			names_comp(a->kind, a->id, name, sizeof(name));
			kind = hgg_kind_name[comp_kind(r, a->kind, a->id)];
		}
		jw_obj(w, NULL);
		jw_str(w, "what", name);
		jw_str(w, "kind", kind);
		jw_numf(w, "ms", us_of(r, a->sum) / 1e3, 6);
		jw_uint(w, "gaps", a->n);
		jw_end_obj(w);
	}
	jw_end_arr(w);
}

static void report_costs(struct judge *j, struct jsonw *w)
{
	struct run *r = j->r;
	char name[96];
	size_t i;

	if (j->sw.n) {
		jw_obj(w, "context_switch");
		jw_uint(w, "switches", j->sw.n);
		jw_numf(w, "inferred_shortest_us", us_of(r, (double)j->sw.min), 3);
		jw_numf(w, "inferred_median_us", us_of(r, quant_median(&j->sw)), 3);
		jw_uint(w, "kernel_confirmed", j->sw_true);
		jw_numf(w, "kernel_handler_median_us", us_of(r, quant_median(&j->sw_handler)), 3);
		jw_numf(w, "kernel_switch_only_median_us", us_of(r, quant_median(&j->sw_only)), 3);
		jw_numf(w, "kernel_switch_only_shortest_us", us_of(r, j->sw_only.n ? (double)j->sw_only.min : 0), 3);
		if (j->pre) {
			jw_uint(w, "preemptions_between_cpu_bound", j->pre);
			jw_uint(w, "with_tick_in_gap", j->ticked);
			jw_uint(w, "with_resched_ipi", j->resched);
		}
		jw_end_obj(w);
	} else {
		jw_null(w, "context_switch");
	}
	qsort(j->irq.v, j->irq.n, sizeof(*j->irq.v), by_count);
	free(j->irq.slot);
	j->irq.slot = NULL;
	j->irq.nslot = 0;
	if (j->irq.n) {
		jw_arr(w, "interrupt_durations");
		for (i = 0; i < j->irq.n; i++) {
			struct agg *a = &j->irq.v[i];

			jw_obj(w, NULL);
			jw_str(w, "source", names_comp(a->kind, a->id, name, sizeof(name)));
			jw_uint(w, "gaps", a->n);
			jw_numf(w, "inferred_median_us", us_of(r, quant_median(&a->a)), 3);
			jw_numf(w, "handler_median_us", us_of(r, quant_median(&a->b)), 3);
			jw_end_obj(w);
		}
		jw_end_arr(w);
	} else {
		jw_null(w, "interrupt_durations");
	}
	if (j->mig_inferred || j->mig_kernel) {
		jw_obj(w, "migrations");
		jw_uint(w, "inferred", j->mig_inferred);
		jw_uint(w, "confirmed", j->mig_confirmed);
		jw_uint(w, "kernel_migrations_of_hourglass_threads", j->mig_kernel);
		jw_end_obj(w);
	} else {
		jw_null(w, "migrations");
	}
}

/* report_tick - "kernel_tick": per CPU, the tick's period and longest handler (judge_tick) */
static void report_tick(struct judge *j, struct jsonw *w)
{
	struct run *r = j->r;
	char key[16];
	uint32_t c;
	int any = 0;

	for (c = 0; c < j->nktick; c++) {
		struct ktick *k = &j->ktick[c];

		if (!k->gaps && !k->handler_max)
			continue;
		if (!any++)
			jw_obj(w, "kernel_tick");
		snprintf(key, sizeof(key), "%u", c);
		jw_obj(w, key);
		jw_uint(w, "timer_gaps", k->gaps);
		if (k->apart.n >= 2) {		/* three timer gaps at least */
			double p = quant_at(&k->apart, 0.5);

			jw_int(w, "period_cycles", (int64_t)p);
			jw_numf(w, "period_ms", us_of(r, p) / 1e3, 6);
		} else {
			jw_null(w, "period_cycles");
			jw_null(w, "period_ms");
		}
		if (k->handler_max) {
			jw_uint(w, "handler_max_cycles", k->handler_max);
			jw_numf(w, "handler_max_us", us_of(r, (double)k->handler_max), 3);
		} else {
			jw_null(w, "handler_max_cycles");
			jw_null(w, "handler_max_us");
		}
		jw_end_obj(w);
	}
	if (any)
		jw_end_obj(w);
	else
		jw_null(w, "kernel_tick");
}

static void report_loads(struct judge *j, struct jsonw *w)
{
	struct run *r = j->r;
	size_t i;

	if (!labels_any()) {
		jw_null(w, "loads");
		return;
	}
	jw_arr(w, "loads");
	for (i = 0; i < labels_count(); i++) {
		struct load_fig *l = &j->load[i];

		jw_obj(w, NULL);
		jw_str(w, "label", labels_name(i));
		jw_uint(w, "gaps_caused", l->caused);
		jw_numf(w, "caused_ms", us_of(r, l->caused_cycles) / 1e3, 6);
		jw_numf(w, "caused_median_us", us_of(r, quant_median(&l->len)), 3);
		jw_uint(w, "gaps_touched", l->touched);
		jw_numf(w, "charged_ms", us_of(r, l->charged_cycles) / 1e3, 6);
		jw_end_obj(w);
	}
	jw_end_arr(w);
}

static void report_disagreements(struct judge *j, struct jsonw *w)
{
	uint32_t c;

	jw_obj(w, "disagreements");
	jw_uint(w, "count", j->ndis);
	jw_arr(w, "listed");
	if (j->dis_bytes) {
		const char *text;

		if (fflush(j->dis))
			fail("cannot write a temporary file in %s: %s (set TMPDIR)", j->tmpdir, strerror(errno));
		text = mmap(NULL, j->dis_bytes, PROT_READ, MAP_PRIVATE, fileno(j->dis), 0);
		if (text == MAP_FAILED)
			fail("cannot read back a temporary file in %s: %s", j->tmpdir, strerror(errno));
		/* each line is one object: written as it was, between the writer's commas */
		for (c = 0; c < j->ndis_cpu; c++) {
			const struct dis_lines *l = &j->dis_cpu[c];
			size_t i;

			for (i = 0; i < l->n; i++)
				if (l->v[i].len)
					jw_raw(w, NULL, text + l->v[i].at, l->v[i].len);
		}
		munmap((void *)text, j->dis_bytes);
	}
	jw_end_arr(w);
	jw_end_obj(w);
}

/* report_longest - report 2.6: the longest judged gap and its composition (the worst gap's
 * automatic analysis, tools/hgtools/analysis.py) */
static void report_longest(struct judge *j, struct jsonw *w, struct infer *in)
{
	const struct hgg_gap *g = &j->longest;
	struct run *r = j->r;
	char buf[256];
	int i;

	if (!j->have_longest) {
		jw_null(w, "longest");
		return;
	}
	jw_obj(w, "longest");
	jw_numf(w, "t", t_of(r, (int64_t)g->g0), 6);
	jw_uint(w, "cpu", g->cpu);
	jw_int(w, "thread", g->thread);
	jw_int(w, "next_thread", g->next_thread);
	jw_numf(w, "us", us_of(r, (double)(g->g1 - g->g0)), 3);
	jw_str(w, "actual", hgg_class_name[g->cls]);
	jw_str(w, "kind", hgg_kind_name[g->kind]);
	jw_str(w, "cause", names_cause(g, buf, sizeof(buf)));
	jw_str(w, "inferred", hgg_class_name[g->inferred]);
	jw_str(w, "why_inferred", infer_why(in, g, buf, sizeof(buf)));
	jw_numf(w, "unrecorded_us", us_of(r, (double)(g->self_cycles + g->turn_cycles)), 3);
	jw_uint(w, "n_events", g->n_events);
	jw_arr(w, "parts");
	for (i = 0; i < j->nlongest_part; i++) {
		jw_obj(w, NULL);
		jw_str(w, "what", j->longest_part[i].what);
		jw_numf(w, "us", us_of(r, (double)j->longest_part[i].cycles), 3);
		jw_end_obj(w);
	}
	jw_end_arr(w);
	jw_end_obj(w);
}

void judge_report(struct judge *j, struct jsonw *w, struct infer *in)
{
	struct run *r = j->r;
	double run_cycles = r->info->duration_ns * 1e-9 * r->hz;
	int c;

	jw_obj(w, "gaps");
	jw_uint(w, "total", j->total);
	jw_uint(w, "voluntary", j->voluntary);
	jw_uint(w, "scored", j->scored);
	jw_uint(w, "unexplainable", j->unexpl[HGG_W_WINDOW] + j->unexpl[HGG_W_LOST] + j->unexpl[HGG_W_NO_RECORDING]);
	jw_obj(w, "unexplainable_why");
	if (j->unexpl[HGG_W_WINDOW])
		jw_uint(w, why_text[HGG_W_WINDOW], j->unexpl[HGG_W_WINDOW]);
	if (j->unexpl[HGG_W_LOST])
		jw_uint(w, why_text[HGG_W_LOST], j->unexpl[HGG_W_LOST]);
	if (j->unexpl[HGG_W_NO_RECORDING])
		jw_uint(w, why_text[HGG_W_NO_RECORDING], j->unexpl[HGG_W_NO_RECORDING]);
	jw_end_obj(w);
	jw_arr(w, "class_order");	/* report 2.1: every actual class, in the order tables list them */
	for (c = 0; c < HGG_C_VOLUNTARY; c++)
		jw_str(w, NULL, hgg_class_name[c]);
	jw_end_arr(w);
	jw_obj(w, "classes");
	for (c = 0; c < HGG_C_VOLUNTARY; c++)
		if (j->classes[c])
			jw_uint(w, hgg_class_name[c], j->classes[c]);
	jw_end_obj(w);
	/* report 2.6: what the kernel did not record in the judged gaps, and the gaps named hidden for
	 * it although kernel events were in them (docs/merge.md, "The ground truth of a gap") */
	jw_obj(w, "unrecorded");
	jw_numf(w, "ms", us_of(r, j->unrecorded_cycles) / 1e3, 6);
	jw_numf(w, "turn_ms", us_of(r, j->turn_cycles) / 1e3, 6);
	if (run_cycles > 0)
		jw_numf(w, "share_of_run", (j->unrecorded_cycles + j->turn_cycles) / run_cpu_cycles(j), 5);
	else
		jw_null(w, "share_of_run");
	jw_uint(w, "mostly_unrecorded_gaps", j->mostly_unrecorded);
	jw_uint(w, "turn_gaps", j->turn_gaps);
	jw_numf(w, "share_limit", HGG_UNRECORDED_SHARE, 2);
	jw_numf(w, "floor_us", HGG_UNRECORDED_FLOOR_US, 1);
	jw_end_obj(w);
	report_longest(j, w, in);
	jw_end_obj(w);
	jw_obj(w, "steal");
	jw_uint(w, "hidden_gaps", j->hidden_gaps);
	jw_numf(w, "hidden_ms", us_of(r, j->hidden_cycles) / 1e3, 6);
	jw_numf(w, "run_ms", us_of(r, run_cycles) / 1e3, 3);
	jw_uint(w, "cpus", j->ncpu_seen ? j->ncpu_seen : 1);
	if (run_cycles > 0)
		jw_numf(w, "share", j->hidden_cycles / run_cpu_cycles(j), 5);
	else
		jw_null(w, "share");
	jw_end_obj(w);
	if (j->scored || j->total > j->voluntary)	/* none scored: merged without a recording, still inferred */
		report_inference(j, w, in);
	else
		jw_null(w, "inference");
	report_causes(j, w);
	report_costs(j, w);
	report_tick(j, w);
	report_loads(j, w);
	report_disagreements(j, w);
}

void judge_charts(struct judge *j, struct jsonw *w)
{
	int k, c;
	size_t i;

	jw_obj(w, "map");
	jw_numf(w, "from", t_of(j->r, j->map0), 6);
	jw_numf(w, "to", t_of(j->r, j->map1), 6);
	if (j->r->nthreads > MAP_THREADS)
		jw_int(w, "threads_total", j->r->nthreads);
	jw_arr(w, "threads");
	for (k = 0; k < j->r->nthreads && k < MAP_THREADS; k++) {
		struct map_thread *m = &j->map[k];

		jw_obj(w, NULL);
		jw_int(w, "thread", k);
		jw_str(w, "name", j->r->th[k].name);
		jw_arr(w, "intervals");
		for (i = 0; i < m->niv; i++) {
			jw_arr(w, NULL);
			jw_numf(w, NULL, m->iv[i].t0, 7);
			jw_numf(w, NULL, m->iv[i].t1, 7);
			jw_end_arr(w);
		}
		jw_end_arr(w);
		jw_arr(w, "gaps");
		for (i = 0; i < m->ngap; i++) {
			jw_arr(w, NULL);
			jw_numf(w, NULL, m->gap[i].t0, 7);
			jw_numf(w, NULL, m->gap[i].t1, 7);
			jw_str(w, NULL, hgg_class_name[m->gap[i].cls]);
			jw_bool(w, NULL, m->gap[i].wrong);
			jw_end_arr(w);
		}
		jw_end_arr(w);
		jw_end_obj(w);
	}
	jw_end_arr(w);
	jw_end_obj(w);
	loghist_write(&j->switch_hist, w, "switch_hist");
	jw_obj(w, "gap_hist");
	loghist_edges(w, "edges_us");
	jw_obj(w, "classes");
	for (c = 0; c < HGG_C_N; c++)
		if (j->gap_hist[c].total)
			loghist_counts(&j->gap_hist[c], w, hgg_class_name[c]);
	jw_end_obj(w);
	jw_end_obj(w);
}

int judge_summary(struct judge *j, char *line1, char *line2, size_t len)
{
	struct run *r = j->r;
	struct scores s;
	uint64_t explained = j->explained;
	uint64_t invol = j->total - j->voluntary;
	double cpu_cycles = run_cpu_cycles(j);
	char turns_note[96] = "", whole[64];
	const char *wl = of_run(j, whole, sizeof(whole));

	if (!j->total)		/* a latency run: its threads sleep between wake-ups, and record no gaps */
		return 0;
	scores(j, &s);
	if (j->turn_gaps)
		snprintf(turns_note, sizeof(turns_note), "; %llu mostly another vCPU's turn",
			 (unsigned long long)j->turn_gaps);
	if (j->unexpl[HGG_W_NO_RECORDING]) {	/* hgmerge --no-kernel: inferred, not judged */
		snprintf(line1, len, "gaps: %llu (%llu voluntary); no kernel recording: the %llu others inferred "
			 "%llu switch_hg, %llu switch_other, %llu timer, %llu interrupt, %llu hidden",
			 (unsigned long long)j->total, (unsigned long long)j->voluntary, (unsigned long long)invol,
			 (unsigned long long)j->inferred_all[HGG_C_SWITCH_HG],
			 (unsigned long long)j->inferred_all[HGG_C_SWITCH_OTHER],
			 (unsigned long long)j->inferred_all[HGG_C_TIMER],
			 (unsigned long long)j->inferred_all[HGG_C_INTERRUPT],
			 (unsigned long long)j->inferred_all[HGG_C_HIDDEN]);
		snprintf(line2, len, "inferences: not judged (no ground truth); how far to trust them on this "
			 "machine: a profile's held-out figures (hourglass report --profile, docs/profile.md)");
		return 2;
	}
	snprintf(line1, len, "gaps: %llu (%llu voluntary); the kernel explains %llu of the %llu others (%.1f%%), "
		 "%llu hidden (steal: %.2f%% of %s; %llu of them held kernel events too%s), %llu unexplainable; "
		 "nothing recorded: %.3f ms (%.2f%% of %s)",
		 (unsigned long long)j->total, (unsigned long long)j->voluntary, (unsigned long long)explained,
		 (unsigned long long)invol, invol ? 100.0 * explained / invol : 0.0,
		 (unsigned long long)j->classes[HGG_C_HIDDEN], cpu_cycles > 0 ? 100 * j->hidden_cycles / cpu_cycles : 0,
		 wl,
		 (unsigned long long)j->mostly_unrecorded, turns_note, (unsigned long long)j->classes[HGG_C_UNEXPLAINABLE],
		 us_of(r, j->unrecorded_cycles + j->turn_cycles) / 1e3,
		 cpu_cycles > 0 ? 100 * (j->unrecorded_cycles + j->turn_cycles) / cpu_cycles : 0, wl);
	if (s.gaps)
		snprintf(line2, len, "inferences: %llu of %llu gaps with a kernel cause right (%.1f%%), macro F1 %.2f; "
			 "hidden gaps %llu of %llu named hidden",
			 (unsigned long long)s.correct, (unsigned long long)s.gaps, 100.0 * s.correct / s.gaps,
			 s.macro_f1, (unsigned long long)j->m[HGG_C_HIDDEN][HGG_C_HIDDEN],
			 (unsigned long long)j->hidden_gaps);
	else
		snprintf(line2, len, "inferences: no gap with a kernel cause to score");
	return 2;
}

/*
 * judge_vm_summary - in a virtual machine the gaps hold what the host ran instead (steal:
 * the hidden gaps) and every kernel path runs at the machine's speed, an emulator's or a
 * vCPU sharing its host CPU: a score there measures the machine as much as the inference
 * (issue 39: under plain emulation 24.5% right, on the instruction-count clock 94%). The
 * figures that show which: the hidden share, and the tick's gaps against the switch limit
 * (a tick whose gaps outgrow it reads as a switch).
 */
int judge_vm_summary(struct judge *j, const char *hv, double switch_limit, char *line, size_t len)
{
	struct run *r = j->r;
	double cpu_cycles = run_cpu_cycles(j);
	char name[96], tick[160] = "", whole[64];
	size_t i;

	if (!j->total || !hv || !*hv || j->unexpl[HGG_W_NO_RECORDING])	/* nothing known of the steal */
		return 0;
	for (i = 0; i < j->irq.n; i++) {
		struct agg *a = &j->irq.v[i];

		if (!strcmp(names_comp(a->kind, a->id, name, sizeof(name)), "local_timer") && a->n) {
			snprintf(tick, sizeof(tick), "; the tick's %llu gaps %.1f us at the median (its handler %.1f us) "
				 "against a switch limit of %.1f us", (unsigned long long)a->n,
				 us_of(r, quant_median(&a->a)), us_of(r, quant_median(&a->b)), us_of(r, switch_limit));
			break;
		}
	}
	snprintf(line, len, "virtual machine (CPUID hypervisor '%s'): hidden gaps %.2f%% of %s%s: the score "
		 "measures the machine as much as the inference", hv,
		 cpu_cycles > 0 ? 100 * j->hidden_cycles / cpu_cycles : 0, of_run(j, whole, sizeof(whole)), tick);
	return 1;
}

void judge_free(struct judge *j)
{
	uint32_t i;
	int k;

	if (!j)
		return;
	aggs_free(&j->causes);
	aggs_free(&j->lost);
	aggs_free(&j->irq);
	quant_free(&j->sw);
	quant_free(&j->sw_handler);
	quant_free(&j->sw_only);
	for (i = 0; i < j->nktick; i++)
		quant_free(&j->ktick[i].apart);
	free(j->ktick);
	for (i = 0; i < j->ndis_cpu; i++)
		free(j->dis_cpu[i].v);
	free(j->dis_cpu);
	if (j->dis)
		fclose(j->dis);
	if (j->line)
		fclose(j->line);
	free(j->line_buf);
	for (k = 0; k < j->r->nthreads; k++) {
		free(j->map[k].iv);
		free(j->map[k].gap);
	}
	free(j->map);
	for (i = 0; i < labels_count(); i++)
		quant_free(&j->load[i].len);
	free(j->load);
	free(j);
}

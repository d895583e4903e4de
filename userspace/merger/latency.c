// SPDX-License-Identifier: GPL-2.0
/*
 * latency.c - every timer wake-up decomposed, every missed deadline
 * explained (seed 003: L = timer + scheduling jitter + non-preemptible
 * sections; what rtla timerlat's auto-analysis does for its own thread, here
 * for hourglass's LAT and PERIODIC threads).
 *
 * A wake-up's stages, from the kernel's events on the thread's CPU:
 *   timer    intended expiry -> the local timer interrupt that woke it
 *   irq      that interrupt's entry -> sched_waking of the thread
 *   sched    sched_waking -> sched_switch to the thread
 *   return   sched_switch -> hourglass's first TSC read in user space
 * The intended expiry is converted from CLOCK_MONOTONIC, so its window
 * opens a margin early.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "export.h"
#include "hg_jsonw.h"

#define NSTAGE 4
#define WORST 5
#define CDF_POINTS 200

static const char *const stage_name[NSTAGE] = { "timer", "irq", "sched", "return" };

#define PARTS 3		/* parts listed per stage, largest first */

/* what a stage's time went to */
struct part {
	char what[64];
	double us;
};

struct wake {
	double t, latency_us, lateness_us, stage[NSTAGE];
	int known[NSTAGE], largest;
	uint32_t cpu;
	uint16_t thread;
	char blame[96];
	struct part part[NSTAGE][PARTS];
	int npart[NSTAGE];
	double unrecorded_us[NSTAGE];	/* nothing recorded on the CPU, or other vCPUs' turns */
};

struct lat_thread {
	uint64_t wakeups, decomposed;
	struct quant stage[NSTAGE], total;
	struct wake worst[WORST];
	int nworst;
	struct loghist hist;
};

struct latency {
	struct run *r;
	const char *tmpdir;
	struct lat_thread *th;
	FILE *miss;
	uint64_t nmiss;
	struct wake worst;
	int have_worst;
};

struct latency *latency_new(struct run *r, const char *tmpdir)
{
	struct latency *l = xcalloc(1, sizeof(*l));

	l->r = r;
	l->tmpdir = tmpdir;
	l->th = xcalloc(r->nthreads + 1, sizeof(*l->th));
	return l;
}

/* not in a missed period's "instead": the thread itself, an unknown task */
static int not_instead(const struct window *w, const struct hgg_comp *c)
{
	if (c->kind == HGG_K_SELF || !c->cycles)
		return 1;
	return c->kind == HGG_K_TASK && ((uint32_t)c->id == w->tid || c->id < 0);
}

/* stage_parts - what stage @i of @x, [@b0, @b1), went to, cut from the window's stretches: its
 * largest parts (nothing recorded among them, as the gaps name it) and its unrecorded time */
static void stage_parts(struct latency *l, const struct window *w, struct wake *x, int i, int64_t b0, int64_t b1)
{
	struct acc { uint8_t kind; int64_t id; int64_t v; } acc[16];
	int n = 0, k, m;
	int64_t unrec = 0;

	for (k = 0; k < w->nseg; k++) {
		const struct wseg *sg = &w->seg[k];
		int64_t a = sg->t0 > b0 ? sg->t0 : b0, b = sg->t1 < b1 ? sg->t1 : b1;

		if (b <= a)
			continue;
		if (sg->kind == HGG_K_SELF || sg->kind == HGG_K_TURN)
			unrec += b - a;
		for (m = 0; m < n && (acc[m].kind != sg->kind || acc[m].id != sg->id); m++)
			;
		if (m == n) {
			if (n == (int)(sizeof(acc) / sizeof(acc[0])))
				continue;	/* more than 16 things in one stage: the rest are small */
			acc[n++] = (struct acc){ sg->kind, sg->id, 0 };
		}
		acc[m].v += b - a;
	}
	x->unrecorded_us[i] = us_of(l->r, (double)unrec);
	for (x->npart[i] = 0; x->npart[i] < PARTS; x->npart[i]++) {
		int best = -1;
		struct part *p = &x->part[i][x->npart[i]];

		for (m = 0; m < n; m++)
			if (acc[m].v > 0 && (best < 0 || acc[m].v > acc[best].v))
				best = m;
		if (best < 0)
			break;
		if (acc[best].kind == HGG_K_SELF)
			snprintf(p->what, sizeof(p->what), "nothing recorded");
		else if (acc[best].kind == HGG_K_TASK && (uint32_t)acc[best].id == w->tid)
			snprintf(p->what, sizeof(p->what), "%s in the kernel", l->r->th[w->thread].name);
		else
			names_comp(acc[best].kind, acc[best].id, p->what, sizeof(p->what));
		p->us = us_of(l->r, (double)acc[best].v);
		acc[best].v = 0;	/* listed */
	}
}

/*
 * blame - what the largest stage is blamed on: nothing recorded, when that was more than
 * HGG_UNRECORDED_SHARE of it (the gaps' rule); else its largest part that ran instead of the
 * thread (a handler, another task; not idle, the thread itself or an unknown task)
 */
static void blame(struct wake *x)
{
	int i = x->largest, k;

	x->blame[0] = 0;
	if (i < 0 || x->stage[i] <= 0)
		return;
	if (x->unrecorded_us[i] > HGG_UNRECORDED_SHARE * x->stage[i]) {
		snprintf(x->blame, sizeof(x->blame), "nothing recorded for %.1f of its %.1f us", x->unrecorded_us[i],
			 x->stage[i]);
		return;
	}
	for (k = 0; k < x->npart[i]; k++) {
		const char *w = x->part[i][k].what;

		if (strcmp(w, "nothing recorded") && strcmp(w, "idle") && strcmp(w, "unknown task") &&
		    !strstr(w, " in the kernel") && !strstr(w, "'s turn")) {
			snprintf(x->blame, sizeof(x->blame), "%s", w);
			return;
		}
	}
}

static void wake(struct latency *l, const struct window *w)
{
	struct run *r = l->r;
	struct lat_thread *th = &l->th[w->thread];
	struct wake x = { .t = t_of(r, (int64_t)w->rec.t0), .cpu = w->cpu, .thread = w->thread, .largest = -1 };
	int64_t intended = (int64_t)w->rec.t0, user = (int64_t)w->rec.t1, v[NSTAGE], b0[NSTAGE];
	int i, n = 0;

	x.latency_us = us_of(r, (double)(user - intended));
	x.lateness_us = (double)(int64_t)w->rec.t2 / 1e3;
	if (w->has_irq) {
		x.known[0] = 1;
		b0[0] = intended;
		v[0] = w->irq - intended;
	}
	if (w->has_irq && w->has_woken && w->woken >= w->irq) {
		x.known[1] = 1;
		b0[1] = w->irq;
		v[1] = w->woken - w->irq;
	}
	if (w->has_woken && w->has_in && w->in >= w->woken) {
		x.known[2] = 1;
		b0[2] = w->woken;
		v[2] = w->in - w->woken;
	}
	if (w->has_in) {
		x.known[3] = 1;
		b0[3] = w->in;
		v[3] = user - w->in;
	}
	for (i = 0; i < NSTAGE; i++) {
		if (!x.known[i])
			continue;
		n++;
		x.stage[i] = us_of(r, (double)v[i]);
		quant_add(&th->stage[i], v[i]);
		stage_parts(l, w, &x, i, b0[i], b0[i] + v[i]);
		if (x.largest < 0 || x.stage[i] > x.stage[x.largest])
			x.largest = i;
	}
	/* what the largest stage went to: a stage is blamed on what ran during it */
	blame(&x);
	th->wakeups++;
	th->decomposed += n == NSTAGE;
	quant_add(&th->total, user - intended);
	loghist_add(&th->hist, x.latency_us);
	/* the five worst, largest first */
	for (i = th->nworst; i > 0 && th->worst[i - 1].latency_us < x.latency_us; i--)
		if (i < WORST)
			th->worst[i] = th->worst[i - 1];
	if (i < WORST) {
		th->worst[i] = x;
		if (th->nworst < WORST)
			th->nworst++;
	}
	if (!l->have_worst || x.latency_us > l->worst.latency_us) {
		l->worst = x;
		l->have_worst = 1;
	}
}

static void miss(struct latency *l, const struct window *w)
{
	struct run *r = l->r;
	struct jsonw j;
	char name[96];
	double ran = 0;
	int i, n = 0;

	if (!l->miss)
		l->miss = tmp_stream(l->tmpdir);
	for (i = 0; i < w->ncomp; i++)
		if (w->comp[i].kind == HGG_K_SELF || (w->comp[i].kind == HGG_K_TASK && (uint32_t)w->comp[i].id == w->tid))
			ran += (double)w->comp[i].cycles;
	jw_begin(&j, l->miss);
	jw_obj(&j, NULL);
	jw_int(&j, "thread", w->thread);
	jw_numf(&j, "t", t_of(r, w->g0), 6);
	jw_uint(&j, "cpu", w->cpu);
	jw_numf(&j, "period_ms", us_of(r, (double)(w->g1 - w->g0)) / 1e3, 4);
	jw_numf(&j, "thread_ran_ms", us_of(r, ran) / 1e3, 4);
	jw_arr(&j, "instead");
	for (i = 0; i < w->ncomp && n < 4; i++) {
		if (not_instead(w, &w->comp[i]))
			continue;
		jw_obj(&j, NULL);
		jw_str(&j, "what", names_comp(w->comp[i].kind, w->comp[i].id, name, sizeof(name)));
		jw_numf(&j, "ms", us_of(r, (double)w->comp[i].cycles) / 1e3, 4);
		jw_end_obj(&j);
		n++;
	}
	jw_end_arr(&j);
	jw_end_obj(&j);
	l->nmiss++;
}

out_of_line void latency_window(struct latency *l, const struct window *w)
{
	if (w->kind == 1)
		wake(l, w);
	else
		miss(l, w);
}

static void put_wake(struct latency *l, struct jsonw *w, const char *key, const struct wake *x, int with_thread)
{
	int i;

	jw_obj(w, key);
	if (with_thread) {
		jw_int(w, "thread", x->thread);
		jw_str(w, "name", l->r->th[x->thread].name);
	}
	jw_numf(w, "t", x->t, 6);
	jw_uint(w, "cpu", x->cpu);
	jw_numf(w, "latency_us", x->latency_us, 3);
	jw_numf(w, "hourglass_lateness_us", x->lateness_us, 3);
	jw_obj(w, "stages_us");
	for (i = 0; i < NSTAGE; i++)
		if (x->known[i])
			jw_numf(w, stage_name[i], x->stage[i], 3);
		else
			jw_null(w, stage_name[i]);
	jw_end_obj(w);
	jw_str(w, "largest_stage", x->largest >= 0 ? stage_name[x->largest] : NULL);
	jw_str(w, "blame", x->blame[0] ? x->blame : NULL);
	/* report 2.6: each stage's parts, largest first, and its time with nothing recorded */
	jw_obj(w, "stage_parts");
	for (i = 0; i < NSTAGE; i++) {
		int k;

		if (!x->known[i]) {
			jw_null(w, stage_name[i]);
			continue;
		}
		jw_obj(w, stage_name[i]);
		jw_numf(w, "unrecorded_us", x->unrecorded_us[i], 3);
		jw_arr(w, "parts");
		for (k = 0; k < x->npart[i]; k++) {
			jw_obj(w, NULL);
			jw_str(w, "what", x->part[i][k].what);
			jw_numf(w, "us", x->part[i][k].us, 3);
			jw_end_obj(w);
		}
		jw_end_arr(w);
		jw_end_obj(w);
	}
	jw_end_obj(w);
	jw_bool(w, "complete", x->known[0] && x->known[1] && x->known[2] && x->known[3]);
	jw_end_obj(w);
}

static void put_stats(struct latency *l, struct jsonw *w, const char *key, struct quant *q)
{
	jw_obj(w, key);
	jw_numf(w, "min_us", us_of(l->r, (double)q->min), 3);
	jw_numf(w, "median_us", us_of(l->r, quant_median(q)), 3);
	jw_numf(w, "avg_us", us_of(l->r, quant_mean(q)), 3);
	jw_numf(w, "p99_us", us_of(l->r, quant_at(q, 0.99)), 3);
	jw_numf(w, "max_us", us_of(l->r, (double)q->max), 3);
	jw_end_obj(w);
}

static void put_cdf(struct latency *l, struct jsonw *w, struct quant *q)
{
	uint64_t i, n = q->n < CDF_POINTS ? q->n : CDF_POINTS;

	jw_arr(w, "cdf");
	for (i = 1; i <= n; i++) {
		double frac = (double)i / (double)n;

		jw_arr(w, NULL);
		/* the value below which a fraction frac of the wake-ups lie */
		jw_numf(w, NULL, us_of(l->r, quant_at(q, frac - 0.5 / (double)q->n)), 3);
		jw_numf(w, NULL, frac, 4);
		jw_end_arr(w);
	}
	jw_end_arr(w);
}

void latency_report(struct latency *l, struct jsonw *w)
{
	struct run *r = l->r;
	int k, i, any = 0;
	char key[16];

	for (k = 0; k < r->nthreads; k++)
		any |= l->th[k].wakeups > 0;
	if (!any) {
		jw_null(w, "latency");
	} else {
		jw_obj(w, "latency");
		jw_arr(w, "stages");	/* report 2.1: the stages' names, in the order they happen */
		for (i = 0; i < NSTAGE; i++)
			jw_str(w, NULL, stage_name[i]);
		jw_end_arr(w);
		jw_obj(w, "threads");
		for (k = 0; k < r->nthreads; k++) {
			struct lat_thread *th = &l->th[k];

			if (!th->wakeups)
				continue;
			snprintf(key, sizeof(key), "%d", k);
			jw_obj(w, key);
			jw_str(w, "name", r->th[k].name);
			jw_uint(w, "wakeups", th->wakeups);
			jw_uint(w, "decomposed", th->decomposed);
			for (i = 0; i < NSTAGE; i++)
				if (th->stage[i].n)
					put_stats(l, w, stage_name[i], &th->stage[i]);
				else
					jw_null(w, stage_name[i]);
			put_stats(l, w, "latency", &th->total);
			jw_arr(w, "worst");
			for (i = 0; i < th->nworst; i++)
				put_wake(l, w, NULL, &th->worst[i], 0);
			jw_end_arr(w);
			loghist_write(&th->hist, w, "hist");
			put_cdf(l, w, &th->total);
			jw_end_obj(w);
		}
		jw_end_obj(w);
		put_wake(l, w, "worst", &l->worst, 1);
		jw_end_obj(w);
	}
	jw_obj(w, "missed_deadlines");
	jw_uint(w, "count", l->nmiss);
	jw_arr(w, "listed");
	if (l->miss) {
		char *line = NULL;
		size_t cap = 0;
		ssize_t n;

		rewind(l->miss);
		while ((n = getline(&line, &cap, l->miss)) > 0) {
			if (line[n - 1] == '\n')
				line[--n] = 0;
			if (n)
				jw_raw(w, NULL, line, (size_t)n);
		}
		free(line);
	}
	jw_end_arr(w);
	jw_end_obj(w);
}

int latency_summary(struct latency *l, char *line, size_t len)
{
	const struct wake *x = &l->worst;

	if (!l->have_worst)
		return 0;
	snprintf(line, len, "worst wake-up latency: %.1f us at t=%.6f s on CPU %u (%s), largest stage %s%s%s",
		 x->latency_us, x->t, x->cpu, l->r->th[x->thread].name,
		 x->largest >= 0 ? stage_name[x->largest] : "unknown", x->blame[0] ? ", blamed on " : "", x->blame);
	return 1;
}

void latency_free(struct latency *l)
{
	int k, i;

	if (!l)
		return;
	for (k = 0; k < l->r->nthreads; k++) {
		for (i = 0; i < NSTAGE; i++)
			quant_free(&l->th[k].stage[i]);
		quant_free(&l->th[k].total);
	}
	free(l->th);
	if (l->miss)
		fclose(l->miss);
	free(l);
}

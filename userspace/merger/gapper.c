// SPDX-License-Identifier: GPL-2.0
/*
 * gapper.c - the paper's gaps, from hourglass's stream of interval starts
 * and ends: on each CPU, the stretch between one interval's end and the
 * next interval's start (of the same thread or another). No hourglass
 * thread ran between; each CPU's gaps come in time order.
 *
 * Two intervals on one CPU at once mean rdtscp's CPU numbers are wrong:
 * counted and warned, and no gap is made between them. One thread's
 * intervals overlapping each other is a corrupt trace.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

void gapper_init(struct gapper *gp, struct run *r)
{
	memset(gp, 0, sizeof(*gp));
	gp->r = r;
	gp->th = xcalloc(r->nthreads + 1, sizeof(*gp->th));
}

void gapper_free(struct gapper *gp)
{
	free(gp->cpu);
	free(gp->th);
}

static cold_path struct gp_cpu *cpu_add(struct gapper *gp, uint32_t cpu)
{
	if (cpu >= gp->ncpu) {
		uint32_t n = cpu + 1;

		gp->cpu = xrealloc(gp->cpu, n * sizeof(*gp->cpu));
		memset(gp->cpu + gp->ncpu, 0, (n - gp->ncpu) * sizeof(*gp->cpu));
		gp->ncpu = n;
	}
	return &gp->cpu[cpu];
}

/* cpu_of - @cpu's gaps, the table grown the first time; inline: asked for every event */
static inline struct gp_cpu *cpu_of(struct gapper *gp, uint32_t cpu)
{
	return likely(cpu < gp->ncpu) ? &gp->cpu[cpu] : cpu_add(gp, cpu);
}

static uint8_t vol_of(const struct hgl_rec *iv)
{
	return iv->flags & HGL_IV_YIELD ? 1 : iv->flags & HGL_IV_SLEEP ? 2 : 0;
}

int gapper_event(struct gapper *gp, const struct hg_ev *ev, struct gapdef *g, int *migrated, int64_t *mig_t1)
{
	const struct hgl_rec *b = &ev->rec;
	struct gp_cpu *c;
	struct gp_thread *t;
	int made = 0;

	if (ev->kind == HGE_END) {
		c = cpu_of(gp, b->cpu);
		/* an interval that another one on this CPU already superseded opens nothing */
		if (!c->have || c->seq != ev->seq)
			return 0;
		*g = (struct gapdef){ .g0 = (int64_t)b->t1, .cpu = b->cpu, .thread = b->thread, .vol = vol_of(b) };
		return 2;
	}
	if (ev->kind != HGE_START)
		return 0;
	t = &gp->th[b->thread];
	if (t->have && (int64_t)b->t0 < t->t1)
		fail("%s: thread %u: intervals overlap at TSC %lld", hgl_path(gp->r->hgl), b->thread,
		     (long long)b->t0);
	*migrated = t->have && t->cpu != b->cpu;
	*mig_t1 = t->t1;
	t->have = 1;
	t->cpu = b->cpu;
	t->t1 = (int64_t)b->t1;

	c = cpu_of(gp, b->cpu);
	if (c->have) {
		const struct hgl_rec *a = &c->cur;

		if ((int64_t)b->t0 < (int64_t)a->t1) {
			if (!gp->overlaps++) {
				gp->overlap_a = *a;
				gp->overlap_b = *b;
			}
		} else {
			g->g0 = (int64_t)a->t1;
			g->g1 = (int64_t)b->t0;
			g->cpu = b->cpu;
			g->thread = a->thread;
			g->next_thread = b->thread;
			g->vol = vol_of(a);
			made = 1;
		}
	}
	c->have = 1;
	c->seq = ev->seq;
	c->cur = *b;
	return made;
}

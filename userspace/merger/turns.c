// SPDX-License-Identifier: GPL-2.0
/*
 * turns.c - do the recording's vCPUs take turns on one host thread?
 *
 * Under QEMU's single-threaded emulation (round-robin TCG, the project's
 * guests) only one vCPU runs at a time: while one runs, the others are
 * frozen, and each vCPU's time is also the others' steal. Then an event
 * another CPU recorded inside a stretch of this CPU's says this one was not
 * running then, and the merger charges that part of the stretch to the
 * other CPU's turn (sweep.c). On a machine whose CPUs run at once the same
 * events say nothing of the kind, so this is decided first, from the
 * recording itself: a CPU's kernel events that fall while hourglass runs in
 * user space on another CPU. Where CPUs run at once, those events fall
 * inside hourglass's intervals there as often as the intervals fill its
 * time; where they take turns, never (an interval is a stretch in which
 * that CPU ran without a pause longer than hourglass's gap threshold).
 *
 * One pass over the start of both timelines, until the count expected
 * inside is large enough to decide (TURNS_ENOUGH) or TURNS_MAX_EVENTS kernel
 * events were read: the decision costs a small fixed part of the merge.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "hg_jsonw.h"

#define TURNS_MAX_EVENTS	(1u << 20)	/* kernel events read at most */
#define TURNS_ENOUGH		400.0	/* expected inside: decided once this many */
#define TURNS_MIN_EXPECTED	40.0	/* ... and undecided (no turns) with fewer at the end */
#define TURNS_SHARE		0.1	/* turns: fewer inside than this share of the expected */

struct tcpu {
	int tracked, in;		/* hourglass ran here; an interval is open now */
	int64_t since, iv, span;	/* last change, time in intervals, time tracked */
	uint64_t tested, inside;
};

struct tstate {
	struct tcpu *c;
	uint32_t n;
	struct cpu_list tracked;
};

static struct tcpu *tcpu_of(struct tstate *t, uint32_t cpu)
{
	if (cpu >= t->n) {
		uint32_t n = cpu + 1;

		t->c = xrealloc(t->c, n * sizeof(*t->c));
		memset(t->c + t->n, 0, (n - t->n) * sizeof(*t->c));
		t->n = n;
	}
	return &t->c[cpu];
}

/* settle - @c's time up to @now counted: in an interval or not */
static void settle(struct tcpu *c, int64_t now)
{
	if (now > c->since) {
		c->span += now - c->since;
		if (c->in)
			c->iv += now - c->since;
		c->since = now;
	}
}

static double expected(struct tstate *t, int64_t now)
{
	double e = 0;
	uint32_t i;

	for (i = 0; i < t->tracked.n; i++) {
		struct tcpu *c = &t->c[t->tracked.v[i]];

		settle(c, now);
		if (c->span > 0)
			e += (double)c->tested * (double)c->iv / (double)c->span;
	}
	return e;
}

void turns_detect(struct run *r)
{
	struct vcpu_turns *v = &r->vcpu_turns;
	struct tstate t = { 0 };
	struct hgside *hs;
	struct kstream *ks;
	uint64_t nk = 0;
	int64_t now = 0;
	double e = 0;
	uint32_t i;

	memset(v, 0, sizeof(*v));
	if (!r->hgt)
		return;
	hs = hgside_open(r, NULL, NULL);
	ks = kstream_open(r);
	while (nk < TURNS_MAX_EVENTS) {
		int64_t th = hgside_peek(hs), tk = kstream_peek(ks);
		struct hg_ev ev;

		if (th == INT64_MAX && tk == INT64_MAX)
			break;
		if (tk <= th) {		/* the kernel's first at a tie, as the merge's pass */
			const struct hgt_rec *rec = NULL;
			uint32_t cpu = 0;

			if (!kstream_next(ks, &cpu, &rec))
				break;
			now = tk;
			if (rec->type == HGT_REC_COMM || rec->type == HGT_REC_NAME || rec->type == HGT_REC_LOST)
				continue;
			for (i = 0; i < t.tracked.n; i++) {
				struct tcpu *c = &t.c[t.tracked.v[i]];

				if (t.tracked.v[i] == cpu)
					continue;
				c->tested++;
				c->inside += c->in > 0;
			}
			if (!(++nk & 4095) && (e = expected(&t, now)) >= TURNS_ENOUGH)
				break;
			continue;
		}
		hgside_next(hs, &ev);
		now = ev.t;
		if (ev.kind == HGE_START || ev.kind == HGE_END) {
			struct tcpu *c = tcpu_of(&t, ev.rec.cpu);

			if (!c->tracked) {
				c->tracked = 1;
				c->since = now;
				cpu_list_add(&t.tracked, ev.rec.cpu);
			}
			settle(c, now);
			c->in += ev.kind == HGE_START ? 1 : (c->in > 0 ? -1 : 0);
		}
	}
	e = expected(&t, now);
	for (i = 0; i < t.tracked.n; i++) {
		v->tested += t.c[t.tracked.v[i]].tested;
		v->inside += t.c[t.tracked.v[i]].inside;
	}
	v->expected = e;
	v->decided = e >= TURNS_MIN_EXPECTED;
	v->detected = v->decided && (double)v->inside < TURNS_SHARE * e;
	kstream_close(ks);
	hgside_close(hs);
	cpu_list_free(&t.tracked);
	free(t.c);
}

/* turns_report - what the decision rests on, for the report ("vcpu_turns") */
void turns_report(const struct run *r, struct jsonw *w)
{
	const struct vcpu_turns *v = &r->vcpu_turns;

	jw_obj(w, "vcpu_turns");
	jw_bool(w, "detected", v->detected);
	jw_bool(w, "decided", v->decided);
	jw_uint(w, "events_tested", v->tested);
	jw_uint(w, "inside_intervals", v->inside);
	jw_numf(w, "expected_inside", v->expected, 1);
	jw_end_obj(w);
}

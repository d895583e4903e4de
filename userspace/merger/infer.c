// SPDX-License-Identifier: GPL-2.0
/*
 * infer.c - the paper's gray-box inferences (sections 4 and 7), from
 * hourglass's own data only: its intervals, their CPUs, and what each
 * thread was configured to do. Nothing here reads the kernel's recording.
 *
 * For each gap the thread did not ask for, in order:
 *  1. the next thread is another one: a context switch between hourglass
 *     threads (switch_hg). Not statistical.
 *  2. its start recurs with the period of the clock tick (timer). The
 *     period (HZ 1000, 500, 300, 250, 100) is found per CPU from the run's
 *     first gaps: the candidate whose recurrences most exceed chance,
 *     searched above length floors of 0, 0.5, 1 ... 32 us and kept at the
 *     floor where it recurs most cleanly (under an emulator thousands of
 *     short gaps would drown it; a floor above the tick's own cost loses
 *     ticks). A gap is the tick when it is above that floor and another
 *     gap above it starts one period before or after.
 *  2b. shorter than half the cheapest tick (the 10th percentile of rule 2's
 *     gaps): no kernel entry is that fast, the time went below the kernel
 *     (hidden). Only when a tick was found.
 *  3. the thread is the highest-priority real-time thread on its CPUs and
 *     never blocks: only interrupts and bottom halves can stop it.
 *  4. by length: longer than two switches at the fastest rule 1 saw,
 *     another task ran (switch_other); shorter, an interrupt. Without
 *     switches, 3x the median tick gap, or 50 us.
 *
 * Calibration is one pass over hourglass's trace: the tick of each CPU from
 * its first gaps, then the lengths of every gap rule 2 calls the tick. Rule 2
 * needs the gaps that follow the one decided, up to one period past its
 * end: a gap is decided once the stream has been read that far
 * (infer_ready); the calibration's candidates and the merge's judged gaps
 * wait until then, in order.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "hg_jsonw.h"

static const double tick_ms[] = { 1.0, 2.0, 1000.0 / 300, 4.0, 10.0 };	/* HZ 1000, 500, 300, 250, 100 */
static const double floors_us[] = { 0, 0.5, 1, 2, 4, 8, 16, 32 };
#define NTICKS (sizeof(tick_ms) / sizeof(tick_ms[0]))
#define NFLOORS (sizeof(floors_us) / sizeof(floors_us[0]))
#define TICK_SAMPLE 20000	/* gaps per CPU the tick is found on: a stretch of the run's start */

static const char *const basis_text[] = {
	"two switches at the fastest seen", "3x the median tick gap",
	"50 us (no switch or tick to calibrate on)",
};

/* one CPU's tick: its calibration, and the gap starts rule 2 looks for */
struct tick {
	int have;			/* the CPU has involuntary gaps */
	int calibrated;
	double p, tol, score, floor;	/* p 0: none found */
	double reach;			/* how far past a gap's end rule 2 must see */
	int64_t *sample;		/* calibration: the first involuntary gaps (g0, length, flags) */
	uint8_t *sflag;
	size_t nsample;
	int64_t *s;			/* starts of involuntary gaps above the floor, in order */
	size_t head, n, cap;		/* live: s[head .. n) */
	int open, open_vol;		/* the gap open on the CPU now */
	int64_t open_start;
	/* calibration's gaps waiting for a decision (rule 2 sees up to reach past their end) */
	int64_t *wait;			/* (g0, g1) pairs */
	size_t whead, wn, wcap;
};

#define S_CANDIDATE 1			/* neither voluntary nor a switch: rule 2 applies */

struct infer {
	struct run *r;
	struct tick *tick;		/* per CPU */
	uint32_t ncpu;
	int *top_rt;			/* per thread: rule 3 applies */
	double switch_limit, hidden_limit;
	int basis;
	uint64_t switch_gaps, tick_gaps;
	int64_t min_switch;
	int64_t now;			/* hourglass's stream has been read up to here */
	int ended;
	/* per thread, for sbf.c: first start, last end, intervals */
	int64_t *first, *last;
	uint64_t *nint;
};

static struct tick *tick_of(struct infer *in, uint32_t cpu)
{
	if (cpu >= in->ncpu) {
		uint32_t n = cpu + 1;

		in->tick = xrealloc(in->tick, n * sizeof(*in->tick));
		memset(in->tick + in->ncpu, 0, (n - in->ncpu) * sizeof(*in->tick));
		in->ncpu = n;
	}
	return &in->tick[cpu];
}

/* near - is there a start in [t - tol, t + tol]? (@s sorted) */
static int near(const int64_t *s, size_t n, double t, double tol)
{
	double lo = t - tol;
	size_t a = 0, b = n;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if ((double)s[m] < lo)
			a = m + 1;
		else
			b = m;
	}
	return a < n && (double)s[a] <= t + tol;
}

/* find_tick - the clock tick's period from gap starts that recur (the candidate most above chance) */
static void find_tick(const int64_t *s, size_t n, double hz, double *p_out, double *tol_out, double *score_out)
{
	double best_p = 0, best_tol = 0, best = 0;
	size_t c, i;

	*p_out = 0;
	*tol_out = 0;
	*score_out = 0;
	if (n < 20)
		return;
	for (c = 0; c < NTICKS; c++) {
		double p = tick_ms[c] * 1e-3 * hz;
		double tol = fmax(10e-6 * hz, 0.005 * p);
		long hit = 0, ctrl = 0;
		double score;

		for (i = 0; i < n; i++) {
			hit += near(s, n, (double)s[i] + p, tol);
			/* a period of 1.37 candidates is chance: no kernel ticks at it */
			ctrl += near(s, n, (double)s[i] + 1.37 * p, tol);
		}
		score = (double)(hit - ctrl) / (double)n;
		/* a real tick recurs far above chance; the longest such period wins ties
		 * (a 1 ms grid also matches at 2 and 4 ms) */
		if (score > 0.1 && hit > 2 * (ctrl > 1 ? ctrl : 1) && score > best * 1.2) {
			best_p = p;
			best_tol = tol;
			best = score;
		}
	}
	*p_out = best_p;
	*tol_out = best_tol;
	*score_out = best;
}

static void push_start(struct tick *t, int64_t s)
{
	if (t->n == t->cap) {
		if (t->head > t->cap / 2) {	/* reuse the room dropped at the front */
			memmove(t->s, t->s + t->head, (t->n - t->head) * sizeof(*t->s));
			t->n -= t->head;
			t->head = 0;
		} else {
			t->cap = t->cap ? 2 * t->cap : 64;
			t->s = xrealloc(t->s, t->cap * sizeof(*t->s));
		}
	}
	t->s[t->n++] = s;
}

static void push_wait(struct tick *t, int64_t g0, int64_t g1)
{
	if (t->wn == t->wcap) {
		if (t->whead > t->wcap / 2) {
			memmove(t->wait, t->wait + 2 * t->whead, 2 * (t->wn - t->whead) * sizeof(*t->wait));
			t->wn -= t->whead;
			t->whead = 0;
		} else {
			t->wcap = t->wcap ? 2 * t->wcap : 64;
			t->wait = xrealloc(t->wait, 2 * t->wcap * sizeof(*t->wait));
		}
	}
	t->wait[2 * t->wn] = g0;
	t->wait[2 * t->wn + 1] = g1;
	t->wn++;
}

/*
 * calibrate - one CPU's tick from its sample: the floor at which it recurs
 * most cleanly. Then the sample's gaps above that floor become the first
 * starts rule 2 looks for, and its candidates wait for their decision.
 */
static void calibrate(struct infer *in, struct tick *t)
{
	int64_t *starts = xcalloc(t->nsample + 1, sizeof(*starts));
	size_t seen[NFLOORS], nseen = 0, f, i, ns;
	double hz = in->r->hz;

	t->p = t->tol = t->score = t->floor = 0;
	for (f = 0; f < NFLOORS; f++) {
		double floor = floors_us[f] * 1e-6 * hz, p, tol, score;
		int dup = 0;

		for (ns = 0, i = 0; i < t->nsample; i++)
			if ((double)t->sample[2 * i + 1] >= floor)
				starts[ns++] = t->sample[2 * i];
		for (i = 0; i < nseen; i++)
			dup |= seen[i] == ns;
		if (dup)		/* no gap between the two floors: the same answer */
			continue;
		seen[nseen++] = ns;
		if (ns < 20)		/* higher floors hold fewer still */
			break;
		find_tick(starts, ns, hz, &p, &tol, &score);
		if (p != 0 && score > t->score) {
			t->p = p;
			t->tol = tol;
			t->score = score;
			t->floor = floor;
		}
	}
	free(starts);
	t->reach = t->p ? t->p + t->tol + t->floor + 1 : 0;
	t->calibrated = 1;
	for (i = 0; i < t->nsample; i++) {
		if ((double)t->sample[2 * i + 1] >= t->floor)
			push_start(t, t->sample[2 * i]);
		if (t->sflag[i] & S_CANDIDATE)
			push_wait(t, t->sample[2 * i], t->sample[2 * i] + t->sample[2 * i + 1]);
	}
	free(t->sample);
	free(t->sflag);
	t->sample = NULL;
	t->sflag = NULL;
}

/* near_start - does an involuntary gap above the floor start in [x - tol, x + tol]? */
static int near_start(struct infer *in, struct tick *t, double x, double tol)
{
	if (near(t->s + t->head, t->n - t->head, x, tol))
		return 1;
	/* the gap open now: long enough by now? (at the end, an open gap has no next interval:
	 * it is no gap at all) */
	return t->open && !t->open_vol && !in->ended && (double)(in->now - t->open_start) >= t->floor &&
	       fabs((double)t->open_start - x) <= tol;
}

/* tick_test - rule 2 for a candidate gap; the stream must have been read to its end + reach */
static int tick_test(struct infer *in, struct tick *t, int64_t g0, int64_t g1)
{
	if (t->p == 0 || (double)(g1 - g0) < t->floor)
		return 0;
	/* the decisions of a CPU come in time order: starts before the reach back are done with */
	while (t->head < t->n && (double)t->s[t->head] < (double)g0 - t->p - t->tol - 1)
		t->head++;
	return near_start(in, t, (double)g0 + t->p, t->tol) || near_start(in, t, (double)g0 - t->p, t->tol);
}

static int ready(const struct infer *in, const struct tick *t, int64_t g1)
{
	return in->ended || (double)in->now >= (double)g1 + t->reach;
}

void infer_seen(struct infer *in, const struct hg_ev *ev, int made, const struct gapdef *g)
{
	struct tick *t;

	in->now = ev->t;
	if (made == 2) {
		t = tick_of(in, g->cpu);
		t->open = 1;
		t->open_start = g->g0;
		t->open_vol = g->vol;
	} else if (made == 1) {
		t = tick_of(in, g->cpu);
		t->open = 0;
		if (t->calibrated && !g->vol && (double)(g->g1 - g->g0) >= t->floor)
			push_start(t, g->g0);
	}
}

void infer_end(struct infer *in)
{
	in->ended = 1;
}

int infer_ready(struct infer *in, const struct hgg_gap *g)
{
	struct tick *t = tick_of(in, g->cpu);

	if (g->vol || g->next_thread != g->thread || !t->p || (double)(g->g1 - g->g0) < t->floor)
		return 1;
	return ready(in, t, (int64_t)g->g1);
}

/* drain_calibration - decide the waiting candidates whose reach the stream has passed */
static void drain_calibration(struct infer *in, struct quant *ticks)
{
	uint32_t c;

	for (c = 0; c < in->ncpu; c++) {
		struct tick *t = &in->tick[c];

		while (t->whead < t->wn && ready(in, t, t->wait[2 * t->whead + 1])) {
			int64_t g0 = t->wait[2 * t->whead], g1 = t->wait[2 * t->whead + 1];

			if (tick_test(in, t, g0, g1))
				quant_add(ticks, g1 - g0);
			t->whead++;
		}
	}
}

static int is_rt(const struct hgl_thread *t)
{
	return !strcmp(t->policy, "fifo") || !strcmp(t->policy, "rr");
}

/* rule 3: the highest-priority real-time CPU-bound thread on every CPU it used */
static void find_top_rt(struct infer *in, unsigned char **on, uint32_t ncpu_on)
{
	struct run *r = in->r;
	int k, j;
	uint32_t c;

	for (k = 0; k < r->nthreads; k++) {
		const struct hgl_thread *t = &r->info->threads[k];

		in->top_rt[k] = is_rt(t) && r->th[k].cpu_workload;
		for (j = 0; j < r->nthreads && in->top_rt[k]; j++) {
			const struct hgl_thread *o = &r->info->threads[j];

			if (j == k || !is_rt(o) || o->priority < t->priority)
				continue;
			for (c = 0; c < ncpu_on; c++)
				if (on[j][c] && on[k][c])
					in->top_rt[k] = 0;
		}
	}
}

/*
 * calibration_pass - one pass over hourglass's stream: the first gaps of each CPU
 * (its tick, once TICK_SAMPLE of them are in), switches, where each thread ran;
 * then rule 2 over every candidate, for the lengths of the tick's gaps.
 */
static void calibration_pass(struct infer *in, unsigned char **on, uint32_t *ncpu_on, struct quant *ticks)
{
	struct run *r = in->r;
	struct hgside *hs = hgside_open(r, NULL, NULL);
	struct gapper gp;
	struct hg_ev ev;
	struct gapdef g;
	int mig, made;
	int64_t mt1;
	uint32_t c;

	gapper_init(&gp, r);
	while (hgside_next(hs, &ev)) {
		made = gapper_event(&gp, &ev, &g, &mig, &mt1);
		infer_seen(in, &ev, made, &g);
		if (ev.kind == HGE_START) {
			int k = ev.rec.thread;

			c = ev.rec.cpu;
			if (c >= *ncpu_on) {
				uint32_t n = c + 1, t;

				for (t = 0; t < (uint32_t)r->nthreads; t++) {
					on[t] = xrealloc(on[t], n);
					memset(on[t] + *ncpu_on, 0, n - *ncpu_on);
				}
				*ncpu_on = n;
			}
			on[k][c] = 1;
			if (!in->nint[k]++)
				in->first[k] = (int64_t)ev.rec.t0;
			in->last[k] = (int64_t)ev.rec.t1;
		}
		if (made == 1 && !g.vol) {
			struct tick *t = tick_of(in, g.cpu);
			int cand = g.next_thread == g.thread;

			if (!cand && (!in->switch_gaps++ || g.g1 - g.g0 < in->min_switch))
				in->min_switch = g.g1 - g.g0;
			t->have = 1;
			if (!t->calibrated) {
				/* the tick is searched among every involuntary gap, switches included */
				if (!t->sample) {
					t->sample = xcalloc(2 * TICK_SAMPLE, sizeof(*t->sample));
					t->sflag = xcalloc(TICK_SAMPLE, 1);
				}
				t->sample[2 * t->nsample] = g.g0;
				t->sample[2 * t->nsample + 1] = g.g1 - g.g0;
				t->sflag[t->nsample++] = cand ? S_CANDIDATE : 0;
				if (t->nsample == TICK_SAMPLE)
					calibrate(in, t);
			} else if (cand) {
				push_wait(t, g.g0, g.g1);
			}
		}
		if (made)
			drain_calibration(in, ticks);
	}
	infer_end(in);
	for (c = 0; c < in->ncpu; c++)
		if (in->tick[c].have && !in->tick[c].calibrated)
			calibrate(in, &in->tick[c]);
	drain_calibration(in, ticks);
	gapper_free(&gp);
	hgside_close(hs);
}

struct infer *infer_calibrate(struct run *r)
{
	struct infer *in = xcalloc(1, sizeof(*in));
	unsigned char **on = xcalloc(r->nthreads + 1, sizeof(*on));
	uint32_t ncpu_on = 0, c;
	struct quant ticks = { 0 };
	int k;

	in->r = r;
	in->top_rt = xcalloc(r->nthreads + 1, sizeof(*in->top_rt));
	in->first = xcalloc(r->nthreads + 1, sizeof(*in->first));
	in->last = xcalloc(r->nthreads + 1, sizeof(*in->last));
	in->nint = xcalloc(r->nthreads + 1, sizeof(*in->nint));
	calibration_pass(in, on, &ncpu_on, &ticks);
	find_top_rt(in, on, ncpu_on);
	for (k = 0; k < r->nthreads; k++)
		free(on[k]);
	free(on);
	in->tick_gaps = ticks.n;
	in->hidden_limit = ticks.n >= 10 ? quant_at(&ticks, 0.1) / 2 : 0;
	if (in->switch_gaps) {
		in->switch_limit = 2.0 * (double)in->min_switch;
		in->basis = 0;
	} else if (ticks.n) {
		in->switch_limit = 3 * quant_median(&ticks);
		in->basis = 1;
	} else {
		in->switch_limit = 50e-6 * r->hz;
		in->basis = 2;
	}
	quant_free(&ticks);
	/* the decision pass starts its starts anew, from the same stream */
	for (c = 0; c < in->ncpu; c++) {
		in->tick[c].head = in->tick[c].n = 0;
		in->tick[c].whead = in->tick[c].wn = 0;
		in->tick[c].open = 0;
	}
	in->ended = 0;
	in->now = INT64_MIN;
	return in;
}

void infer_decide(struct infer *in, struct hgg_gap *g)
{
	double len = (double)(g->g1 - g->g0);

	if (g->vol) {
		g->inferred = HGG_C_VOLUNTARY;
		g->rule = HGG_R_VOLUNTARY;
	} else if (g->next_thread != g->thread) {
		g->inferred = HGG_C_SWITCH_HG;
		g->rule = HGG_R_SWITCH;
	} else if (tick_test(in, tick_of(in, g->cpu), (int64_t)g->g0, (int64_t)g->g1)) {
		g->inferred = HGG_C_TIMER;
		g->rule = HGG_R_TICK;
	} else if (len < in->hidden_limit) {
		g->inferred = HGG_C_HIDDEN;
		g->rule = HGG_R_HIDDEN;
	} else if (in->top_rt[g->thread]) {
		g->inferred = HGG_C_INTERRUPT;
		g->rule = HGG_R_TOP_RT;
	} else if (len < in->switch_limit) {
		g->inferred = HGG_C_INTERRUPT;
		g->rule = HGG_R_SHORT;
	} else {
		g->inferred = HGG_C_SWITCH_OTHER;
		g->rule = HGG_R_LONG;
	}
}

const char *infer_why(struct infer *in, const struct hgg_gap *g, char *buf, size_t len)
{
	double hz = in->r->hz;
	struct tick *tk;

	switch (g->rule) {
	case HGG_R_VOLUNTARY:
		snprintf(buf, len, g->vol == 1 ? "the thread yielded (sched_yield)" : "the thread slept on its timer");
		break;
	case HGG_R_SWITCH:
		snprintf(buf, len, "%s stopped and %s started", in->r->th[g->thread].name,
			 in->r->th[g->next_thread].name);
		break;
	case HGG_R_TICK:
		tk = tick_of(in, g->cpu);
		snprintf(buf, len, "it recurs every %.3f ms, the tick found on CPU %u", tk->p / hz * 1e3, g->cpu);
		break;
	case HGG_R_HIDDEN:
		snprintf(buf, len, "shorter than %.2f us, half the cheapest tick: no kernel path is that fast",
			 in->hidden_limit / hz * 1e6);
		break;
	case HGG_R_TOP_RT:
		snprintf(buf, len, "the highest-priority real-time thread here never blocks: only interrupts stop it");
		break;
	case HGG_R_SHORT:
		snprintf(buf, len, "shorter than %.1f us (%s): cannot be a switch", in->switch_limit / hz * 1e6,
			 basis_text[in->basis]);
		break;
	default:
		snprintf(buf, len, "no hourglass thread ran, and longer than %.1f us (%s)", in->switch_limit / hz * 1e6,
			 basis_text[in->basis]);
	}
	return buf;
}

void infer_report(struct infer *in, struct run *r, struct jsonw *w)
{
	uint32_t c;
	char key[16];

	jw_obj(w, "calibration");
	jw_num(w, "switch_limit_us", in->switch_limit / r->hz * 1e6);
	jw_str(w, "switch_limit_basis", basis_text[in->basis]);
	jw_obj(w, "tick");
	for (c = 0; c < in->ncpu; c++) {
		struct tick *t = &in->tick[c];

		if (!t->have)
			continue;
		snprintf(key, sizeof(key), "%u", c);
		jw_obj(w, key);
		if (t->p)
			jw_num(w, "period_ms", t->p / r->hz * 1e3);
		else
			jw_null(w, "period_ms");
		jw_num(w, "score", t->score);
		jw_num(w, "floor_us", t->floor / r->hz * 1e6);
		jw_end_obj(w);
	}
	jw_end_obj(w);
	jw_num(w, "hidden_limit_us", in->hidden_limit / r->hz * 1e6);
	jw_uint(w, "switch_gaps", in->switch_gaps);
	jw_uint(w, "tick_gaps", in->tick_gaps);
	jw_end_obj(w);
}

void infer_thread_span(struct infer *in, int thread, int64_t *first, int64_t *last, uint64_t *n)
{
	*first = in->first[thread];
	*last = in->last[thread];
	*n = in->nint[thread];
}

void infer_free(struct infer *in)
{
	uint32_t c;

	if (!in)
		return;
	for (c = 0; c < in->ncpu; c++) {
		free(in->tick[c].sample);
		free(in->tick[c].sflag);
		free(in->tick[c].s);
		free(in->tick[c].wait);
	}
	free(in->tick);
	free(in->top_rt);
	free(in->first);
	free(in->last);
	free(in->nint);
	free(in);
}

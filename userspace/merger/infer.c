// SPDX-License-Identifier: GPL-2.0
/*
 * infer.c - the paper's gray-box inferences (sections 4 and 7), from
 * hourglass's own data only: its intervals, their CPUs, what each thread was
 * configured to do, and the kernel's settings it read (RT throttling, the
 * scheduler's features and base slice, from debugfs where it could).
 * Nothing here reads the kernel's recording.
 *
 * Calibration, per CPU, on the run's first gaps (TICK_SAMPLE of them):
 *  - the tick: its period p (HZ 1000, 500, 300, 250, 100) and its cost, the
 *    band of lengths its gaps have. Gap starts are tested for recurrence at
 *    each candidate period, against chance (a period of 1.37 p) and against
 *    a finer grid (p/2 .. p/5: a 2 kHz timer load recurs at every candidate),
 *    within length bands: each mode of the gap lengths, and every gap above
 *    a floor (under an emulator thousands of short gaps would drown the
 *    tick). The band where it recurs most cleanly is the tick's. With
 *    HRTICK (rule 2b) the scheduler also switches at its own timer, off the
 *    tick's phase: when no band recurs among every involuntary gap, the
 *    search is made again among the gaps the thread went on after.
 *  - the switch limit: the geometric middle between one tick (an interrupt
 *    entering and leaving the kernel) and two switches at the fastest seen
 *    between hourglass threads (out and back: the least a gap in which
 *    another task ran can cost); without switches, two switches are taken
 *    as three ticks. A band whose recurring gaps cost two switches or more
 *    is a load woken by its own timer, never the tick.
 *  - steal: when the CPUs running hourglass's threads never run at the same
 *    time, they take turns on one physical CPU (a VM whose vCPUs share a
 *    host CPU, a single-threaded emulator).
 *
 * Then, for each gap the thread did not ask for, the evidence together:
 *  1. the next thread is another one: a switch between hourglass threads.
 *  2. it starts one tick period after or before a gap of the tick's band
 *     AND its length lies in that band: the tick. At the tick's phase but
 *     longer, the tick did something more (a softirq, a preemption): it is
 *     judged by its length below.
 *  2b. with HRTICK on (kernel.sched_features), off the tick's phase,
 *     within the thread's slice of the CPU's last switch (in hourglass's
 *     running since) and no longer than the tick's band: the scheduler's own
 *     timer ending the slice, or its clock event firing with nothing to
 *     expire once that timer was cancelled. Features unknown: the tick is
 *     taken as the only timer, and the report says so.
 *  3. shorter than the cheapest system call hourglass measured: below any
 *     kernel path (hidden). Files without that measure: shorter than half
 *     the cheapest tick, and within rule 2b's slice, than half the cheapest
 *     timer (one that expires nothing, taken as a quarter of the tick). Or, when the CPUs
 *     take turns, another CPU ran hourglass for most of the gap: the time
 *     went to it (hidden, steal).
 *  4. the highest-priority real-time thread that never blocks: only
 *     interrupts stop it, unless the gap lasts as long as RT throttling
 *     holds real-time tasks back (sched_rt_period - sched_rt_runtime).
 *  5. by length: longer than the switch limit, another task ran; shorter,
 *     an interrupt.
 *
 * Calibration is one pass over hourglass's trace. Rule 2 needs the gaps
 * that follow the one decided, up to one period past its end: a gap is
 * decided once the stream has been read that far (infer_ready).
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
#define MODE_BINS_PER_OCTAVE 8
#define MODE_MIN_SHARE 0.03	/* a length mode holds at least this share of the sample */
#define BAND_WIDTH 1.6		/* a mode's band: its length / BAND_WIDTH .. x BAND_WIDTH */
#define STEAL_OVERLAP 0.02	/* CPUs that run hourglass together less than this take turns */
#define STEAL_COVER 0.9		/* ... and a gap another CPU ran through for this much is steal */
#define PHASE_PERIODS 3		/* rule 2 looks for the tick's gaps up to this many periods away */
#define OCCUPANCY_SLOTS 100000	/* slots occupancy() looks at, at most */
#define OCCUPIED 0.5		/* a tick's slots where hourglass ran hold its gaps this often at least */
#define WALK_SCORE 0.5		/* a tick found only past hidden periods recurs above chance this much */

static const char *const basis_text[] = {
	"between a tick and two switches at the fastest seen", "between a tick and three ticks (no switch seen)",
	"50 us (no switch or tick to calibrate on)", "given (a profile: hgmerge --limits)",
};
static const char *const hidden_basis_text[] = {
	"the cheapest system call hourglass measured", "half the cheapest tick",
	"no tick to calibrate on", "given (a profile: hgmerge --limits)",
};

/* one CPU's tick: its calibration, and the gaps of its band rule 2 looks for */
struct tick {
	int have;			/* the CPU has involuntary gaps */
	int calibrated;
	double p, tol, score;		/* p 0: none found */
	int steps;			/* its gaps were found recurring this many periods apart at most */
	double lo, hi;			/* the tick's band of lengths */
	double reach;			/* how far past a gap's end rule 2 must see */
	int64_t *sample;		/* calibration: the first involuntary gaps (g0, length), in order
					 * (each CPU's gaps come in time order, gapper.c) */
	uint8_t *sflag;
	size_t nsample, samplecap;
	int64_t *occ;			/* calibration: every gap of the CPU meanwhile, (g0, g1), in order */
	size_t nocc, occcap;
	int cand_only;			/* found among the gaps the thread went on after, switches left
					 * out (HRTICK: the scheduler switches at its own timer) */
	int64_t *s;			/* starts of involuntary gaps in the band, in order */
	size_t head, n, cap;		/* live: s[head .. n) */
	/* calibration's gaps waiting for a decision */
	int64_t *wait;			/* (g0, g1) pairs */
	size_t whead, wn, wcap;
	/* hourglass on this CPU: running since run_t0, and its finished intervals' time */
	int running;
	int64_t run_t0, busy;
	/* steal: for each gap, what the other CPUs ran of it; gaps in order */
	int64_t open_other;		/* the others' busy time when this CPU's gap opened */
	int64_t *cover;			/* (g0, covered) pairs of closed gaps */
	size_t chead, cn, ccap;
	int listed;			/* in infer.cpus */
	/* rule 2b: the CPU's first interval (calibration), its last switch in and hourglass's
	 * gaps since (the decision pass, in time order) */
	int has_first, has_in;
	int64_t first_t0, last_in, gaps_since;
};

#define S_CANDIDATE 1			/* neither voluntary nor a switch: rule 2 applies */

struct infer {
	struct run *r;
	struct tick *tick;		/* per CPU */
	struct tick **listed;		/* per CPU: its tick once listed, else NULL (tick_of()) */
	uint32_t ncpu;
	struct cpu_list cpus;		/* the CPUs of tick in use: what per-event loops walk */
	int *top_rt;			/* per thread: rule 4 applies */
	double switch_limit, hidden_limit, throttle;
	int hidden_basis;		/* hidden_basis_text */
	int hrtick;			/* rule 2b: the scheduler's own timer (HRTICK, HRTICK_DL); -1 unknown */
	double *slice;			/* per thread: rule 2b's window after a switch in; INFINITY unknown */
	double hrtick_limit;		/* rule 3 in rule 2b's window: half the cheapest timer */
	uint64_t hrtick_gaps;
	double phase_limit;		/* rule 2: at the tick's phase, the tick and its softirqs below this */
	int basis;
	int steal;			/* the CPUs take turns */
	double overlap_share;
	uint64_t switch_gaps, tick_gaps;
	int64_t min_switch;
	int64_t now;			/* hourglass's stream has been read up to here */
	double wait_due;		/* calibration: when the first waiting candidate of a CPU is ready */
	int ended;
	int deciding;			/* the merge pass: keep what the other CPUs ran of each gap */
	int nrunning;
	/* busy_others' sums over every CPU: their finished time, and when those running started
	 * (unsigned: they may wrap, their differences are exact) */
	uint64_t busy_sum, run_sum;
	int64_t t0_max;			/* the latest start of a CPU's run: no running CPU began after */
	int64_t last_t, overlap;	/* time with two CPUs or more running hourglass */
	/* per thread, for sbf.c: first start, last end, intervals */
	int64_t *first, *last;
	uint64_t *nint;
};

/* tick_add - @cpu's tick, its table grown and the CPU listed the first time */
static cold_path struct tick *tick_add(struct infer *in, uint32_t cpu)
{
	uint32_t i;

	if (cpu >= in->ncpu) {
		uint32_t n = cpu + 1;

		in->tick = xrealloc(in->tick, n * sizeof(*in->tick));
		memset(in->tick + in->ncpu, 0, (n - in->ncpu) * sizeof(*in->tick));
		in->listed = xrealloc(in->listed, n * sizeof(*in->listed));
		memset(in->listed + in->ncpu, 0, (n - in->ncpu) * sizeof(*in->listed));
		in->ncpu = n;
		for (i = 0; i < in->cpus.n; i++)	/* the table moved */
			in->listed[in->cpus.v[i]] = &in->tick[in->cpus.v[i]];
	}
	if (!in->tick[cpu].listed) {
		in->tick[cpu].listed = 1;
		in->listed[cpu] = &in->tick[cpu];
		cpu_list_add(&in->cpus, cpu);
	}
	return &in->tick[cpu];
}

/* tick_of - @cpu's tick, listed the first time: asked for every gap and most of hourglass's events,
 * from the table of listed ticks (a load, where finding the tick in its table and asking whether
 * it is listed took a multiplication and two: 12 M of a 1 M-event merge's instructions, callgrind) */
static inline struct tick *tick_of(struct infer *in, uint32_t cpu)
{
	struct tick *t;

	if (!HG_FAST) {
		if (likely(cpu < in->ncpu && in->tick[cpu].listed))
			return &in->tick[cpu];
		return tick_add(in, cpu);
	}
	if (likely(cpu < in->ncpu && (t = in->listed[cpu])))
		return t;
	return tick_add(in, cpu);
}

/*
 * Calibration asks near() and occluded() of every start of a sample at every
 * candidate period, places that mostly only grow: each answer is found from
 * where the last one was (a walk), by a binary search only when the place went
 * back. With 32 CPUs, each calibrated on its own sample, the searches from
 * scratch were 12% of a merge (perf). The answers are the searches'.
 */
struct walk {
	size_t s[PHASE_PERIODS + 1];	/* per step: where near() found the last place */
	size_t occ[PHASE_PERIODS + 1];	/* per step: where occluded() did */
};

/* near - is there a start in [t - tol, t + tol]? (@s sorted; @pos: the walk's place in it) */
static int near(size_t *pos, const int64_t *s, size_t n, double t, double tol)
{
	double lo = t - tol;
	size_t a = HG_FAST && *pos < n ? *pos : n, b;

	if (a > 0 && (double)s[a - 1] >= lo) {		/* went back: search what lies before */
		for (b = a, a = 0; a < b;) {
			size_t m = a + (b - a) / 2;

			if ((double)s[m] < lo)
				a = m + 1;
			else
				b = m;
		}
	}
	while (a < n && (double)s[a] < lo)
		a++;
	*pos = a;
	return a < n && (double)s[a] <= t + tol;
}

/* near_searched - near() without a walk: a binary search */
static int near_searched(const int64_t *s, size_t n, double t, double tol)
{
	size_t pos = SIZE_MAX;

	return near(&pos, s, n, t, tol);
}

/*
 * occluded - does @x fall in one of the CPU's gaps, where a tick leaves no gap of
 * its own? (Strictly inside: a gap that ends just before @x, the tick's own
 * among them, says nothing of @x.) @pos: the walk's place among the gaps.
 */
static int occluded(size_t *pos, const struct tick *t, double x)
{
	size_t a = HG_FAST && *pos < t->nocc ? *pos : t->nocc, b;

	/* the first gap that ends at or after x */
	if (a > 0 && (double)t->occ[2 * (a - 1) + 1] >= x) {
		for (b = a, a = 0; a < b;) {
			size_t m = a + (b - a) / 2;

			if ((double)t->occ[2 * m + 1] < x)
				a = m + 1;
			else
				b = m;
		}
	}
	while (a < t->nocc && (double)t->occ[2 * a + 1] < x)
		a++;
	*pos = a;
	return a < t->nocc && (double)t->occ[2 * a] <= x;
}

/*
 * recurs_from - is there a start @d, 2 @d .. @steps @d away from @x (@d may be
 * negative)? Walked one period at a time, further only past a place where
 * hourglass did not run (a longer gap swallowed the tick there): where it ran
 * and no gap of the band began, the tick was not at that phase.
 */
static int recurs_from(struct walk *w, const struct tick *t, const int64_t *s, size_t n, double x, double d,
		       double tol, int steps)
{
	int k;

	for (k = 1; k <= steps; k++) {
		if (near(&w->s[k], s, n, x + k * d, tol))
			return 1;
		if (k == steps || !occluded(&w->occ[k], t, x + k * d))
			return 0;
	}
	return 0;
}

/* recurs - how many starts recur @d later (recurs_from) */
static long recurs(const struct tick *t, const int64_t *s, size_t n, double d, double tol, int steps)
{
	struct walk w = { { 0 }, { 0 } };
	long hit = 0;
	size_t i;

	for (i = 0; i < n; i++)
		hit += recurs_from(&w, t, s, n, (double)s[i], d, tol, steps);
	return hit;
}

/*
 * above_chance - do @s recur at @p more than chance (at 1.37 @p) allows? Its score,
 * the share of starts that recur beyond chance, in @score. A walk past hidden
 * periods (@steps above 1) is weaker evidence and must score WALK_SCORE.
 */
static int above_chance(const struct tick *t, const int64_t *s, size_t n, double p, double tol, int steps,
			long *hit_out, double *score)
{
	long hit = recurs(t, s, n, p, tol, steps), ctrl = recurs(t, s, n, 1.37 * p, tol, steps);

	*score = n ? (double)(hit - ctrl) / (double)n : 0;
	if (hit_out)
		*hit_out = hit;
	return *score > (steps > 1 ? WALK_SCORE : 0.1) && hit > 2 * (ctrl > 1 ? ctrl : 1);
}

/*
 * occupancy - of the slots one period apart at the phase where most of @s fall,
 * over the span of @s, the share that hold a start, of those that hold one or
 * where hourglass ran (a slot inside a longer gap says nothing). A CPU-bound
 * thread takes every tick while it runs: the tick's slots are full, where a
 * coincidence of phases (gaps a fraction of the tick apart) leaves most empty.
 */
static double occupancy(const struct tick *t, const int64_t *s, size_t n, double p, double tol)
{
	enum { NB = 64 };
	size_t hb[NB] = { 0 }, i, best = 0, at = 0, occ = 0;
	long full = 0, empty = 0;
	double phase, x, stride;

	if (n < 2 || p <= 0)
		return 0;
	for (i = 0; i < n; i++)
		hb[(size_t)(fmod((double)(s[i] - s[0]), p) / p * NB) % NB]++;
	for (i = 1; i < NB; i++)
		if (hb[i] > hb[best])
			best = i;
	phase = (double)s[0] + (best + 0.5) * p / NB;
	/* a sparse sample over a long run: every stride-th slot, OCCUPANCY_SLOTS of them at most */
	stride = ceil(((double)(s[n - 1] - s[0]) / p + 1) / OCCUPANCY_SLOTS);
	for (x = phase - p * floor((phase - (double)s[0]) / p); x <= (double)s[n - 1]; x += stride * p) {
		if (near(&at, s, n, x, tol + p / NB))
			full++;
		else if (!occluded(&occ, t, x))
			empty++;
	}
	return full + empty ? (double)full / (double)(full + empty) : 0;
}

/*
 * find_tick - the clock tick's period from gap starts that recur: the
 * candidate most above chance, and not a multiple of a finer grid. With
 * @steps above 1, a start recurs if another follows 1 .. @steps periods later
 * (and chance is measured over as many steps).
 */
static void find_tick(const struct tick *t, const int64_t *s, size_t n, double hz, int steps, double *p_out,
		      double *tol_out, double *score_out)
{
	double best = 0;
	size_t c;

	*p_out = *tol_out = *score_out = 0;
	if (n < 20)
		return;
	for (c = 0; c < NTICKS; c++) {
		double p = tick_ms[c] * 1e-3 * hz, tol = fmax(10e-6 * hz, 0.005 * p), score;
		long hit, finer = 0;
		int k;

		if (!above_chance(t, s, n, p, tol, steps, &hit, &score) || score <= best * 1.2)
			continue;
		/* a tick fills its slots where hourglass ran (occupancy) */
		if (occupancy(t, s, n, p, tol) < OCCUPIED)
			continue;
		/*
		 * a grid finer than the candidate recurs at it too: not the tick. Only a grid
		 * that fills its own slots: gaps that fall a fraction of a period from the
		 * tick's by the run's phase recur at that fraction too (a thread's switch 1 ms
		 * before every 4 ms tick, 6.12's periodic-pair in the lab: 220 against 438)
		 * but leave most of its slots empty. Same tolerance: a narrower one would miss
		 * a jittery grid that the candidate's catches.
		 */
		for (k = 2; k <= 5; k++) {
			long h = recurs(t, s, n, p / k, tol, 1);

			if (h > finer && occupancy(t, s, n, p / k, tol) >= OCCUPIED)
				finer = h;
		}
		if (finer > hit / 2)
			continue;
		*p_out = p;
		*tol_out = tol;
		*score_out = best = score;
	}
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

/* push_pair - onto a queue of (a, b) pairs with a dropped front */
static void push_pair(int64_t **v, size_t *head, size_t *n, size_t *cap, int64_t a, int64_t b)
{
	if (*n == *cap) {
		if (*head > *cap / 2) {
			memmove(*v, *v + 2 * *head, 2 * (*n - *head) * sizeof(**v));
			*n -= *head;
			*head = 0;
		} else {
			*cap = *cap ? 2 * *cap : 64;
			*v = xrealloc(*v, 2 * *cap * sizeof(**v));
		}
	}
	(*v)[2 * *n] = a;
	(*v)[2 * *n + 1] = b;
	(*n)++;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* modes - the lengths around which the sample's gaps gather (log-spaced histogram peaks) */
static size_t modes(const struct tick *t, double *out, size_t max)
{
	enum { NB = 64 * MODE_BINS_PER_OCTAVE };
	static uint32_t h[NB];
	size_t i, n = 0, total = 0;
	int b;

	memset(h, 0, sizeof(h));
	for (i = 0; i < t->nsample; i++) {
		int64_t len = t->sample[2 * i + 1];

		if (len <= 0 || !(t->sflag[i] & S_CANDIDATE))
			continue;
		b = (int)(log2((double)len) * MODE_BINS_PER_OCTAVE);
		if (b >= 0 && b < NB) {
			h[b]++;
			total++;
		}
	}
	for (b = 1; b < NB - 1 && n < max; b++) {
		/* a peak of the histogram smoothed over three bins (the last bin of a plateau),
		 * with enough of the sample; it lies at the three bins' weighted middle */
		uint32_t here = h[b - 1] + h[b] + h[b + 1];
		uint32_t left = h[b - 1] + h[b] + (b >= 2 ? h[b - 2] : 0);
		uint32_t right = h[b] + h[b + 1] + (b + 2 < NB ? h[b + 2] : 0);

		if (here >= left && here > right && here >= MODE_MIN_SHARE * total) {
			double w = (b - 0.5) * h[b - 1] + (b + 0.5) * h[b] + (b + 1.5) * h[b + 1];

			out[n++] = exp2(w / here / MODE_BINS_PER_OCTAVE);
		}
	}
	return n;
}

/*
 * refine_period - the tick's period as this machine's TSC measures it: the median
 * spacing of the band's gaps one candidate period apart, or @steps at most
 * (divided by their number) (hourglass's TSC rate and the kernel's clock may
 * differ by a fraction of a percent, which adds up over the periods rule 2 spans)
 */
static double refine_period(const struct tick *t, double lo, double hi, double p, double tol, int steps,
			    int cand_only)
{
	int64_t *d = xcalloc(t->nsample + 1, sizeof(*d));
	double s0, r = p;
	size_t i, j, n = 0;
	int k;

	for (i = 0; i < t->nsample; i++) {
		double len = (double)t->sample[2 * i + 1], best = INFINITY;

		if (len < lo || len >= hi || (cand_only && !(t->sflag[i] & S_CANDIDATE)))
			continue;
		s0 = (double)t->sample[2 * i];
		/* the band's gap nearest the fewest periods later */
		for (k = 1; k <= steps && isinf(best); k++)
			for (j = i + 1; j < t->nsample && (double)t->sample[2 * j] <= s0 + k * p + tol; j++) {
				double l2 = (double)t->sample[2 * j + 1], e = (double)t->sample[2 * j] - s0 - k * p;

				if (l2 >= lo && l2 < hi && fabs(e) <= tol && fabs(e) < fabs(best) &&
				    (!cand_only || (t->sflag[j] & S_CANDIDATE)))
					best = e;
			}
		if (!isinf(best))
			d[n++] = (int64_t)(p + best / (k - 1));
	}
	if (n >= 10) {
		qsort(d, n, sizeof(*d), cmp_i64);
		r = (double)d[n / 2];
	}
	free(d);
	return r;
}

struct cand { double lo, hi, p, tol, score, cost; };

/*
 * find_band - the band of lengths, and the period, at which the sample's gaps
 * recur most cleanly (recurring 1 .. @steps periods apart): the cheapest of
 * those nearly as clean as the best. 0 if none recurs. With @cand_only, among
 * the gaps the thread went on after only (switches left out).
 */
static int find_band(struct infer *in, struct tick *t, int steps, int cand_only, struct cand *out)
{
	int64_t *starts = xcalloc(t->nsample + 1, sizeof(*starts));
	int64_t *lens = xcalloc(t->nsample + 1, sizeof(*lens));
	double hz = in->r->hz, m[16], best = 0;
	/* two switches at the fastest seen: what a gap in which another task ran costs at least */
	double two_switches = in->switch_gaps ? 2.0 * (double)in->min_switch : INFINITY;
	struct cand c[NFLOORS + 16];
	struct walk after, before;
	size_t nc = 0, f, i, ns, nl, nm, seen[NFLOORS + 16], nseen = 0;
	int pick = -1;

	for (f = 0; f < NFLOORS; f++)
		c[nc++] = (struct cand){ .lo = floors_us[f] * 1e-6 * hz, .hi = INFINITY };
	nm = modes(t, m, 16);
	for (i = 0; i < nm; i++)
		c[nc++] = (struct cand){ .lo = m[i] / BAND_WIDTH, .hi = m[i] * BAND_WIDTH };
	for (f = 0; f < nc; f++) {
		int dup = 0;

		for (ns = 0, i = 0; i < t->nsample; i++) {
			double len = (double)t->sample[2 * i + 1];

			if (len >= c[f].lo && len < c[f].hi && (!cand_only || (t->sflag[i] & S_CANDIDATE)))
				starts[ns++] = t->sample[2 * i];
		}
		for (i = 0; i < nseen; i++)
			dup |= seen[i] == ns;
		if (dup || ns < 20)	/* the same gaps as another band, or too few */
			continue;
		seen[nseen++] = ns;
		find_tick(t, starts, ns, hz, steps, &c[f].p, &c[f].tol, &c[f].score);
		if (!c[f].p)
			continue;
		/* the cost of what recurs: the median length of the band's gaps that recur */
		memset(&after, 0, sizeof(after));
		memset(&before, 0, sizeof(before));
		for (nl = 0, i = 0; i < t->nsample; i++) {
			double g0 = (double)t->sample[2 * i], len = (double)t->sample[2 * i + 1];

			if ((t->sflag[i] & S_CANDIDATE) && len >= c[f].lo && len < c[f].hi &&
			    (recurs_from(&after, t, starts, ns, g0, c[f].p, c[f].tol, steps) ||
			     recurs_from(&before, t, starts, ns, g0, -c[f].p, c[f].tol, steps)))
				lens[nl++] = t->sample[2 * i + 1];
		}
		if (!nl)
			continue;
		qsort(lens, nl, sizeof(*lens), cmp_i64);
		c[f].cost = (double)lens[nl / 2];
		if (getenv("HGMERGE_DEBUG"))
			fprintf(stderr, "hgmerge: calibrate: band %.2f..%.2f us, %zu gaps%s, %d period(s) apart at "
				"most: period %.3f ms, score %.3f, cost %.2f us%s\n", c[f].lo / hz * 1e6,
				c[f].hi / hz * 1e6, ns, cand_only ? " (switches left out)" : "", steps,
				c[f].p / hz * 1e3, c[f].score, c[f].cost / hz * 1e6,
				c[f].cost >= two_switches ? " (two switches or more)" : "");
		/*
		 * What recurs at a tick's period but costs two switches or more is a task woken
		 * by its own timer (a periodic real-time load recurs more cleanly than the tick,
		 * whose gaps are lost while hourglass's threads sleep): not the tick.
		 */
		if (c[f].cost >= two_switches) {
			c[f].p = 0;
			continue;
		}
		/*
		 * A floor's band holds everything above it, and what recurs there may be a mix
		 * (a load's long gaps at its period and short ones that follow some of them)
		 * whose median cost is neither's: it is judged as the band around that cost
		 * (a gap half as long again did something more; a much shorter one is something
		 * cheaper than the tick), which must recur at the period by itself, as the
		 * tick's own gaps do, and scores as that band.
		 */
		if (isinf(c[f].hi)) {
			double lo = fmax(c[f].lo, c[f].cost / BAND_WIDTH), hi = c[f].cost * BAND_WIDTH;
			size_t nn = 0;

			for (i = 0; i < t->nsample; i++) {
				double len = (double)t->sample[2 * i + 1];

				if (len >= lo && len < hi && (!cand_only || (t->sflag[i] & S_CANDIDATE)))
					lens[nn++] = t->sample[2 * i];
			}
			if (nn < 20 || !above_chance(t, lens, nn, c[f].p, c[f].tol, steps, NULL, &c[f].score)) {
				c[f].p = 0;
				continue;
			}
			c[f].lo = lo;
			c[f].hi = hi;
		}
		/* nor what costs less than the cheapest system call: it ran no kernel code (the
		 * two-vCPU instruction-count guest's 0.96 us gaps, 4 ms apart, where the other vCPU
		 * ticked: 2.7 us a system call there) */
		if (in->r->syscall_cycles > 0 && c[f].cost < (double)in->r->syscall_cycles) {
			c[f].p = 0;
			continue;
		}
		/* nor is what lasts half a period or more: a timer interrupt costs microseconds,
		 * and a gap longer than the period hides its own next ones (the walk past them
		 * would take any start a few periods on as its recurrence) */
		if (c[f].cost >= c[f].p / 2) {
			c[f].p = 0;
			continue;
		}
		if (c[f].score > best)
			best = c[f].score;
	}
	/*
	 * The tick is the cheapest thing that recurs: a timer interrupt costs less than
	 * a preemption, and a load that recurs (a task woken by its own timer) costs
	 * more. Among the bands that recur nearly as clearly as the best, the one whose
	 * recurring gaps are shortest; at the same cost (the same gaps recur in both), a
	 * mode's band before a floor's, which is only the band around the cost: a mode
	 * may reach down to the tick's shorter gaps (a tick with less to do).
	 */
	for (i = 0; i < nc; i++) {
		f = (i + NFLOORS) % nc;		/* the modes' bands first */
		if (c[f].p && c[f].cost > 0 && c[f].score >= 0.6 * best &&
		    (pick < 0 || c[f].cost < c[pick].cost))
			pick = (int)f;
	}
	if (pick >= 0)
		*out = c[pick];
	free(starts);
	free(lens);
	return pick >= 0;
}

/*
 * calibrate - one CPU's tick from its sample: the band of lengths, and the
 * period, at which it recurs most cleanly. Then its band's gaps in the sample
 * become the first starts rule 2 looks for, and the sample's candidates wait
 * for their decision.
 */
static out_of_line flatten_hot void calibrate(struct infer *in, struct tick *t)
{
	struct cand b = { 0 };	/* set where found (flattened, -O3 cannot tell) */
	int steps = 1, found, w;
	size_t i;

	/*
	 * A tick whose every other gap is hidden recurs only two or three periods apart:
	 * a thread woken by its own timer at twice the tick's period, just before the
	 * tick, swallows every second tick in its switch (6.12's periodic-pair in the
	 * lab, in some runs: the phase between the two is the run's chance). Searched
	 * for only when no band recurs one period apart, walking up to three periods as
	 * rule 2 looks, and past a period only where hourglass did not run (recurs_from).
	 * Weaker evidence than a period's neighbour, so it must recur cleanly (WALK_SCORE:
	 * on the stored runs of 2026-11, the lab's case scored 0.74; under TCG, walks of
	 * 0.10 to 0.46 found ticks whose rules then read switches as ticks).
	 */
	for (w = 0, found = 0; w < 2 && !found; w++) {
		steps = w ? PHASE_PERIODS : 1;
		/*
		 * Switches are searched with the rest: a tick that preempts leaves a switch at its
		 * phase. With HRTICK the scheduler ends a slice at a timer of its own, off the tick's
		 * phase, and switches there may drown the tick (the lab's cpu-yield on 7.3: 3438
		 * switches, most at a 0.7 ms slice's end, against 605 ticks): then the tick is
		 * searched among the gaps the thread went on after (rule 2b).
		 */
		found = find_band(in, t, steps, t->cand_only = 0, &b);
		if (!found && in->hrtick == 1)
			found = find_band(in, t, steps, t->cand_only = 1, &b);
	}
	t->p = t->tol = t->score = 0;
	t->steps = 0;
	if (!found)
		t->cand_only = 0;
	if (found) {
		t->p = refine_period(t, b.lo, b.hi, b.p, b.tol, steps, t->cand_only);
		t->tol = b.tol;
		t->score = b.score;
		t->lo = b.lo;
		t->hi = b.hi;
		t->steps = steps;
	}
	/*
	 * A profile's band for the tick (hgmerge --limits tick_lo, tick_hi): the lengths the kernel's
	 * own ticks took on this machine, where an emulator's slow and uneven handlers scatter them
	 * past any one mode. The period is still this run's: found in that band where the search
	 * found none.
	 */
	if (in->r->limits_us[4] > 0) {
		double lo = in->r->limits_us[3] * 1e-6 * in->r->hz, hi = in->r->limits_us[4] * 1e-6 * in->r->hz;

		if (!t->p) {
			int64_t *starts = xcalloc(t->nsample + 1, sizeof(*starts));
			size_t n = 0;
			double p, tol, score;

			for (i = 0; i < t->nsample; i++)
				if ((double)t->sample[2 * i + 1] >= lo && (double)t->sample[2 * i + 1] < hi)
					starts[n++] = t->sample[2 * i];
			find_tick(t, starts, n, in->r->hz, PHASE_PERIODS, &p, &tol, &score);
			free(starts);
			if (p) {
				t->p = p;
				t->tol = tol;
				t->score = score;
				t->steps = PHASE_PERIODS;
				t->cand_only = 0;
			}
		}
		t->lo = lo;
		t->hi = hi;
	}
	t->reach = t->p ? PHASE_PERIODS * t->p + t->tol + t->hi + 1 : 0;
	t->calibrated = 1;
	for (i = 0; i < t->nsample; i++) {
		double len = (double)t->sample[2 * i + 1];

		if (t->p && len >= t->lo && len < t->hi && (!t->cand_only || (t->sflag[i] & S_CANDIDATE)))
			push_start(t, t->sample[2 * i]);
		if (t->sflag[i] & S_CANDIDATE)
			push_pair(&t->wait, &t->whead, &t->wn, &t->wcap, t->sample[2 * i],
				  t->sample[2 * i] + t->sample[2 * i + 1]);
	}
	free(t->sample);
	free(t->sflag);
	free(t->occ);
	t->sample = NULL;
	t->sflag = NULL;
	t->occ = NULL;
	t->samplecap = 0;
}

/*
 * tick_test - rule 2 for a candidate gap (the stream must have been read to its
 * end + reach): 1 at the tick's phase and as long as the tick, 2 at its phase
 * but longer, 0 otherwise
 */
static int tick_test(struct tick *t, int64_t g0, int64_t g1)
{
	double len = (double)(g1 - g0);
	const int64_t *s, *end;
	int k;

	if (t->p == 0 || len < t->lo)
		return 0;
	/* the decisions of a CPU come in time order: starts before the reach back are done with */
	while (t->head < t->n && (double)t->s[t->head] < (double)g0 - PHASE_PERIODS * t->p - t->tol - 1)
		t->head++;
	if (!HG_FAST) {
		/* a tick's neighbours may be lost in longer gaps (a load that preempts): look further */
		for (k = 1; k <= PHASE_PERIODS; k++)
			if (near_searched(t->s + t->head, t->n - t->head, (double)g0 + k * t->p, t->tol) ||
			    near_searched(t->s + t->head, t->n - t->head, (double)g0 - k * t->p, t->tol))
				return len < t->hi ? 1 : 2;
		return 0;
	}
	/*
	 * The same six questions (is there a start within tol of g0 - 3p .. g0 + 3p, g0 aside?),
	 * asked in the order of their places, one walk along the starts: whichever answers yes,
	 * the answer is the same. g0 + k p grows with k, and so do the places searched from.
	 */
	s = t->s + t->head;
	end = t->s + t->n;
	for (k = -PHASE_PERIODS; k <= PHASE_PERIODS; k++) {
		double x;

		if (!k)
			continue;
		x = k < 0 ? (double)g0 - -k * t->p : (double)g0 + k * t->p;
		while (s < end && (double)*s < x - t->tol)
			s++;
		if (s == end)
			return 0;
		if ((double)*s <= x + t->tol)
			return len < t->hi ? 1 : 2;
	}
	return 0;
}

/* due - when a gap of @t's CPU that ends at @g1 can be decided: the stream rule 2's reach past it */
static double due(const struct tick *t, int64_t g1)
{
	return (double)g1 + t->reach;
}

/*
 * busy_others - hourglass's time on every CPU but @cpu up to @t. From the sums
 * when no running CPU started after @t (the rule: a run that starts after @t
 * counts nothing), else CPU by CPU: with 32 CPUs, walking them for every gap
 * was 5% of a merge (perf).
 */
static inline int64_t busy_others(struct infer *in, uint32_t cpu, int64_t t)
{
	int64_t sum = 0;
	uint32_t i;

	if (HG_FAST && t >= in->t0_max) {
		const struct tick *x = &in->tick[cpu];
		uint64_t all = in->busy_sum + (uint64_t)in->nrunning * (uint64_t)t - in->run_sum;

		return (int64_t)(all - (uint64_t)x->busy - (x->running ? (uint64_t)(t - x->run_t0) : 0));
	}
	for (i = 0; i < in->cpus.n; i++) {
		struct tick *x = &in->tick[in->cpus.v[i]];

		if (in->cpus.v[i] == cpu)
			continue;
		sum += x->busy + (x->running && t > x->run_t0 ? t - x->run_t0 : 0);
	}
	return sum;
}

/*
 * running - hourglass's time on each CPU, and with two CPUs or more at once: what the
 * calibration's steal test measures, and what rule 3's steal asks of the other CPUs in the
 * decision pass (only then: without steal the decision pass keeps none of it); the tick of the
 * event's CPU when it looked it up, else NULL
 */
static hot_inline struct tick *running(struct infer *in, const struct hg_ev *ev, int made, const struct gapdef *g)
{
	struct tick *t = NULL;

	if (in->nrunning >= 2 && ev->t > in->last_t)
		in->overlap += ev->t - in->last_t;
	in->last_t = ev->t;
	if (ev->kind == HGE_START) {
		t = tick_of(in, ev->rec.cpu);
		if (!t->has_first) {		/* the thread was just picked there: rule 2b's first switch in */
			t->has_first = 1;
			t->first_t0 = (int64_t)ev->rec.t0;
		}
		if (!t->running)
			in->nrunning++;
		else
			in->run_sum -= (uint64_t)t->run_t0;
		t->running = 1;
		t->run_t0 = (int64_t)ev->rec.t0;
		in->run_sum += (uint64_t)t->run_t0;
		if (t->run_t0 > in->t0_max)
			in->t0_max = t->run_t0;
	}
	if (made == 2) {
		t = tick_of(in, g->cpu);
		if (t->running) {
			t->running = 0;
			in->nrunning--;
			in->run_sum -= (uint64_t)t->run_t0;
			t->busy += g->g0 - t->run_t0;
			in->busy_sum += (uint64_t)(g->g0 - t->run_t0);
		}
		if (in->deciding && in->steal && in->ncpu > 1)	/* what rule 3's steal asks */
			t->open_other = busy_others(in, g->cpu, g->g0);
	} else if (made == 1 && in->deciding && in->steal && in->ncpu > 1) {
		t = tick_of(in, g->cpu);
		push_pair(&t->cover, &t->chead, &t->cn, &t->ccap, g->g0,
			  busy_others(in, g->cpu, g->g1) - t->open_other);
	}
	return t;
}

void infer_seen(struct infer *in, const struct hg_ev *ev, int made, const struct gapdef *g)
{
	struct tick *t = NULL;

	in->now = ev->t;
	if (!in->deciding || in->steal)
		t = running(in, ev, made, g);
	if (made == 1) {
		/* a gap closes at a start on its CPU: the tick running() looked up is the gap's */
		if (!HG_FAST || !t)
			t = tick_of(in, g->cpu);

		if (t->calibrated && !g->vol && t->p && (double)(g->g1 - g->g0) >= t->lo &&
		    (double)(g->g1 - g->g0) < t->hi && (!t->cand_only || g->next_thread == g->thread))
			push_start(t, g->g0);
	}
}

void infer_end(struct infer *in)
{
	in->ended = 1;
}

double infer_due(struct infer *in, const struct hgg_gap *g)
{
	struct tick *t = tick_of(in, g->cpu);

	if (g->vol || g->next_thread != g->thread || !t->p)
		return -INFINITY;
	return due(t, (int64_t)g->g1);
}

int infer_passed(const struct infer *in, double due)
{
	return in->ended || (double)in->now >= due;
}

int infer_ready(struct infer *in, const struct hgg_gap *g)
{
	return infer_passed(in, infer_due(in, g));
}

/* covered - what the other CPUs ran of the gap at @g0 on @t's CPU (0 if unknown) */
static int64_t covered(struct tick *t, int64_t g0)
{
	while (t->chead < t->cn && t->cover[2 * t->chead] < g0)
		t->chead++;
	return t->chead < t->cn && t->cover[2 * t->chead] == g0 ? t->cover[2 * t->chead + 1] : 0;
}

/* wait_due - when the first waiting candidate of @t can be decided, INFINITY if none waits */
static double wait_due(const struct tick *t)
{
	return t->whead < t->wn ? due(t, t->wait[2 * t->whead + 1]) : INFINITY;
}

/*
 * drain_calibration - decide the waiting candidates whose reach the stream has passed.
 * Called for every gap: it looks at the CPUs only once the first of their waiting
 * candidates is ready, which it keeps (a CPU's reach is fixed once it waits).
 */
static out_of_line void drain_calibration_now(struct infer *in, struct quant *ticks)
{
	double next = INFINITY;
	uint32_t i;

	for (i = 0; i < in->cpus.n; i++) {
		struct tick *t = &in->tick[in->cpus.v[i]];

		double d;

		while ((d = wait_due(t)) < INFINITY && infer_passed(in, d)) {
			int64_t g0 = t->wait[2 * t->whead], g1 = t->wait[2 * t->whead + 1];

			if (tick_test(t, g0, g1) == 1)
				quant_add(ticks, g1 - g0);
			t->whead++;
		}
		if (d < next)
			next = d;
	}
	in->wait_due = next;
}

static hot_inline void drain_calibration(struct infer *in, struct quant *ticks)
{
	if (HG_FAST && !in->ended && (double)in->now < in->wait_due)
		return;
	drain_calibration_now(in, ticks);
}

static int is_rt(const struct hgl_thread *t)
{
	return !strcmp(t->policy, "fifo") || !strcmp(t->policy, "rr");
}

/*
 * find_slices - rule 2b's window per thread: how long after the CPU switched to it the
 * scheduler's own timer can fire. HRTICK arms it when a fair task is picked, for what is
 * left of its slice (the base slice, hourglass's fair threads asking none of their own),
 * and when another task is queued beside it, for the same end; the timer of a task picked
 * before fires no later, and its clock event fires even when the timer was cancelled. With
 * HRTICK_DL, a deadline task's timer ends its runtime. 0: no such timer; INFINITY: the
 * slice is unknown (a kernel before 6.6, or debugfs unreadable).
 */
static void find_slices(struct infer *in)
{
	struct run *r = in->r;
	double base = r->base_slice_ns > 0 ? (double)r->base_slice_ns * 1e-9 * r->hz : INFINITY;
	int k;

	in->hrtick = r->hrtick < 0 ? -1 : r->hrtick || r->hrtick_dl;
	for (k = 0; k < r->nthreads; k++) {
		in->slice[k] = r->hrtick == 1 ? base : 0;
		if (r->hrtick_dl == 1 && !strcmp(r->info->threads[k].policy, "deadline"))
			in->slice[k] = fmax(in->slice[k], r->th[k].dl_runtime_ns > 0 ?
					    (double)r->th[k].dl_runtime_ns * 1e-9 * r->hz : INFINITY);
	}
}

/* rule 4: the highest-priority real-time CPU-bound thread on every CPU it used */
/*
 * find_top_rt - rule 4's threads: real-time, CPU-bound, and on every CPU they ran on
 * no other real-time thread of their priority or above ran. From each CPU's highest
 * priority and how many threads had it (comparing every pair of threads on every CPU
 * took 40 s with 4096 threads).
 */
static void find_top_rt(struct infer *in, unsigned char **on, uint32_t ncpu_on)
{
	struct run *r = in->r;
	int *top = xcalloc(ncpu_on + 1, sizeof(*top)), *ntop = xcalloc(ncpu_on + 1, sizeof(*ntop));
	uint32_t c;
	int k;

	for (k = 0; k < r->nthreads; k++) {
		const struct hgl_thread *t = &r->info->threads[k];

		if (!is_rt(t))
			continue;
		for (c = 0; c < ncpu_on; c++) {
			if (!on[k][c])
				continue;
			if (!ntop[c] || t->priority > top[c]) {
				top[c] = t->priority;
				ntop[c] = 1;
			} else if (t->priority == top[c]) {
				ntop[c]++;
			}
		}
	}
	for (k = 0; k < r->nthreads; k++) {
		const struct hgl_thread *t = &r->info->threads[k];

		in->top_rt[k] = is_rt(t) && r->th[k].cpu_workload;
		for (c = 0; c < ncpu_on && in->top_rt[k]; c++)
			if (on[k][c] && (top[c] != t->priority || ntop[c] > 1))
				in->top_rt[k] = 0;
	}
	free(top);
	free(ntop);
}

static flatten_hot void calibration_pass(struct infer *in, unsigned char **on, uint32_t *ncpu_on,
					 struct quant *ticks, struct tape *tape)
{
	struct run *r = in->r;
	struct hgside *hs = hgside_open(r, tape ? tape_record : NULL, tape);
	struct gapper gp;
	struct hg_ev ev;
	struct gapdef g = { 0 };	/* set by gapper_event() where it counts (-O3 cannot tell) */
	struct tick *t;
	int mig, made;
	int64_t mt1 = 0;
	uint32_t c;

	in->wait_due = INFINITY;
	gapper_init(&gp, r);
	while (hgside_next(hs, &ev)) {
		mig = 0;
		made = gapper_event(&gp, &ev, &g, &mig, &mt1);
		if (tape)
			tape_event(tape, &ev, made, &g, mig, mt1);
		infer_seen(in, &ev, made, &g);
		if (ev.kind == HGE_START) {
			int k = ev.rec.thread;

			c = ev.rec.cpu;
			if (c >= *ncpu_on) {	/* grown by half at least: CPUs may come one by one */
				uint32_t n = c + 1 > *ncpu_on + *ncpu_on / 2 ? c + 1 : *ncpu_on + *ncpu_on / 2, t;

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
		if (made != 1) {
			if (made)
				drain_calibration(in, ticks);
			continue;
		}
		t = tick_of(in, g.cpu);
		if (!t->calibrated) {
			if (t->nocc == t->occcap) {
				t->occcap = t->occcap ? 2 * t->occcap : 256;
				t->occ = xrealloc(t->occ, 2 * t->occcap * sizeof(*t->occ));
			}
			t->occ[2 * t->nocc] = g.g0;
			t->occ[2 * t->nocc++ + 1] = g.g1;
		}
		if (!g.vol) {
			int cand = g.next_thread == g.thread;

			if (!cand && (!in->switch_gaps++ || g.g1 - g.g0 < in->min_switch))
				in->min_switch = g.g1 - g.g0;
			t->have = 1;
			if (!t->calibrated) {
				/* the tick is searched among every involuntary gap, switches included */
				if (t->nsample == t->samplecap) {	/* grown as it fills: 1024 CPUs of a
									 * short run were 330 MB of room */
					t->samplecap = t->samplecap ? 2 * t->samplecap : 256;
					if (t->samplecap > TICK_SAMPLE)
						t->samplecap = TICK_SAMPLE;
					t->sample = xrealloc(t->sample, 2 * t->samplecap * sizeof(*t->sample));
					t->sflag = xrealloc(t->sflag, t->samplecap);
				}
				t->sample[2 * t->nsample] = g.g0;
				t->sample[2 * t->nsample + 1] = g.g1 - g.g0;
				t->sflag[t->nsample++] = cand ? S_CANDIDATE : 0;
				if (t->nsample == TICK_SAMPLE)
					calibrate(in, t);
			} else if (cand) {
				double d;

				push_pair(&t->wait, &t->whead, &t->wn, &t->wcap, g.g0, g.g1);
				if ((d = wait_due(t)) < in->wait_due)
					in->wait_due = d;
			}
		}
		drain_calibration(in, ticks);
	}
	infer_end(in);
	if (tape)
		tape_rewind(tape, &gp);
	for (c = 0; c < in->ncpu; c++)
		if (in->tick[c].have && !in->tick[c].calibrated)
			calibrate(in, &in->tick[c]);
	drain_calibration(in, ticks);
	gapper_free(&gp);
	hgside_close(hs);
}

/* the CPUs take turns: two or more ran hourglass, a good share of the run each, never together */
static void find_steal(struct infer *in)
{
	int64_t a = 0, b = 0;
	uint32_t c;

	for (c = 0; c < in->ncpu; c++) {
		int64_t x = in->tick[c].busy;

		if (x > a) {
			b = a;
			a = x;
		} else if (x > b) {
			b = x;
		}
	}
	in->overlap_share = b > 0 ? (double)in->overlap / (double)b : 1;
	in->steal = b > 0 && in->overlap_share < STEAL_OVERLAP;
}

struct infer *infer_calibrate(struct run *r, struct tape *tape)
{
	struct infer *in = xcalloc(1, sizeof(*in));
	unsigned char **on = xcalloc(r->nthreads + 1, sizeof(*on));
	uint32_t ncpu_on = 0, c;
	struct quant ticks = { 0 };
	double tick;
	int k;

	in->r = r;
	in->t0_max = INT64_MIN;
	in->top_rt = xcalloc(r->nthreads + 1, sizeof(*in->top_rt));
	in->slice = xcalloc(r->nthreads + 1, sizeof(*in->slice));
	in->first = xcalloc(r->nthreads + 1, sizeof(*in->first));
	in->last = xcalloc(r->nthreads + 1, sizeof(*in->last));
	in->nint = xcalloc(r->nthreads + 1, sizeof(*in->nint));
	find_slices(in);
	calibration_pass(in, on, &ncpu_on, &ticks, tape);
	find_top_rt(in, on, ncpu_on);
	find_steal(in);
	for (k = 0; k < r->nthreads; k++)
		free(on[k]);
	free(on);
	in->tick_gaps = ticks.n;
	/*
	 * Rule 3's floor: the cheapest path into the kernel and back, a system call that does
	 * nothing, as hourglass measured it where it ran. A gap shorter ran no kernel code. The
	 * floor was half the cheapest tick, which holds only where every interrupt costs as
	 * much: a device's handler that wakes no one cost 9.5 us against the tick's 34 in the
	 * lab's two-vCPU instruction-count guest (device-timer, 6.1, 2026-12-02), and all 2275
	 * read as hidden; the system call there costs 2.7 us. Files from before hourglass
	 * measured it keep the old floor.
	 */
	if (r->syscall_cycles > 0) {
		in->hidden_limit = (double)r->syscall_cycles;
		in->hidden_basis = 0;
		/* an empty timer interrupt (below) enters the kernel as a system call does, and more */
		in->hrtick_limit = in->hidden_limit;
	} else {
		in->hidden_limit = ticks.n >= 10 ? quant_at(&ticks, 0.1) / 2 : 0;
		in->hidden_basis = ticks.n >= 10 ? 1 : 2;
		/*
		 * With the scheduler's own timer, the cheapest timer interrupt is not the tick but
		 * one that expires nothing: the kernel enters, reads the clock, finds no timer due
		 * and leaves. In the lab's 7.3 guests such interrupts (2253 of cpu-yield's 2318 fell
		 * 0.65 to 0.76 ms after a switch: the clock event of an hrtick cancelled meanwhile)
		 * cost a quarter of the tick, 10 us against 40. Half of that is the floor within
		 * rule 2b's slice, as half the cheapest tick is elsewhere.
		 */
		in->hrtick_limit = in->hrtick == 1 ? in->hidden_limit / 4 : in->hidden_limit;
	}
	tick = quant_median(&ticks);
	if (in->switch_gaps && ticks.n) {
		in->switch_limit = sqrt(tick * 2.0 * (double)in->min_switch);
		in->basis = 0;
		/*
		 * At the tick's phase another task costs the tick, a switch out and one back:
		 * more than the tick and the fastest switch seen. Capped at twice the tick: where
		 * hourglass's threads switch only at the tick, their fastest switch holds a tick.
		 */
		in->phase_limit = fmin(2.0 * tick, tick + (double)in->min_switch);
	} else if (ticks.n) {
		in->switch_limit = sqrt(tick * 3 * tick);
		in->basis = 1;
	} else if (in->switch_gaps) {
		in->switch_limit = 2.0 * (double)in->min_switch * 0.75;
		in->basis = 0;
	} else {
		in->switch_limit = 50e-6 * r->hz;
		in->basis = 2;
	}
	if (in->phase_limit < in->switch_limit)
		in->phase_limit = in->switch_limit;
	/* a profile's limits (hourglass learn: fitted on runs with ground truth) over the calibration's */
	if (r->limits_us[0] > 0) {
		in->switch_limit = r->limits_us[0] * 1e-6 * r->hz;
		in->basis = 3;
	}
	if (r->limits_us[1] > 0)
		in->phase_limit = r->limits_us[1] * 1e-6 * r->hz;
	else if (in->phase_limit < in->switch_limit)
		in->phase_limit = in->switch_limit;
	if (r->limits_us[2] > 0) {
		in->hidden_limit = in->hrtick_limit = r->limits_us[2] * 1e-6 * r->hz;
		in->hidden_basis = 3;
	}
	/* RT throttling holds real-time tasks back for period - runtime of every period */
	in->throttle = r->rt_period_us > 0 && r->rt_runtime_us >= 0 && r->rt_runtime_us < r->rt_period_us ?
		       (double)(r->rt_period_us - r->rt_runtime_us) * 1e-6 * r->hz / 2 : 0;
	quant_free(&ticks);
	/* the decision pass starts its starts anew, from the same stream */
	for (c = 0; c < in->ncpu; c++) {
		struct tick *t = &in->tick[c];

		t->head = t->n = t->whead = t->wn = t->chead = t->cn = 0;
		t->running = 0;
		t->busy = 0;
		t->has_in = t->has_first;
		t->last_in = t->first_t0;
		t->gaps_since = 0;
	}
	in->nrunning = 0;
	in->busy_sum = in->run_sum = 0;
	in->t0_max = INT64_MIN;
	in->ended = 0;
	in->deciding = 1;
	in->now = INT64_MIN;
	return in;
}

/*
 * in_slice - rule 2b's window: is the gap at @g0 within its thread's slice of the CPU's
 * last switch in, counted in hourglass's own running time since (the task's runtime, which
 * the scheduler's timer counts, is no less: it holds the switch's end and, without
 * IRQ_TIME_ACCOUNTING, interrupts)? The tick's tolerance allows for the two clocks.
 */
static int in_slice(const struct infer *in, const struct tick *t, int thread, int64_t g0)
{
	double slice = in->slice[thread];

	if (!(slice > 0))
		return 0;
	return isinf(slice) || (t->has_in && (double)(g0 - t->last_in - t->gaps_since) <= slice + t->tol);
}

void infer_decide(struct infer *in, struct hgg_gap *g)
{
	struct tick *t = tick_of(in, g->cpu);
	int64_t g0 = (int64_t)g->g0, g1 = (int64_t)g->g1;
	double len = (double)(g1 - g0);
	int64_t cov = in->ncpu > 1 && in->steal ? covered(t, g0) : 0;	/* read only with steal */
	int phase = g->vol || g->next_thread != g->thread ? 0 : tick_test(t, g0, g1);
	int slice = !g->vol && g->next_thread == g->thread && t->p && in_slice(in, t, g->thread, g0);

	if (g->vol) {
		g->inferred = HGG_C_VOLUNTARY;
		g->rule = HGG_R_VOLUNTARY;
	} else if (g->next_thread != g->thread) {
		g->inferred = HGG_C_SWITCH_HG;
		g->rule = HGG_R_SWITCH;
	} else if (in->top_rt[g->thread] && in->throttle > 0 && len >= in->throttle) {
		/* RT throttling: every real-time task waits, and another task runs */
		g->inferred = HGG_C_SWITCH_OTHER;
		g->rule = HGG_R_LONG;
	} else if (phase == 1 || (phase == 2 && (len < in->phase_limit || in->top_rt[g->thread]))) {
		/* the tick; longer than its band but shorter than two switches (or in the way of a
		 * thread only interrupts can stop), the tick and what it ran (its softirqs) */
		g->inferred = HGG_C_TIMER;
		g->rule = HGG_R_TICK;
	} else if (slice && len >= in->hrtick_limit && len < t->hi &&
		   !(in->steal && (double)cov >= STEAL_COVER * len)) {
		/* the scheduler's own timer ending the slice, or its clock event after it was cancelled
		 * (weaker evidence than steal's: another CPU running hourglass through the gap) */
		g->inferred = HGG_C_TIMER;
		g->rule = HGG_R_HRTICK;
		in->hrtick_gaps++;
	} else if (len < in->hidden_limit || (in->steal && (double)cov >= STEAL_COVER * len)) {
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
	/* rule 2b's window starts again where the CPU switched: another task ran, or the thread slept */
	if (g->vol || g->next_thread != g->thread || g->inferred == HGG_C_SWITCH_OTHER) {
		t->has_in = 1;
		t->last_in = g1;
		t->gaps_since = 0;
	} else {
		t->gaps_since += g1 - g0;
	}
}

const char *infer_why(struct infer *in, const struct hgg_gap *g, char *buf, size_t len)
{
	double hz = in->r->hz, glen = (double)(g->g1 - g->g0);
	struct tick *tk = tick_of(in, g->cpu);

	switch (g->rule) {
	case HGG_R_VOLUNTARY:
		snprintf(buf, len, g->vol == 1 ? "the thread yielded (sched_yield)" : "the thread slept on its timer");
		break;
	case HGG_R_SWITCH:
		snprintf(buf, len, "%s stopped and %s started", in->r->th[g->thread].name,
			 in->r->th[g->next_thread].name);
		break;
	case HGG_R_TICK:
		if (glen < tk->hi)
			snprintf(buf, len, "it recurs every %.3f ms, the tick found on CPU %u, and lasts as long as the "
				 "tick (%.2f to %.2f us)", tk->p / hz * 1e3, g->cpu, tk->lo / hz * 1e6, tk->hi / hz * 1e6);
		else
			snprintf(buf, len, "it recurs every %.3f ms, the tick found on CPU %u; longer than the tick but "
				 "shorter than the tick and a switch (%.1f us): the tick and its softirqs", tk->p / hz * 1e3,
				 g->cpu, in->phase_limit / hz * 1e6);
		break;
	case HGG_R_HIDDEN:
		if (glen < in->hidden_limit && in->hidden_basis == 3)
			snprintf(buf, len, "shorter than %.2f us, the profile's floor of every kernel path",
				 in->hidden_limit / hz * 1e6);
		else if (glen < in->hidden_limit && in->hidden_basis == 0)
			snprintf(buf, len, "shorter than %.2f us, the cheapest system call hourglass measured: no kernel "
				 "path is that fast", in->hidden_limit / hz * 1e6);
		else if (glen < in->hrtick_limit && in->slice[g->thread] > 0)
			snprintf(buf, len, "shorter than %.2f us, half the cheapest timer interrupt (HRTICK's clock event "
				 "with nothing to expire: a quarter of the tick): no kernel path is that fast",
				 in->hrtick_limit / hz * 1e6);
		else if (glen < in->hidden_limit && in->slice[g->thread] > 0)
			snprintf(buf, len, "shorter than %.2f us, half the cheapest tick, and not within a slice of the "
				 "CPU's last switch, where the scheduler's own timer fires: no kernel path is that fast",
				 in->hidden_limit / hz * 1e6);
		else if (glen < in->hidden_limit)
			snprintf(buf, len, "shorter than %.2f us, half the cheapest tick: no kernel path is that fast",
				 in->hidden_limit / hz * 1e6);
		else
			snprintf(buf, len, "the CPUs take turns (they ran hourglass together %.1f%% of the time) and "
				 "another CPU ran hourglass through it: steal", in->overlap_share * 100);
		break;
	case HGG_R_HRTICK:
		if (isinf(in->slice[g->thread]))
			snprintf(buf, len, "the scheduler's own timer is on (HRTICK) and the slice unknown: off the tick's "
				 "phase, as long as the tick or cheaper (%.2f to %.2f us), that timer or its clock event",
				 in->hrtick_limit / hz * 1e6, tk->hi / hz * 1e6);
		else
			snprintf(buf, len, "within a slice (%.3f ms of running) of the CPU's last switch, where the "
				 "scheduler's own timer ends it (HRTICK): off the tick's phase, as long as the tick or "
				 "cheaper (%.2f to %.2f us), that timer or its clock event", in->slice[g->thread] / hz * 1e3,
				 in->hrtick_limit / hz * 1e6, tk->hi / hz * 1e6);
		break;
	case HGG_R_MODEL:
		snprintf(buf, len, "the profile's model decided (hourglass report --explain prints its path)");
		break;
	case HGG_R_TOP_RT:
		snprintf(buf, len, "the highest-priority real-time thread here never blocks: only interrupts stop it");
		break;
	case HGG_R_SHORT:
		snprintf(buf, len, "shorter than %.1f us (%s): cannot be two switches", in->switch_limit / hz * 1e6,
			 basis_text[in->basis]);
		break;
	default:
		if (in->top_rt[g->thread])
			snprintf(buf, len, "as long as RT throttling holds real-time threads back (%.1f ms or more)",
				 in->throttle / hz * 1e3);
		else
			snprintf(buf, len, "no hourglass thread ran, and longer than %.1f us (%s)",
				 in->switch_limit / hz * 1e6, basis_text[in->basis]);
	}
	return buf;
}

/* hrtick_report - rule 2b's part of the calibration, and what it could not know (notes) */
static void hrtick_report(struct infer *in, struct run *r, struct jsonw *w)
{
	double slice = 0;
	int k;

	for (k = 0; k < r->nthreads; k++)
		slice = fmax(slice, in->slice[k]);
	if (in->hrtick < 0)
		jw_null(w, "hrtick");
	else
		jw_bool(w, "hrtick", in->hrtick);
	if (in->hrtick == 1) {
		jw_num(w, "hidden_limit_in_slice_us", in->hrtick_limit / r->hz * 1e6);
		if (slice > 0 && !isinf(slice))
			jw_num(w, "slice_ms", slice / r->hz * 1e3);
		else
			jw_null(w, "slice_ms");
		jw_uint(w, "hrtick_gaps", in->hrtick_gaps);
	}
	jw_arr(w, "notes");
	if (in->hrtick < 0)
		jw_str(w, NULL, "the scheduler's features are unknown (hourglass read no kernel.sched_features: "
		       "debugfs unreadable, or an older hourglass): the tick taken as the only timer, as without HRTICK");
	else if (in->hrtick == 1 && isinf(slice))
		jw_str(w, NULL, "the scheduler's own timer is on (HRTICK) but its slice unknown (no "
		       "kernel.sched_base_slice_ns): rule 2b taken to hold at any time, not only within a slice of a "
		       "switch");
	jw_end_arr(w);
}

void infer_report(struct infer *in, struct run *r, struct jsonw *w)
{
	uint32_t c;
	char key[16];

	jw_obj(w, "calibration");
	jw_num(w, "switch_limit_us", in->switch_limit / r->hz * 1e6);
	jw_str(w, "switch_limit_basis", basis_text[in->basis]);
	jw_num(w, "phase_limit_us", in->phase_limit / r->hz * 1e6);
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
		jw_int(w, "periods_apart", t->steps);
		jw_bool(w, "switches_left_out", t->cand_only);
		jw_num(w, "floor_us", t->p ? t->lo / r->hz * 1e6 : 0);
		if (t->p && !isinf(t->hi))
			jw_num(w, "band_top_us", t->hi / r->hz * 1e6);
		else
			jw_null(w, "band_top_us");
		jw_end_obj(w);
	}
	jw_end_obj(w);
	jw_num(w, "hidden_limit_us", in->hidden_limit / r->hz * 1e6);
	jw_str(w, "hidden_limit_basis", hidden_basis_text[in->hidden_basis]);
	jw_uint(w, "switch_gaps", in->switch_gaps);
	jw_uint(w, "tick_gaps", in->tick_gaps);
	hrtick_report(in, r, w);
	jw_bool(w, "steal", in->steal);
	jw_numf(w, "cpus_together", in->overlap_share, 4);
	if (in->throttle > 0)
		jw_num(w, "rt_throttle_ms", in->throttle / r->hz * 1e3);
	else
		jw_null(w, "rt_throttle_ms");
	jw_end_obj(w);
}

void infer_thread_span(struct infer *in, int thread, int64_t *first, int64_t *last, uint64_t *n)
{
	*first = in->first[thread];
	*last = in->last[thread];
	*n = in->nint[thread];
}

double infer_switch_limit(const struct infer *in)
{
	return in->switch_limit;
}

void infer_free(struct infer *in)
{
	uint32_t c;

	if (!in)
		return;
	for (c = 0; c < in->ncpu; c++) {
		free(in->tick[c].sample);
		free(in->tick[c].sflag);
		free(in->tick[c].occ);
		free(in->tick[c].s);
		free(in->tick[c].wait);
		free(in->tick[c].cover);
	}
	free(in->tick);
	free(in->listed);
	cpu_list_free(&in->cpus);
	free(in->top_rt);
	free(in->slice);
	free(in->first);
	free(in->last);
	free(in->nint);
	free(in);
}

/*
 * Lanes (hgmerge --grid): more sets of limits decided beside the run's own in the same pass,
 * for hourglass learn. A lane differs from the run's inference only in the switch, phase and
 * hidden limits: the calibration (the tick's period, phase and band, the steal) does not use
 * them, so it is shared, and so is when a gap can be decided. What a lane keeps of its own is
 * rule 2b's state, which its decisions move (a gap read as a switch restarts the slice), per CPU.
 * infer_decide is the one rule: a lane's limits and state are put in place around it.
 */
struct lane_cpu {
	int init, has_in;
	int64_t last_in, gaps_since;
};

struct infer_lane {
	double switch_limit, phase_limit, hidden_limit, hrtick_limit;
	uint64_t hrtick_gaps;
	struct lane_cpu *cpu;
	uint32_t ncpu;
};

struct infer_lane *infer_lane_new(struct infer *in, const double limits_us[3])
{
	struct infer_lane *l = xcalloc(1, sizeof(*l));
	double us = 1e-6 * in->r->hz;

	l->switch_limit = limits_us[0] > 0 ? limits_us[0] * us : in->switch_limit;
	l->phase_limit = limits_us[1] > 0 ? limits_us[1] * us : fmax(in->phase_limit, l->switch_limit);
	l->hidden_limit = limits_us[2] > 0 ? limits_us[2] * us : in->hidden_limit;
	l->hrtick_limit = limits_us[2] > 0 ? l->hidden_limit : in->hrtick_limit;
	return l;
}

out_of_line void infer_lane_decide(struct infer *in, struct infer_lane *l, struct hgg_gap *g)
{
	struct tick *t = tick_of(in, g->cpu);
	struct lane_cpu *c, own;
	double sw = in->switch_limit, ph = in->phase_limit, hi = in->hidden_limit, hr = in->hrtick_limit;
	uint64_t hg = in->hrtick_gaps;

	if (g->cpu >= l->ncpu) {
		l->cpu = xrealloc(l->cpu, (g->cpu + 1) * sizeof(*l->cpu));
		memset(l->cpu + l->ncpu, 0, (g->cpu + 1 - l->ncpu) * sizeof(*l->cpu));
		l->ncpu = g->cpu + 1;
	}
	c = &l->cpu[g->cpu];
	if (!c->init)	/* where the decision pass started the CPU (infer_calibrate's end) */
		*c = (struct lane_cpu){ .init = 1, .has_in = t->has_first, .last_in = t->first_t0 };
	own = (struct lane_cpu){ .has_in = t->has_in, .last_in = t->last_in, .gaps_since = t->gaps_since };
	in->switch_limit = l->switch_limit;
	in->phase_limit = l->phase_limit;
	in->hidden_limit = l->hidden_limit;
	in->hrtick_limit = l->hrtick_limit;
	in->hrtick_gaps = l->hrtick_gaps;
	t->has_in = c->has_in;
	t->last_in = c->last_in;
	t->gaps_since = c->gaps_since;
	infer_decide(in, g);
	c->has_in = t->has_in;
	c->last_in = t->last_in;
	c->gaps_since = t->gaps_since;
	l->hrtick_gaps = in->hrtick_gaps;
	t->has_in = own.has_in;
	t->last_in = own.last_in;
	t->gaps_since = own.gaps_since;
	in->switch_limit = sw;
	in->phase_limit = ph;
	in->hidden_limit = hi;
	in->hrtick_limit = hr;
	in->hrtick_gaps = hg;
}

void infer_lane_free(struct infer_lane *l)
{
	if (l)
		free(l->cpu);
	free(l);
}

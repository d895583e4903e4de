/* SPDX-License-Identifier: GPL-2.0 */
/*
 * quant.h - medians, percentiles, means of a figure that may have millions
 * of values, in memory that does not grow with them.
 *
 * Exact up to QUANT_EXACT values (they are kept and sorted, and a median
 * of an even count is the mean of the middle two, as statistics.median).
 * Beyond, the values go into a log-linear histogram: 2^QUANT_SUB_BITS
 * buckets per octave, so a quantile is off by less than 2^-QUANT_SUB_BITS
 * of its value (0.025%); minimum, maximum, count and mean stay exact.
 */
#ifndef HGMERGE_QUANT_H
#define HGMERGE_QUANT_H

#include <stdint.h>
#include <stddef.h>
#include "compiler.h"

#define QUANT_EXACT	65536
#define QUANT_SUB_BITS	12

struct quant {
	uint64_t n;
	int64_t min, max;
	double sum;
	int64_t *v;		/* exact mode: the values */
	size_t cap;
	int sorted;
	uint32_t **oct[2];	/* histogram mode: [sign][octave] -> 2^QUANT_SUB_BITS counts, allocated on use */
	uint64_t zero;		/* histogram mode: values equal to 0 */
};

void quant_add_slow(struct quant *q, int64_t v);	/* quant_add()'s rarer half (quant.c) */

/*
 * quant_add - one more value. Inline, the common steps (a value into the exact array while it
 * has room; into a histogram bucket of a positive value's octave already there); the rest,
 * and everything with HG_FAST 0, in quant_add_slow(). Every gap adds several (judge.c).
 */
static hot_inline void quant_add(struct quant *q, int64_t v)
{
	uint64_t n = q->n;

	if (!HG_FAST)
		goto slow;
	if (n < QUANT_EXACT) {
		if (unlikely(n >= q->cap))
			goto slow;
		q->v[n] = v;
		q->sorted = 0;
	} else {
		uint64_t x = (uint64_t)v;
		int e, oct;
		uint32_t *o;

		if (unlikely(v <= 0 || q->v || !q->oct[0]))
			goto slow;
		e = 63 - __builtin_clzll(x);
		oct = e < QUANT_SUB_BITS ? 0 : e - QUANT_SUB_BITS + 1;
		if (unlikely(!(o = q->oct[0][oct])))
			goto slow;
		o[e < QUANT_SUB_BITS ? (unsigned)x : (unsigned)((x >> (e - QUANT_SUB_BITS)) &
								 ((1u << QUANT_SUB_BITS) - 1))]++;
	}
	if (!n || v < q->min)
		q->min = v;
	if (!n || v > q->max)
		q->max = v;
	q->n = n + 1;
	q->sum += (double)v;
	return;
slow:
	quant_add_slow(q, v);
}
/* quant_median - statistics.median of the values (0 if none) */
double quant_median(struct quant *q);
/* quant_at - the value at index floor(frac * n), clamped (the reference's percentile) */
double quant_at(struct quant *q, double frac);
double quant_mean(const struct quant *q);
int quant_exact(const struct quant *q);
void quant_free(struct quant *q);

/*
 * A histogram for charts: LOGHIST_PER_DECADE bins a decade from
 * LOGHIST_LO_US to LOGHIST_HI_US microseconds, plus one below and one above.
 */
#define LOGHIST_PER_DECADE	10
#define LOGHIST_LO_US		0.1
#define LOGHIST_DECADES		7		/* 0.1 us .. 1 s */
#define LOGHIST_BINS		(LOGHIST_PER_DECADE * LOGHIST_DECADES + 2)

struct loghist {
	uint64_t n[LOGHIST_BINS];
	uint64_t total;
	int last;		/* the bin of the value added last (0: none, or the bin below) */
};

struct jsonw;
void loghist_add(struct loghist *h, double us);
/* loghist_edges - "edges_us": bin k lies between edges k and k + 1 (the first and last bins are
 * open-ended: their outer edges are a decade further) */
void loghist_edges(struct jsonw *w, const char *key);
void loghist_counts(const struct loghist *h, struct jsonw *w, const char *key);
/* loghist_write - {"edges_us": [...], "counts": [...]} */
void loghist_write(const struct loghist *h, struct jsonw *w, const char *key);

#endif

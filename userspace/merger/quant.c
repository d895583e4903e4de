// SPDX-License-Identifier: GPL-2.0
/*
 * quant.c - exact quantiles while few, a log-linear histogram beyond.
 *
 * Bucket of a value x > 0: its octave e = floor(log2 x) and the next
 * QUANT_SUB_BITS bits below the leading one; values below 2^QUANT_SUB_BITS
 * have a bucket each, so small cycle counts stay exact. A quantile read from
 * the histogram is its bucket's middle.
 */
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "engine.h"
#include "hg_jsonw.h"

#define SUB (1u << QUANT_SUB_BITS)

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* bucket_of - octave and sub-bucket of |x| > 0 */
static void bucket_of(uint64_t x, int *oct, unsigned *sub)
{
	int e = 63 - __builtin_clzll(x);

	if (e < QUANT_SUB_BITS) {	/* small values: exact, in octave 0 */
		*oct = 0;
		*sub = (unsigned)x;
		return;
	}
	*oct = e - QUANT_SUB_BITS + 1;
	*sub = (unsigned)((x >> (e - QUANT_SUB_BITS)) & (SUB - 1));
}

/* bucket_mid - the value a bucket stands for */
static double bucket_mid(int oct, unsigned sub)
{
	int e;

	if (oct == 0)
		return sub;
	e = oct + QUANT_SUB_BITS - 1;
	/* [2^e + sub * 2^(e - B), 2^e + (sub + 1) * 2^(e - B)) */
	return (double)(1ull << e) + ((double)sub + 0.5) * (double)(1ull << (e - QUANT_SUB_BITS));
}

/* octave - the counts of octave @oct of sign @sign, allocated the first time */
static cold_path uint32_t *octave(struct quant *q, int sign, int oct)
{
	if (!q->oct[sign])
		q->oct[sign] = xcalloc(64, sizeof(*q->oct[sign]));
	if (!q->oct[sign][oct])
		q->oct[sign][oct] = xcalloc(SUB, sizeof(uint32_t));
	return q->oct[sign][oct];
}

/* hist_add - inline: every value past the exact ones comes here */
static hot_inline void hist_add(struct quant *q, int64_t v)
{
	uint64_t x;
	int sign = v < 0, oct;
	unsigned sub;
	uint32_t *o;

	if (v == 0) {
		q->zero++;
		return;
	}
	x = sign ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	bucket_of(x, &oct, &sub);
	if (likely(q->oct[sign] && (o = q->oct[sign][oct])))
		o[sub]++;
	else
		octave(q, sign, oct)[sub]++;
}

void quant_add_slow(struct quant *q, int64_t v)
{
	if (!q->n || v < q->min)
		q->min = v;
	if (!q->n || v > q->max)
		q->max = v;
	q->n++;
	q->sum += (double)v;
	if (q->n <= QUANT_EXACT) {
		if (q->n > q->cap) {
			q->cap = q->cap ? 2 * q->cap : 16;
			q->v = xrealloc(q->v, q->cap * sizeof(*q->v));
		}
		q->v[q->n - 1] = v;
		q->sorted = 0;
		return;
	}
	if (q->v) {		/* the first value past the exact limit: move all to the histogram */
		size_t i;

		for (i = 0; i < q->n - 1; i++)
			hist_add(q, q->v[i]);
		free(q->v);
		q->v = NULL;
		q->cap = 0;
	}
	hist_add(q, v);
}

int quant_exact(const struct quant *q)
{
	return q->n <= QUANT_EXACT;
}

/*
 * radix_sort - @v's @n values ascending, a byte at a time from the lowest (LSD), through @tmp
 * of @n. A figure's exact values are sorted once for its report: with qsort that was 35
 * instructions a kernel event of a 1 M-event merge (callgrind), its comparisons called through
 * a pointer. Values are mostly small cycle counts: a byte that is the same in every value
 * moves nothing and is skipped. Keys are the values with the sign bit flipped, so that the
 * unsigned order is the signed one; equal values are indistinguishable, so the order is
 * qsort's.
 */
static void radix_sort(int64_t *v, int64_t *tmp, size_t n)
{
	uint64_t diff = 0, first = (uint64_t)v[0];
	int64_t *from = v, *to = tmp;
	size_t i, count[256];
	int shift;

	for (i = 1; i < n; i++)
		diff |= (uint64_t)v[i] ^ first;
	for (shift = 0; shift < 64; shift += 8) {
		size_t at = 0;

		if (!((diff >> shift) & 0xff))
			continue;
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[(((uint64_t)from[i] ^ (1ull << 63)) >> shift) & 0xff]++;
		for (i = 0; i < 256; i++) {
			size_t c = count[i];

			count[i] = at;
			at += c;
		}
		for (i = 0; i < n; i++)
			to[count[(((uint64_t)from[i] ^ (1ull << 63)) >> shift) & 0xff]++] = from[i];
		from = to;
		to = from == v ? tmp : v;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
}

static void sort(struct quant *q)
{
	if (q->sorted)
		return;
	if (HG_FAST && q->n > 1) {
		int64_t *tmp = xmalloc(q->n * sizeof(*tmp));

		radix_sort(q->v, tmp, q->n);
		free(tmp);
	} else {
		qsort(q->v, q->n, sizeof(*q->v), cmp_i64);
	}
	q->sorted = 1;
}

/* hist_rank - the value of rank @k (0-based) from the histogram */
static double hist_rank(const struct quant *q, uint64_t k)
{
	uint64_t seen = 0;
	int oct;
	unsigned sub;

	/* negatives first, largest magnitude first */
	if (q->oct[1])
		for (oct = 63; oct >= 0; oct--) {
			if (!q->oct[1][oct])
				continue;
			for (sub = SUB; sub-- > 0;) {
				seen += q->oct[1][oct][sub];
				if (seen > k)
					return -bucket_mid(oct, sub);
			}
		}
	seen += q->zero;
	if (seen > k)
		return 0;
	if (q->oct[0])
		for (oct = 0; oct < 64; oct++) {
			if (!q->oct[0][oct])
				continue;
			for (sub = 0; sub < SUB; sub++) {
				seen += q->oct[0][oct][sub];
				if (seen > k)
					return bucket_mid(oct, sub);
			}
		}
	return (double)q->max;
}

static double rank(struct quant *q, uint64_t k)
{
	double v;

	if (k >= q->n)
		k = q->n - 1;
	if (quant_exact(q)) {
		sort(q);
		return (double)q->v[k];
	}
	v = hist_rank(q, k);
	/* a bucket's middle may lie outside what was seen */
	return v < q->min ? q->min : v > q->max ? q->max : v;
}

double quant_median(struct quant *q)
{
	if (!q->n)
		return 0;
	if (q->n % 2)
		return rank(q, q->n / 2);
	return (rank(q, q->n / 2 - 1) + rank(q, q->n / 2)) / 2;
}

double quant_at(struct quant *q, double frac)
{
	uint64_t k;

	if (!q->n)
		return 0;
	k = frac <= 0 ? 0 : (uint64_t)(frac * (double)q->n);
	return rank(q, k);
}

double quant_mean(const struct quant *q)
{
	return q->n ? q->sum / (double)q->n : 0;
}

void quant_free(struct quant *q)
{
	int s, o;

	free(q->v);
	for (s = 0; s < 2; s++) {
		if (!q->oct[s])
			continue;
		for (o = 0; o < 64; o++)
			free(q->oct[s][o]);
		free(q->oct[s]);
	}
	memset(q, 0, sizeof(*q));
}

/* the bins' lower edges, computed once: a value's bin by bisection, not a logarithm */
static double edge[LOGHIST_BINS];

static void edges_init(void)
{
	int b;

	for (b = 1; b < LOGHIST_BINS; b++)
		edge[b] = LOGHIST_LO_US * pow(10, (double)(b - 1) / LOGHIST_PER_DECADE);
}

void loghist_add(struct loghist *h, double us)
{
	int lo = 0, hi = LOGHIST_BINS - 1, b = h->last;

	/* the bin of the value before, when this one falls in it too (one of a run's gaps mostly
	 * is as long as the one before): the bisection's answer without it */
	if (HG_FAST && b > 0 && edge[b] <= us && (b == LOGHIST_BINS - 1 || us < edge[b + 1])) {
		h->n[b]++;
		h->total++;
		return;
	}
	if (!edge[1])
		edges_init();
	if (!(us >= edge[1])) {		/* below, or not a number */
		hi = 0;
	} else {
		/* the last bin whose lower edge is at or below us */
		while (lo < hi) {
			int m = (lo + hi + 1) / 2;

			if (edge[m] <= us)
				lo = m;
			else
				hi = m - 1;
		}
	}
	h->n[hi]++;
	h->total++;
	h->last = hi;
}

void loghist_edges(struct jsonw *w, const char *key)
{
	int b;

	/* one more edge than bins; the first and last bins are open-ended (below the first
	 * decade, above the last) and are given edges one decade further, for plotting */
	jw_arr(w, key);
	jw_num(w, NULL, LOGHIST_LO_US / 10);
	for (b = 0; b < LOGHIST_BINS - 1; b++)
		jw_num(w, NULL, LOGHIST_LO_US * pow(10, (double)b / LOGHIST_PER_DECADE));
	jw_num(w, NULL, LOGHIST_LO_US * pow(10, LOGHIST_DECADES + 1));
	jw_end_arr(w);
}

void loghist_counts(const struct loghist *h, struct jsonw *w, const char *key)
{
	int b;

	jw_arr(w, key);
	for (b = 0; b < LOGHIST_BINS; b++)
		jw_uint(w, NULL, h->n[b]);
	jw_end_arr(w);
}

void loghist_write(const struct loghist *h, struct jsonw *w, const char *key)
{
	jw_obj(w, key);
	loghist_edges(w, "edges_us");
	loghist_counts(h, w, "counts");
	jw_end_obj(w);
}

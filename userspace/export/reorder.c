// SPDX-License-Identifier: GPL-2.0
/*
 * reorder.c - the slow paths of the reorder window: growing a lane, and
 * putting a late item back in its place.
 */
#include <stdlib.h>

#include "reorder.h"

#define FIRST_CAP 64

void ro_init(struct ro_window *w, uint32_t max, uint64_t horizon)
{
	uint32_t m = FIRST_CAP;

	while (m < max)
		m *= 2;
	*w = (struct ro_window){ .max = m, .horizon = horizon };
}

void ro_lane_free(struct ro_lane *l)
{
	free(l->ring);
	*l = (struct ro_lane){ 0 };
}

/* twice the room, the items unwrapped in order; a lane grows only as far as it is used */
static int grow(struct ro_window *w, struct ro_lane *l)
{
	uint32_t cap = l->cap ? 2 * l->cap : FIRST_CAP, i;
	uint8_t *ring;

	if (cap > w->max)
		cap = w->max;
	ring = malloc((size_t)cap * RO_ITEM);
	if (!ring)
		return -1;
	for (i = 0; i < l->n; i++)
		memcpy(ring + (size_t)i * RO_ITEM, ro_at(l, i), RO_ITEM);
	free(l->ring);
	l->ring = ring;
	l->cap = cap;
	l->head = 0;
	return 0;
}

static int key_after(const uint8_t *item, uint64_t ts, uint8_t rank)
{
	uint64_t t = ro_ts(item);

	if (t != ts)
		return t > ts;
	return item[8] > rank;
}

/*
 * Move items @pos..n-1 one place up, in blocks that wrap neither in the
 * source nor in the destination (at most three memmove()s). The exporters'
 * gaps are decided three tick periods after their time, so each lands a
 * hundred or more items back: moving them one by one was a third of a
 * merge's instructions with both exports (callgrind, bench/merge_speed.py's run).
 */
static void shift_up(struct ro_lane *l, uint32_t pos)
{
	uint32_t mask = l->cap - 1, i = l->n;

	while (i > pos) {
		uint32_t src_end = (l->head + i - 1) & mask, dst_end = (l->head + i) & mask;
		uint32_t k = i - pos;

		if (k > src_end + 1)
			k = src_end + 1;
		if (k > dst_end + 1)
			k = dst_end + 1;
		memmove(l->ring + (size_t)(dst_end + 1 - k) * RO_ITEM,
			l->ring + (size_t)(src_end + 1 - k) * RO_ITEM, (size_t)k * RO_ITEM);
		i -= k;
	}
}

void *ro_push_slow(struct ro_window *w, struct ro_lane *l, uint64_t ts, uint8_t rank)
{
	uint32_t lo = 0, hi, mid;
	uint8_t *p;

	if (l->n == l->cap && (l->cap == w->max || grow(w, l)))
		return NULL;	/* full at max: callers take ro_due() items out before pushing */
	if (ts < l->flushed) {
		ts = l->flushed;
		w->clamped++;
	}
	/* after every item of the same key: ties keep their arrival order */
	hi = l->n;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (key_after(ro_at(l, mid), ts, rank))
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo < l->n) {
		w->reordered++;
		shift_up(l, lo);
	} else {
		l->newest = ts;
		l->newest_rank = rank;
	}
	l->n++;
	p = ro_at(l, lo);
	memcpy(p, &ts, 8);
	p[8] = rank;
	return p;
}

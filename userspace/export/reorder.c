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

void *ro_push_slow(struct ro_window *w, struct ro_lane *l, uint64_t ts, uint8_t rank)
{
	uint32_t pos;
	uint8_t *p;

	if (l->n == l->cap && (l->cap == w->max || grow(w, l)))
		return NULL;	/* full at max: callers take ro_due() items out before pushing */
	if (ts < l->flushed) {
		ts = l->flushed;
		w->clamped++;
	}
	pos = l->n;
	if (pos && key_after(ro_at(l, pos - 1), ts, rank))
		w->reordered++;
	/* from the newest end: a late item is usually only a few places back */
	while (pos && key_after(ro_at(l, pos - 1), ts, rank)) {
		memcpy(ro_at(l, pos), ro_at(l, pos - 1), RO_ITEM);
		pos--;
	}
	if (pos == l->n) {
		l->newest = ts;
		l->newest_rank = rank;
	}
	l->n++;
	p = ro_at(l, pos);
	memcpy(p, &ts, 8);
	p[8] = rank;
	return p;
}

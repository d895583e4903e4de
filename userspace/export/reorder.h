/* SPDX-License-Identifier: GPL-2.0 */
/*
 * reorder.h - a bounded window per lane (a CPU's stream) that puts nearly
 * ordered items back in time order before they are written.
 *
 * A CPU's kernel records arrive in the order they were written, which is
 * the order of their timestamps but for a probe interrupted between reading
 * the TSC and writing its record: the interrupt's records come first, a few
 * microseconds "late". Writers need time order (trace.dat entries must not
 * go back within a CPU; Perfetto's slices nest by time), so each lane holds
 * its newest items and hands out those older than the horizon, or the
 * oldest when it is full. An item older than what was already handed out
 * cannot be put back: it is given that time instead, and counted (clamped).
 *
 * Items are RO_ITEM (32) bytes and begin with the key: uint64_t ts, then
 * uint8_t rank (ties in time are ordered by rank, then by arrival). One
 * size known at compile time keeps the ring's arithmetic a shift.
 */
#ifndef REORDER_H
#define REORDER_H

#include <stdint.h>
#include <string.h>

#define RO_ITEM		32

struct ro_lane {
	uint8_t *ring;
	uint32_t cap;		/* items the ring holds (a power of two), 0 before the first */
	uint32_t head, n;	/* the oldest item, items held */
	uint64_t newest;	/* the largest time put in */
	uint8_t newest_rank;	/* ... and its rank */
	uint64_t flushed;	/* the time of the last item handed out */
};

struct ro_window {
	uint32_t max;		/* items a lane holds at most (a power of two) */
	uint64_t horizon;	/* an item is due when older than the front by more than this */
	uint64_t reordered;	/* items that arrived before an item they follow in time */
	uint64_t clamped;	/* items older than what was already handed out: moved to that time */
};

/* ro_init - at most @max items per lane (rounded up to a power of two) */
void ro_init(struct ro_window *w, uint32_t max, uint64_t horizon);
void ro_lane_free(struct ro_lane *l);

void *ro_push_slow(struct ro_window *w, struct ro_lane *l, uint64_t ts, uint8_t rank);

static inline uint8_t *ro_at(const struct ro_lane *l, uint32_t i)
{
	return l->ring + (size_t)((l->head + i) & (l->cap - 1)) * RO_ITEM;
}

static inline uint64_t ro_ts(const void *item)
{
	uint64_t ts;

	memcpy(&ts, item, 8);
	return ts;
}

/*
 * ro_push - room for an item at (@ts, @rank), in order; the caller fills the rest of it (the
 * key is written). Returns NULL when out of memory. Follow it with ro_due() until NULL.
 */
static inline void *ro_push(struct ro_window *w, struct ro_lane *l, uint64_t ts, uint8_t rank)
{
	uint8_t *p;

	if (__builtin_expect(l->n == l->cap || ts < l->newest ||
			     (ts == l->newest && l->n && rank < l->newest_rank), 0))
		return ro_push_slow(w, l, ts, rank);
	p = ro_at(l, l->n++);
	memcpy(p, &ts, 8);
	p[8] = rank;
	l->newest = ts;
	l->newest_rank = rank;
	return p;
}

/* ro_due - the oldest item if it must go now (older than @front - horizon, or the lane is
 * full), else NULL. Use it, then ro_pop(). */
static inline void *ro_due(const struct ro_window *w, const struct ro_lane *l, uint64_t front)
{
	uint8_t *p;

	if (!l->n)
		return NULL;
	p = ro_at(l, 0);
	if (ro_ts(p) + w->horizon < front || l->n >= w->max)
		return p;
	return NULL;
}

/* ro_first - the oldest item whatever its time (draining at the end), or NULL */
static inline void *ro_first(const struct ro_lane *l)
{
	return l->n ? ro_at(l, 0) : NULL;
}

static inline void ro_pop(struct ro_lane *l)
{
	l->flushed = ro_ts(ro_at(l, 0));
	l->head = (l->head + 1) & (l->cap - 1);
	l->n--;
}

#endif

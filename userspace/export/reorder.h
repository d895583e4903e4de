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

/*
 * Two lanes of one stream: the items that come in nearly in order, and those that all come
 * late but in order among themselves (the exporters' gaps, decided three tick periods after
 * their time). Put in one lane, each late item moved a hundred or more items up (a third of
 * an exporter's memmove()s on the merge bench); in a lane of their own they go on at its end,
 * and the two are merged as they are handed out.
 *
 * ro_pick - the lane whose oldest item goes first (@a at a tie of key: its items came
 * first), or NULL when both are empty.
 */
static inline struct ro_lane *ro_pick(struct ro_lane *a, struct ro_lane *b)
{
	const uint8_t *pa, *pb;
	uint64_t ta, tb;

	if (!b->n)
		return a->n ? a : NULL;
	if (!a->n)
		return b;
	pa = ro_at(a, 0);
	pb = ro_at(b, 0);
	ta = ro_ts(pa);
	tb = ro_ts(pb);
	return tb < ta || (tb == ta && pb[8] < pa[8]) ? b : a;
}

/* ro_holds_later - whether @l holds an item that goes after (@ts, @rank) */
static inline int ro_holds_later(const struct ro_lane *l, uint64_t ts, uint8_t rank)
{
	const uint8_t *last;
	uint64_t t;

	if (!l->n)
		return 0;
	last = ro_at(l, l->n - 1);
	t = ro_ts(last);
	return t > ts || (t == ts && last[8] > rank);
}

/* ro_push2 - ro_push into @l, one of the pair (@l, @other); an item that goes before one held
 * in either lane is counted as reordered, once, as in one lane */
static inline void *ro_push2(struct ro_window *w, struct ro_lane *l, struct ro_lane *other, uint64_t ts,
			     uint8_t rank)
{
	if (__builtin_expect(other->n != 0, 1) && ro_holds_later(other, ts, rank) && !ro_holds_later(l, ts, rank))
		w->reordered++;
	return ro_push(w, l, ts, rank);
}

/* ro_pop2 - ro_pop of @l, one of the pair (@l, @other): what comes to either lane later
 * must not go before what was handed out, so @other is told the time as well (an item older
 * than it then takes ro_push's slow path and is clamped there, as in one lane) */
static inline void ro_pop2(struct ro_lane *l, struct ro_lane *other)
{
	l->flushed = ro_ts(ro_at(l, 0));
	l->head = (l->head + 1) & (l->cap - 1);
	l->n--;
	if (other->flushed < l->flushed)
		other->flushed = l->flushed;
	if (other->newest < l->flushed) {
		other->newest = l->flushed;
		other->newest_rank = 0;
	}
}

/* ro_due2 - as ro_due for the pair: the lane whose oldest item must go now, or NULL */
static inline struct ro_lane *ro_due2(const struct ro_window *w, struct ro_lane *a, struct ro_lane *b,
				      uint64_t front)
{
	struct ro_lane *l = ro_pick(a, b);

	if (!l)
		return NULL;
	if (ro_ts(ro_at(l, 0)) + w->horizon < front || a->n >= w->max || b->n >= w->max)
		return l;
	return NULL;
}

static inline void ro_pop(struct ro_lane *l)
{
	l->flushed = ro_ts(ro_at(l, 0));
	l->head = (l->head + 1) & (l->cap - 1);
	l->n--;
}

#endif

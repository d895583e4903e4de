/* SPDX-License-Identifier: GPL-2.0 */
/*
 * spin.h - the polling loop of the paper's Fig. 2, which every workload but
 * LAT runs while it "works": read the TSC, and when two reads are further
 * apart than GAP, the thread lost the CPU in between, so close the interval.
 *
 * It is inline so that each workload gets its own copy with the scan turned
 * on or off at compile time, and so bench/loopcost.c measures this very code.
 */
#ifndef HG_SPIN_H
#define HG_SPIN_H

#include "run.h"

struct hg_spin {
	uint64_t start, last;	/* the open interval: first and latest read */
	uint64_t charged;	/* CPU time before this TSC is already counted */
	uint32_t cpu;		/* CPU of the open interval */
	/* CPU_SCAN: a working set touched one cache line per iteration */
	const volatile uint8_t *scan;
	size_t scan_len, scan_pos;
	uint64_t scan_sum;
	uint64_t iters;		/* counted only when bench/loopcost.c builds it */
};

struct hgl_rec *hg_rec_refill(struct hg_thread *t);

/* hg_rec_get - the thread's next free record, NULL (counted) when full. */
static inline struct hgl_rec *hg_rec_get(struct hg_thread *t)
{
	if (__builtin_expect(t->rec < t->rec_end, 1))
		return t->rec++;
	return hg_rec_refill(t);
}

static inline void hg_rec_put(struct hg_thread *t, uint8_t type, uint8_t flags,
			      uint64_t t0, uint64_t t1, uint64_t t2, uint32_t cpu)
{
	struct hgl_rec *r = hg_rec_get(t);

	if (!r)
		return;
	r->t0 = t0;
	r->t1 = t1;
	r->t2 = t2;
	r->thread = (uint16_t)t->idx;
	r->type = type;
	r->flags = flags;
	r->cpu = cpu;
}

/* hg_live_set - a live-line figure, written by its thread alone, read by the monitor */
#define hg_live_set(field, v) __atomic_store_n(&(field), (v), __ATOMIC_RELAXED)

/* hg_spin_close - record the open interval, ended for reason @flags. */
static inline void hg_spin_close(struct hg_thread *t, struct hg_spin *s, uint8_t flags)
{
	hg_rec_put(t, HGL_REC_INTERVAL, flags, s->start, s->last, 0, s->cpu);
	hg_live_set(t->live_ivs, t->live_ivs + 1);
}

/* hg_spin_open - start a new interval now (after a sleep or a yield). */
static inline void hg_spin_open(struct hg_thread *t, struct hg_spin *s)
{
	uint64_t now;

	s->cpu = (uint32_t)hg_tsc_cpu(&t->run->tsc, &now);
	s->start = s->last = s->charged = now;
}

/* hg_until - the TSC at which hg_spin stops: need satisfied or @stop. */
static inline uint64_t hg_until(uint64_t charged, uint64_t need, uint64_t stop)
{
	if (stop <= charged)
		return stop;
	return need < stop - charged ? charged + need : stop;
}

/* hg_gap_seen - the slow path's bookkeeping of a gap (workloads.c): the live line, -b */
void hg_gap_seen(struct hg_thread *t, uint64_t last, uint64_t now, uint32_t cpu)
	__attribute__((cold, noinline));

/*
 * hg_spin - poll the TSC until the thread has received *@need more cycles
 * of CPU (then *@need is 0) or the TSC reaches @stop. Gaps close intervals.
 * A run stopping early (Ctrl-C, -b) is noticed here only at a gap, where
 * the loop is already off its fast path; the monitor makes sure there is one.
 */
static inline __attribute__((always_inline))
void hg_spin(struct hg_thread *t, struct hg_spin *s, uint64_t *need, uint64_t stop,
	     const bool scan, uint64_t *work)
{
	const uint64_t gap = t->run->gap_cycles;
	uint64_t last = s->last, charged = s->charged, now, until;

	until = hg_stopping(t->run) ? 0 : hg_until(charged, *need, stop);
	for (;;) {
		now = hg_rdtsc();
		if (__builtin_expect(now - last > gap, 0)) {
			uint64_t used = last - charged, prev = last;

			s->last = last;
			hg_spin_close(t, s, 0);
			*need -= used < *need ? used : *need;
			s->cpu = (uint32_t)hg_tsc_cpu(&t->run->tsc, &now);
			s->start = charged = now;
			hg_gap_seen(t, prev, now, s->cpu);
			until = hg_stopping(t->run) ? 0 : hg_until(charged, *need, stop);
			/* the bookkeeping is ours: keep it out of the next delta
			 * (rdtscp and a cold cache can take longer than GAP). But
			 * not unchecked: a preemption right here once hid inside
			 * an interval. Anything the kernel does costs far more
			 * than 8 GAP; then the next read finds the gap from start. */
			now = hg_rdtsc();
			if (__builtin_expect(now - s->start > 8 * gap, 0)) {
				last = s->start;
				continue;
			}
		}
		last = now;
#ifdef HG_SPIN_COUNT
		s->iters++;
#endif
		if (scan) {
			s->scan_sum += s->scan[s->scan_pos];
			s->scan_pos += 64;
			if (s->scan_pos >= s->scan_len) {
				s->scan_pos = 0;
				(*work)++;
			}
		}
		if (now >= until)
			break;
	}
	s->last = last;
	*need -= last - charged < *need ? last - charged : *need;
	s->charged = last;
}

#endif

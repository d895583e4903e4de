// SPDX-License-Identifier: GPL-2.0
/*
 * tape.c - the calibration pass's hourglass stream, recorded and played back to the merge's
 * pass: hourglass's trace is read and merged by time once, not twice.
 *
 * Both passes walk the same stream (hgside.c: every thread's records merged by time, each
 * interval's end and each window's close at their place) and make the same gaps of it
 * (gapper.c). The calibration pass writes down what came: each record as it was picked (the
 * merge's exporters and figures see every one), and each event with what the gapper made of it.
 * The merge's pass reads that back instead of merging the threads again (half of hourglass's
 * side of a merge, callgrind). What an event carries that an earlier entry said (an interval's
 * end: the interval of its thread that started last) is not written again.
 *
 * The tape is a temporary file in TMPDIR, written and read through one buffer: memory does not
 * grow with the run; the file takes about 40 bytes an interval (80 MB for 10 M kernel events of
 * the bench's run, whose hourglass trace is 64 MB).
 *
 * An entry is 64-bit words: a head word, then what its kind needs.
 *   REC     a record picked, in the stream's order: t0, t1, t2 if not 0; when it starts an
 *           interval or opens a window, its event (head: the event, the gapper's answer; then
 *           the gap's g0 when it closed one, and the thread's last end when it moved)
 *   END     an interval's end: head only (its thread; the gapper's answer)
 *   CLOSE   a window's close: seq, t0, t1, t2 if not 0 (windows of a thread may overlap)
 *   STOP    the end of the stream
 * A step of the stream (one hgside_next(): the records it passed over, then its event) ends at
 * an entry with an event; the time it is peeked at is its first entry's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"

#define TAPE_WORDS	(1u << 15)	/* the buffer: 256 KiB */
#define ENTRY_MAX	8		/* words an entry takes at most */

enum { T_REC, T_END, T_CLOSE, T_STOP };

/* what a head word holds: the limits hgl_open() checked every record against (hg_hgl.h) */
_Static_assert(HGL_MAX_THREADS <= 4096 && HGL_MAX_CPUS <= 8192, "a thread in 12 bits, a CPU in 13");

/*
 * The head word: tag (2 bits), the event (2: 0 none, 1 START, 2 WOPEN), the gapper's answer
 * (2), migrated (1), t2 written (1), the record's type (2) and flags (8), its thread (12) and CPU
 * (13); for a START that closed a gap, the gap's thread (12) and whether it was asked for (2).
 */
#define H_TAG(h)	((unsigned)(h) & 3)
#define H_EV(h)		((unsigned)((h) >> 2) & 3)
#define H_MADE(h)	((int)((h) >> 4) & 3)
#define H_MIG(h)	((int)((h) >> 6) & 1)
#define H_T2(h)		((unsigned)((h) >> 7) & 1)
#define H_TYPE(h)	((uint8_t)(((h) >> 8) & 3))
#define H_FLAGS(h)	((uint8_t)((h) >> 10))
#define H_THREAD(h)	((uint16_t)(((h) >> 18) & 0xfff))
#define H_CPU(h)	((uint32_t)((h) >> 30) & 0x1fff)
#define H_GTHREAD(h)	((uint16_t)(((h) >> 43) & 0xfff))
#define H_GVOL(h)	((uint8_t)(((h) >> 55) & 3))

/* a thread's interval that started last: what its end needs */
struct tape_thread {
	int64_t t1;
	uint32_t cpu;
	uint8_t vol;
};

struct tape {
	struct run *r;
	FILE *f;
	int fd;
	uint64_t *buf;
	size_t n;			/* the reader: words in buf */
	uint64_t *w, *wlim;		/* the writer's place, and the last with room for an entry */
	uint64_t *rec;			/* the writer: the last record's head, for its event */
	const uint64_t *p, *lim;	/* the reader's place, and the last with an entry whole after */
	int eof;			/* the reader: the file is read to its end */
	uint64_t seq;			/* the reader: the stream's count of records picked */
	struct tape_thread *th;
	uint64_t overlaps;		/* what the writer's gapper found (gapper.c) */
	struct hgl_rec overlap_a, overlap_b;
};

struct tape *tape_new(struct run *r, const char *tmpdir)
{
	struct tape *t = xcalloc(1, sizeof(*t));

	t->r = r;
	t->f = tmp_stream(tmpdir);
	t->fd = fileno(t->f);
	t->buf = xmalloc(TAPE_WORDS * sizeof(*t->buf));
	t->w = t->buf;
	t->wlim = t->buf + TAPE_WORDS - ENTRY_MAX;
	t->th = xcalloc(r->nthreads + 1, sizeof(*t->th));
	return t;
}

void tape_free(struct tape *t)
{
	if (!t)
		return;
	fclose(t->f);
	free(t->buf);
	free(t->th);
	free(t);
}

/* ---- writing: the calibration pass ---- */

static void flush(struct tape *t)
{
	const char *p = (const char *)t->buf;
	size_t left = (size_t)(t->w - t->buf) * sizeof(*t->buf);

	while (left) {
		ssize_t w = write(t->fd, p, left);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			fail_env("cannot write a temporary file in %s: %s (set TMPDIR)",
				 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", w < 0 ? strerror(errno) : "nothing written");
		p += w;
		left -= (size_t)w;
	}
	t->w = t->buf;
}

/* room - ENTRY_MAX words free in the buffer, for the next entry (a record's event is added to it
 * before the next entry asks for room: nothing written is changed after a flush) */
static hot_inline uint64_t *room(struct tape *t)
{
	if (unlikely(t->w > t->wlim))
		flush(t);
	return t->w;
}

static hot_inline uint64_t head_of(unsigned tag, const struct hgl_rec *x)
{
	return tag | (uint64_t)(x->t2 != 0) << 7 | (uint64_t)(x->type & 3) << 8 | (uint64_t)x->flags << 10 |
	       (uint64_t)x->thread << 18 | (uint64_t)x->cpu << 30;
}

/* tape_record - hgside's on_record: a record picked; what it opens comes with tape_event() */
void tape_record(void *ctx, const struct hgl_rec *x)
{
	struct tape *t = ctx;
	uint64_t *w = room(t);

	t->rec = w;
	w[0] = head_of(T_REC, x);
	w[1] = x->t0;
	w[2] = x->t1;
	w[3] = x->t2;
	t->w = w + (x->t2 ? 4 : 3);
}

void tape_event(struct tape *t, const struct hg_ev *ev, int made, const struct gapdef *g, int mig, int64_t mt1)
{
	uint64_t *w;

	if (ev->kind == HGE_START || ev->kind == HGE_WOPEN) {
		/* the record tape_record() just wrote: its event, and the words that go with it */
		*t->rec |= (uint64_t)(ev->kind == HGE_START ? 1 : 2) << 2 | (uint64_t)made << 4 | (uint64_t)!!mig << 6;
		if (made == 1) {
			*t->rec |= (uint64_t)g->thread << 43 | (uint64_t)g->vol << 55;
			*t->w++ = (uint64_t)g->g0;
		}
		if (mig)
			*t->w++ = (uint64_t)mt1;
		return;
	}
	w = room(t);
	if (ev->kind == HGE_END) {
		w[0] = T_END | (uint64_t)made << 4 | (uint64_t)ev->rec.thread << 18;
		t->w = w + 1;
		return;
	}
	w[0] = head_of(T_CLOSE, &ev->rec);
	w[1] = ev->seq;
	w[2] = ev->rec.t0;
	w[3] = ev->rec.t1;
	w[4] = ev->rec.t2;
	t->w = w + (ev->rec.t2 ? 5 : 4);
}

static void fill(struct tape *t);

/* tape_rewind - the stream is over: to the start */
void tape_rewind(struct tape *t, const struct gapper *gp)
{
	t->overlaps = gp->overlaps;
	t->overlap_a = gp->overlap_a;
	t->overlap_b = gp->overlap_b;
	*room(t) = T_STOP;
	t->w++;
	flush(t);
	if (lseek(t->fd, 0, SEEK_SET) != 0)
		fail_env("cannot read back a temporary file: %s", strerror(errno));
	t->n = 0;
	t->p = t->buf;
	t->eof = 0;
	fill(t);
}

/* ---- reading: the merge's pass ---- */

void tape_overlaps(const struct tape *t, struct gapper *gp)
{
	gp->overlaps = t->overlaps;
	gp->overlap_a = t->overlap_a;
	gp->overlap_b = t->overlap_b;
}

/* fill - ENTRY_MAX words ahead in the buffer, or what is left of the file */
static void fill(struct tape *t)
{
	size_t keep = (size_t)(t->buf + t->n - t->p);

	memmove(t->buf, t->p, keep * sizeof(*t->buf));
	t->n = keep;
	t->p = t->buf;
	while (!t->eof && t->n < TAPE_WORDS) {
		ssize_t r = read(t->fd, (char *)(t->buf + t->n), (TAPE_WORDS - t->n) * sizeof(*t->buf));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			fail_env("cannot read back a temporary file: %s", strerror(errno));
		if (r % sizeof(*t->buf))	/* a word cut: the rest follows */
			fail_env("cannot read back a temporary file: a short read");
		t->eof = r == 0;
		t->n += (size_t)r / sizeof(*t->buf);
	}
	if (!t->n)
		fail_env("cannot read back a temporary file: it ends early");
	/* where an entry may start and be whole in the buffer: ENTRY_MAX words before its end,
	 * or its last word once the file is read (the entries are whole there: STOP is last) */
	t->lim = t->buf + (t->eof ? t->n - 1 : t->n - ENTRY_MAX);
}

/* refill - the reader's place is past lim: more of the file, or it ended early */
static cold_path void refill(struct tape *t)
{
	if (!t->eof)
		fill(t);
	if (t->p > t->lim)
		fail_env("cannot read back a temporary file: it ends early");
}

static hot_inline const uint64_t *ahead(struct tape *t)
{
	if (unlikely(t->p > t->lim))
		refill(t);
	return t->p;
}

static hot_inline void rec_of(struct hgl_rec *x, const uint64_t *w, int *k)
{
	uint64_t h = w[0];

	x->t0 = w[1];
	x->t1 = w[2];
	x->t2 = H_T2(h) ? w[(*k)++] : 0;
	x->thread = H_THREAD(h);
	x->type = H_TYPE(h);
	x->flags = H_FLAGS(h);
	x->cpu = H_CPU(h);
}

/* tape_peek - the time of the next step (hgside_peek()'s answer there): its first entry's */
int64_t tape_peek(struct tape *t)
{
	const uint64_t *w = ahead(t);
	uint64_t h = w[0];

	switch (H_TAG(h)) {
	case T_REC:
		return H_TYPE(h) == HGL_REC_WAKE ? (int64_t)w[1] - t->r->margin : (int64_t)w[1];
	case T_END:
		return t->th[H_THREAD(h)].t1;
	case T_CLOSE:		/* window_span's w1 */
		return H_TYPE(h) == HGL_REC_WAKE ? (int64_t)w[3] : H_T2(h) ? (int64_t)w[4] : 0;
	}
	return INT64_MAX;
}

static void span(const struct run *r, struct hg_ev *ev)
{
	if (ev->rec.type == HGL_REC_WAKE) {
		ev->w0 = (int64_t)ev->rec.t0 - r->margin;
		ev->w1 = (int64_t)ev->rec.t1;
		ev->wkind = 1;
	} else {
		ev->w0 = (int64_t)ev->rec.t0;
		ev->w1 = (int64_t)ev->rec.t2;
		ev->wkind = 2;
	}
}

/* close_of - a window's close: its record and seq are on the tape */
static cold_path void close_of(struct tape *t, const uint64_t *w, struct hg_ev *ev)
{
	uint64_t h = w[0];

	ev->seq = w[1];
	ev->rec = (struct hgl_rec){ .t0 = w[2], .t1 = w[3], .t2 = H_T2(h) ? w[4] : 0, .thread = H_THREAD(h),
				    .type = H_TYPE(h), .flags = H_FLAGS(h), .cpu = H_CPU(h) };
	t->p = w + (H_T2(h) ? 5 : 4);
	ev->kind = HGE_WCLOSE;
	span(t->r, ev);
	ev->t = ev->w1;
}

/*
 * tape_next - hgside_next() and gapper_event() of the step, played back: @on_record sees each
 * record picked; 1 with the event, what the gapper made of it (*made, *g) and whether its thread
 * moved (*mig, *mt1); 0 at the end. An interval's end comes without its record (ev->rec is the
 * step's before): nothing of the merge's pass reads it. A step that ends the stream after records
 * that opened nothing leaves *ev as hgside_next() does: the last of them in it (time, seq,
 * record), its kind the event's before; the gapper makes nothing of that (*made 0).
 */
int tape_next(struct tape *t, struct hg_ev *ev, int *made, struct gapdef *g, int *mig, int64_t *mt1,
	      void (*on_record)(void *ctx, const struct hgl_rec *rec), void *ctx)
{
	for (;;) {
		const uint64_t *w = ahead(t);
		uint64_t h = w[0];
		unsigned e;

		ev->w0 = ev->w1 = 0;
		ev->wkind = 0;
		if (likely(H_TAG(h) == T_END)) {
			const struct tape_thread *x = &t->th[H_THREAD(h)];

			t->p = w + 1;
			ev->kind = HGE_END;
			ev->t = x->t1;
			*made = H_MADE(h);
			*mig = 0;
			if (*made == 2)
				*g = (struct gapdef){ .g0 = x->t1, .cpu = x->cpu, .thread = H_THREAD(h), .vol = x->vol };
			return 1;
		}
		if (unlikely(H_TAG(h) != T_REC)) {
			if (H_TAG(h) == T_CLOSE) {
				close_of(t, w, ev);
				*made = *mig = 0;
				return 1;
			}
			*made = 0;	/* the end: what hgside_next() left, the gapper made nothing of */
			return 0;
		}
		ev->rec.t0 = w[1];
		ev->rec.t1 = w[2];
		ev->rec.t2 = H_T2(h) ? w[3] : 0;
		ev->rec.thread = H_THREAD(h);
		ev->rec.type = H_TYPE(h);
		ev->rec.flags = H_FLAGS(h);
		ev->rec.cpu = H_CPU(h);
		ev->seq = t->seq++;
		ev->t = ev->rec.type == HGL_REC_WAKE ? (int64_t)ev->rec.t0 - t->r->margin : (int64_t)ev->rec.t0;
		w += H_T2(h) ? 4 : 3;
		if (on_record)
			on_record(ctx, &ev->rec);
		e = H_EV(h);
		if (!e) {		/* it opened nothing: the step goes on */
			t->p = w;
			continue;
		}
		*made = H_MADE(h);
		*mig = H_MIG(h);
		if (*made == 1)
			*g = (struct gapdef){ .g0 = (int64_t)*w++, .g1 = (int64_t)ev->rec.t0, .cpu = ev->rec.cpu,
					      .thread = H_GTHREAD(h), .next_thread = ev->rec.thread, .vol = H_GVOL(h) };
		if (*mig)
			*mt1 = (int64_t)*w++;
		t->p = w;
		if (e == 1) {
			struct tape_thread *x = &t->th[ev->rec.thread];

			ev->kind = HGE_START;
			x->t1 = (int64_t)ev->rec.t1;
			x->cpu = ev->rec.cpu;
			x->vol = ev->rec.flags & HGL_IV_YIELD ? 1 : ev->rec.flags & HGL_IV_SLEEP ? 2 : 0;
		} else {
			ev->kind = HGE_WOPEN;
			span(t->r, ev);
			ev->t = ev->w0;
		}
		return 1;
	}
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tracedat_writer.h - a trace-cmd trace.dat, file format version 6, written
 * from scratch and streamed: event formats, a top buffer and named buffers,
 * per-CPU pages of records with time extends and lost-event marks, saved
 * cmdlines, kallsyms, options (trace clock x86-tsc, TSC2NSEC, uname,
 * version, buffers), flyrecord. No tracefs is needed.
 *
 * Pages go to an unnamed temporary file per buffer in the output's folder
 * as they fill, each (buffer, CPU) lane's in chunks whose places it keeps (a
 * file per lane ran out of open files at 1024 with 500 CPUs); td_write assembles
 * a file from them (copy_file_range) under a temporary name and renames it
 * when complete. Memory stays flat:
 * a lane holds TD_CHUNK_PAGES pages at most, fewer when there are many lanes
 * (TD_CHUNKS_BYTES for all of them).
 *
 * The facts this relies on (trace-cmd.dat.v6(5), checked against trace-cmd
 * 3.1.6 and KernelShark 2.2.1) are in /work/shared/TRACE-DAT.md.
 *
 *	w = td_create(path, ncpus, tsc_hz, err);
 *	td_event(w, "sched", "sched_switch", fields, n, fmt, &ev, err);
 *	p = td_reserve(td_lane(w, 0, cpu), ts, ev.fixed);  (fill the payload at p)
 *	td_flush(w, err); td_write(w, "out.dat", 0, NULL, 0, err); td_destroy(w);
 */
#ifndef TRACEDAT_WRITER_H
#define TRACEDAT_WRITER_H

#include <stdint.h>
#include <string.h>
#include "hg_err.h"

#define TD_PAGE		4096
#define TD_PAGE_HDR	16		/* u64 timestamp, u64 commit */
#define TD_DATA		(TD_PAGE - TD_PAGE_HDR)
#define TD_TS_BITS	27		/* time delta bits of an entry header */
#define TD_SMALL_MAX	112		/* longest payload with the length in type_len (28 * 4) */
#define TD_CHUNK_PAGES	64		/* pages a lane fills before one write(), at most */
#define TD_CHUNKS_BYTES	(16 << 20)	/* ... and every lane's pages together, at most */
#define TD_MAX_FIELDS	12
#define TD_MAX_BUFFERS	8
#define TD_FIRST_ID	1000		/* event ids: unique and within int16 (KernelShark) */

/* what a field's type string says about its bytes */
enum td_kind { TD_INT, TD_STR, TD_LOC };

/* td_field - one field of an event, as Python's tracedat.py declares it: @type "int", "u32",
 * "u64", "s64", "long", "pid_t", "unsigned int", "char" (a char[@size] array) or
 * "__data_loc char[]" (a string after the fixed part; @size 4) */
struct td_field {
	const char *type;
	const char *name;
	unsigned size;
};

/* td_event - an event's id and its precomputed layout: field i is at off[i] */
struct td_event {
	uint16_t id;
	uint16_t fixed;			/* bytes of the fixed part, common fields included */
	uint16_t nfields;
	uint16_t off[TD_MAX_FIELDS];
	uint8_t kind[TD_MAX_FIELDS];	/* enum td_kind */
};

struct td_writer;

/* td_lane - one (buffer, CPU): its pages. Public for td_reserve's inline fast path only. */
/* a stretch of a lane's pages in its buffer's page file */
struct td_extent {
	uint64_t at, n;
};

struct td_lane {
	uint8_t *chunk;		/* the writer's chunk_pages pages, zeroed before use */
	uint8_t *page;		/* the page being filled, NULL before the first entry */
	unsigned npages;	/* pages of @chunk in use, the current one included */
	unsigned used;		/* data bytes used on the current page */
	unsigned reserve;	/* 8: the page stores a lost count after its data */
	uint64_t page_ts;	/* timestamp of the page (its first entry's) */
	uint64_t last;		/* timestamp of the last entry */
	uint64_t lost;		/* events lost before the next entry: it starts a new page */
	uint64_t page_lost;	/* events lost before the current page */
	uint64_t entries;	/* entries written (time extends not counted) */
	uint64_t marks;		/* pages that say events were lost before them */
	uint64_t file_bytes;	/* whole pages written to its buffer's page file */
	struct td_extent *ext;	/* ... where they are there, in order */
	size_t next, capext;
	int buffer;
	struct td_writer *w;
};

/* td_create - a writer of the trace.dat @path (which messages name); its temporary files go to
 * @path's folder, so that they are copied into it cheaply */
struct td_writer *td_create(const char *path, unsigned ncpus, double tsc_hz, struct hg_err *err);
/* td_destroy - close and free everything; the temporary files vanish with their descriptors */
void td_destroy(struct td_writer *w);

/* td_event - declare an event of @system; fills @ev. Ids are given in order from TD_FIRST_ID,
 * so two writers that declare the same events in the same order give them the same ids. */
int td_event(struct td_writer *w, const char *system, const char *name, const struct td_field *fields,
	     unsigned nfields, const char *print_fmt, struct td_event *ev, struct hg_err *err);
/* td_buffer - a named buffer (an instance); returns its index (the top buffer is 0) */
int td_buffer(struct td_writer *w, const char *name, struct hg_err *err);
struct td_lane *td_lane(struct td_writer *w, int buffer, unsigned cpu);

void td_set_uname(struct td_writer *w, const char *uname);
void td_set_version(struct td_writer *w, const char *version);
/* td_cmdline - a task name for the saved cmdlines (a later call for the same pid wins) */
int td_cmdline(struct td_writer *w, uint32_t pid, const char *comm, struct hg_err *err);
/* td_kallsyms - a symbol, so that %ps prints @name for @addr */
int td_kallsyms(struct td_writer *w, uint64_t addr, const char *name, struct hg_err *err);

uint8_t *td_reserve_slow(struct td_lane *l, uint64_t ts, unsigned n);

static inline void td_put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

/*
 * td_reserve - room for one entry of @n payload bytes (a multiple of 4) at @ts, which must not
 * be below the lane's last timestamp. Returns where the payload goes: zeroed memory, so only
 * non-zero bytes need writing. Never NULL: a failed write is kept for td_failed().
 */
static inline uint8_t *td_reserve(struct td_lane *l, uint64_t ts, unsigned n)
{
	uint64_t delta = ts - l->last;
	uint8_t *p;

	if (__builtin_expect(!l->page || l->lost || n > TD_SMALL_MAX || delta >= (1u << TD_TS_BITS) ||
			     l->used + 4 + n + l->reserve > TD_DATA, 0))
		return td_reserve_slow(l, ts, n);
	p = l->page + TD_PAGE_HDR + l->used;
	td_put32(p, (n >> 2) | (uint32_t)delta << 5);
	l->used += 4 + n;
	l->last = ts;
	l->entries++;
	return p + 4;
}

/* td_lost - @count events were lost before the next entry of the lane: its page says so */
static inline void td_lost(struct td_lane *l, uint64_t count)
{
	l->lost += count ? count : 1;
}

/* td_failed - a write failed: fills @err and returns -1; 0 otherwise */
int td_failed(struct td_writer *w, struct hg_err *err);

/* td_flush - seal every lane's current page and write every pending page out */
int td_flush(struct td_writer *w, struct hg_err *err);

/*
 * td_write - after td_flush: the file @path with buffer @top as its top buffer and the
 * @nextra buffers @extra as named buffers, written to a temporary name beside @path.
 * Returns 0 and leaves the complete file at *tmp_out (malloc'd; the caller renames it with
 * out_commit, out_tmp.h) or -1 with nothing left behind.
 */
int td_write(struct td_writer *w, const char *path, int top, const int *extra, unsigned nextra,
	     char **tmp_out, struct hg_err *err);

/*
 * td_scan - every entry of one lane's written pages, in order: @fn(arg, ts, missed) with
 * @missed the lost count the page announces on its first entry (~0 when not stored), else 0.
 * @fn returns non-zero to stop. Reads page and entry headers only.
 */
int td_scan(struct td_writer *w, int buffer, unsigned cpu,
	    int (*fn)(void *arg, uint64_t ts, uint64_t missed), void *arg, struct hg_err *err);

/*
 * td_write_merged - after the entries of buffers @a and @b are all written: the file @path
 * (under a temporary name, *tmp_out, as td_write) whose one buffer has, for every CPU, the two
 * lanes merged by time (@b's entry first at equal times), each lost-event mark kept before the
 * entry it preceded. The merged pages go straight into the file; they form buffer *merged,
 * which td_scan reads from the file. (trace-cmd 3.1.6 crashes on any -F filter of a file with
 * a second buffer: one buffer holding both is the way to show both; docs/export.md.)
 */
int td_write_merged(struct td_writer *w, const char *path, int a, int b, int *merged, char **tmp_out,
		    struct hg_err *err);

/* td_tsc2nsec - the TSC2NSEC option's factors: ns = (ts * mult) >> shift, mult < 2^31 */
void td_tsc2nsec(double tsc_hz, uint32_t *mult, uint32_t *shift);

/* td_to_ns - trace-cmd's own conversion (mul_u64_u32_shr), so that times match its display */
static inline uint64_t td_to_ns(uint64_t ts, uint32_t mult, uint32_t shift)
{
	uint64_t lo = (uint32_t)ts, hi = ts >> 32, r;

	r = (lo * mult) >> shift;
	if (hi)
		r += (hi * mult) << (32 - shift);
	return r;
}

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * convert.h - ring-buffer events to the file's records, per CPU, losses in place.
 *
 * Where events went missing, and how many, comes from two places:
 *  - overwrite mode: the kernel flags the first page read after events were
 *    overwritten and, when the page has room, stores how many. The LOST
 *    record goes just before that page's first event: exact. Without room
 *    the count is the instance's overrun counter read after that drain,
 *    less what earlier LOST records already counted.
 *  - stop mode (and a commit overrun in either): the kernel only counts
 *    (per_cpu/cpuN/stats). The recorder reads the counters before draining
 *    each CPU and after each page it reads. Drops counted before the drain
 *    happened while the buffer sat full, so after every event it then held
 *    ("entries"): the LOST record goes after that many events, exact.
 *    Drops counted while a page was being read happened when the buffer had
 *    refilled behind the reader (tiny buffers, heavy load): the writer
 *    stopped at the end of a full buffer, about a buffer's worth of pages
 *    after the page being read, and resumed on a page once one was freed.
 *    Of the five page boundaries around there, the LOST record goes at
 *    the one with the longest pause in the events before it: the writer
 *    stood still from the drop until then. An estimate to a page, and the
 *    recording says how many LOST records are estimates.
 * The file's per-CPU counters then satisfy the module's invariants: records
 * in the file + LOST counts = produced (docs/hgtrace-ftrace.md).
 */
#ifndef HG_CONVERT_H
#define HG_CONVERT_H

#include <stddef.h>
#include <stdint.h>
#include "hgtrace.h"
#include "tfs.h"

struct hgev_map;
struct kbuffer;
struct hgt_writer;
struct spool;

struct conv_mark {
	int64_t page;		/* the page it belongs in, -1 once armed */
	uint64_t pos;		/* events after the page's start; once armed, the event's number */
	uint64_t count;
	uint8_t aux;		/* as the module's LOST: 0 refused (full), 1 overwritten */
	uint8_t estimated;
	uint8_t span;		/* boundaries from page on where it may lie: the one after the longest pause */
};

struct conv_pass {
	uint64_t end_page;	/* pages before this number were read by the pass */
	struct tfs_stats t;	/* the counters right after it */
};

struct conv_cpu {
	char *out;		/* records not yet in the file */
	size_t used, cap;
	size_t *holes;		/* offsets in out of LOST records whose count waits for the counters */
	size_t nholes, holes_cap;
	struct conv_mark *marks;
	size_t nmarks, marks_cap;
	struct conv_pass *passes;
	size_t npasses, passes_cap;
	struct tfs_stats s, prev;	/* counters last seen in this drain, at the end of the last */
	uint64_t start_page;	/* where this drain began */
	int64_t carry_missed;	/* a flagged page held no event: its loss goes on the next one */
	uint64_t events;	/* ring-buffer events seen */
	uint64_t records;	/* records written, LOST excluded */
	uint64_t lost_over, lost_refused;
	uint64_t estimated;	/* LOST records placed (or counted) by estimate */
	uint64_t unconverted;	/* events not turned into records (not ours, or too short) */
	uint64_t bad_pages;
	uint64_t last_ts;
};

struct conv {
	struct hgev_map *map;
	struct kbuffer *kbuf;
	struct kbuffer *peek;	/* a second one, to look at a page ahead */
	struct hgt_writer *w;
	int ncpus;
	struct conv_cpu *cpu;
	uint64_t buffer_pages;	/* pages one CPU's buffer holds */
	size_t psize;
	int error;		/* out of memory or a write failed */
};

int conv_init(struct conv *cv, struct hgev_map *map, struct kbuffer *kbuf, struct hgt_writer *w,
	      int ncpus, unsigned long buffer_kb, size_t psize);
void conv_free(struct conv *cv);
/* conv_pass_begin, conv_pass_end - the counters around one CPU's drain; @page: spool_next() or -1 */
void conv_pass_begin(struct conv *cv, int cpu, const struct tfs_stats *s, int64_t page);
/* conv_page_read - the counters right after page number @page was read (stop mode) */
void conv_page_read(struct conv *cv, int cpu, const struct tfs_stats *s, uint64_t page);
void conv_pass_end(struct conv *cv, int cpu, const struct tfs_stats *t, int64_t page);
/* conv_pages - convert every page @cpu holds in @sp (then released) */
int conv_pages(struct conv *cv, struct spool *sp, int cpu);
/* conv_event - one event, for readers that hand events one at a time; @missed as kbuffer says */
void conv_event(struct conv *cv, int cpu, uint64_t ts, const void *data, int size, long long missed);
/* conv_finish - after the last drain: the LOST records still due, counts reconciled with @final */
void conv_finish(struct conv *cv, int cpu, uint64_t end_ts, const struct tfs_stats *final);
/* conv_put - a record of our own (a NAME) at the end of @cpu's stream */
void conv_put(struct conv *cv, int cpu, const void *rec, size_t len);
/* conv_flush - write @cpu's records out as chunks */
int conv_flush(struct conv *cv, int cpu);
/* conv_stats - @cpu's counters for the file's stats chunk */
void conv_stats(const struct conv *cv, int cpu, struct hgt_cpu_stats *st);

#endif

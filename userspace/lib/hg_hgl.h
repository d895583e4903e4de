/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hg_hgl.h - the one reader of hourglass's binary trace (docs/hourglass-trace.md).
 *
 * hgl_open() checks the prelude and every section header, parses the info
 * section (strict JSON, hg_json.h) into struct hgl_info, checking the type
 * of every key it uses, and checks each record (type, thread < nthreads,
 * cpu < HGL_MAX_CPUS, stamps <= HGL_MAX_TSC, an interval that does not end
 * before it starts) before anything is handed out. Records are read
 * through cursors (own buffered reads, not a mapping), so memory does not
 * grow with the trace.
 */
#ifndef HG_HGL_H
#define HG_HGL_H

#include <stddef.h>
#include <stdint.h>
#include "hg_err.h"
#include "hgl_trace.h"		/* userspace/hourglass: the format */

#define HGL_MAX_CPUS		8192
#define HGL_MAX_THREADS		4096
#define HGL_MAX_INFO_BYTES	(16u << 20)
#define HGL_MAX_TSC_HZ		1e12	/* tsc.hz: 1 Hz .. 1 THz, else the figures derived from it are nonsense */
#define HGL_MAX_TSC		INT64_MAX	/* a record's stamps: every reader holds them as int64_t */

#define HGL_OPEN_ALLOW_INCOMPLETE 1	/* no end! section: read what is there */

struct hgl_file;
struct hgl_cursor;

/* one thread of the run, from info.threads[] (0 or "" when the key is absent) */
struct hgl_thread {
	int thread;
	uint32_t tid;
	char workload[16];	/* CPU, CPU_SCAN, CPU_YIELD, PERIODIC, CPU_PERIODIC, LAT, ... */
	char policy[12];	/* other, fifo, rr, deadline, ... */
	int priority;
	char timer[12];		/* NATIVE, HR, RTC, ... */
	char affinity[64];
	int64_t period_ns, amount_ns;
	double cpu_time_ns;	/* the sum of its intervals, as hourglass counted */
	int has_accounting;	/* info.threads[].accounting present */
	int64_t acct_tsc0, acct_tsc1;
	double schedstat_on_cpu_ns, schedstat_slices, rusage_user_ns, rusage_system_ns, thread_cputime_ns;
};

struct hgl_info {
	double tsc_hz;		/* tsc.hz: required, > 0 */
	int64_t t0_tsc;		/* the run's zero */
	int64_t duration_ns;
	int complete;		/* info.complete */
	int nthreads;
	struct hgl_thread *threads;
	const char *json;	/* the info section, checked to be valid JSON, NUL-terminated */
	size_t json_len;
};

int hgl_open(struct hgl_file **out, const char *path, unsigned flags, struct hg_err *err);
void hgl_close(struct hgl_file *f);
const char *hgl_path(const struct hgl_file *f);
const struct hgl_info *hgl_info(const struct hgl_file *f);
uint64_t hgl_nr_records(const struct hgl_file *f);
uint64_t hgl_dropped(const struct hgl_file *f);		/* end!.dropped */
int hgl_complete(const struct hgl_file *f);		/* an end! section was found */
/* hgl_version - the prelude's major (HGL_FORMAT_MAJOR) and minor (added by the implementation) */
void hgl_version(const struct hgl_file *f, unsigned *major, unsigned *minor);

/* hgl_cursor_open - the records of @thread (-1: all) in file order (per thread, time order).
 * The cursors of single threads on one file share the blocks they read (a block holds many
 * threads' records: one read for all of them), so use them from one thread of the program. */
struct hgl_cursor *hgl_cursor_open(struct hgl_file *f, int thread, struct hg_err *err);
/* hgl_cursor_next - 1 and *rec, 0 at the end, -1 on a bad file */
int hgl_cursor_next(struct hgl_cursor *c, struct hgl_rec *rec, struct hg_err *err);
/*
 * hgl_cursor_next_block - with a cursor of every thread (-1): the records hgl_cursor_next()
 * would hand out next, as many as are read and checked at once: 1 with *n records at *recs
 * (valid until the next call), 0 at the end, -1 on a bad file (after the good records before
 * the bad one). A pass over the whole file spares a call and a copy a record.
 */
int hgl_cursor_next_block(struct hgl_cursor *c, const struct hgl_rec **recs, size_t *n, struct hg_err *err);
/* hgl_cursor_rewind - back to the first record (a second pass) */
void hgl_cursor_rewind(struct hgl_cursor *c);
void hgl_cursor_close(struct hgl_cursor *c);

#endif

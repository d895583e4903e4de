/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hgl_trace.h - hourglass's binary trace, the merger's input from user space.
 *
 * Version 1.0. Layout (little endian, docs/hourglass-trace.md):
 *   struct hgl_prelude
 *   sections: struct hgl_section, then @size bytes, then zero padding to 8
 *     "info"  the run's JSON summary (provenance, calibration, threads)
 *     "recs"  an array of struct hgl_rec, ordered per thread by time
 *     "end!"  struct hgl_end: a file without it is incomplete
 * A reader skips sections it does not know; a change of major is
 * incompatible, a new minor only adds sections, record types or flags.
 */
#ifndef HGL_TRACE_H
#define HGL_TRACE_H

#include <stdint.h>

#define HGL_MAGIC "HGLASS\n"	/* 8 bytes with the NUL */
#define HGL_FORMAT_MAJOR 1
#define HGL_FORMAT_MINOR 0

struct hgl_prelude {
	char magic[8];
	uint16_t major;
	uint16_t minor;
	uint32_t reserved;
};

struct hgl_section {
	char tag[4];
	uint32_t reserved;
	uint64_t size;		/* payload bytes, without padding */
};

enum hgl_rec_type {
	HGL_REC_INTERVAL = 1,	/* t0 start, t1 end (TSC), cpu at start */
	HGL_REC_JOB = 2,	/* t0 release, t1 completion (0: none), t2 deadline */
	HGL_REC_WAKE = 3,	/* t0 intended wake-up, t1 first TSC read after it,
				 * t2 lateness in ns (signed), cpu after the wake-up */
};

/* Interval flags: why it ended, when the thread knows. */
#define HGL_IV_YIELD	0x01	/* the thread called sched_yield() */
#define HGL_IV_SLEEP	0x02	/* the thread blocked on its timer */
#define HGL_IV_LAST	0x04	/* the thread's run ended */
/* Job flags */
#define HGL_JOB_MISSED	0x01	/* not complete by its deadline */
#define HGL_JOB_CUT	0x02	/* the run ended before the deadline */
/* Wake flags: the timer (enum hg_timer_kind + 1) in the low 4 bits */
#define HGL_WAKE_LAT	0x10	/* a LAT sample (else a PERIODIC release) */

struct hgl_rec {
	uint64_t t0;
	uint64_t t1;
	uint64_t t2;
	uint16_t thread;	/* hourglass thread number, 0..n-1 */
	uint8_t type;		/* enum hgl_rec_type */
	uint8_t flags;
	uint32_t cpu;
};

struct hgl_end {
	uint64_t nr_records;
	uint64_t dropped;	/* records the full buffer could not take */
};

#endif

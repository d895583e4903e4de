/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hg_opts.h - the options both recorders take alike (hgtrace record and
 * hgtrace-ftrace record), parsed and checked once: -d, -i, -e, -b, -m, -r, -C.
 */
#ifndef HG_OPTS_H
#define HG_OPTS_H

#include <stddef.h>
#include <stdint.h>

#include "hg_err.h"

/* the groups -e names, for messages */
#define HG_EVENT_GROUPS "sched, irq, softirq, vectors, nmi, hrtimer, syscalls, all"

/* hg_parse_seconds - "10", "10s", "500ms", "20us", "1.5m" in seconds; -1 if bad */
double hg_parse_seconds(const char *s);

/*
 * hg_parse_events - "sched,irq" to HGT_EV_* bits; 0 if a name is unknown,
 * that name then copied into @bad (of @badlen bytes)
 */
uint32_t hg_parse_events(const char *list, char *bad, size_t badlen);

/* what either recorder is told alike; each sets its own defaults first */
struct hg_rec_opts {
	double duration;	/* -d: s, 0: until the command ends or a signal */
	double interval;	/* -i: s between drains */
	uint32_t events;	/* -e: HGT_EV_* */
	int events_given;	/* -e options seen: the first replaces the default, the next add */
	unsigned long buffer_kb;	/* -b: per CPU */
	int overwrite;		/* -m: 1 overwrite, 0 stop */
	int prio;		/* -r: the reader's SCHED_FIFO priority, 0: SCHED_OTHER */
	int reader_cpu;		/* -C: -1 not pinned */
};

/* the option letters hg_rec_opt() takes, for getopt strings */
#define HG_REC_OPTS "d:i:e:b:m:r:C:"

/*
 * hg_rec_opt - option @c with value @arg into @o: 1 if taken, 0 if @c is not
 * one of HG_REC_OPTS, -1 with @e saying what was wrong ("bad buffer size
 * '4' (8 to 1048576 KiB)"), for the program to print after its name.
 */
int hg_rec_opt(struct hg_rec_opts *o, int c, const char *arg, struct hg_err *e);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hg_opts.h - the options both recorders take alike (hgtrace record and
 * hgtrace-ftrace record), parsed and checked once: -d, -i, -e, -b, -m, -r, -C, -c.
 * Their other options (-o, -q, -z, -P, -F and each one's own) stay with each: the
 * two take -o, -q and -z alike, but in one line each and into fields the rest of
 * each program reads.
 */
#ifndef HG_OPTS_H
#define HG_OPTS_H

#include <stddef.h>
#include <stdint.h>

#include "hg_cpulist.h"
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
	struct hg_cpuset cpus;	/* -c: the CPUs to record, empty: every CPU (hg_cpuset_free) */
	unsigned int cpus_max;	/* -c may name CPUs 0 to cpus_max - 1 only (the module's); 0: any */
};

/* the option letters hg_rec_opt() takes, for getopt strings */
#define HG_REC_OPTS "d:i:e:b:m:r:C:c:"

/* their long names, for getopt_long's table (<getopt.h>) */
#define HG_REC_LONG_OPTS \
	{ "duration", required_argument, 0, 'd' }, { "interval", required_argument, 0, 'i' }, \
	{ "events", required_argument, 0, 'e' }, { "buffer", required_argument, 0, 'b' }, \
	{ "mode", required_argument, 0, 'm' }, { "prio", required_argument, 0, 'r' }, \
	{ "reader-cpu", required_argument, 0, 'C' }, { "cpus", required_argument, 0, 'c' }

/*
 * hg_rec_opt - option @c with value @arg into @o: 1 if taken, 0 if @c is not
 * one of HG_REC_OPTS, -1 with @e saying what was wrong ("bad buffer size
 * '4' (8 to 1048576 KiB)"), for the program to print after its name.
 */
int hg_rec_opt(struct hg_rec_opts *o, int c, const char *arg, struct hg_err *e);

#endif

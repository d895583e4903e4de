/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hg_opts.h - option values both recorders take alike (hgtrace record and
 * hgtrace-ftrace record): times and the event groups of -e.
 */
#ifndef HG_OPTS_H
#define HG_OPTS_H

#include <stddef.h>
#include <stdint.h>

/* the groups -e names, for messages */
#define HG_EVENT_GROUPS "sched, irq, softirq, vectors, nmi, hrtimer, syscalls, all"

/* hg_parse_seconds - "10", "10s", "500ms", "20us", "1.5m" in seconds; -1 if bad */
double hg_parse_seconds(const char *s);

/*
 * hg_parse_events - "sched,irq" to HGT_EV_* bits; 0 if a name is unknown,
 * that name then copied into @bad (of @badlen bytes)
 */
uint32_t hg_parse_events(const char *list, char *bad, size_t badlen);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hg_cpulist.h - CPU lists as the kernel writes them ("0,2-5,8"), sized at
 * run time: the one parser and formatter of hourglass, hgtrace and the merger.
 */
#ifndef HG_CPULIST_H
#define HG_CPULIST_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#define HG_CPULIST_MAX 8192		/* CPUs a list may name: 0..8191 */

struct hg_cpuset {
	uint64_t *bits;
	unsigned nbits;			/* 1 + the highest CPU named, 0 if empty */
};

/* hg_cpulist_parse - 0, or -1 with *why ("'x' is not a CPU number", "5-3 runs backwards") */
int hg_cpulist_parse(const char *s, struct hg_cpuset *set, const char **why);
int hg_cpuset_has(const struct hg_cpuset *set, unsigned cpu);
unsigned hg_cpuset_count(const struct hg_cpuset *set);
void hg_cpuset_add(struct hg_cpuset *set, unsigned cpu);
/* hg_cpulist_format - "0,2-5" into @buf (truncated with "..." if too small) */
void hg_cpulist_format(const struct hg_cpuset *set, char *buf, size_t len);
void hg_cpuset_free(struct hg_cpuset *set);
/*
 * hg_cpuset_fprint_mask - @set in hex, CPU 0 last, as the .hgt metadata's cpumask
 * line holds it: at least 256 bits (what its first readers took), more when the set
 * names a higher CPU; an empty set prints zeros
 */
void hg_cpuset_fprint_mask(FILE *f, const struct hg_cpuset *set);

#endif

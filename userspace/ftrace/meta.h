/* SPDX-License-Identifier: GPL-2.0 */
/* meta.h - the .hgt metadata of an ftrace recording, and the TSC frequency it needs */
#ifndef HG_META_H
#define HG_META_H

#include <stdint.h>

struct ft_opts;
struct tfs;

/* a TSC reading and CLOCK_MONOTONIC_RAW taken together (the tightest of a few tries) */
struct tsc_pair {
	uint64_t tsc;
	uint64_t ns;
};

void tsc_pair_now(struct tsc_pair *p);
/* tsc_khz_between - TSC cycles per ms between two pairs; 0 if too close to tell */
uint32_t tsc_khz_between(const struct tsc_pair *a, const struct tsc_pair *b);

/* meta_build - the "key: value" lines (malloc'd); @groups: the HGT_EV_* bits recorded */
char *meta_build(const struct ft_opts *o, const struct tfs *t, uint32_t groups, uint32_t tsc_khz);

#endif

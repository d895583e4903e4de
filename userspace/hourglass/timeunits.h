/* SPDX-License-Identifier: GPL-2.0 */
/*
 * timeunits.h - self-describing times ("3m", "1.5s", "1020ms", "87.0us").
 */
#ifndef HG_TIMEUNITS_H
#define HG_TIMEUNITS_H

#include <stdint.h>

/*
 * hg_parse_time - parse a time with its unit into nanoseconds.
 * Returns NULL on success, or a message saying what is wrong with @s.
 */
const char *hg_parse_time(const char *s, uint64_t *ns);

#endif

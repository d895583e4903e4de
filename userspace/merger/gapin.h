/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gapin.h - an earlier merge's gap stream of the same run, read back as the
 * kernel's verdict on each gap (hgmerge --truth; gapin.c says why).
 */
#ifndef HGMERGE_GAPIN_H
#define HGMERGE_GAPIN_H

#include "engine.h"

struct gapin;

/* gapin_open - @path read and checked whole; a bad file is fail()ed with its offset */
struct gapin *gapin_open(const char *path);
const struct hgg_header *gapin_header(const struct gapin *gi);
/* gapin_find - the file's record of the gap @d (same CPU, ends and threads); fails if none */
const struct hgg_gap *gapin_find(const struct gapin *gi, const struct gapdef *d);
void gapin_close(struct gapin *gi);

#endif

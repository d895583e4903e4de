/* SPDX-License-Identifier: GPL-2.0 */
/* gapout.h - the per-gap stream as a file: binary (hg_gaps.h) or JSON lines */
#ifndef HGMERGE_GAPOUT_H
#define HGMERGE_GAPOUT_H

#include "engine.h"

struct gapout;
struct gapout *gapout_open(const char *path, int json, struct run *r, struct infer *in);
void gapout_gap(struct gapout *o, const struct hgg_gap *g, const struct gap_detail *d);
/* gapout_finish - complete the file under its temporary name (FILE.partial); gapout_commit -
 * give it its name (after the exports, so that a failure of theirs leaves none of it) */
void gapout_finish(struct gapout *o);
void gapout_commit(struct gapout *o);

#endif

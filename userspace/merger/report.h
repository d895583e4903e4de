/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report.h - what the report is written from.
 */
#ifndef HGMERGE_REPORT_H
#define HGMERGE_REPORT_H

#include <stdio.h>
#include "engine.h"

struct report_in {
	struct run *r;
	const char *dir;		/* the run directory, as the report names it */
	double seconds;			/* the merge's own time */
	uint64_t events;		/* kernel records read */
	struct infer *infer;
	struct judge *judge;
	struct latency *lat;
	struct micro *micro;
	struct sbf *sbf;
	const char *gaps_path, *ks_path, *pf_path;	/* files written beside it, or NULL */
	const char *truth_path;		/* hgmerge --truth: the kernel's verdicts came from it */
	void (*extra)(void *ctx, struct jsonw *w);	/* more keys at the report's end (--grid's) */
	void *extra_ctx;
};

void report_write(struct report_in *in, FILE *f);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xthread.h - the exporters on a thread of their own, fed through a ring in
 * the merge pass's order, so that writing the trace files overlaps merging.
 */
#ifndef HGMERGE_XTHREAD_H
#define HGMERGE_XTHREAD_H

#include "engine.h"
#include "export.h"

struct xthread;
/* xthread_start - a thread running @ks and @pf (either may be NULL) */
struct xthread *xthread_start(struct ks_export *ks, struct pf_export *pf);
void xthread_kernel(struct xthread *x, uint32_t cpu, const struct hgt_rec *r);
void xthread_hourglass(struct xthread *x, const struct hgl_rec *r);
void xthread_gap(struct xthread *x, const struct hgg_gap *g);
/* xthread_join - wait for everything queued to be written; 0, or -1 and the first error */
int xthread_join(struct xthread *x, struct hg_err *err);

#endif

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
/* xthread_drained - end the stream and wait until every exporter is drained: their counts
 * in @ks and @pf (each for its own exporter); 0, or -1 and the first error */
int xthread_drained(struct xthread *x, struct ks_summary *ks, struct pf_summary *pf, struct hg_err *err);
/* xthread_join - wait until every exporter's file is put together (ks_write, pf_write), then
 * free @x; 0, or -1 and the first error. The exporters are then the caller's to commit or
 * abort (abort both when this fails). */
int xthread_join(struct xthread *x, struct hg_err *err);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ks_session.h - a KernelShark session that opens the export zoomed on one
 * gap, marker A at its start and marker B at its end:
 *
 *	kernelshark -s SESSION.json
 *
 * The gap is the earliest whose inference was wrong among those the kernel
 * explains (neither hidden nor unexplainable, not voluntary); else the
 * earliest the kernel explains; else the earliest gap.
 *
 * KernelShark 2.2.1 cannot restore a session stream that is a second buffer
 * of a file (kshark_tep_open_buffer fails with -EFAULT, even on a session
 * it saved itself), so the session names two files, each opened as a top
 * buffer: the trace.dat (the kernel's events) and a companion file whose
 * top buffer holds the hourglass buffer's events. The layout is
 * KernelShark's own (what File > Sessions > Export writes): each data file
 * with its modification time, which KernelShark checks; a CPU plot per CPU;
 * the visible range in nanoseconds; the markers as rows of its table of all
 * entries of both files merged by time, counted exactly from the pages.
 */
#ifndef KS_SESSION_H
#define KS_SESSION_H

#include <stdint.h>
#include "../merger/hg_gaps.h"
#include "tracedat_writer.h"

enum { KS_FOCUS_WRONG, KS_FOCUS_EXPLAINED, KS_FOCUS_ANY, KS_FOCUS_N };

struct ks_focus {
	int have;
	uint64_t g0, g1;	/* the gap's ends, as written (TSC from base_tsc) */
};

/* ks_focus_offer - keep @g if it is earlier than the candidate of a tier it belongs to */
void ks_focus_offer(struct ks_focus tiers[KS_FOCUS_N], const struct hgg_gap *g, uint64_t g0, uint64_t g1);
/* ks_focus_pick - the gap to open on, or NULL when there was none */
const struct ks_focus *ks_focus_pick(const struct ks_focus tiers[KS_FOCUS_N]);

struct ks_session_files {
	const char *path;		/* the session, to be written */
	const char *kernel_dat;		/* where the trace.dat will be (its final name) */
	const char *kernel_tmp;		/* ... and is now: its modification time is kept by rename */
	const char *hg_dat, *hg_tmp;	/* the companion */
};

/*
 * ks_session_write - count the rows, write the session under a temporary name (*tmp, to be
 * renamed by the caller). Lanes: @w's buffer 0 (the kernel) and @hg_buf (hourglass).
 */
int ks_session_write(const struct ks_session_files *f, struct td_writer *w, int hg_buf, unsigned ncpus,
		     const uint8_t *hg_cpus, double tsc_hz, const struct ks_focus *gap, char **tmp,
		     struct hg_err *err);

#endif

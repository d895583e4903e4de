/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ks_session.h - a KernelShark session that opens the export zoomed on one
 * moment, marker A at its start and marker B at its end:
 *
 *	cd RUN && kernelshark -s SESSION.json
 *
 * The moment, in this order of preference:
 *   - a latency test's worst wake-up (a LAT thread's sample), from the
 *     intended expiry to the first TSC read after it: what an RT engineer
 *     opens first;
 *   - the earliest gap whose inference was wrong among those the kernel
 *     explains (neither hidden nor unexplainable, not voluntary); else the
 *     earliest the kernel explains; else the earliest gap;
 *   - the worst wake-up of any kind (a periodic thread's release);
 *   - else the trace's first two milliseconds, no markers.
 * So a session is written for every run.
 *
 * KernelShark 2.2.1 cannot restore a session stream that is a second buffer
 * of a file (kshark_tep_open_buffer fails with -EFAULT, even on a session
 * it saved itself), so the session names two files, each opened as a top
 * buffer: the trace.dat (the kernel's events and hourglass's, the latter
 * hidden by the stream's event filter) and a companion file holding only
 * hourglass's events, its own stream, drawn by the hourglass plugin
 * (ks-plugin/) when the session can name it. The layout is KernelShark's own
 * (what File > Sessions > Export writes): each data file with its
 * modification time, which KernelShark checks; a CPU plot per CPU; the
 * focused threads' task plots; the visible range in nanoseconds; the
 * markers as rows of its table of all entries of both files merged by time,
 * counted exactly from the pages as KernelShark orders them.
 *
 * The data files are named relative to the session's folder (KernelShark
 * resolves them against its working directory): a run directory copied
 * with its files' times (cp -a, rsync -a, tar) still opens. The plugin is
 * named by its absolute path: it belongs to the installation, not the run.
 */
#ifndef KS_SESSION_H
#define KS_SESSION_H

#include <stdint.h>
#include "../merger/hg_gaps.h"
#include "tracedat_writer.h"

/* the candidates, in the order the session prefers them */
enum { KS_FOCUS_LAT, KS_FOCUS_WRONG, KS_FOCUS_EXPLAINED, KS_FOCUS_ANY, KS_FOCUS_WAKE, KS_FOCUS_N };

struct ks_focus {
	int have;
	int tier;		/* KS_FOCUS_*; KS_FOCUS_N: the trace's start */
	uint64_t t0, t1;	/* as written (TSC from base_tsc): the gap's ends, or the intended
				 * wake-up and the first TSC read after it */
	int64_t worst;		/* a wake-up's lateness (ns): the largest is kept */
	uint32_t cpu;		/* where the hourglass events at t0 and t1 are */
	int thread, next_thread;
};

/* ks_focus_offer - keep @g if it is earlier than the candidate of a tier it belongs to */
void ks_focus_offer(struct ks_focus tiers[KS_FOCUS_N], const struct hgg_gap *g, uint64_t g0, uint64_t g1);
/* ks_focus_wake - keep a wake-up if it is later than the candidate of its tier (@lat: a LAT sample) */
void ks_focus_wake(struct ks_focus tiers[KS_FOCUS_N], uint64_t t0, uint64_t t1, int64_t lateness_ns,
		   uint32_t cpu, int thread, int lat);
/* ks_focus_pick - the moment to open on, or NULL when there was none */
const struct ks_focus *ks_focus_pick(const struct ks_focus tiers[KS_FOCUS_N]);
/* ks_focus_name - what the session opens on, for people: "worst wake-up", "wrong inference", ... */
const char *ks_focus_name(const struct ks_focus *f);

struct ks_session_files {
	const char *path;		/* the session, to be written */
	const char *kernel_dat;		/* where the trace.dat will be (its final name) */
	const char *kernel_tmp;		/* ... and is now: its modification time is kept by rename */
	const char *hg_dat, *hg_tmp;	/* the companion */
	const char *plugin;		/* the hourglass plugin's absolute path, or NULL */
};

struct ks_session_in {
	struct td_writer *w;
	int main_buf, hg_buf;		/* the trace.dat's one buffer, the companion's */
	unsigned ncpus;
	const uint8_t *hg_cpus;		/* CPUs with hourglass events */
	double tsc_hz;
	const struct ks_focus *focus;	/* NULL: the trace's start */
	uint32_t tasks[2];		/* pids to plot as tasks (0: none) */
	const char *const *hidden;	/* the trace.dat's hourglass events, "system/name" */
	unsigned nhidden;
};

/*
 * ks_session_write - count the rows, write the session under a temporary name (*tmp, to be
 * renamed by the caller).
 */
int ks_session_write(const struct ks_session_files *f, const struct ks_session_in *in, char **tmp,
		     struct hg_err *err);

/* ks_rel_path - @to named from the folder @from_dir (both absolute, normalised), malloc'd */
char *ks_rel_path(const char *from_dir, const char *to);

#endif

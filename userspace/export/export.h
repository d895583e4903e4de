/* SPDX-License-Identifier: GPL-2.0 */
/*
 * export.h - the exporters hgmerge feeds during its one pass: a trace.dat
 * for trace-cmd and KernelShark (ks_*), a Perfetto trace in Perfetto's
 * protobuf format (pf_*). They see what the merger sees, in the same order:
 *
 *   every kernel record of a CPU, in that CPU's file order (nearly time
 *     order: a record may come up to a few microseconds late; the
 *     trace.dat writer reorders within a horizon and counts what it could
 *     not), CPUs interleaved by time; COMM and NAME records included,
 *   every hourglass record (intervals, jobs, wake-ups), per thread in file
 *     order, threads interleaved roughly by time,
 *   every gap when it closes (per CPU in time order), judged,
 *   then finish, with every name the recording gave.
 *
 * Times are TSC cycles; each output shows t = (tsc - base_tsc) / tsc_hz
 * seconds, the one time base of the report, the exports and hgtrace dump.
 * Memory must not grow with the trace: pages go to temporary files beside
 * the output, and only a bounded reorder window is held.
 */
#ifndef HG_EXPORT_H
#define HG_EXPORT_H

#include <stdint.h>
#include "hg_err.h"
#include "hg_hgt.h"
#include "hgtrace.h"
#include "hgl_trace.h"
#include "../merger/hg_gaps.h"

/* what the exporters may ask the merger about names, at any time */
struct exp_names {
	void *ctx;
	const char *(*comm)(void *ctx, uint32_t pid);		/* NULL if not known (yet) */
	const char *(*irq)(void *ctx, uint32_t irq);		/* irqaction name, NULL if none */
	const char *(*func)(void *ctx, uint32_t func_id);	/* hrtimer callback / NMI handler symbol */
	/* every pid with a name, for trace.dat's cmdlines: calls @fn for each */
	void (*each_comm)(void *ctx, void (*fn)(void *arg, uint32_t pid, const char *comm), void *arg);
	/* the gap's cause as every output names it ("switched to stress-ng:555", "irq 30 virtio0",
	 * "local_timer", "hidden"): the engine's one naming function */
	const char *(*cause)(void *ctx, const struct hgg_gap *g, char *buf, unsigned len);
	/* a task's display name: "hg-thread-1" for hourglass's threads, else "comm:pid" */
	const char *(*task)(void *ctx, uint32_t pid, char *buf, unsigned len);
};

struct exp_run {
	double tsc_hz;
	uint64_t base_tsc;
	uint32_t ncpus;			/* CPUs 0..ncpus-1 appear in either timeline */
	const char *uname;		/* the recorded kernel's release and version */
	int nthreads;
	const uint32_t *tids;		/* hourglass thread k is kernel pid tids[k] (0: unknown) */
	const char *const *thread_names;/* "hg-thread-k": what every output calls thread k */
	const char *const *workloads;	/* per thread: its workload, for labels */
	struct exp_names names;
	const char *command;		/* hourglass's command line, for metadata */
	/* per thread: its period in TSC cycles, 0 if it has none (NULL: none has). A job's
	 * release comes when the job ends, up to a period or more late: the "hourglass"
	 * buffer's reorder horizon is max(20 ms, twice the longest period). (export 1.1) */
	const uint64_t *periods;
};

struct ks_export;
struct pf_export;

/* ks_open - a trace.dat at @path (must end in .dat); with @session, also a KernelShark
 * session opening on the worst wake-up of a latency test or the first wrong inference
 * (ks_session.h), and PATH-hourglass.dat beside it */
struct ks_export *ks_open(const char *path, const char *session, const struct exp_run *run, struct hg_err *err);
int ks_kernel(struct ks_export *x, uint32_t cpu, const struct hgt_rec *r, struct hg_err *err);
int ks_hourglass(struct ks_export *x, const struct hgl_rec *r, struct hg_err *err);
int ks_gap(struct ks_export *x, const struct hgg_gap *g, struct hg_err *err);
/*
 * Finishing, in three steps, so that a caller can write its report while the files are put
 * together, and name two exports' files only once both are whole:
 *   ks_drain  - write out what the reorder windows hold and fill @summary (its counts final)
 *   ks_write  - put the file(s) together under temporary names (the long step: every page
 *               is copied once more)
 *   ks_commit - give them their names; frees @x, on success or not
 * After a failed step, or to give up, ks_abort(): nothing written is left. The same for pf_*.
 * exp_commit names both exports' files, exp_finish does the three steps for both (below).
 */
struct ks_summary {
	uint64_t kernel_events, hourglass_events, gaps, reordered, clamped;
	/* reordered: kernel records that came before one they follow and were put back in order;
	 * clamped: kernel records older than the window (or than base_tsc), written at the
	 * oldest time they could still have. The same for the hourglass buffer: (export 1.1) */
	uint64_t hg_reordered, hg_clamped;
	uint64_t lost_events;		/* the LOST records' counts, marked on the pages */
	uint32_t cpus;
	int session_written;		/* with a session path: always (export 1.2) */
	double session_at_s;		/* where the session opens: its moment's start, t from base_tsc */
	const char *session_focus;	/* what is there: "the worst wake-up", "the first wrong inference",
					 * ... (ks_session.h) */
	int session_plugin;		/* the session loads the hourglass plugin (found: ks_plugin_path) */
	char companion[4096];
};
int ks_drain(struct ks_export *x, struct ks_summary *summary, struct hg_err *err);
/* ks_plugin_path - the hourglass KernelShark plugin a session loads: $HG_KS_PLUGIN, else
 * beside the program (build/kernelshark/, or PREFIX/lib/hourglass/ once installed); NULL when
 * there is none (the session then opens without it). malloc'd */
char *ks_plugin_path(void);
int ks_write(struct ks_export *x, struct hg_err *err);
int ks_commit(struct ks_export *x, struct hg_err *err);
void ks_abort(struct ks_export *x);	/* on error (instead of ks_commit): remove what was written, free */

/* pf_open - a Perfetto trace at @path (.perfetto-trace or .pftrace; a .json name is refused) */
struct pf_export *pf_open(const char *path, const struct exp_run *run, struct hg_err *err);
int pf_kernel(struct pf_export *x, uint32_t cpu, const struct hgt_rec *r, struct hg_err *err);
int pf_hourglass(struct pf_export *x, const struct hgl_rec *r, struct hg_err *err);
int pf_gap(struct pf_export *x, const struct hgg_gap *g, struct hg_err *err);
struct pf_summary {
	uint64_t events, gaps;
	uint64_t reordered, clamped;	/* kernel records, as in ks_summary (export 1.1) */
};
/* pf_drain, pf_write, pf_commit: as ks_* (pf_write completes the file) */
int pf_drain(struct pf_export *x, struct pf_summary *summary, struct hg_err *err);
int pf_write(struct pf_export *x, struct hg_err *err);
int pf_commit(struct pf_export *x, struct hg_err *err);
void pf_abort(struct pf_export *x);	/* instead of pf_commit: remove the file, free */

/*
 * exp_commit - the files of @ks and @pf (either may be NULL), each put together (*_write),
 * given their names: the trace.dat's first, and if that fails, the Perfetto trace's removed
 * unnamed. Frees both, on success or not.
 * exp_finish - drain (its summary), write, then exp_commit, for each export given; after a
 * failed drain or write both are given up (*_abort) and neither leaves a file.
 */
int exp_commit(struct ks_export *ks, struct pf_export *pf, struct hg_err *err);
int exp_finish(struct ks_export *ks, struct ks_summary *ks_sum, struct pf_export *pf,
	       struct pf_summary *pf_sum, struct hg_err *err);

/* names of the enums, shared by every output (defined in export_names.c) */
extern const char *const hgg_class_name[HGG_C_N];	/* "switch_hg", ... "voluntary" */
extern const char *const hgg_kind_name[HGG_KD_N];

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * core.h - hgmerge-core: the merger's per-gap path in one streaming C pass.
 *
 * The Python merger (tools/hgmerge) is the reference: every rule here is
 * the rule there, in the same order, with the same arithmetic, and the unit
 * tests hold the two to the same report on every constructed timeline. This
 * program exists because the reference spends microseconds per event and per
 * gap; here an event costs tens of nanoseconds. It reads hourglass.hgl and a
 * .hgt recording and writes one JSON document of raw figures (cycles, ids,
 * rule codes) that tools/hgmerge/core.py turns into the report. The output is
 * documented in docs/merge.md ("hgmerge-core").
 */
#ifndef HGMERGE_CORE_H
#define HGMERGE_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CORE_OUTPUT_VERSION 1
#define KEEP_EVENTS 48		/* kernel events kept per gap for a disagreement */
#define SHOW_EVENTS 12		/* of which the report shows */

/* exit codes, as hourglass report's */
#define EXIT_BAD_USAGE 2
#define EXIT_BAD_INPUT 3

/* what a stretch of a gap is charged to (truth.py's component keys) */
enum comp_kind { K_SELF, K_TASK, K_IRQ, K_VEC, K_SOFTIRQ, K_NMI, K_KIND, K_OUT };
struct key {
	int64_t id;		/* pid, irq, vector kind...; -1: unknown task */
	uint8_t kind;		/* enum comp_kind */
};

struct comp {
	struct key k;
	int64_t v;		/* cycles */
};

/* gap classes (truth.py's COARSE values) and kinds */
enum cls { C_SWITCH_HG, C_SWITCH_OTHER, C_TIMER, C_INTERRUPT, C_HIDDEN, C_OTHER, C_UNEXPL, C_N };
enum kind { KD_IRQ, KD_SOFTIRQ, KD_NMI, KD_IPI, KD_TIMER, KD_SWITCH_HG, KD_SWITCH_OTHER, KD_IDLE,
	    KD_HIDDEN, KD_OTHER, KD_UNEXPL, KD_N };
/* inferred classes: judge.py's INFERRED, then voluntary */
enum inf { I_SWITCH_HG, I_SWITCH_OTHER, I_TIMER, I_INTERRUPT, I_HIDDEN, I_N, I_VOLUNTARY = I_N };
/* which rule of infer.py decided (its `why`) */
enum rule { R_VOLUNTARY, R_SWITCH, R_TICK, R_HIDDEN, R_TOP_RT, R_SHORT, R_LONG };
/* why the kernel's class (truth.py's WHY) */
enum why { W_NONE, W_WINDOW, W_LOST, W_HIDDEN, W_OTHER, W_OUT };

extern const char *const cls_name[C_N];
extern const char *const kind_name[KD_N];
extern const char *const inf_name[I_N + 1];

/* hourglass's configuration of one thread, as report.py hands it over */
struct thread_cfg {
	uint32_t tid;
	int rt;			/* SCHED_FIFO or SCHED_RR */
	int prio;
	int cpu_workload;	/* CPU, CPU_SCAN or CPU_PERIODIC: never blocks by itself */
	int cpu_bound;		/* CPU or CPU_SCAN: never yields (paper section 4) */
	int acct;		/* has an accounting window */
	int64_t acct0, acct1;
};

/* a gap (load.py's Gap) or a window (load.py's Window) */
struct gap {
	int64_t g0, g1;		/* TSC; signed as the reference's integers */
	uint32_t cpu, tid, next_tid;
	uint16_t thread, next_thread;
	uint8_t vol;		/* 0, 1 yield, 2 sleep */
	uint8_t inferred;	/* enum inf */
	uint8_t rule;		/* enum rule */
	uint8_t window;		/* 0 a gap, 1 a wake-up window, 2 a missed period */
	uint32_t seq;		/* order in the reference's list: gaps, then windows */
	int64_t r0, r1, r2;	/* windows: the hourglass record */
	uint8_t rflags, rtype;
};

struct interval {
	int64_t t0, t1;
	uint32_t cpu;
	uint16_t thread;
	uint8_t flags;
};

struct run {
	const char *hgl_path, *kernel_path;
	double hz;
	int64_t margin;			/* wake-up windows start this much early */
	int nthreads;
	struct thread_cfg *th;
	struct interval **iv;		/* per thread, in time order */
	size_t *niv;
	struct gap *gaps;		/* by (cpu, g0): the reference's run.gaps */
	size_t ngaps;
	struct gap *wins;
	size_t nwins;
	struct { uint16_t thread; int64_t a_t1, b_t0; } *migr;	/* CPU changes between intervals */
	size_t nmigr;
	char **warnings;
	size_t nwarnings;
	/* calibration (infer.c) */
	struct tick { uint32_t cpu; double p, tol, score, floor; int64_t *starts; size_t n; } *ticks;
	size_t nticks;
	double switch_limit, hidden_limit;
	int limit_basis;		/* 0 switches, 1 ticks, 2 none */
	size_t switch_gaps;
	int have_window;
	int64_t window[2];
};

/* growable arrays */
#define VEC_PUSH(arr, n, cap, val) do {						\
	if ((n) == (cap)) {							\
		(cap) = (cap) ? 2 * (cap) : 16;					\
		(arr) = xrealloc((arr), (cap) * sizeof(*(arr)));		\
	}									\
	(arr)[(n)++] = (val);							\
} while (0)

void *xrealloc(void *p, size_t n);
void *xcalloc(size_t n, size_t size);
void fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* hgl.c: hourglass's side: intervals, gaps, windows, migrations */
void load_hourglass(struct run *r);

/* infer.c: the gray-box inferences from hourglass's data alone */
void infer_all(struct run *r);

/* sweep.c: the kernel's events, every gap attributed and judged as it closes */
struct judge;
void sweep_kernel(struct run *r, struct judge *j);
extern const char *sweep_display_name;

/* judge.c: aggregates, and the output */
struct truth;
struct judge *judge_new(struct run *r);
void judge_gap(struct judge *j, struct run *r, const struct gap *g, const struct truth *t,
	       int cls, int kind, const struct key *primary, int why);
void judge_window(struct judge *j, const struct gap *w, const struct truth *t);
void judge_output(struct judge *j, struct run *r, FILE *f);

/* the state of one open gap or window (truth.py's g.truth) */
struct kev { int64_t tsc; uint32_t arg; uint8_t typ, flags; };
struct truth {
	struct gap *g;
	struct comp *comp;
	int ncomp, capcomp;
	struct kev ev[KEEP_EVENTS];
	int nev;
	uint64_t n_events;
	int has_out, out_preempted;
	int64_t out_tsc;
	uint32_t out_pid, out_state;
	int has_in, has_woken, has_mig, has_tick, has_tick_le;
	int64_t in, woken, last_tick, last_tick_le;
	uint16_t mig_orig, mig_dest;
};

/* judge.c keeps the kernel-side facts the sweep hands it */
void judge_event_counts(struct judge *j, uint64_t events, uint64_t backwards);
void judge_comm(struct judge *j, uint32_t pid, const char *comm);
void judge_irq_name(struct judge *j, uint32_t irq, const char *name);
void judge_switch(struct judge *j, int thread, int64_t tsc, int in);
void judge_kernel_migration(struct judge *j, uint32_t pid, int64_t tsc);
void judge_losses(struct judge *j, uint32_t cpu, size_t n);
void judge_stats(struct judge *j, uint32_t cpu, const uint64_t st[6]);

int thread_of_tid(const struct run *r, uint32_t tid);	/* -1 if not hourglass's */

#endif

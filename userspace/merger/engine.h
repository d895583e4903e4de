/* SPDX-License-Identifier: GPL-2.0 */
/*
 * engine.h - hgmerge's parts and what they share.
 *
 * hgmerge aligns hourglass's timeline and the kernel's on the TSC in one
 * streaming pass and decides, for every gap, what the kernel says happened
 * and what hourglass's own data lets one infer (docs/merge.md). The flow:
 *
 *   hgside.c   hourglass's records, per thread in file order, merged into
 *              one time-ordered stream of interval starts and ends, and of
 *              wake-up and missed-deadline windows
 *   gapper.c   the gaps that stream implies on each CPU
 *   infer.c    the inferences: calibrated in one hourglass-only pass, then
 *              decided per gap once the stream is a tick period past it
 *   kstream.c  the kernel's records, each CPU's chunks in order, merged by time
 *   sweep.c    per CPU: what runs, which handlers; every open gap and window
 *              charged, judged when it closes (struct hgg_gap)
 *   judge.c    the aggregates of the report; latency.c the windows;
 *              micro.c on-CPU time per thread; sbf.c supply-bound functions
 *   names.c    what every output calls a task, an irq, a cause
 *   report.c   the report JSON (docs/report-json.md)
 *   main.c     options, the passes, the exporters (userspace/export), each
 *              on a thread of its own (xthread.c)
 *
 * Memory does not grow with the trace: each side is read through cursors,
 * what is held is bounded by the disorder of the inputs (a job's record
 * comes when the job ends), one tick period of gaps waiting for their
 * inference, and the figures' quantile sketches (quant.c).
 */
#ifndef HGMERGE_ENGINE_H
#define HGMERGE_ENGINE_H

#include <stdint.h>
#include <stdio.h>
#include <stddef.h>

#include "compiler.h"
#include "hg_err.h"
#include "hg_hgl.h"
#include "hg_hgt.h"
#include "hg_gaps.h"
#include "quant.h"

struct jsonw;

#define HGMERGE_VERSION "2.0"
#define SHOW_EVENTS 12		/* kernel events kept per gap, for its disagreement */

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* fail - a bad input: say it and exit 3; fail_env - what the machine refused (memory, an output
 * that cannot be written): exit 2; fail_err - @e's message, with the status it calls for */
void fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void fail_env(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void fail_err(const struct hg_err *e) __attribute__((noreturn));
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* growable arrays */
#define VEC_PUSH(arr, n, cap, val) do {						\
	if ((n) == (cap)) {							\
		(cap) = (cap) ? 2 * (cap) : 16;					\
		(arr) = xrealloc((arr), (cap) * sizeof(*(arr)));		\
	}									\
	(arr)[(n)++] = (val);							\
} while (0)

/*
 * cpu_list - the CPUs a per-CPU table has seen, ascending. Loops that run for every event or
 * gap walk it instead of every index up to the highest CPU number: hourglass on CPUs 0 and 255
 * costs what two CPUs cost, not 256. Ascending, so that the order work is done in (and so every
 * output) is the same as a loop over the indices. cpu_list_add once per CPU (callers keep a
 * flag in their table's entry).
 */
struct cpu_list {
	uint32_t *v;
	uint32_t n, cap;
};
void cpu_list_add(struct cpu_list *l, uint32_t cpu);
void cpu_list_free(struct cpu_list *l);

/* ---- the run: hourglass's configuration of its threads ---- */
struct thread_cfg {
	uint32_t tid;
	int rt;			/* SCHED_FIFO or SCHED_RR */
	int prio;
	int cpu_workload;	/* CPU, CPU_SCAN or CPU_PERIODIC: never blocks by itself */
	int cpu_bound;		/* CPU or CPU_SCAN: never yields (paper section 4) */
	int64_t dl_runtime_ns;	/* SCHED_DEADLINE: its reservation's runtime; 0 none or unknown */
	char name[24];		/* "hg-thread-K": every output's name for it */
};

struct run {
	struct hgl_file *hgl;
	struct hgt_file *hgt;
	const struct hgl_info *info;
	const char *kernel_name;	/* the recording as messages name it */
	double hz;
	int64_t margin;		/* wake-up windows open this much before the intended expiry */
	int64_t base;		/* the one time base of every output (TSC) */
	int nthreads;
	struct thread_cfg *th;
	int disorder_measured;	/* hgside_measure_disorder() has walked this run's trace */
	uint32_t ncpus;		/* CPUs named by either side */
	long long rt_runtime_us, rt_period_us;	/* RT throttling as hourglass read it; -1 unknown */
	/* the scheduler's features as hourglass read them (kernel.sched_features): -1 unknown,
	 * else whether HRTICK (a timer of its own ends a fair task's slice) and HRTICK_DL (a
	 * deadline task's runtime) are on; its base slice, -1 unknown */
	int hrtick, hrtick_dl;
	long long base_slice_ns;
	/* the cheapest system call hourglass measured (TSC cycles): no kernel path is
	 * faster; -1 unknown (files before 2026-12-02) */
	long long syscall_cycles;
	int cpus_online;	/* as hourglass read it (kernel.cpus_online); -1 unknown */
	/* the inference's limits given (hgmerge --limits: a profile's), in us: switch, phase,
	 * hidden, and the tick's band (low, high); < 0 calibrated from the run */
	double limits_us[5];
	int have_window;
	int64_t window[2];
	/* whether the vCPUs take turns on one host thread (turns.c: decided from the recording
	 * before the sweep): then another CPU's events inside a stretch of one CPU's are its turn */
	struct vcpu_turns {
		int detected, decided;
		uint64_t tested, inside;	/* events of one CPU while hourglass ran on another;
						 * of them, inside one of its intervals */
		double expected;		/* as many as the intervals' share of that time says */
	} vcpu_turns;
	char **warnings;
	size_t nwarnings, capwarnings;
};

void warn(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int thread_of_tid(const struct run *r, uint32_t tid);	/* -1 if not hourglass's */
int comp_kind(const struct run *r, uint8_t kind, int64_t id);	/* enum hgg_kd of a component (sweep.c) */
void set_tids(struct run *r);
static inline double us_of(const struct run *r, double cycles) { return cycles / r->hz * 1e6; }
static inline double t_of(const struct run *r, int64_t tsc) { return (double)(tsc - r->base) / r->hz; }

/* ---- hgside.c: hourglass's records as one time-ordered stream ---- */
enum hg_ev_kind { HGE_START, HGE_END, HGE_WOPEN, HGE_WCLOSE };

struct hg_ev {
	int64_t t;
	uint64_t seq;		/* order of the record in the merged stream: ties */
	uint8_t kind;		/* enum hg_ev_kind */
	struct hgl_rec rec;	/* the interval, or the window's record */
	int64_t w0, w1;		/* a window's span */
	uint8_t wkind;		/* 1 a wake-up, 2 a missed period */
};

struct hgside;
/* hgside_open - a stream over @r's hourglass trace; @on_record, if set, sees
 * every record in merged order (exporters) */
struct hgside *hgside_open(struct run *r, void (*on_record)(void *ctx, const struct hgl_rec *rec), void *ctx);
/* hgside_peek - the time of the next event, INT64_MAX at the end */
int64_t hgside_peek(struct hgside *s);
int hgside_next(struct hgside *s, struct hg_ev *ev);	/* 0 at the end */
void hgside_close(struct hgside *s);
/* hgside_measure_disorder - pass 0: how late each thread's records come, for the reorder */
void hgside_measure_disorder(struct run *r);
/* hgside_span - the first start and the last end of @r's intervals, from pass 0 (measured if it
 * was not): 0 when there is none */
int hgside_span(struct run *r, int64_t *t0, int64_t *t1);

/* ---- gapper.c: the gaps of each CPU from the stream ---- */
struct gapdef {
	int64_t g0, g1;
	uint32_t cpu;
	uint16_t thread, next_thread;
	uint8_t vol;
};

struct gapper {
	struct run *r;
	uint32_t ncpu;
	struct gp_cpu { int have; uint64_t seq; struct hgl_rec cur; } *cpu;
	uint64_t overlaps;	/* two intervals on one CPU at once: no gap between them */
	struct hgl_rec overlap_a, overlap_b;	/* the first such pair, for the warning */
	/* per thread, for migrations: the CPU of its last interval and where it ended */
	struct gp_thread { int have; uint32_t cpu; int64_t t1; } *th;
};

void gapper_init(struct gapper *gp, struct run *r);
void gapper_free(struct gapper *gp);
/*
 * gapper_event - feed one stream event. START closes the CPU's pending gap:
 * returns 1 with *g set. END opens one: returns 2 with g->g0 and the thread
 * set (g1 unknown yet). Otherwise 0. *migrated: the START's thread ran last
 * on another CPU (its previous interval ended at *mig_t1).
 */
int gapper_event(struct gapper *gp, const struct hg_ev *ev, struct gapdef *g, int *migrated, int64_t *mig_t1);

/* ---- tape.c: the calibration pass's stream, recorded for the merge's pass ---- */
struct tape;
struct tape *tape_new(struct run *r, const char *tmpdir);
void tape_free(struct tape *t);
/* writing, as hgside_next() and gapper_event() go: tape_record is hgside_open()'s on_record */
void tape_record(void *ctx, const struct hgl_rec *rec);
void tape_event(struct tape *t, const struct hg_ev *ev, int made, const struct gapdef *g, int mig, int64_t mt1);
/* tape_rewind - the stream is over: what the gapper found of it kept (two intervals on one CPU at
 * once), then read back; tape_overlaps - that, into the merge's own gapper */
void tape_rewind(struct tape *t, const struct gapper *gp);
void tape_overlaps(const struct tape *t, struct gapper *gp);
/* reading: hgside_peek(), and hgside_next() with gapper_event() (on_record as hgside_open()'s) */
int64_t tape_peek(struct tape *t);
int tape_next(struct tape *t, struct hg_ev *ev, int *made, struct gapdef *g, int *mig, int64_t *mt1,
	      void (*on_record)(void *ctx, const struct hgl_rec *rec), void *ctx);

/* ---- infer.c ---- */
struct infer;
/* infer_calibrate - the two hourglass-only passes: the tick of each CPU, the switch and hidden
 * limits; the stream recorded on @tape (NULL: not) */
struct infer *infer_calibrate(struct run *r, struct tape *tape);
/* infer_seen - every event of the decision pass's hourglass stream, with what the gapper made of it */
void infer_seen(struct infer *in, const struct hg_ev *ev, int made, const struct gapdef *g);
/* infer_ready - can @g be decided: has the stream been read far enough past it for rule 2? */
int infer_ready(struct infer *in, const struct hgg_gap *g);
/* infer_due - the stream's time from which @g can be decided (-INFINITY: now); infer_passed -
 * has the stream reached @due (or ended)? infer_ready(g) is infer_passed(infer_due(g)). */
double infer_due(struct infer *in, const struct hgg_gap *g);
int infer_passed(const struct infer *in, double due);
void infer_end(struct infer *in);	/* the stream is over: everything is ready */
/* infer_decide - the inference for @g (ready): sets g->inferred and g->rule */
void infer_decide(struct infer *in, struct hgg_gap *g);
void infer_report(struct infer *in, struct run *r, struct jsonw *w);	/* the calibration section */
const char *infer_why(struct infer *in, const struct hgg_gap *g, char *buf, size_t len);
/* per-thread facts pass 1 learnt: span and count of intervals (sbf.c) */
void infer_thread_span(struct infer *in, int thread, int64_t *first, int64_t *last, uint64_t *n);
double infer_switch_limit(const struct infer *in);	/* cycles: rule 5's switch/interrupt limit */
void infer_free(struct infer *in);
/* lanes (hgmerge --grid): another set of switch, phase and hidden limits (us; <= 0 the run's),
 * decided beside the run's own on the same calibration; infer_lane_decide when infer_decide */
struct infer_lane;
struct infer_lane *infer_lane_new(struct infer *in, const double limits_us[3]);
void infer_lane_decide(struct infer *in, struct infer_lane *l, struct hgg_gap *g);
void infer_lane_free(struct infer_lane *l);

/* ---- classes.c: hgmerge --classes, a profile model's class for each gap ---- */
struct classes;
struct classes *classes_read(const char *path);		/* exits naming what is wrong */
/* classes_apply - @g's class from the file, in the rules' place (rule HGG_R_MODEL), if it has one */
void classes_apply(struct classes *c, struct hgg_gap *g);
void classes_finish(struct classes *c, struct run *r);	/* warns of gaps it had no class for; frees */

/* ---- turns.c: do the vCPUs take turns on one host thread? ---- */
/* turns_detect - r->vcpu_turns, from the first stretch of both timelines (the merge's own pass
 * is then told before it starts) */
void turns_detect(struct run *r);
void turns_report(const struct run *r, struct jsonw *w);

/* ---- kstream.c: the kernel's records, merged by time across CPUs ---- */
struct kstream;
struct kstream *kstream_open(struct run *r);
int64_t kstream_peek(struct kstream *k);	/* INT64_MAX at the end */
/* kstream_next - 1 with the CPU and the record (valid until the next call), 0 at the end */
int kstream_next(struct kstream *k, uint32_t *cpu, const struct hgt_rec **rec);
/* kstream_next_upto - kstream_next() when the next record is stamped at most @upto (and below
 * INT64_MAX, kstream_peek()'s end), else 0: the peek and the next of a merge in one call */
int kstream_next_upto(struct kstream *k, int64_t upto, uint32_t *cpu, const struct hgt_rec **rec);
uint64_t kstream_events(const struct kstream *k);
void kstream_close(struct kstream *k);

/* ---- names.c ---- */
struct names;
void names_init(struct run *r);
void names_record(const struct hgt_rec *rec);		/* COMM and NAME records, the merge's table */
struct names *names_new(void);				/* another table: an exporter's thread */
void names_record_in(struct names *t, const struct hgt_rec *rec);
void names_use(struct names *t);	/* the table names_*() read in this thread (NULL: the merge's) */
const char *names_comm(uint32_t pid);			/* NULL if unknown */
const char *names_irq(uint32_t irq);
const char *names_func(uint32_t id);
/* names_task - "hg-thread-K", "idle", "comm:pid" or "?:pid" */
const char *names_task(int64_t pid, char *buf, size_t len);
/* names_comp - a component as the report names it ("irq 30 virtio0", "softirq NET_RX", "local_timer") */
const char *names_comp(uint8_t kind, int64_t id, char *buf, size_t len);
/* names_cause - what a gap went to: "switched to X", a component, or the kind */
const char *names_cause(const struct hgg_gap *g, char *buf, size_t len);
/* names_switch_task - the task a switch gap is named after (names.c), -1 if not a switch */
int64_t names_switch_task(const struct hgg_gap *g);
uint64_t names_hidden_key(const struct hgg_gap *g);	/* a hidden gap's cause, as one number */
void names_each_comm(void (*fn)(void *arg, uint32_t pid, const char *comm), void *arg);
extern const char *const why_text[HGG_W_N];
const char *vector_name(unsigned v);
const char *softirq_text(unsigned v);

/* ---- labels.c: the user's names for loads (--label) ---- */
int labels_add(const char *spec);	/* "PID=NAME", "comm:PREFIX=NAME", "irq:N=NAME"; -1 if malformed */
int labels_any(void);
size_t labels_count(void);
const char *labels_name(size_t i);
int labels_task(uint32_t pid);		/* the label's index, -1 if none */
int labels_irq(uint32_t irq);
int labels_comp(uint8_t kind, int64_t id);

/* ---- sweep.c: the kernel's account of gaps and windows ---- */
/* a kernel event shown with its gap: a record's header, laid out as struct hgt_rec's (sweep.c
 * copies it whole); len and aux are not read */
struct kev { int64_t tsc; uint8_t typ, len, flags, aux; uint32_t arg; };

/* what a closed gap carries besides its record: for the disagreement and the time lost */
struct gap_detail {
	const struct kev *ev;		/* the first nev of them (up to SHOW_EVENTS): valid in the call */
	int nev;
	const struct hgg_comp *comp;	/* every component, largest first */
	int ncomp;
};

/* a stretch of a wake-up window, [t0, t1), and what it was charged to (enum hgg_comp_kind, id) */
struct wseg {
	int64_t t0, t1;
	int64_t id;
	uint8_t kind;
};

/* a closed window (wake-up or missed period) */
struct window {
	uint8_t kind;			/* 1 wake-up, 2 missed period */
	uint16_t thread;
	uint32_t cpu, tid;
	int64_t g0, g1;
	struct hgl_rec rec;
	int has_woken, has_in, has_irq;
	int64_t woken, in, irq;
	const struct hgg_comp *comp;	/* largest first */
	int ncomp;
	const struct wseg *seg;		/* a wake-up's stretches in time order (valid in the call) */
	int nseg;
};

/* where a closing gap is judged into: its record, cleared; room for the components asked for and
 * SHOW_EVENTS events */
struct gap_room {
	struct hgg_gap *g;
	struct hgg_comp *comp;
	struct kev *ev;
};

struct sweep_sink {
	void *ctx;
	/* a closing gap: room() is where it is judged, gap() says it is whole (@g the room's) */
	void (*room)(void *ctx, uint32_t cpu, int ncomp, struct gap_room *room);
	void (*gap)(void *ctx, struct hgg_gap *g, const struct gap_detail *d);
	void (*window)(void *ctx, const struct window *w);
	void (*switched)(void *ctx, int thread, int64_t tsc, int in);	/* every switch of a thread */
	void (*migrated)(void *ctx, int thread, int64_t tsc);		/* the kernel moved a thread */
	void (*named)(const struct hgt_rec *rec);	/* a COMM or NAME record (names.c's) */
};

/* main.c's sink of the sweep's gaps (sweep.c calls them directly when they are the sink's) */
void merge_room(void *ctx, uint32_t cpu, int ncomp, struct gap_room *room);
void merge_gap(void *ctx, struct hgg_gap *g, const struct gap_detail *d);

struct sweep;
struct sweep *sweep_new(struct run *r, struct infer *in, const struct sweep_sink *sink);
void sweep_kernel(struct sweep *s, uint32_t cpu, const struct hgt_rec *rec);
void sweep_open_gap(struct sweep *s, const struct gapdef *g);	/* at g0 */
void sweep_close_gap(struct sweep *s, const struct gapdef *g);	/* at g1: the same CPU's open gap */
void sweep_open_window(struct sweep *s, const struct hg_ev *ev);
void sweep_close_window(struct sweep *s, const struct hg_ev *ev);
void sweep_finish(struct sweep *s);	/* judge what waits for a next event */
uint64_t sweep_backwards(const struct sweep *s);
uint64_t sweep_losses(const struct sweep *s, uint32_t cpu);
void sweep_free(struct sweep *s);

/* ---- judge.c, latency.c, micro.c, sbf.c: the figures ---- */
struct judge;
struct judge *judge_new(struct run *r, const char *tmpdir);
void judge_gap(struct judge *j, const struct hgg_gap *g, const struct gap_detail *d, struct infer *in);
void judge_migration_inferred(struct judge *j, int confirmed);
void judge_kernel_migration(struct judge *j);
void judge_report(struct judge *j, struct jsonw *w, struct infer *in);
void judge_charts(struct judge *j, struct jsonw *w);		/* the map and the histograms */
int judge_summary(struct judge *j, char *line1, char *line2, size_t len);	/* lines written: 0 or 2 */
/* the line a run recorded in a virtual machine (@hv: its CPUID vendor) gets: 0 or 1 written */
int judge_vm_summary(struct judge *j, const char *hv, double switch_limit, char *line, size_t len);
void judge_chart_map(struct judge *j, int64_t tsc0, int64_t tsc1);	/* gaps and intervals drawn on the map */
void judge_interval(struct judge *j, const struct hgl_rec *iv);
uint64_t judge_gaps(const struct judge *j);
void judge_free(struct judge *j);

struct latency;
struct latency *latency_new(struct run *r, const char *tmpdir);
void latency_window(struct latency *l, const struct window *w);
void latency_report(struct latency *l, struct jsonw *w);
int latency_summary(struct latency *l, char *line, size_t len);
void latency_free(struct latency *l);

struct micro;
struct micro *micro_new(struct run *r, struct infer *in);
void micro_switch(struct micro *m, int thread, int64_t tsc, int in);
void micro_handlers(struct micro *m, int thread, uint64_t cycles);
void micro_report(struct micro *m, struct jsonw *w);
void micro_free(struct micro *m);

struct sbf;
struct sbf *sbf_new(struct run *r, struct infer *in);
void sbf_interval(struct sbf *s, const struct hgl_rec *iv);
void sbf_report(struct sbf *s, struct jsonw *w);
void sbf_free(struct sbf *s);

/* ---- tmpfile helpers ---- */
FILE *tmp_stream(const char *dir);	/* an unlinked temporary file */

#endif

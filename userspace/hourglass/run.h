/* SPDX-License-Identifier: GPL-2.0 */
/*
 * run.h - one hourglass run: calibration, the shared record pool and the
 * per-thread state that the workloads fill and the writers read.
 */
#ifndef HG_RUN_H
#define HG_RUN_H

#include <signal.h>
#include <stdatomic.h>
#include <sys/types.h>
#include "hourglass.h"
#include "hgl_trace.h"
#include "tsc.h"

#define HG_CHUNK 256	/* records a thread takes from the pool at a time */

struct hg_run;

/* The kernel's accounting of one thread at one moment (acct.c). */
struct hg_acct {
	uint64_t tsc;
	uint64_t cputime_ns;			/* CLOCK_THREAD_CPUTIME_ID */
	uint64_t sched_ns, wait_ns, slices;	/* /proc/thread-self/schedstat */
	uint64_t utime_ns, stime_ns, nvcsw, nivcsw;	/* getrusage(RUSAGE_THREAD) */
	int ok;					/* 1: schedstat read, 2: rusage read */
};

int hg_acct_open(void);
void hg_acct_read(struct hg_acct *a, int schedstat_fd);
void hg_acct_close(int fd);

struct hg_thread {
	int idx;
	pid_t tid;
	struct hg_thread_cfg *cfg;
	struct hg_run *run;
	pthread_t pt;

	/* its slice of the record pool */
	struct hgl_rec *rec, *rec_end;
	uint64_t dropped;
	bool pool_spent;		/* the shared pool had no chunk left */

	/* live counters, read after the run */
	uint64_t jobs_hit, jobs_missed, work_units, wakes, yields;
	uint64_t first_tsc, last_tsc;	/* when it actually ran */
	struct hg_acct acct0, acct1;	/* before the start, after the end */
	int schedstat_fd;		/* /proc/thread-self/schedstat, opened in its set-up */

	/* the live line's figures: written by the thread in its slow paths, read by the monitor */
	uint64_t live_ivs, live_gaps, live_gap_max;	/* gap_max in cycles */
	uint64_t live_wakes, live_late_max;		/* lateness in ns */

	/* what went wrong while it set itself up, and what it fell back to */
	int err_exit;
	char err[320];
	char fallback[320];
};

/* The sample that passed -b: a gap between two intervals, or a late wake-up. */
enum hg_trip_kind { HG_TRIP_GAP = 1, HG_TRIP_WAKE = 2 };

struct hg_trip {
	int kind;		/* 0: not tripped */
	int thread;
	uint64_t t0, t1;	/* GAP: last read before, first after; WAKE: due, woke (TSC) */
	uint64_t value_ns;	/* the gap's length or the lateness */
	uint32_t cpu;		/* after the gap or the wake-up */
};

struct hg_run {
	struct hg_config *cfg;
	struct hg_tsc_info tsc;
	/*
	 * The run's one TSC rate: calibrated before the threads start, it turns
	 * every duration asked for (run length, amounts, periods, GAP, -b) into
	 * cycles, and every figure reported back into time, so that a 0.9 ms
	 * slice reads 0.9 ms in every output (docs/hourglass.md, CALIBRATION).
	 */
	double hz;
	double hz_over_run;	/* measured again over the whole run: a check only */
	struct hg_tsc_pair cal0, cal1, cal_end;
	double loop_cycles;	/* median polling-loop iteration */
	uint64_t syscall_cycles;	/* the cheapest system call, between two TSC reads */
	uint64_t gap_cycles;
	uint64_t t0_tsc, t0_mono;	/* the run's zero (CLOCK_MONOTONIC) */
	uint64_t end_tsc;

	struct hgl_rec *pool;
	uint64_t pool_cap;
	atomic_uint_least64_t pool_used;

	struct hg_thread *th;
	pthread_barrier_t ready, go;
	atomic_int abort_run;
	bool mlocked;
	char mlock_note[160];
	char kernel[256];
	bool preempt_rt;
	/* the scheduler's features as debugfs lists them (HRTICK or NO_HRTICK ...), "" when
	 * unreadable (not root, debugfs not mounted); its base slice, -1 when unreadable */
	char sched_features[2048];
	long long sched_base_slice_ns;
	uint64_t start_wall_ns;
	int cpus_online;
	char warn[16][320];
	int nwarn;

	/* stopping early: Ctrl-C and kin (monitor.c), or -b (hg_trip) */
	atomic_int stop;		/* threads leave their loops at their next check */
	int stop_signal;		/* SIGINT, SIGTERM or SIGHUP; 0 if none */
	uint64_t stop_tsc;		/* when the stop was asked */
	atomic_int tripped;
	struct hg_trip trip;
	uint64_t break_cycles;		/* -b in cycles, for the polling loop */
	atomic_int exited;		/* threads that have left hg_thread_main */
	pthread_t main_thread;

	/* settings.c: what the run holds and puts back, and the outside ends of -b */
	int dma_fd;			/* /dev/cpu_dma_latency, held open; -1 */
	int dma_held_us;		/* what it was held at; -1: not held */
	int marker_fd;			/* trace_marker; -1 */
	bool marker_written;		/* -b wrote its marker there */
	pid_t recorder_pid;		/* hgtrace record above us, frozen by -b; 0 */
};

/* Signals between hourglass's own threads (none of them reaches another process). */
#define HG_KICK_SIGNAL (SIGRTMIN + 2)	/* to a thread: leave your sleep, the run stops */
#define HG_WAKE_SIGNAL (SIGRTMIN + 3)	/* to the monitor: a thread tripped -b or all ended */

/* hg_stopping - the run is stopping early: leave the loop at this check */
static inline bool hg_stopping(struct hg_run *run)
{
	return atomic_load_explicit(&run->stop, memory_order_relaxed) != 0;
}

void hg_warn(struct hg_run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* workloads.c */
void *hg_thread_main(void *arg);
uint64_t hg_ns_to_cycles(const struct hg_run *run, uint64_t ns);
void hg_trip(struct hg_thread *t, int kind, uint64_t t0, uint64_t t1, uint64_t value_ns,
	     uint32_t cpu);

/* monitor.c: the main thread during the run */
void hg_signals_setup(void);
void hg_monitor(struct hg_run *run);
void hg_request_stop(struct hg_run *run, int sig);

/* settings.c */
int hg_settings_open(struct hg_run *run);
void hg_settings_close(struct hg_run *run);

/* policy.c */
int hg_apply_sched(struct hg_thread *t);
int hg_apply_affinity(struct hg_thread *t);

/* calibrate.c */
double hg_measure_loop(uint64_t *hist_over);
uint64_t hg_measure_syscall(void);

/* output: after the run, from the records and their statistics */
struct hg_stats;
void hg_write_text(struct hg_run *run, struct hg_stats *st, FILE *f);
void hg_write_json(struct hg_run *run, struct hg_stats *st, FILE *f);
int hg_write_trace(struct hg_run *run, struct hg_stats *st, const char *path);
void hg_dry_run(struct hg_config *cfg, FILE *f);

#endif

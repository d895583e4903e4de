/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hourglass.h - the run's configuration and the per-thread state shared by
 * the option parser, the workloads and the output writers.
 */
#ifndef HOURGLASS_H
#define HOURGLASS_H

#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sched.h>
#include <pthread.h>

#define HG_VERSION "0.6"
#define HG_MAX_THREADS 1024
#define HG_DEFAULT_RECORDS 300000	/* -e default, as in the paper */
#define HG_DEFAULT_DURATION_NS 10000000000ULL	/* -d default: 10 s */

/*
 * Exit statuses, the same for every program of the project (docs/exit-status.md).
 * The paper defines none. 3 (a bad input file) is not hourglass's: it reads none.
 */
enum {
	HG_EXIT_OK = 0,
	HG_EXIT_USAGE = 1,	/* bad command line: nothing was run */
	HG_EXIT_ENV = 2,	/* could not run: privilege, device, memory, an unwritable output */
	HG_EXIT_INCOMPLETE = 4,	/* ran, but the trace buffer filled: records were dropped */
	HG_EXIT_BREAK = 5,	/* ran, and stopped early at the -b threshold */
	HG_EXIT_INTERRUPTED = 130,	/* SIGINT, SIGTERM or SIGHUP: what was measured is written */
};

enum hg_workload {
	HG_W_CPU,
	HG_W_CPU_SCAN,
	HG_W_CPU_YIELD,
	HG_W_CPU_SCAN_YIELD,
	HG_W_PERIODIC,
	HG_W_CPU_PERIODIC,
	HG_W_LAT,
};

enum hg_timer_kind {
	HG_T_NATIVE,	/* relative nanosleep with default slack: the paper's usleep() */
	HG_T_HR,	/* absolute clock_nanosleep, 1 ns slack */
	HG_T_RTC,	/* /dev/rtc periodic interrupts */
	HG_T_TIMERFD,	/* timerfd, absolute expiry */
	HG_T_POSIX,	/* timer_create + signal to the thread, absolute expiry */
};

/* Scheduling of one thread: a paper level or an explicit policy. */
struct hg_sched {
	int policy;		/* SCHED_OTHER, _BATCH, _IDLE, _FIFO, _RR, _DEADLINE */
	int prio;		/* nice for OTHER/BATCH, 1..99 for FIFO/RR */
	const char *level;	/* the -p word it came from, or NULL */
	uint64_t dl_runtime_ns, dl_period_ns;	/* -rh / -rs */
	bool dl_soft;		/* -rs: SCHED_FLAG_RECLAIM */
};

struct hg_thread_cfg {
	enum hg_workload workload;
	uint64_t amount_ns;	/* CPU_YIELD, PERIODIC, CPU_PERIODIC */
	uint64_t period_ns;	/* PERIODIC, CPU_PERIODIC, LAT */
	uint64_t scan_kb;	/* CPU_SCAN(_YIELD) */
	enum hg_timer_kind timer;
	struct hg_sched sched;
	uint64_t start_ns, finish_ns;	/* -s, -f; finish 0 = end of run */
	cpu_set_t affinity;
	bool has_affinity;
	int copy_of;		/* --smp/--cpus: the configured thread this is a copy of, or -1 */
};

struct hg_config {
	int nthreads;
	uint64_t duration_ns;
	bool raw_cycles;		/* -c */
	uint64_t max_records;		/* -e */
	int64_t gap_override_ns;	/* --gap; -1 = calibrate */
	bool fallback;			/* --fallback */
	bool cpu_column;		/* --cpu-column */
	bool dry_run;			/* --dry-run */
	bool quiet;			/* -q: no interval lines, no live line */
	uint64_t break_ns;		/* -b: stop when a gap or lateness passes it; 0 = off */
	uint64_t hist_max_ns;		/* --hist: lateness histogram up to it; 0 = off */
	uint64_t hist_bucket_ns;	/* --bucket: its bucket width */
	int dma_latency_us;		/* --dma-latency: -1 off, else held during the run */
	bool dma_latency_given;		/* said on the command line, not the default */
	bool smp;			/* -S/--smp or --cpus: threads replicated per CPU */
	cpu_set_t smp_cpus;		/* the CPUs they are replicated on */
	int nthreads_given;		/* -n, before --smp multiplied it */
	const char *text_path, *json_path, *trace_path;
	int rtc_hz;
	struct hg_thread_cfg thread[HG_MAX_THREADS];
	int argc;
	char **argv;
};

/* Text for enums, used by --dry-run, the JSON summary and the trace. */
const char *hg_workload_name(enum hg_workload w);
const char *hg_timer_name(enum hg_timer_kind t);
const char *hg_policy_name(int policy);

int hg_parse_options(struct hg_config *cfg, int argc, char **argv);
uint64_t hg_phys_bytes(void);
void hg_usage(FILE *f);

#endif

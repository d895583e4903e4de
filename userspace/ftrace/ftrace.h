/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ftrace.h - hgtrace-ftrace: the module-less recorder, its parts and what they share.
 *
 *   main.c     command line, signals, exit codes
 *   tfs.c      tracefs: can we use it, our instance, its settings, per-CPU stats
 *   record.c   the recording: set up, start, drain while the command runs, stop, restore
 *   spool.c    raw ring-buffer pages kept per CPU until they are converted
 *   convert.c  pages to records (evmap.c), with LOST records where events went missing
 *   meta.c     the file's metadata: provenance, the recorder, the TSC frequency
 *   ksyms.c    names of the callbacks seen, from /proc/kallsyms, after the run
 *   testknobs.c  the tests' knobs, in the test build only (below)
 */
#ifndef HG_FTRACE_H
#define HG_FTRACE_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "hg_cpulist.h"
#include "hg_opts.h"

/* the exit codes of hgtrace record (userspace/recorder/hgt_dev.h), and one more */
#define FT_EXIT_OK		0
#define FT_EXIT_USAGE		1	/* bad command line */
#define FT_EXIT_ENV		2	/* could not record: tracefs missing, not permitted, no x86-tsc */
#define FT_EXIT_INTERRUPTED	130	/* a signal came before recording started: nothing recorded */

/* -b by default, KiB a CPU: the module's; a look every -i is sized for it (look.c) */
#define FT_BUFFER_KB_DEFAULT	2048
#define FT_INSTANCE_PREFIX	"hgtrace-ftrace-"	/* + the recorder's pid */

enum ft_reader {
	FT_READ_PAGES,		/* trace_pipe_raw pages kept as they are, converted after the run */
	FT_READ_LIVE,		/* the same pages, converted at every drain */
	FT_READ_ITERATE,	/* tracefs_iterate_raw_events() at every drain, converted in its callback */
};

struct ft_opts {
	const char *out;
	struct hg_rec_opts rec;	/* -d -i -e -b -m -r -C -c; -m sets the instance's overwrite
				   option, an -e group missing here is an error, not a warning */
	int quiet;
	int compress;
	enum ft_reader reader;
	size_t spool_max;	/* bytes of pages kept before converting while recording */
	int drain_at;		/* percent of a CPU's buffer unread before a pass reads it; 0: every pass */
	char **cmd;
	int argc;
	char **argv;
};

/* set by the signal handler, installed before anything else happens */
extern volatile sig_atomic_t ft_stop;
extern volatile sig_atomic_t ft_signal;
extern volatile sig_atomic_t ft_signals;	/* how many came: a second Ctrl-C insists */

/*
 * The guest tests' two knobs, read from the environment by the test build alone
 * (build/test/hgtrace-ftrace, compiled with HGT_FTRACE_TEST: testknobs.c); in the
 * program users run they compile to nothing, so no environment changes what it does.
 * ft_stage - a named point of the recording; HGT_FTRACE_STOP_AT=NAME stops there
 *            (SIGSTOP), so that a test's signal arrives exactly at that point
 * ft_hide_events - HGT_FTRACE_HIDE=sys:event,...: act as if this kernel lacked them
 */
struct hgev_map;
#ifdef HGT_FTRACE_TEST
void ft_stage(const char *name);
void ft_hide_events(struct hgev_map *map);
#else
static inline void ft_stage(const char *name) { (void)name; }
static inline void ft_hide_events(struct hgev_map *map) { (void)map; }
#endif

int ft_record(struct ft_opts *o);

/* helpers shared by the parts */
int ft_cpu_wanted(const struct ft_opts *o, int cpu);

#endif

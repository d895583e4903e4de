/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tfs.h - what hgtrace-ftrace does in tracefs: its own instance and nothing else.
 *
 * Every setting the recorder changes belongs to an instance it creates
 * (FT_INSTANCE_PREFIX + its pid): tracing_on, trace_clock, buffer_size_kb,
 * buffer_percent, options/overwrite, tracing_cpumask and the events' enable files. The
 * top-level buffer, the user's own instances and every global file are only
 * read. Removing the instance puts the machine back as it was: the kernel
 * disables its events and frees its buffers with it.
 */
#ifndef HG_TFS_H
#define HG_TFS_H

#include <stdint.h>

struct tep_handle;
struct tracefs_instance;
struct tracefs_cpu;
struct hgev_map;
struct ft_opts;

/* one CPU's ring-buffer counters (per_cpu/cpuN/stats) */
struct tfs_stats {
	uint64_t entries;	/* events in the buffer, not yet read */
	uint64_t overrun;	/* overwritten before being read (overwrite mode) */
	uint64_t commit_overrun;	/* dropped: the writer wrapped onto an unfinished commit */
	uint64_t dropped;	/* dropped because the buffer was full (stop mode) */
	uint64_t read;		/* events handed to readers */
	uint64_t bytes;		/* bytes in the buffer, not yet read */
};

struct tfs {
	const char *dir;		/* where tracefs is mounted */
	struct tracefs_instance *inst;	/* ours, NULL when none */
	char name[64];
	int ncpus;			/* CPUs with a per_cpu directory (possible CPUs) */
	int *stats_fd;			/* per CPU, -1 when closed */
	struct tracefs_cpu **tcpu;	/* per CPU trace_pipe_raw, NULL when closed */
	int *raw_fd;			/* per CPU: tcpu's file (it owns it), to poll; -1 when closed */
	int kernel_wakes;		/* buffer_percent is --drain-at: poll(raw_fd) wakes us there */
	unsigned long buffer_kb;	/* what the instance says after setting it */
	char libtracefs[32];		/* the library's version, as loaded */
};

/* tfs_check - tracefs mounted and usable by us; prints why not and returns -1 */
int tfs_check(struct tfs *t);
/* tfs_load_events - the page header and the formats of the table's events in @groups (HGT_EV_*) */
struct tep_handle *tfs_load_events(struct tfs *t, uint32_t groups);
/* tfs_remove_stale - instances of recorders that were killed (SIGKILL cannot be caught) */
void tfs_remove_stale(int quiet);
/* tfs_create - our instance, tracing off, nothing enabled; -1 with a message */
int tfs_create(struct tfs *t);
/*
 * tfs_configure - clock, buffer size, overwrite, CPU mask, events of @map (all off yet);
 * for the pages reader with --drain-at, buffer_percent too (kernel_wakes)
 */
int tfs_configure(struct tfs *t, const struct ft_opts *o, const struct hgev_map *map);
/* tfs_open_cpus - trace_pipe_raw and stats of each wanted CPU, nonblocking */
int tfs_open_cpus(struct tfs *t, const struct ft_opts *o);
void tfs_close_cpus(struct tfs *t);
int tfs_tracing(struct tfs *t, int on);
/* tfs_read_stats - @cpu's counters; -1 if they cannot be read */
int tfs_read_stats(struct tfs *t, int cpu, struct tfs_stats *s);
/* tfs_destroy - remove our instance (closes what is open in it first); safe to call twice */
void tfs_destroy(struct tfs *t);

#endif

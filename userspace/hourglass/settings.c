// SPDX-License-Identifier: GPL-2.0
/*
 * settings.c - what a run holds while it runs and lets go of after it:
 * /dev/cpu_dma_latency, as cyclictest holds it; and the outside ends of -b:
 * ftrace's trace_marker, and the hgtrace record that runs us, if one does.
 *
 * The latency request is the kernel's PM QoS: it lasts while the file is
 * open, so it ends with the process however that ends (Ctrl-C, kill -9):
 * nothing to put back by hand, but it is closed as soon as the threads stop.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hg_procstat.h"
#include "run.h"

#define DMA_LATENCY "/dev/cpu_dma_latency"
#define ANCESTORS 16	/* how far up to look for hgtrace record */

static const char *const markers[] = {
	"/sys/kernel/tracing/trace_marker", "/sys/kernel/debug/tracing/trace_marker",
};

/* wants_dma_latency - LAT and PERIODIC measure wake-ups, which idle states delay */
static bool wants_dma_latency(const struct hg_config *cfg)
{
	int k;

	if (cfg->dma_latency_us < 0)
		return false;
	if (cfg->dma_latency_given)
		return true;
	for (k = 0; k < cfg->nthreads; k++)
		if (cfg->thread[k].workload == HG_W_LAT || cfg->thread[k].workload == HG_W_PERIODIC)
			return true;
	return false;
}

/*
 * hold_dma_latency - 0 or a warning when the default could not be had; -1 and
 * a message when --dma-latency asked for it without --fallback.
 */
static int hold_dma_latency(struct hg_run *run)
{
	const struct hg_config *cfg = run->cfg;
	int32_t us = cfg->dma_latency_us;
	int e;

	if (!wants_dma_latency(cfg))
		return 0;
	run->dma_fd = open(DMA_LATENCY, O_WRONLY | O_CLOEXEC);
	if (run->dma_fd >= 0 && write(run->dma_fd, &us, sizeof(us)) == sizeof(us)) {
		run->dma_held_us = us;
		return 0;
	}
	e = errno;
	if (run->dma_fd >= 0)
		close(run->dma_fd);
	run->dma_fd = -1;
	if (cfg->dma_latency_given && !cfg->fallback) {
		fprintf(stderr, "hourglass: --dma-latency %d: %s: %s%s\n", us, DMA_LATENCY, strerror(e),
			e == EACCES || e == EPERM ? " (needs root; --fallback runs without it)" : "");
		return -1;
	}
	hg_warn(run, "%s not held at %d us (%s): wake-ups may include the exit latency of deep idle states%s",
		DMA_LATENCY, us, strerror(e),
		e == EACCES || e == EPERM ? "; run as root, or say --dma-latency off" : "");
	return 0;
}

/*
 * find_recorder - the pid hgtrace record put in HGTRACE_RECORD_PID, if it is
 * an hgtrace among our ancestors: a stale value inherited from elsewhere must
 * not send SIGUSR1 (whose default is to kill) to some other process.
 */
static pid_t find_recorder(void)
{
	const char *env = getenv("HGTRACE_RECORD_PID");
	pid_t want, p = getppid();
	char comm[64], *end;
	long v;
	int k;

	if (!env || !*env)
		return 0;
	v = strtol(env, &end, 10);
	if (*end || v <= 1)
		return 0;
	want = (pid_t)v;
	for (k = 0; k < ANCESTORS && p > 1; k++) {
		pid_t up = hg_proc_parent(p, comm, sizeof(comm));

		if (p == want)
			return strcmp(comm, "hgtrace") ? 0 : want;
		p = up;
	}
	return 0;
}

/* hg_settings_open - take what the run holds; -1 (said why) if it must not run */
int hg_settings_open(struct hg_run *run)
{
	size_t i;

	run->dma_fd = -1;
	run->dma_held_us = -1;
	run->marker_fd = -1;
	if (hold_dma_latency(run))
		return -1;
	if (!run->cfg->break_ns)
		return 0;
	for (i = 0; i < sizeof(markers) / sizeof(markers[0]) && run->marker_fd < 0; i++)
		run->marker_fd = open(markers[i], O_WRONLY | O_CLOEXEC);
	run->recorder_pid = find_recorder();
	return 0;
}

/* hg_settings_close - let go of the latency request as soon as the threads stop */
void hg_settings_close(struct hg_run *run)
{
	if (run->dma_fd >= 0)
		close(run->dma_fd);
	if (run->marker_fd >= 0)
		close(run->marker_fd);
	run->dma_fd = run->marker_fd = -1;
}

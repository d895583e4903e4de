// SPDX-License-Identifier: GPL-2.0
/*
 * acct.c - what the kernel's own accounting says about a thread, read before
 * and after its run: schedstat (nanosecond on-CPU time, as the scheduler
 * charges it) and getrusage (user and system time, sampled or precise
 * depending on CONFIG_VIRT_CPU_ACCOUNTING). The merger sets them beside the
 * intervals and the kernel's events (seed 002: the accounting under-reports).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include "run.h"

/*
 * hg_acct_open - open this thread's schedstat and read it once, in the
 * thread's set-up. The reads around the run then cost one pread each: an
 * fopen there (a FILE to allocate, a path to walk, kernel code run for the
 * first time, which an emulator must translate) took up to 17 ms between the
 * thread CPU clock's read and schedstat's, and schedstat's difference fell
 * that much short of the clock's (1% to 7% of a LAT thread's on-CPU time).
 * Returns the descriptor, or -1 (schedstat is then not read).
 */
int hg_acct_open(void)
{
	int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	struct hg_acct warm;

	if (fd >= 0)
		hg_acct_read(&warm, fd);
	return fd;
}

void hg_acct_close(int fd)
{
	if (fd >= 0)
		close(fd);
}

static int read_schedstat(int fd, struct hg_acct *a)
{
	unsigned long long on, wait, slices;
	char buf[128];
	ssize_t n;

	do
		n = pread(fd, buf, sizeof(buf) - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	if (sscanf(buf, "%llu %llu %llu", &on, &wait, &slices) != 3)
		return -1;
	a->sched_ns = on;
	a->wait_ns = wait;
	a->slices = slices;
	return 0;
}

/* hg_acct_read - the accounting now; the clocks first, read as close together as we can */
void hg_acct_read(struct hg_acct *a, int schedstat_fd)
{
	struct rusage ru;
	struct timespec ts;

	a->tsc = hg_rdtsc();
	a->ok = 0;
	/* the scheduler's account including the running slice (schedstat lags it) */
	if (!clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		a->cputime_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	if (schedstat_fd >= 0 && !read_schedstat(schedstat_fd, a))
		a->ok |= 1;
	if (!getrusage(RUSAGE_THREAD, &ru)) {
		a->utime_ns = (uint64_t)ru.ru_utime.tv_sec * 1000000000ULL + (uint64_t)ru.ru_utime.tv_usec * 1000;
		a->stime_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000ULL + (uint64_t)ru.ru_stime.tv_usec * 1000;
		a->nvcsw = (uint64_t)ru.ru_nvcsw;
		a->nivcsw = (uint64_t)ru.ru_nivcsw;
		a->ok |= 2;
	}
}

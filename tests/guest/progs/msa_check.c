// SPDX-License-Identifier: GPL-2.0
/*
 * msa_check - threads with a known life, to check microstates against
 * the wall clock and /proc/<pid>/schedstat.
 *
 * Each worker spins and sleeps in turns, then blocks on a pipe. When all are
 * blocked, the main thread reads for each worker, back to back: its
 * schedstat (on-CPU ns, up to date because the thread is off CPU), the
 * module's microstates, and CLOCK_MONOTONIC. It prints one line per worker:
 *   tid wall_max_ns wall_min_ns msa_total_ns msa_oncpu_ns msa_interrupted_ns schedstat_ns
 *   runnable_ns sleep_ns switches
 * The thread was created between the two stamps around pthread_create(), so
 * its true age at the snapshot lies between wall_min and wall_max.
 * Run it under `hgtrace record -F` so that its threads are traced.
 * `msa_check [ROUNDS]`: each worker spins 40 ms and sleeps 25 ms ROUNDS
 * times (default 8).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include "hgtrace.h"

#define NWORKERS 3

struct worker {
	pthread_t th;
	pid_t tid;
	uint64_t before_ns;	/* just before pthread_create */
	uint64_t after_ns;	/* just after it returned: the thread exists by then */
	int done;
};

static struct worker w[NWORKERS];
static int rounds = 8;
static int block_pipe[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void *work(void *arg)
{
	struct worker *me = arg;
	char c;
	int i;

	me->tid = syscall(SYS_gettid);
	for (i = 0; i < rounds; i++) {
		uint64_t until = now_ns() + 40000000;
		struct timespec sl = { 0, 25000000 };

		while (now_ns() < until)
			;
		nanosleep(&sl, NULL);
	}
	pthread_mutex_lock(&mu);
	me->done = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	while (read(block_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static uint64_t schedstat_ns(pid_t tid)
{
	char path[64];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%llu", &v) != 1) {
		fprintf(stderr, "msa_check: cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	return v;
}

/*
 * blocked_in_read - whether thread @tid sleeps in read(): its state is S and
 * /proc's syscall file names read (0 on x86_64) rather than "running".
 */
static int blocked_in_read(pid_t tid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int ok = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	/* the state follows the last ')': comm may hold anything */
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ' && p[2] == 'S')
		ok = 1;
	fclose(f);
	if (!ok)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	ok = fgets(buf, sizeof(buf), f) && strncmp(buf, "0 ", 2) == 0;
	fclose(f);
	return ok;
}

/* wait_blocked_in_read - poll every ms until @tid sleeps in read(); 0, or -1 after 10 s */
static int wait_blocked_in_read(pid_t tid)
{
	int n;

	for (n = 0; n < 10000; n++) {
		if (blocked_in_read(tid))
			return 0;
		usleep(1000);
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct hgt_hello h = { .abi_major = HGT_ABI_MAJOR, .abi_minor = HGT_ABI_MINOR };
	int fd, i, all;

	if (argc > 1)
		rounds = atoi(argv[1]);
	if (argc > 2 || rounds < 1 || rounds > 1000) {
		fprintf(stderr, "usage: msa_check [ROUNDS (1..1000, default 8)]\n");
		return 1;
	}
	fd = open(HGT_DEVICE, O_RDONLY);
	if (fd < 0 || ioctl(fd, HGT_IOC_HELLO, &h)) {
		fprintf(stderr, "msa_check: %s: %s\n", HGT_DEVICE, strerror(errno));
		return 2;
	}
	if (pipe(block_pipe))
		return 2;
	for (i = 0; i < NWORKERS; i++) {
		w[i].before_ns = now_ns();
		pthread_create(&w[i].th, NULL, work, &w[i]);
		w[i].after_ns = now_ns();
	}
	pthread_mutex_lock(&mu);
	do {
		for (all = 1, i = 0; i < NWORKERS; i++)
			all &= w[i].done;
		if (!all)
			pthread_cond_wait(&cv, &mu);
	} while (!all);
	pthread_mutex_unlock(&mu);
	/* Each worker must be off the CPU, asleep in read(), before it is read:
	 * the module's figure and schedstat's are both final only then. A fixed
	 * 20 ms wait once fell short on a loaded host (-1.36% against schedstat). */
	for (i = 0; i < NWORKERS; i++)
		if (wait_blocked_in_read(w[i].tid)) {
			fprintf(stderr, "msa_check: worker %d not asleep in read() after 10 s\n", w[i].tid);
			return 2;
		}

	for (i = 0; i < NWORKERS; i++) {
		struct hgt_msa m = { .pid = w[i].tid };
		uint64_t ss = schedstat_ns(w[i].tid), t, total = 0, k;

		if (ioctl(fd, HGT_IOC_MSA, &m)) {
			fprintf(stderr, "msa_check: MSA of %d: %s\n", w[i].tid, strerror(errno));
			return 2;
		}
		t = now_ns();
		for (k = 0; k < HGT_MSA_NR; k++)
			total += m.cycles[k];
#define NS(c) ((unsigned long long)((c) * 1000000ull / h.tsc_khz))
		printf("%d %llu %llu %llu %llu %llu %llu %llu %llu %u\n", w[i].tid,
		       (unsigned long long)(t - w[i].before_ns), (unsigned long long)(t - w[i].after_ns),
		       NS(total),
		       NS(m.cycles[HGT_MSA_ONCPU_USER] + m.cycles[HGT_MSA_ONCPU_SYS]),
		       NS(m.cycles[HGT_MSA_INTERRUPTED]), (unsigned long long)ss,
		       NS(m.cycles[HGT_MSA_RUNNABLE]), NS(m.cycles[HGT_MSA_SLEEP]), m.nr_switches);
	}
	for (i = 0; i < NWORKERS; i++)
		if (write(block_pipe[1], "x", 1) != 1)
			return 2;
	for (i = 0; i < NWORKERS; i++)
		pthread_join(w[i].th, NULL);
	return 0;
}

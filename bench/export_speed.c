// SPDX-License-Identifier: GPL-2.0
/*
 * export_speed.c - the exporters' own throughput: a generated run fed
 * through the hooks of export.h as hgmerge would, with nothing else.
 *
 *	export_speed gen|ks|pf|both EVENTS OUTDIR    one measurement, a JSON line
 *	export_speed io BYTES OUTDIR COPY            the file system alone: BYTES written in
 *	                                             256 KiB writes (and copied once, COPY=1)
 *
 * "gen" runs the generator alone, so that bench/export_speed.py can take its
 * time out. The run: 4 CPUs at 2.6 GHz, an hourglass thread on each with
 * 20 us intervals; each gap holds one of four patterns in turn: the tick
 * (local_timer, an hrtimer, the TIMER softirq, a wake-up: 7 events), a
 * device irq with its softirq and a wake-up (5), a switch to another task
 * and back with its wake-up (3), a reschedule IPI (2); one record in 1000
 * comes after its successor; a job per 50 gaps, written when it ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "export.h"

#define NCPU	4
#define HZ	2.6e9
#define BASE	1000000000ULL
#define US	2600ULL		/* cycles */

static const char *comm(void *ctx, uint32_t pid)
{
	static char buf[NCPU][16];

	(void)ctx;
	if (pid == 0)
		return "swapper";
	if (pid >= 2000 && pid < 2000 + NCPU) {
		snprintf(buf[pid - 2000], 16, "stress-ng-%u", pid - 2000);
		return buf[pid - 2000];
	}
	return pid >= 1000 && pid < 1000 + NCPU ? "hourglass" : NULL;
}

static const char *irq(void *ctx, uint32_t n) { (void)ctx; return n == 30 ? "virtio0-input.0" : NULL; }
static const char *func(void *ctx, uint32_t id) { (void)ctx; return id == 0xabc ? "tick_nohz_handler" : NULL; }

static void each_comm(void *ctx, void (*fn)(void *arg, uint32_t pid, const char *comm), void *arg)
{
	for (uint32_t p = 0; p < NCPU; p++) {
		fn(arg, 1000 + p, comm(ctx, 1000 + p));
		fn(arg, 2000 + p, comm(ctx, 2000 + p));
	}
}

/* the engine's naming function, as an engine that names each cause once would have it */
static const char *cause(void *ctx, const struct hgg_gap *g, char *buf, unsigned len)
{
	static char named[HGG_KD_N][NCPU + 1][48];
	unsigned who = g->kind == HGG_KD_SWITCH_OTHER && g->out_pid >= 2000 && g->out_pid < 2000 + NCPU ?
		       g->out_pid - 2000 : NCPU;
	char *c = named[g->kind][who];

	(void)buf;
	(void)len;
	if (!*c) {
		if (g->kind == HGG_KD_SWITCH_OTHER)
			snprintf(c, 48, "switched to %s:%u", comm(ctx, g->out_pid), g->out_pid);
		else if (g->kind == HGG_KD_IRQ)
			snprintf(c, 48, "irq 30 %s", irq(ctx, 30));
		else
			snprintf(c, 48, "%s", g->kind == HGG_KD_IPI ? "reschedule" : hgg_kind_name[g->kind]);
	}
	return c;
}

static const char *task(void *ctx, uint32_t pid, char *buf, unsigned len)
{
	if (pid >= 1000 && pid < 1000 + NCPU)
		snprintf(buf, len, "hg-thread-%u", pid - 1000);
	else
		snprintf(buf, len, "%s:%u", comm(ctx, pid) ? comm(ctx, pid) : "?", pid);
	return buf;
}

/* where the generated run goes: the exporters, or files */
struct sink {
	int mode;		/* 0 gen, 1 ks, 2 pf, 3 both */
	struct ks_export *ks;
	struct pf_export *pf;
	struct hg_err err;
	uint64_t kernel_events;
	uint64_t sink_check;	/* keeps "gen" from being optimized away */
};

static void die(struct sink *s)
{
	fprintf(stderr, "export_speed: %s\n", s->err.msg);
	exit(3);
}

static void kern(struct sink *s, int cpu, const struct hgt_rec *r)
{
	s->kernel_events += r->type != HGT_REC_LOST;
	switch (s->mode) {
	case 0:
		s->sink_check += r->tsc ^ r->arg;
		break;
	case 1:
		if (ks_kernel(s->ks, cpu, r, &s->err))
			die(s);
		break;
	case 2:
		if (pf_kernel(s->pf, cpu, r, &s->err))
			die(s);
		break;
	case 3:
		if (ks_kernel(s->ks, cpu, r, &s->err) || pf_kernel(s->pf, cpu, r, &s->err))
			die(s);
		break;
	}
}

static int no_hg;	/* EXPORT_SPEED_NO_HG=1: the kernel's records only (to see what each side costs) */

static void hgrec(struct sink *s, const struct hgl_rec *r)
{
	if (no_hg)
		return;
	switch (s->mode) {
	case 0:
		s->sink_check += r->t0;
		break;
	case 1: case 2: case 3:
		if ((s->mode & 1 && ks_hourglass(s->ks, r, &s->err)) || (s->mode & 2 && pf_hourglass(s->pf, r, &s->err)))
			die(s);
		break;
	}
}

static void gaprec(struct sink *s, const struct hgg_gap *g)
{
	if (no_hg)
		return;
	if (s->mode == 0)
		s->sink_check += g->g0;
	if ((s->mode & 1 && ks_gap(s->ks, g, &s->err)) || (s->mode & 2 && pf_gap(s->pf, g, &s->err)))
		die(s);
}

/* one CPU's generator state */
struct gcpu {
	uint64_t t;		/* start of the next interval */
	uint64_t tick;
	uint64_t gaps;
	uint64_t job_release;
	struct { struct hgt_rec h; uint64_t p[2]; } held;	/* a record delayed behind its successor */
	int have_held;
};

static void emit(struct sink *s, struct gcpu *g, int cpu, uint64_t t, int type, uint32_t arg, int flags,
		 const void *pl, unsigned plen)
{
	struct { struct hgt_rec h; uint64_t p[2]; } r;

	r.h = (struct hgt_rec){ t, type, (uint8_t)(16 + ((plen + 7) & ~7u)), flags, 0, arg };
	r.p[0] = r.p[1] = 0;
	if (plen)
		memcpy(r.p, pl, plen);
	/* one in 1000 comes late, after the next one */
	if (!g->have_held && (t / 7 + type) % 1000 == 0) {
		memcpy(&g->held, &r, sizeof(r));
		g->have_held = 1;
		return;
	}
	kern(s, cpu, &r.h);
	if (g->have_held) {
		kern(s, cpu, &g->held.h);
		g->have_held = 0;
	}
}

/* one gap (and the interval before it) on @cpu */
static void one_gap(struct sink *s, struct gcpu *g, int cpu)
{
	uint32_t hg = 1000 + cpu, other = 2000 + cpu;
	uint64_t end = g->t + 20 * US, g0, g1;
	struct hgg_gap gap = { 0 };
	struct hgl_rec iv;
	int pattern = g->gaps % 4;

	if (end > g->tick)
		end = g->tick;
	g0 = end;
	switch (g->tick <= end ? 0 : pattern ? pattern : 1) {
	case 0: {	/* the tick */
		struct hgt_hrtimer h = { 0xabc, 0 };
		struct hgt_wake w = { (uint16_t)cpu, 120, 0 };

		emit(s, g, cpu, g0 + 100, HGT_REC_VEC_ENTRY, 236, HGT_VEC_LOCAL_TIMER, NULL, 0);
		emit(s, g, cpu, g0 + 150, HGT_REC_HRTIMER_ENTRY, 7, 0, &h, sizeof(h));
		emit(s, g, cpu, g0 + 2000, HGT_REC_HRTIMER_EXIT, 7, 0, NULL, 0);
		emit(s, g, cpu, g0 + 2100, HGT_REC_SOFTIRQ_ENTRY, 1, 0, NULL, 0);
		emit(s, g, cpu, g0 + 4000, HGT_REC_SOFTIRQ_EXIT, 1, 0, NULL, 0);
		emit(s, g, cpu, g0 + 4200, HGT_REC_VEC_EXIT, 236, HGT_VEC_LOCAL_TIMER, NULL, 0);
		emit(s, g, cpu, g0 + 4300, HGT_REC_WAKING, other, 0, &w, sizeof(w));
		g1 = g0 + 4500;
		g->tick += 1000 * US;
		gap.cls = gap.inferred = HGG_C_TIMER;
		gap.kind = HGG_KD_TIMER;
		break;
	}
	case 1: {	/* a device irq */
		struct hgt_wake w = { (uint16_t)cpu, 120, 0 };

		emit(s, g, cpu, g0 + 100, HGT_REC_IRQ_ENTRY, 30, 0, NULL, 0);
		emit(s, g, cpu, g0 + 900, HGT_REC_IRQ_EXIT, 30, 1, NULL, 0);
		emit(s, g, cpu, g0 + 950, HGT_REC_SOFTIRQ_ENTRY, 3, 0, NULL, 0);
		emit(s, g, cpu, g0 + 2500, HGT_REC_SOFTIRQ_EXIT, 3, 0, NULL, 0);
		emit(s, g, cpu, g0 + 2600, HGT_REC_WAKING, other, 0, &w, sizeof(w));
		g1 = g0 + 3000;
		gap.cls = gap.inferred = HGG_C_INTERRUPT;
		gap.kind = HGG_KD_IRQ;
		break;
	}
	case 2: {	/* another task */
		/* by name: the lags (1.2) left 0, "at the tracepoint", as before they existed */
		struct hgt_switch out = { .prev_pid = hg, .prev_state = 0, .prev_prio = 49, .next_prio = 120 };
		struct hgt_switch in = { .prev_pid = other, .prev_state = 1, .prev_prio = 120, .next_prio = 49 };
		struct hgt_wake w = { (uint16_t)cpu, 49, 0 };

		emit(s, g, cpu, g0 + 200, HGT_REC_SWITCH, other, HGT_SWITCH_PREEMPT, &out, sizeof(out));
		emit(s, g, cpu, g0 + 9000, HGT_REC_WAKEUP, hg, 0, &w, sizeof(w));
		emit(s, g, cpu, g0 + 9800, HGT_REC_SWITCH, hg, 0, &in, sizeof(in));
		g1 = g0 + 10000;
		gap.cls = gap.inferred = HGG_C_SWITCH_OTHER;
		gap.kind = HGG_KD_SWITCH_OTHER;
		gap.out_pid = other;
		break;
	}
	default:	/* an IPI, inferred wrong */
		emit(s, g, cpu, g0 + 100, HGT_REC_VEC_ENTRY, 253, HGT_VEC_RESCHEDULE, NULL, 0);
		emit(s, g, cpu, g0 + 700, HGT_REC_VEC_EXIT, 253, HGT_VEC_RESCHEDULE, NULL, 0);
		g1 = g0 + 1000;
		gap.cls = HGG_C_INTERRUPT;
		gap.inferred = HGG_C_TIMER;
		gap.kind = HGG_KD_IPI;
		break;
	}
	iv = (struct hgl_rec){ g->t, g0, 0, (uint16_t)cpu, HGL_REC_INTERVAL, 0, (uint32_t)cpu };
	hgrec(s, &iv);
	gap.g0 = g0;
	gap.g1 = g1;
	gap.cpu = cpu;
	gap.thread = gap.next_thread = cpu;
	gaprec(s, &gap);
	if (++g->gaps % 50 == 0) {
		struct hgl_rec job = { g->job_release, g0, g->job_release + 40 * US * 50, (uint16_t)cpu,
				       HGL_REC_JOB, 0, (uint32_t)cpu };

		hgrec(s, &job);
		g->job_release = g1;
	}
	g->t = g1;
}

static void generate(struct sink *s, uint64_t events)
{
	struct gcpu g[NCPU];
	int c;

	memset(g, 0, sizeof(g));
	for (c = 0; c < NCPU; c++) {
		g[c].t = BASE + 1000 + 37 * c;
		g[c].tick = g[c].t + 1000 * US - 500 * c;
		g[c].job_release = g[c].t;
	}
	while (s->kernel_events < events)
		for (c = 0; c < NCPU; c++)
			one_gap(s, &g[c], c);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* what the file system alone takes for @bytes: the floor under a writer of that many */
static int io_floor(uint64_t bytes, const char *dir, int copy)
{
	static char chunk[256 << 10];
	char path[4096];
	uint64_t left = bytes;
	double t0 = now(), t1;
	struct rusage ru;
	int fd, out = -1;

	memset(chunk, 'x', sizeof(chunk));
	fd = open(dir, O_TMPFILE | O_RDWR, 0600);
	if (fd < 0) {
		perror(dir);
		return 1;
	}
	while (left) {
		size_t n = left < sizeof(chunk) ? left : sizeof(chunk);

		if (write(fd, chunk, n) != (ssize_t)n) {
			perror("write");
			return 1;
		}
		left -= n;
	}
	if (copy) {
		loff_t in = 0;

		snprintf(path, sizeof(path), "%s/io-floor.tmp", dir);
		out = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
		unlink(path);
		for (left = bytes; left;) {
			ssize_t c = copy_file_range(fd, &in, out, NULL, left, 0);

			if (c <= 0) {
				perror("copy_file_range");
				return 1;
			}
			left -= c;
		}
	}
	close(fd);
	if (out >= 0)
		close(out);
	t1 = now();
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"mode\": \"io\", \"bytes\": %llu, \"copy\": %d, \"seconds\": %.6f, \"user_s\": %.3f, "
	       "\"sys_s\": %.3f}\n", (unsigned long long)bytes, copy, t1 - t0,
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6, ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6);
	return 0;
}

int main(int argc, char **argv)
{
	static uint32_t tids[NCPU];
	static const char *names[NCPU], *wl[NCPU];
	static char nbuf[NCPU][24];
	struct sink *s;
	uint64_t events;
	struct rusage ru;
	char dat[4096], js[4096];
	double t0, t1, t_fed;
	uint64_t out_bytes;
	int mode;

	if (argc == 5 && !strcmp(argv[1], "io"))
		return io_floor(strtoull(argv[2], NULL, 10), argv[3], atoi(argv[4]));
	if (argc != 4) {
		fprintf(stderr, "usage: export_speed gen|ks|pf|both EVENTS OUTDIR\n"
				"       export_speed io BYTES OUTDIR COPY\n");
		return 2;
	}
	mode = !strcmp(argv[1], "gen") ? 0 : !strcmp(argv[1], "ks") ? 1 : !strcmp(argv[1], "pf") ? 2 :
	       !strcmp(argv[1], "both") ? 3 : -1;
	if (mode < 0) {
		fprintf(stderr, "export_speed: %s: not gen, ks, pf or both\n", argv[1]);
		return 2;
	}
	events = strtoull(argv[2], NULL, 10);
	no_hg = getenv("EXPORT_SPEED_NO_HG") && *getenv("EXPORT_SPEED_NO_HG") == '1';
	for (int k = 0; k < NCPU; k++) {
		tids[k] = 1000 + k;
		snprintf(nbuf[k], sizeof(nbuf[k]), "hg-thread-%d", k);
		names[k] = nbuf[k];
		wl[k] = "CPU";
	}
	struct exp_run run = {
		.tsc_hz = HZ, .base_tsc = BASE, .ncpus = NCPU, .uname = "generated", .nthreads = NCPU,
		.tids = tids, .thread_names = names, .workloads = wl,
		.names = { NULL, comm, irq, func, each_comm, cause, task }, .command = "export_speed",
	};
	s = calloc(1, sizeof(*s));
	if (!s)
		return 1;
	s->mode = mode;
	snprintf(dat, sizeof(dat), "%s/speed.dat", argv[3]);
	snprintf(js, sizeof(js), "%s/speed.perfetto-trace", argv[3]);
	t0 = now();
	if ((mode & 1 && !(s->ks = ks_open(dat, NULL, &run, &s->err))) ||
	    (mode & 2 && !(s->pf = pf_open(js, &run, &s->err))))
		die(s);
	generate(s, events);
	t_fed = now();
	{
		/* the exports' one end (export.h), as hgmerge ends them: drain, write, name */
		struct ks_summary ks_sum;
		struct pf_summary pf_sum;

		if ((s->ks || s->pf) && exp_finish(s->ks, &ks_sum, s->pf, &pf_sum, &s->err))
			die(s);
	}
	t1 = now();
	getrusage(RUSAGE_SELF, &ru);
	{
		/* VmHWM: ru_maxrss keeps the high-water mark of the process before its exec */
		FILE *f = fopen("/proc/self/status", "r");
		char line[256];

		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "VmHWM:", 6))
				ru.ru_maxrss = strtol(line + 6, NULL, 10);
		if (f)
			fclose(f);
	}
	{
		struct stat st;

		out_bytes = (mode & 1 && !stat(dat, &st) ? st.st_size : 0) + (mode & 2 && !stat(js, &st) ? st.st_size : 0);
	}
	printf("{\"mode\": \"%s\", \"events\": %llu, \"seconds\": %.6f, \"finish_s\": %.6f, "
	       "\"user_s\": %.3f, \"sys_s\": %.3f, \"peak_rss_mb\": %.1f, \"out_bytes\": %llu, \"check\": %llu}\n",
	       argv[1], (unsigned long long)s->kernel_events, t1 - t0, t1 - t_fed,
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6, ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6,
	       ru.ru_maxrss / 1024.0, (unsigned long long)out_bytes,
	       (unsigned long long)(s->sink_check & 1));
	free(s);
	return 0;
}

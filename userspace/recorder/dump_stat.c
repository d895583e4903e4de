// SPDX-License-Identifier: GPL-2.0
/*
 * dump_stat.c - hgtrace stat FILE: a recording's configuration, window and
 * per-CPU counters, in the shape `hgtrace stat` gives the loaded module's:
 *
 *   abi: 1.2
 *   tsc_khz: 2100000
 *   mode: stop
 *   ...
 *   window: start_tsc=... stop_tsc=... (3.041127 s)
 *   # cpu records lost produced written refused overwritten read reader_fault
 *   0 41234 0 41234 41234 0 0 41234 0
 *
 * records and lost are what the file holds (records, and the events its
 * LOST markers count); the rest are the module's final counters (its stats
 * chunks, "-" where the file has none). Every record is read, as a merge
 * reads them, so that each reason a merger would refuse the file is said
 * after the figures, as hgtrace dump says them (dump_say_problems), with
 * its status, 3.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dump.h"
#include "hgt_dev.h"
#include "hgtrace_cmds.h"

/* the metadata the module's own stat shows, in its order */
static const char *const keys[] = { "abi", "tsc_khz", "mode", "buffer_bytes_per_cpu", "events" };

struct tally {
	uint64_t records, lost;
};

/* count - every record of @f read through one cursor, counted by CPU: 0, or -1 and @err */
static int count(struct hgt_file *f, struct tally *t, uint32_t ncpu, struct hg_err *err)
{
	struct hgt_cursor *c = hgt_cursor_open(f, HGT_ALL_CPUS, err);
	const struct hgt_rec *r;
	int rc;

	if (!c)
		return -1;
	while ((rc = hgt_cursor_next(c, &r, err)) > 0) {
		uint32_t cpu = hgt_cursor_cpu(c);

		if (cpu >= ncpu)
			continue;
		if (r->type == HGT_REC_LOST)
			t[cpu].lost += ((const struct hgt_lost *)(r + 1))->count;
		else
			t[cpu].records++;
	}
	hgt_cursor_close(c);
	return rc < 0 ? -1 : 0;
}

static void print_figures(const struct hgt_file *f, const struct tally *t, uint32_t ncpu)
{
	uint64_t start, stop;
	uint32_t cpu;
	size_t i;

	printf("file: %s\nformat: hgtrace %u (%s)\n", hgt_path(f), hgt_version(f),
	       hgt_complete(f) ? "complete" : "did not finish");
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (hgt_meta(f, keys[i]))
			printf("%s: %s\n", keys[i], hgt_meta(f, keys[i]));
	if (hgt_window(f, &start, &stop) && hgt_tsc_khz(f))
		printf("window: start_tsc=%llu stop_tsc=%llu (%.6f s)\n", (unsigned long long)start,
		       (unsigned long long)stop, (double)(stop - start) / (hgt_tsc_khz(f) * 1e3));
	else if (hgt_window(f, &start, &stop))
		printf("window: start_tsc=%llu stop_tsc=%llu\n", (unsigned long long)start, (unsigned long long)stop);
	else
		printf("window: none\n");
	printf("# cpu records lost produced written refused overwritten read reader_fault\n");
	for (cpu = 0; cpu < ncpu; cpu++) {
		const struct hgt_cpu_stats *s = hgt_cpu_stats(f, cpu);

		if (!s && !hgt_cpu_nr_records(f, cpu))
			continue;
		printf("%u %llu %llu", cpu, (unsigned long long)t[cpu].records, (unsigned long long)t[cpu].lost);
		if (s)
			printf(" %llu %llu %llu %llu %llu %llu\n", (unsigned long long)s->produced,
			       (unsigned long long)s->written, (unsigned long long)s->refused,
			       (unsigned long long)s->overwritten, (unsigned long long)s->read,
			       (unsigned long long)s->reader_fault);
		else
			printf(" - - - - - -\n");
	}
}

int hgt_cmd_stat_file(const char *path)
{
	struct hgt_file *f;
	struct tally *t;
	struct hg_err err;
	uint32_t ncpu;
	int rc;

	if (dump_is_hgl(path)) {
		fprintf(stderr, "hgtrace stat: %s: an hourglass trace; stat reads recordings (.hgt): hgtrace dump "
			"-s %s ends with the trace's counts\n", path, path);
		return HGT_EXIT_USAGE;
	}
	if (hgt_open(&f, path, HGT_OPEN_ALLOW_INCOMPLETE, &err)) {
		fprintf(stderr, "hgtrace: %s\n", err.msg);
		return hg_err_status(&err);
	}
	ncpu = hgt_nr_cpus(f);
	t = calloc(ncpu + 1, sizeof(*t));
	if (!t) {
		fprintf(stderr, "hgtrace: %s: out of memory for the counts of %u CPUs\n", path, ncpu);
		hgt_close(f);
		return HGT_EXIT_ENV;
	}
	rc = count(f, t, ncpu, &err);
	/* the figures of what could be read, then what is wrong */
	print_figures(f, t, ncpu);
	if (dump_say_problems(f, rc ? &err : NULL))
		rc = -1;
	hgt_close(f);
	free(t);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "hgtrace: writing the figures failed\n");
		return HGT_EXIT_ENV;
	}
	return rc ? HGT_EXIT_DATA : HGT_EXIT_OK;
}

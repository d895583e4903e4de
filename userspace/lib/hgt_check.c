// SPDX-License-Identifier: GPL-2.0
/*
 * hgt_check.c - what makes a readable recording unfit to be the ground
 * truth, beyond its records (hg_hgt.h, hgt_check()).
 *
 * hgt_open() takes any file whose shape is right, and a cursor checks the
 * records as it hands them out. What is left is what a file may lack and
 * still be read: a clock that is not the TSC (hgt_check_clock), and the
 * trailer of a recording whose writer always writes one. The merger
 * refuses such a file; hgtrace dump and stat print it and say why: one
 * rule, here, for both (docs/hgtrace-file.md, "What a reader checks").
 */
#include <stdio.h>
#include "hg_hgt.h"

/* end_offset - where the END marker is (the trailer comes before it), else the file's last chunk */
static unsigned long long end_offset(const struct hgt_file *f)
{
	size_t n = hgt_nr_chunks(f);

	return n ? (unsigned long long)hgt_chunk(f, n - 1)->offset : 0;
}

/*
 * check_trailer - a finished recording of hgtrace record or hgtrace-ftrace (both write `mode`
 * into the metadata, and the time chunk and the stats of every CPU they recorded before END,
 * on every way out that writes END: docs/hgtrace-file.md) has them. Without them its window
 * and its losses are unknown, and nothing says what it lost: a trailer dropped, not one never
 * written. hgtrace-import's files (no module counters) and generated ones say no mode.
 */
static int check_trailer(const struct hgt_file *f, const char *name, struct hg_err *errs, int max, int n)
{
	uint64_t start, stop;
	uint32_t cpu, ncpu = hgt_nr_cpus(f), without = 0, first = 0;
	const char *mode = hgt_meta(f, "mode");

	if (!hgt_complete(f) || !mode)
		return n;
	if (!hgt_window(f, &start, &stop) && n < max)
		hg_err_set(&errs[n++], "%s: offset %llu: the recording ends (END) without its time chunk, which "
			   "its recorder (mode: %s) always writes: its trailer was lost, and with it the window "
			   "every event was recorded in", name, end_offset(f), mode);
	for (cpu = 0; cpu < ncpu; cpu++)
		if (hgt_cpu_nr_records(f, cpu) && !hgt_cpu_stats(f, cpu) && !without++)
			first = cpu;
	if (without && n < max)
		hg_err_set(&errs[n++], "%s: offset %llu: the recording ends (END) without the stats of CPU %u%s, "
			   "which its recorder (mode: %s) always writes: its trailer was lost, and with it what the "
			   "recording lost", name, end_offset(f), first, without > 1 ? " and others with records" : "",
			   mode);
	return n;
}

int hgt_check(const struct hgt_file *f, const char *name, struct hg_err *errs, int max)
{
	int n = 0;

	if (max > 0 && hgt_check_clock(f, name, &errs[n]))
		n++;
	return check_trailer(f, name ? name : hgt_path(f), errs, max, n);
}

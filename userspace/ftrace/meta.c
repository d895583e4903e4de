// SPDX-License-Identifier: GPL-2.0
/*
 * meta.c - provenance of an ftrace recording (docs/hgtrace-file.md, docs/hgtrace-ftrace.md).
 *
 * The keys are the module recorder's, with the same meanings where they
 * apply, plus `recorder`, `clock: tsc` (what readers check), `trace_clock`,
 * `tracefs_instance`, `reader` and where
 * tsc_khz came from. tsc_khz: the module asks the kernel; without it the
 * recorder measures the TSC against CLOCK_MONOTONIC_RAW across its own
 * set-up (at least 20 ms); docs/hgtrace-ftrace.md compares the two.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <x86intrin.h>
#include "hgtrace.h"
#include "hg_hgt_format.h"
#include "ftrace.h"
#include "tfs.h"
#include "meta.h"

void tsc_pair_now(struct tsc_pair *p)
{
	uint64_t best = UINT64_MAX;
	int i;

	/* an interruption between the reads shows as a wide bracket: keep the narrowest */
	for (i = 0; i < 5; i++) {
		struct timespec ts;
		unsigned int aux;
		uint64_t a = __rdtscp(&aux), b;

		clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
		b = __rdtscp(&aux);
		if (b - a < best) {
			best = b - a;
			p->tsc = a + (b - a) / 2;
			p->ns = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
		}
	}
}

uint32_t tsc_khz_between(const struct tsc_pair *a, const struct tsc_pair *b)
{
	if (b->ns <= a->ns + 1000000 || b->tsc <= a->tsc)
		return 0;
	return (uint32_t)((double)(b->tsc - a->tsc) * 1e6 / (double)(b->ns - a->ns) + 0.5);
}

char *meta_build(const struct ft_opts *o, const struct tfs *t, uint32_t groups, uint32_t tsc_khz)
{
	static const char *const readers[] = { "pages (trace_pipe_raw, converted after the run)",
					       "pages (trace_pipe_raw, converted at each drain)",
					       "tracefs_iterate_raw_events" };
	struct utsname u;
	char *buf = NULL, host[256] = "";
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int i;

	if (!m)
		return NULL;
	uname(&u);
	gethostname(host, sizeof(host) - 1);
	fprintf(m, "format: hgtrace %d\n", HGT_FILE_VERSION);
	fprintf(m, "recorder: ftrace (libtracefs %s, libtraceevent %s)\n", t->libtracefs, HG_LIBTRACEEVENT_BUILT);
	/* the records follow this ABI of kmod/uapi/hgtrace.h; no module took part */
	fprintf(m, "abi: %d.%d\n", HGT_ABI_MAJOR, HGT_ABI_MINOR);
	fprintf(m, "tool_version: %s\n", HG_FTRACE_VERSION);
	fprintf(m, "kernel: %s %s %s\n", u.sysname, u.release, u.version);
	fprintf(m, "preempt_rt: %d\n", strstr(u.version, "PREEMPT_RT") ? 1 : 0);
	fprintf(m, "host: %s\n", host);
	fprintf(m, "tsc_khz: %u\n", tsc_khz);
	fprintf(m, "tsc_khz_source: measured against CLOCK_MONOTONIC_RAW\n");
	/* what hgmerge checks (userspace/merger/main.c): the stamps are the TSC */
	fprintf(m, "clock: tsc\n");
	fprintf(m, "trace_clock: x86-tsc\n");
	fprintf(m, "nr_cpu_ids: %d\n", t->ncpus);
	fprintf(m, "mode: %s\n", o->rec.overwrite ? "overwrite" : "stop");
	fprintf(m, "buffer_bytes_per_cpu: %llu\n", (unsigned long long)t->buffer_kb * 1024);
	fprintf(m, "events: 0x%x\n", groups);
	fprintf(m, "compression: none\n");
	/* all zero when no -c: every CPU */
	fprintf(m, "cpumask: ");
	hg_cpuset_fprint_mask(m, &o->rec.cpus);
	fprintf(m, "\n");
	fprintf(m, "filter:\n");
	fprintf(m, "tracefs_instance: %s\n", t->name);
	fprintf(m, "reader: %s\n", readers[o->reader]);
	fprintf(m, "start_time: %lld\n", (long long)time(NULL));
	fprintf(m, "command_line:");
	for (i = 0; i < o->argc; i++)
		fprintf(m, " %s", o->argv[i]);
	fprintf(m, "\n");
	fclose(m);
	return buf;
}

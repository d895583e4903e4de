// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_hgl.c - the hourglass trace reader (hg_hgl.h) on any bytes: the
 * sections, the info section's JSON and the keys taken from it, the
 * records through cursors (all threads, each thread, a rewind), opened
 * strict and with HGL_OPEN_ALLOW_INCOMPLETE.
 *
 * The promises checked beyond crashes: struct hgl_info within the
 * documented bounds (tsc.hz from 1 to 10^12, at most 4096 threads
 * numbered in order, strings terminated within their arrays), records
 * of a known type, a thread below the count and a CPU below 8192, the
 * count of records what hgl_nr_records() says, and errors that name the
 * file and never blame memory.
 */
#include <string.h>
#include "fz.h"
#include "hg_hgl.h"

#define MAX_CURSOR_THREADS 16

static void check_info(const struct hgl_info *in)
{
	int k;

	if (!(in->tsc_hz >= 1 && in->tsc_hz <= HGL_MAX_TSC_HZ))
		fz_fail("tsc.hz %g accepted", in->tsc_hz);
	if (in->nthreads < 0 || in->nthreads > HGL_MAX_THREADS)
		fz_fail("%d threads accepted", in->nthreads);
	if (!in->json || strlen(in->json) > in->json_len)
		fz_fail("the info section's text is not what json_len says");
	if (in->t0_tsc < 0 || in->duration_ns < 0)
		fz_fail("a negative t0_tsc or duration_ns accepted");
	for (k = 0; k < in->nthreads; k++) {
		const struct hgl_thread *t = &in->threads[k];

		if (t->thread != k)
			fz_fail("threads[%d] is numbered %d", k, t->thread);
		if (!memchr(t->workload, 0, sizeof(t->workload)) || !memchr(t->policy, 0, sizeof(t->policy)) ||
		    !memchr(t->timer, 0, sizeof(t->timer)) || !memchr(t->affinity, 0, sizeof(t->affinity)))
			fz_fail("threads[%d]: a string without its NUL", k);
		if (t->period_ns < 0 || t->amount_ns < 0 || !(t->cpu_time_ns >= 0))
			fz_fail("threads[%d]: a negative period, amount or CPU time", k);
	}
}

static int read_cursor(struct hgl_file *f, int thread, const char *path)
{
	struct hg_err err = { "", 0 };
	struct hgl_cursor *c = hgl_cursor_open(f, thread, &err);
	const struct hgl_info *in = hgl_info(f);
	struct hgl_rec r;
	uint64_t n = 0, again = 0;
	int rc, pass;

	if (!c) {
		fz_bad_message(err.msg, path);
		return -1;
	}
	for (pass = 0; pass < 2; pass++) {
		while ((rc = hgl_cursor_next(c, &r, &err)) > 0) {
			if (r.type < HGL_REC_INTERVAL || r.type > HGL_REC_WAKE || r.thread >= in->nthreads ||
			    r.cpu >= HGL_MAX_CPUS)
				fz_fail("a record of type %u, thread %u, CPU %u handed out", r.type, r.thread, r.cpu);
			if (thread >= 0 && r.thread != thread)
				fz_fail("a cursor of thread %d handed out thread %u", thread, r.thread);
			if (pass)
				again++;
			else
				n++;
		}
		if (rc < 0)
			fz_fail("a cursor failed on a file hgl_open() checked: %s", err.msg);
		hgl_cursor_rewind(c);
	}
	if (n != again)
		fz_fail("a rewound cursor read %llu records, then %llu", (unsigned long long)n,
			(unsigned long long)again);
	if (thread < 0 && n != hgl_nr_records(f))
		fz_fail("a cursor read %llu records, hgl_nr_records() says %llu", (unsigned long long)n,
			(unsigned long long)hgl_nr_records(f));
	hgl_cursor_close(c);
	return 0;
}

static void one(const char *path, unsigned flags)
{
	struct hg_err err = { "", 0 };
	struct hgl_file *f;
	unsigned major, minor;
	int k;

	if (hgl_open(&f, path, flags, &err)) {
		fz_bad_message(err.msg, path);
		return;
	}
	check_info(hgl_info(f));
	hgl_version(f, &major, &minor);
	if (major != HGL_FORMAT_MAJOR)
		fz_fail("version %u.%u accepted", major, minor);
	if (!hgl_complete(f) && hgl_dropped(f))
		fz_fail("dropped records without an END section");
	if (!read_cursor(f, -1, path))
		for (k = 0; k < hgl_info(f)->nthreads && k < MAX_CURSOR_THREADS; k++)
			read_cursor(f, k, path);
	hgl_close(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file("hourglass.hgl", data, size);

	one(path, 0);
	one(path, HGL_OPEN_ALLOW_INCOMPLETE);
	return 0;
}

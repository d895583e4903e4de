// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_merge.c - hgmerge end to end, in process, on a pair of files: the
 * input is an hourglass trace followed by a .hgt recording, cut at the
 * first "HGTRACE\n" (the .hgt's own magic; no magic: no recording). The
 * merger's objects are built into the target (tests/fuzz/Makefile), its
 * main() renamed hgmerge_main(), and run with the report, the per-gap
 * stream and its JSON twin as outputs.
 *
 * A bad input makes hgmerge call fail(), which prints its one line and
 * exits 3. Built with -DHG_FUZZ, fail() calls hg_fuzz_on_fail first, and
 * this target longjmps back from there; fz_track then frees what the
 * interrupted merge still held, closes its streams and descriptors, so
 * that the next input starts as a new process would. The exporters
 * (--kernelshark, --perfetto) run on a thread of their own, which a
 * longjmp cannot take back: they are not driven here.
 */
#include <getopt.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include "engine.h"
#include "fz.h"
#include "fz_track.h"

int hgmerge_main(int argc, char **argv);
extern void (*hg_fuzz_on_fail)(void);

static jmp_buf back;
static unsigned long long failed, done;

static void on_fail(void)
{
	longjmp(back, 1);
}

static void tally(void)
{
	const char *to = getenv("FZ_TALLY");
	FILE *f = to ? fopen(to, "a") : NULL;

	fprintf(stderr, "fuzz_merge: %llu merges finished, %llu refused the input (fail())\n", done, failed);
	if (f) {
		fprintf(f, "merge %llu %llu\n", done, failed);
		fclose(f);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("TMPDIR", fz_dir(), 1);
	hg_fuzz_on_fail = on_fail;
	/* a chunk's payload, or its records decoded, is at most 64 MiB (hg_hgt.h), plus the 8 spare */
	fz_track_limit((64u << 20) + 64);
	atexit(tally);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char hgl[512], hgt[512], report[512], gaps[512], gaps_json[512];
	const uint8_t *cut = memmem(data, size, "HGTRACE\n", 8);
	size_t nhgl = cut ? (size_t)(cut - data) : size;
	char *argv[] = { "hgmerge", "--hgl", hgl, "--kernel", hgt, "--report", report, "--gaps", gaps,
			 "--gaps-json", gaps_json, NULL };

	snprintf(hgl, sizeof(hgl), "%s", fz_file("hourglass.hgl", data, nhgl));
	snprintf(hgt, sizeof(hgt), "%s", fz_file("kernel.hgt", data + nhgl, size - nhgl));
	snprintf(report, sizeof(report), "%s/report.json", fz_dir());
	snprintf(gaps, sizeof(gaps), "%s/gaps.bin", fz_dir());
	snprintf(gaps_json, sizeof(gaps_json), "%s/gaps.jsonl", fz_dir());
	fz_fd_mark();
	fz_track_begin();
	optind = 0;			/* getopt from the start */
	if (!setjmp(back)) {
		if (hgmerge_main((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv))
			fz_fail("hgmerge returned without fail() and without 0");
		done++;
	} else {
		failed++;
	}
	fz_track_reap();
	fz_fd_reap();
	return 0;
}

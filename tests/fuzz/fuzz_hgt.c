// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_hgt.c - the .hgt reader (hg_hgt.h) on any bytes: plain, deflated
 * (zchk) and packed (pchk) chunks, opened strict and with
 * HGT_OPEN_ALLOW_INCOMPLETE (hgtrace dump's way), every chunk decoded with
 * hgt_read_chunk(), every record walked through a cursor of all CPUs and
 * one of each CPU.
 *
 * Besides crashes, sanitizer reports and allocations beyond the format's
 * limits (run with -malloc_limit_mb), it checks the promises hg_hgt.h
 * makes: what hgt_open() accepted is consistent (chunk CPUs below the CPU
 * count, record counts that add up), a decoded chunk walks (lengths
 * multiples of 8, at least what each type needs, as many records as its
 * header says), a cursor hands out only such records, and every error
 * names the file and never blames memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fz.h"
#include "hg_hgt.h"

#define MAX_CURSOR_CPUS	64	/* one cursor per CPU up to this many: beyond, the time goes nowhere */

static int is_records(uint32_t magic)
{
	return magic == HGT_CHUNK_MAGIC || magic == HGT_ZCHUNK_MAGIC || magic == HGT_PCHUNK_MAGIC;
}

static void check_rec(const struct hgt_rec *r, const char *what)
{
	if (r->len < 16 || r->len % 8 || r->len < hgt_type_min_len(r->type))
		fz_fail("%s: a record of type %u and length %u handed out", what, r->type, r->len);
}

/* walk - the records hgt_read_chunk() returned for @ci */
static void walk(const struct hgt_chunk_info *ci, const char *recs, size_t len)
{
	size_t pos = 0;
	uint32_t n = 0;

	while (pos < len) {
		const struct hgt_rec *r = (const struct hgt_rec *)(recs + pos);

		if (len - pos < 16)
			fz_fail("hgt_read_chunk: a record header cut at byte %zu of %zu", pos, len);
		check_rec(r, "hgt_read_chunk");
		if (r->len > len - pos)
			fz_fail("hgt_read_chunk: a record past the chunk's end");
		pos += r->len;
		n++;
	}
	if (n != ci->nr_records)
		fz_fail("hgt_read_chunk: %u records, the header says %u", n, ci->nr_records);
}

/* read_cursor - every record of @cpu (or all); -1 after an error */
static int read_cursor(struct hgt_file *f, uint32_t cpu, const char *path)
{
	struct hg_err err = { "", 0 };
	struct hgt_cursor *c = hgt_cursor_open(f, cpu, &err);
	const struct hgt_rec *r;
	uint64_t n = 0;
	int rc;

	if (!c) {
		fz_bad_message(err.msg, path);
		return -1;
	}
	while ((rc = hgt_cursor_next(c, &r, &err)) > 0) {
		check_rec(r, "hgt_cursor_next");
		if (cpu != HGT_ALL_CPUS && hgt_cursor_cpu(c) != cpu)
			fz_fail("a cursor of CPU %u handed out a record of CPU %u", cpu, hgt_cursor_cpu(c));
		if (hgt_cursor_cpu(c) >= hgt_nr_cpus(f))
			fz_fail("a record of CPU %u in a recording of %u CPUs", hgt_cursor_cpu(c), hgt_nr_cpus(f));
		n++;
	}
	if (rc < 0)
		fz_bad_message(err.msg, path);
	else if (n != (cpu == HGT_ALL_CPUS ? hgt_nr_records(f) : hgt_cpu_nr_records(f, cpu)))
		fz_fail("a cursor of CPU %u ended after %llu records, the chunk headers say %llu", cpu,
			(unsigned long long)n, (unsigned long long)(cpu == HGT_ALL_CPUS ? hgt_nr_records(f) :
								     hgt_cpu_nr_records(f, cpu)));
	hgt_cursor_close(c);
	return rc < 0 ? -1 : 0;
}

static void check_open(struct hgt_file *f, size_t size)
{
	uint64_t total = 0, s0, s1;
	const char *k, *v;
	size_t i;

	if (hgt_nr_cpus(f) > HGT_MAX_CPUS)
		fz_fail("%u CPUs accepted", hgt_nr_cpus(f));
	for (i = 0; hgt_meta_at(f, i, &k, &v); i++)
		if (hgt_meta(f, k) != v)
			fz_fail("metadata key %s given twice", k);
	if (!hgt_meta_text(f))
		fz_fail("no metadata text");
	if (hgt_window(f, &s0, &s1) && s0 > s1)
		fz_fail("a window that starts after it stops");
	for (i = 0; i < hgt_nr_chunks(f); i++) {
		const struct hgt_chunk_info *ci = hgt_chunk(f, i);

		if (ci->offset + 16 > size || (uint64_t)ci->nr_bytes > size - ci->offset - 16)
			fz_fail("chunk %zu at offset %llu of %u bytes in a file of %zu", i,
				(unsigned long long)ci->offset, ci->nr_bytes, size);
		if (is_records(ci->magic)) {
			if (ci->cpu >= hgt_nr_cpus(f))
				fz_fail("a records chunk of CPU %u in a recording of %u CPUs", ci->cpu, hgt_nr_cpus(f));
			total += ci->nr_records;
		}
	}
	if (total != hgt_nr_records(f))
		fz_fail("the chunks hold %llu records, hgt_nr_records() says %llu", (unsigned long long)total,
			(unsigned long long)hgt_nr_records(f));
	for (i = 0; i < hgt_nr_cpus(f) && i < MAX_CURSOR_CPUS; i++)
		(void)hgt_cpu_stats(f, (uint32_t)i);
}

static void one(const char *path, size_t size, unsigned flags)
{
	struct hg_err err = { "", 0 };
	struct hgt_file *f;
	size_t i;
	uint32_t cpu;

	if (hgt_open(&f, path, flags, &err)) {
		fz_bad_message(err.msg, path);
		return;
	}
	check_open(f, size);
	for (i = 0; i < hgt_nr_chunks(f); i++) {
		const struct hgt_chunk_info *ci = hgt_chunk(f, i);
		const char *recs;
		size_t len;

		err.msg[0] = 0;
		if (hgt_read_chunk(f, i, &recs, &len, &err)) {
			fz_bad_message(err.msg, path);
			continue;
		}
		if (!is_records(ci->magic))
			fz_fail("hgt_read_chunk() decoded a chunk of magic 0x%08x", ci->magic);
		walk(ci, recs, len);
	}
	if (!read_cursor(f, HGT_ALL_CPUS, path))
		for (cpu = 0; cpu < hgt_nr_cpus(f) && cpu < MAX_CURSOR_CPUS; cpu++)
			read_cursor(f, cpu, path);
	hgt_close(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file("kernel.hgt", data, size);

	one(path, size, 0);
	one(path, size, HGT_OPEN_ALLOW_INCOMPLETE);
	return 0;
}

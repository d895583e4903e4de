/* SPDX-License-Identifier: GPL-2.0 */
/*
 * files.h - build .hgt and hourglass trace files in memory for the tests,
 * byte by byte, so that each test can make exactly the file it needs
 * (good, or wrong in one place), then write it to a scratch directory.
 */
#ifndef TEST_FILES_H
#define TEST_FILES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "hg_hgt.h"
#include "hg_hgl.h"

struct buf {
	unsigned char *p;
	size_t n, cap;
};

static void __attribute__((unused)) put(struct buf *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	if (n)
		memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void __attribute__((unused)) put32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void __attribute__((unused)) put64(struct buf *b, uint64_t v) { put(b, &v, 8); }
static void __attribute__((unused)) zeros(struct buf *b, size_t n)
{
	static const char z[64];

	while (n) {
		size_t k = n < sizeof(z) ? n : sizeof(z);

		put(b, z, k);
		n -= k;
	}
}

/* a record as the module writes it: header, then the payload padded to 8 */
static void __attribute__((unused)) rec(struct buf *b, uint64_t tsc, uint8_t type, uint32_t arg, uint8_t flags,
					uint8_t aux, const void *payload, size_t plen)
{
	struct hgt_rec h = { .tsc = tsc, .type = type, .len = (uint8_t)(16 + ((plen + 7) & ~7ul)),
			     .flags = flags, .aux = aux, .arg = arg };

	put(b, &h, sizeof(h));
	put(b, payload, plen);
	zeros(b, (8 - plen % 8) % 8);
}

static void __attribute__((unused)) hgt_prelude(struct buf *b, uint32_t version, const char *meta)
{
	size_t len = strlen(meta), padded = (len + 8) & ~(size_t)7;

	put(b, HGT_FILE_MAGIC, 8);
	put32(b, version);
	put32(b, (uint32_t)padded);
	put(b, meta, len);
	zeros(b, padded - len);
}

static void __attribute__((unused)) chunk_hdr(struct buf *b, uint32_t magic, uint32_t cpu, uint32_t nbytes,
					      uint32_t nrec)
{
	put32(b, magic);
	put32(b, cpu);
	put32(b, nbytes);
	put32(b, nrec);
}

static void __attribute__((unused)) chunk(struct buf *b, uint32_t cpu, const struct buf *recs, uint32_t nrec)
{
	chunk_hdr(b, HGT_CHUNK_MAGIC, cpu, (uint32_t)recs->n, nrec);
	put(b, recs->p, recs->n);
}

/* zchunk - deflated; @extra bytes of garbage inside the stream's declared length */
static void __attribute__((unused)) zchunk(struct buf *b, uint32_t cpu, const struct buf *recs, uint32_t nrec,
					   size_t extra, int32_t raw_delta)
{
	uLongf zlen = compressBound(recs->n) + extra;
	unsigned char *z = malloc(zlen);
	uint32_t zb;

	if (!z || compress2(z, &zlen, recs->p, recs->n, 1) != Z_OK)
		abort();
	memset(z + zlen, 0x5a, extra);
	zb = (uint32_t)(zlen + extra);
	chunk_hdr(b, HGT_ZCHUNK_MAGIC, cpu, 8 + ((zb + 7) & ~7u), nrec);
	put32(b, (uint32_t)((int64_t)recs->n + raw_delta));
	put32(b, zb);
	put(b, z, zb);
	zeros(b, (8 - zb % 8) % 8);
	free(z);
}

static void __attribute__((unused)) time_chunk(struct buf *b, uint64_t start, uint64_t stop)
{
	chunk_hdr(b, HGT_TIME_MAGIC, 0, 16, 1);
	put64(b, start);
	put64(b, stop);
}

static void __attribute__((unused)) stats_chunk(struct buf *b, uint32_t cpu, uint64_t produced, uint64_t written,
						uint64_t refused, uint64_t overwritten, uint64_t read, uint64_t fault)
{
	chunk_hdr(b, HGT_STATS_MAGIC, cpu, 48, 1);
	put64(b, produced);
	put64(b, written);
	put64(b, refused);
	put64(b, overwritten);
	put64(b, read);
	put64(b, fault);
}

static void __attribute__((unused)) end_chunk(struct buf *b)
{
	chunk_hdr(b, HGT_END_MAGIC, 0, 0, 0);
}

/* the hourglass trace */
static void __attribute__((unused)) hgl_prelude(struct buf *b, uint16_t major)
{
	uint16_t minor = 0;

	put(b, HGL_MAGIC, 8);
	put(b, &major, 2);
	put(b, &minor, 2);
	put32(b, 0);
}

static void __attribute__((unused)) section(struct buf *b, const char *tag, const void *d, uint64_t n)
{
	put(b, tag, 4);
	put32(b, 0);
	put64(b, n);
	put(b, d, n);
	zeros(b, (8 - n % 8) % 8);
}

static void __attribute__((unused)) hgl_rec(struct buf *b, uint64_t t0, uint64_t t1, uint64_t t2,
					    uint16_t thread, uint8_t type, uint8_t flags, uint32_t cpu)
{
	struct hgl_rec r = { t0, t1, t2, thread, type, flags, cpu };

	put(b, &r, sizeof(r));
}

/* scratch files: one directory a test program, removed at the end */
static char scratch_dir[64];

static const char *__attribute__((unused)) write_file(const char *name, const struct buf *b)
{
	static char path[160];
	FILE *f;

	if (!scratch_dir[0]) {
		strcpy(scratch_dir, "/tmp/hglib-test.XXXXXX");
		if (!mkdtemp(scratch_dir))
			abort();
	}
	snprintf(path, sizeof(path), "%s/%s", scratch_dir, name);
	f = fopen(path, "wb");
	if (!f || (b->n && fwrite(b->p, 1, b->n, f) != b->n) || fclose(f))
		abort();
	return path;
}

static void __attribute__((unused)) remove_scratch(void)
{
	char cmd[128];

	if (scratch_dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch_dir);
		if (system(cmd)) {
			/* left behind in /tmp: harmless */
		}
	}
}

/* printable - the message has no byte a terminal would take as control */
static int __attribute__((unused)) printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
			return 0;
	return 1;
}

#endif

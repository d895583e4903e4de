/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hgt_file.h - the .hgt file: what the recorder writes and readers read.
 * Layout and rules: docs/hgtrace-file.md.
 */
#ifndef HGT_FILE_H
#define HGT_FILE_H

#include <stdint.h>
#include <stdio.h>
#include "hgtrace.h"

#define HGT_FILE_MAGIC		"HGTRACE\n"
#define HGT_FILE_VERSION	1
#define HGT_STATS_MAGIC		0x74617473u	/* "stat": one per CPU, payload struct hgt_cpu_stats */
#define HGT_TIME_MAGIC		0x656d6974u	/* "time": struct hgt_file_window, once */
#define HGT_ZCHUNK_MAGIC	0x6b68637au	/* "zchk": a records chunk compressed with zlib */

/*
 * A compressed chunk: the chunk header (nr_bytes counts what follows it, padded
 * to 8), then this, then the zlib stream of the records.
 */
struct hgt_zchunk {
	uint32_t raw_bytes;	/* records when inflated */
	uint32_t z_bytes;	/* zlib stream that follows */
};
#define HGT_END_MAGIC		0x21646e65u	/* "end!": the recording finished cleanly */

/*
 * The TSC just after every probe was attached and just before the first one
 * was detached: every event between the two was either recorded or counted
 * as lost. Events outside may be partial (probes attach one by one).
 */
struct hgt_file_window {
	uint64_t start_tsc;
	uint64_t stop_tsc;
};

/* The fixed prelude: magic, version, length of the text metadata that follows. */
struct hgt_file_prelude {
	char magic[8];
	uint32_t version;
	uint32_t meta_bytes;	/* "key: value\n" lines, NUL padded to a multiple of 8 */
};

struct hgt_writer {
	FILE *f;
	const char *path;
	uint64_t bytes;
	int error;		/* errno of the first failed write */
	int compress;		/* write record chunks as HGT_ZCHUNK_MAGIC */
	unsigned char *zbuf;
	size_t zcap;
};

int hgt_writer_open(struct hgt_writer *w, const char *path, const char *meta);
int hgt_writer_put(struct hgt_writer *w, const void *buf, size_t len);
/* hgt_writer_chunks - write what read() returned: whole chunks, compressed if asked */
int hgt_writer_chunks(struct hgt_writer *w, const char *buf, size_t len);
int hgt_writer_close(struct hgt_writer *w);

/* Reading: hgt_reader walks chunks; each call returns one chunk or 0 at the end. */
struct hgt_reader {
	FILE *f;
	const char *path;
	char *meta;
	uint32_t version;
	int complete;		/* an END chunk was seen */
	uint64_t offset;
	char *buf;
	size_t cap;
	unsigned char *zbuf;
	size_t zcap;
};

int hgt_reader_open(struct hgt_reader *r, const char *path);
/* returns 1 with *c and *data set, 0 at a clean end, -1 on a bad file (message printed) */
int hgt_reader_next(struct hgt_reader *r, struct hgt_chunk *c, const char **data);
void hgt_reader_close(struct hgt_reader *r);

#endif

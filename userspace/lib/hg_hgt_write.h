/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hg_hgt_write.h - writing .hgt files: the recorder's and the importer's
 * writer, and the packer of records into columns (docs/hgtrace-file.md).
 *
 * Like the readers, nothing here prints: a failure fills w->err (the first
 * one is kept, later writes are refused) and returns -1.
 */
#ifndef HG_HGT_WRITE_H
#define HG_HGT_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "hg_err.h"
#include "hg_hgt_format.h"

struct hgt_writer {
	int fd;			/* -1 once closed (or never created) */
	/*
	 * Small pieces (the prelude, chunk headers, the trailer) gather here;
	 * a piece of HGT_WRITER_DIRECT bytes or more goes to write() as it is,
	 * so the module's chunks are not copied once more on their way to the
	 * page cache (stdio's buffer was one more copy of every record).
	 */
	char *buf;
	size_t used;
	const char *path;
	uint64_t bytes;
	int error;		/* errno of the first failed write, or -1 */
	struct hg_err err;	/* what failed, with the path */
	int compress;		/* write record chunks as HGT_ZCHUNK_MAGIC */
	unsigned char *zbuf;
	size_t zcap;
};

/*
 * hgt_writer_open - create @path (replacing it) and write the prelude of
 * @version and the metadata @meta ("key: value\n" lines)
 */
int hgt_writer_open(struct hgt_writer *w, const char *path, uint32_t version, const char *meta);
int hgt_writer_put(struct hgt_writer *w, const void *buf, size_t len);
/* hgt_writer_chunks - write what read() returned: whole chunks, compressed if asked */
int hgt_writer_chunks(struct hgt_writer *w, const char *buf, size_t len);
/*
 * hgt_writer_records - @len bytes of @cpu's whole records (each hgt_rec.len
 * long, a multiple of 8) written as records chunks of at most
 * HGT_WRITE_CHUNK_BYTES of records each, deflated when the writer compresses
 */
#define HGT_WRITE_CHUNK_BYTES	(64u << 10)

/* the writer's own buffer for small pieces; a piece of half of it or more is written at once */
#define HGT_WRITER_BUF_BYTES	(64u << 10)
#define HGT_WRITER_DIRECT	(HGT_WRITER_BUF_BYTES / 2)
int hgt_writer_records(struct hgt_writer *w, uint32_t cpu, const char *recs, size_t len);
/* hgt_writer_trailer - the time chunk (none if @win is NULL), then a stats chunk for each of @cpus */
int hgt_writer_trailer(struct hgt_writer *w, const struct hgt_file_window *win,
		       const struct hgt_cpu_stats *stats, const uint32_t *cpus, size_t nstats);
/* hgt_writer_end - the END marker: the file is complete */
int hgt_writer_end(struct hgt_writer *w);
/* hgt_writer_close - flush and close; -1 if anything failed since the open */
int hgt_writer_close(struct hgt_writer *w);

/*
 * hgt_pack_records - @n records (@len bytes) of @cpu into one packed chunk,
 * header included, at zlib @level; the chunk (malloc'd) in *out, *out_len.
 * -1 when the records do not walk (a length that is not a multiple of 8...).
 */
int hgt_pack_records(const char *recs, size_t len, uint32_t n, uint32_t cpu, int level,
		     unsigned char **out, size_t *out_len);

/*
 * hgt_meta_sanitize - @s made fit for a metadata value: UTF-8, no control
 * characters (each bad byte becomes '?'), in place
 */
void hgt_meta_sanitize(char *s);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hgt_decode.h - a chunk's records out of the file: read, inflated or
 * unpacked, and checked record by record. Private to the library: the
 * file (hgt_read.c) and each cursor own a decoder.
 */
#ifndef HGT_DECODE_H
#define HGT_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>
#include "hg_hgt.h"

struct hgt_decoder {
	int fd;
	const char *path;
	unsigned char *in;	/* the chunk's payload as it is in the file */
	size_t incap;
	unsigned char *out;	/* records inflated or unpacked */
	size_t outcap;
	unsigned char *cols;	/* a packed chunk's columns */
	size_t colcap;
	z_stream z;
	int zready;
	/* the last chunk decoded, as its check walked it: the least and greatest stamp, its
	 * LOST markers and the events they count (a cursor's tally, taken a chunk at a time) */
	uint64_t lo, hi;
	uint32_t nlost;
	uint64_t lost;
	/* where a stamp may lie (hgt_decoder_bounds): the window widened by the slack, and no
	 * more than the slack before the record before it on its CPU: prev, the last stamp of
	 * the CPU's chunk before this one when has_prev (its reader's to set), and last, this
	 * chunk's last stamp once decoded */
	int has_win, has_prev;
	uint64_t start, stop, slack;
	double hz;		/* the file's TSC rate, 0 when its metadata has none */
	uint64_t prev, last;
};

void hgt_decoder_init(struct hgt_decoder *d, int fd, const char *path);
void hgt_decoder_free(struct hgt_decoder *d);
/* hgt_decoder_bounds - where @f's stamps may lie (hg_hgt.h, HGT_STAMP_SLACK_S): checked from then on */
void hgt_decoder_bounds(struct hgt_decoder *d, const struct hgt_file *f);
/* hgt_decode - the records of chunk @c (chnk, zchk or pchk), each checked */
int hgt_decode(struct hgt_decoder *d, const struct hgt_chunk_info *c, const char **recs, size_t *len,
	       struct hg_err *err);

/* checks of a coded chunk's own header, shared by hgt_open() and hgt_decode(): NULL or why not */
const char *hgt_zchunk_bad(const struct hgt_zchunk *zh, const struct hgt_chunk_info *c);
const char *hgt_pchunk_bad(const struct hgt_pchunk *ph, const struct hgt_chunk_info *c);

#endif

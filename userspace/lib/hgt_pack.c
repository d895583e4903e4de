// SPDX-License-Identifier: GPL-2.0
/*
 * hgt_pack.c - packed chunks: records as columns, deflated (hg_hgt_format.h).
 *
 * Records of one CPU repeat themselves column by column: the same few
 * types, flags and lengths, stamps a few thousand cycles apart, the same
 * pids switching in and out. Laid out as columns and coded as small
 * differences, they deflate to about 3 bytes a record, where the records
 * themselves deflate to about 8. Packing runs after the recording (the
 * recorder writes plain chunks while the workload runs), so its cost does
 * not disturb what is measured. The reader is hgt_decode.c.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "hg_hgt_write.h"
#include "hgt_columns.h"

struct bytes { unsigned char *p; size_t n, cap; };

static int grow(struct bytes *b, size_t more)
{
	if (b->n + more > b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 4096;
		unsigned char *p;

		while (cap < b->n + more)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return -1;
		b->p = p;
		b->cap = cap;
	}
	return 0;
}

static int put_varint(struct bytes *b, uint64_t v)
{
	if (grow(b, 10))
		return -1;
	while (v >= 0x80) {
		b->p[b->n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	b->p[b->n++] = (unsigned char)v;
	return 0;
}

int hgt_pack_records(const char *recs, size_t len, uint32_t n, uint32_t cpu, int level,
		     unsigned char **out, size_t *out_len)
{
	struct bytes high = { 0 }, arg = { 0 }, pay = { 0 };
	unsigned char *fixed = malloc(8 * (size_t)n + 1), *o = NULL;
	uint32_t last_arg[256] = { 0 }, last_next = 0, i;
	uint8_t last_len[256] = { 0 };
	uint64_t prev = 0, base = 0;
	size_t pos = 0, col_bytes, zcap;
	struct hgt_pchunk ph;
	struct hgt_chunk ch;
	uLongf zlen;
	int ret = -1;

	if (!fixed || len > UINT32_MAX)
		goto out;
	for (i = 0; i < n; i++) {
		struct hgt_rec h;
		uint64_t dz;
		uint32_t w, k;

		if (pos + sizeof(h) > len)
			goto out;
		memcpy(&h, recs + pos, sizeof(h));
		if (h.len < sizeof(h) || h.len % 8 || pos + h.len > len)
			goto out;
		if (i == 0)
			prev = base = h.tsc;
		dz = hgt_zigzag((int64_t)(h.tsc - prev));
		prev = h.tsc;
		fixed[i] = h.len ^ last_len[h.type];	/* a type's length rarely changes */
		last_len[h.type] = h.len;
		fixed[n + i] = h.type;
		fixed[2 * (size_t)n + i] = h.flags;
		fixed[3 * (size_t)n + i] = h.aux;
		for (k = 0; k < 4; k++)
			fixed[(4 + k) * (size_t)n + i] = (unsigned char)(dz >> (8 * k));
		if (put_varint(&high, dz >> 32) ||
		    put_varint(&arg, hgt_zigzag((int64_t)h.arg - (int64_t)last_arg[hgt_arg_ref(h.type)])))
			goto out;
		last_arg[h.type] = h.arg;
		for (k = sizeof(h); k < h.len; k += 4) {
			memcpy(&w, recs + pos + k, 4);
			if (h.type == HGT_REC_SWITCH && k == sizeof(h)) {
				if (put_varint(&pay, hgt_zigzag((int64_t)w - (int64_t)last_next)))
					goto out;
			} else if (put_varint(&pay, w)) {
				goto out;
			}
		}
		if (h.type == HGT_REC_SWITCH)
			last_next = h.arg;
		pos += h.len;
	}
	if (pos != len)
		goto out;
	{
		const unsigned char *seg[HGT_PACK_SEGS] = {
			fixed, fixed + n, fixed + 2 * (size_t)n, fixed + 3 * (size_t)n, fixed + 4 * (size_t)n,
			fixed + 5 * (size_t)n, fixed + 6 * (size_t)n, fixed + 7 * (size_t)n, high.p, arg.p, pay.p,
		};
		size_t seg_len[HGT_PACK_SEGS] = { n, n, n, n, n, n, n, n, high.n, arg.n, pay.n };
		size_t at = sizeof(ch) + sizeof(ph), k;

		zcap = 0;
		for (k = 0; k < HGT_PACK_SEGS; k++)
			zcap += compressBound(seg_len[k]);
		o = malloc(at + zcap + 8);
		if (!o)
			goto out;
		memset(&ph, 0, sizeof(ph));
		ph.base_tsc = base;
		ph.raw_bytes = len;
		ph.nr_segs = HGT_PACK_SEGS;
		/* each column its own stream: deflate's tables then fit that column alone */
		for (k = 0; k < HGT_PACK_SEGS; k++) {
			zlen = zcap - (at - sizeof(ch) - sizeof(ph));
			if (compress2(o + at, &zlen, seg[k] ? seg[k] : (const unsigned char *)"", seg_len[k],
				      level) != Z_OK)
				goto out;
			ph.seg_bytes[k] = seg_len[k];
			ph.z_bytes[k] = zlen;
			at += zlen;
		}
		col_bytes = at - sizeof(ch) - sizeof(ph);	/* the streams' total */
		ch.magic = HGT_PCHUNK_MAGIC;
		ch.cpu = cpu;
		ch.nr_bytes = sizeof(ph) + ((col_bytes + 7) & ~7ul);
		ch.nr_records = n;
		memcpy(o, &ch, sizeof(ch));
		memcpy(o + sizeof(ch), &ph, sizeof(ph));
		memset(o + at, 0, (8 - col_bytes % 8) % 8);
		*out = o;
		*out_len = sizeof(ch) + ch.nr_bytes;
		o = NULL;
	}
	ret = 0;
out:
	free(fixed);
	free(o);
	free(high.p);
	free(arg.p);
	free(pay.p);
	return ret;
}

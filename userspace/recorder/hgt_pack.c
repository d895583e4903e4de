// SPDX-License-Identifier: GPL-2.0
/*
 * hgt_pack.c - packed chunks: records as columns, deflated (hgt_file.h).
 *
 * Records of one CPU repeat themselves column by column: the same few
 * types, flags and lengths, stamps a few thousand cycles apart, the same
 * pids switching in and out. Laid out as columns and coded as small
 * differences, they deflate to about 3 bytes a record, where the records
 * themselves deflate to about 8. Packing runs after the recording (the
 * recorder writes plain chunks while the workload runs), so its cost does
 * not disturb what is measured.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "hgt_file.h"

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

static uint64_t zigzag(int64_t d)
{
	return d >= 0 ? (uint64_t)d << 1 : (((uint64_t)-(d + 1)) << 1) | 1;
}

static int64_t unzigzag(uint64_t z)
{
	return z & 1 ? -(int64_t)(z >> 1) - 1 : (int64_t)(z >> 1);
}

/*
 * arg_ref - whose previous arg predicts this type's arg
 *
 * An exit names what its entry named (the irq, the vector, the timer), and a
 * wakeup the task its waking named: a delta from the entry is 0 where a delta
 * from the last exit of the same kind is often large (timer ids are hashes).
 */
static uint8_t arg_ref(uint8_t type)
{
	switch (type) {
	case HGT_REC_IRQ_EXIT:		return HGT_REC_IRQ_ENTRY;
	case HGT_REC_SOFTIRQ_EXIT:	return HGT_REC_SOFTIRQ_ENTRY;
	case HGT_REC_VEC_EXIT:		return HGT_REC_VEC_ENTRY;
	case HGT_REC_HRTIMER_EXIT:	return HGT_REC_HRTIMER_ENTRY;
	case HGT_REC_WAKEUP:		return HGT_REC_WAKING;
	default:			return type;
	}
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

	if (!fixed)
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
		dz = zigzag((int64_t)(h.tsc - prev));
		prev = h.tsc;
		fixed[i] = h.len ^ last_len[h.type];	/* a type's length rarely changes */
		last_len[h.type] = h.len;
		fixed[n + i] = h.type;
		fixed[2 * (size_t)n + i] = h.flags;
		fixed[3 * (size_t)n + i] = h.aux;
		for (k = 0; k < 4; k++)
			fixed[(4 + k) * (size_t)n + i] = (unsigned char)(dz >> (8 * k));
		if (put_varint(&high, dz >> 32) ||
		    put_varint(&arg, zigzag((int64_t)h.arg - (int64_t)last_arg[arg_ref(h.type)])))
			goto out;
		last_arg[h.type] = h.arg;
		for (k = sizeof(h); k < h.len; k += 4) {
			memcpy(&w, recs + pos + k, 4);
			if (h.type == HGT_REC_SWITCH && k == sizeof(h)) {
				if (put_varint(&pay, zigzag((int64_t)w - (int64_t)last_next)))
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

/* a varint from [*p, end); -1 when it runs past the end or is too long */
static int get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		unsigned char b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
		shift += 7;
	}
	return -1;
}

const char *hgt_unpack_records(const unsigned char *body, size_t nbytes, uint32_t n,
			       char **buf, size_t *cap, size_t *raw_len, const char **err)
{
	struct hgt_pchunk ph;
	unsigned char *cols = NULL;
	const unsigned char *hp, *ap, *pp, *he, *ae, *pe, *z;
	uint32_t last_arg[256] = { 0 }, last_next = 0, i, k;
	uint8_t last_len[256] = { 0 };
	uint64_t prev, total = 0, ztotal = 0;
	size_t pos = 0, at = 0;
	uLongf out;

	*err = "truncated header";
	if (nbytes < sizeof(ph))
		return NULL;
	memcpy(&ph, body, sizeof(ph));
	*err = "sizes that do not add up";
	if (ph.nr_segs != HGT_PACK_SEGS || ph.raw_bytes > (64u << 20) || ph.raw_bytes % 8 ||
	    (uint64_t)ph.raw_bytes < 16ull * n)
		return NULL;
	for (k = 0; k < HGT_PACK_SEGS; k++) {
		total += ph.seg_bytes[k];
		ztotal += ph.z_bytes[k];
		if (k < 8 && ph.seg_bytes[k] != n)
			return NULL;
	}
	if (ztotal > nbytes - sizeof(ph) || total > (128u << 20))
		return NULL;
	cols = malloc(total + 1);
	*err = "out of memory";
	if (!cols)
		return NULL;
	*err = "a zlib stream that does not inflate to its column";
	for (z = body + sizeof(ph), k = 0; k < HGT_PACK_SEGS; k++) {
		out = ph.seg_bytes[k];
		if (uncompress(cols + at, &out, z, ph.z_bytes[k]) != Z_OK || out != ph.seg_bytes[k])
			goto bad;
		z += ph.z_bytes[k];
		at += ph.seg_bytes[k];
	}
	if (ph.raw_bytes > *cap) {
		char *b = realloc(*buf, ph.raw_bytes);

		*err = "out of memory";
		if (!b)
			goto bad;
		*buf = b;
		*cap = ph.raw_bytes;
	}
	hp = cols + 8 * (size_t)n;
	he = ap = hp + ph.seg_bytes[8];
	ae = pp = ap + ph.seg_bytes[9];
	pe = pp + ph.seg_bytes[10];
	prev = ph.base_tsc;
	*err = "columns that do not match their records";
	for (i = 0; i < n; i++) {
		struct hgt_rec h;
		uint64_t hi, a, w, dz = 0;

		h.type = cols[n + i];
		h.len = cols[i] ^ last_len[h.type];
		last_len[h.type] = h.len;
		h.flags = cols[2 * (size_t)n + i];
		h.aux = cols[3 * (size_t)n + i];
		for (k = 0; k < 4; k++)
			dz |= (uint64_t)cols[(4 + k) * (size_t)n + i] << (8 * k);
		if (h.len < sizeof(h) || h.len % 8 || pos + h.len > ph.raw_bytes ||
		    get_varint(&hp, he, &hi) || get_varint(&ap, ae, &a))
			goto bad;
		dz |= hi << 32;
		h.tsc = prev + (uint64_t)unzigzag(dz);
		prev = h.tsc;
		h.arg = (uint32_t)(last_arg[arg_ref(h.type)] + unzigzag(a));
		last_arg[h.type] = h.arg;
		memcpy(*buf + pos, &h, sizeof(h));
		for (k = sizeof(h); k < h.len; k += 4) {
			uint32_t v;

			if (get_varint(&pp, pe, &w))
				goto bad;
			v = h.type == HGT_REC_SWITCH && k == sizeof(h) ? (uint32_t)(last_next + unzigzag(w)) :
									 (uint32_t)w;
			memcpy(*buf + pos + k, &v, 4);
		}
		if (h.type == HGT_REC_SWITCH)
			last_next = h.arg;
		pos += h.len;
	}
	if (pos != ph.raw_bytes || hp != he || ap != ae || pp != pe)
		goto bad;
	free(cols);
	*raw_len = pos;
	return *buf;
bad:
	free(cols);
	return NULL;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * hgt_decode.c - one chunk's records: read, inflated or unpacked, checked.
 *
 * Every size a chunk claims is checked before it sizes a buffer: a zlib
 * stream inflates into exactly the bytes its chunk declares (no more: that
 * is the ceiling against a zlib bomb; no fewer) and must end exactly where
 * its length says, the padding after it is zeros, a packed chunk's columns
 * are used up exactly. Then every record is walked: a length that is a
 * multiple of 8, at least what its type's payload needs, inside the chunk,
 * a stamp below 2^63 and where its window and its neighbours put it
 * (hgt_decoder_bounds), and as many records as the chunk header says.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hg_io.h"
#include "hgt_columns.h"
#include "hgt_decode.h"

/* deflate cannot do better than 1032 to 1 (two bits for 258 bytes) */
#define ZLIB_MAX_RATIO	1032

void hgt_decoder_init(struct hgt_decoder *d, int fd, const char *path)
{
	memset(d, 0, sizeof(*d));
	d->fd = fd;
	d->path = path;
}

void hgt_decoder_bounds(struct hgt_decoder *d, const struct hgt_file *f)
{
	d->hz = hgt_tsc_khz(f) * 1e3;
	d->slack = (uint64_t)(HGT_STAMP_SLACK_S * (d->hz > 0 ? d->hz : HGT_SLACK_TSC_HZ));
	/* the window's stamps are below 2^63 (hgt_open), the slack below 2^43: no overflow */
	d->has_win = hgt_window(f, &d->start, &d->stop);
}

/* span - @cycles in seconds at the file's rate, else in cycles (a message's words) */
static const char *span(const struct hgt_decoder *d, uint64_t cycles, char *buf, size_t len)
{
	if (d->hz > 0)
		snprintf(buf, len, "%.6f s", (double)cycles / d->hz);
	else
		snprintf(buf, len, "%llu cycles", (unsigned long long)cycles);
	return buf;
}

void hgt_decoder_free(struct hgt_decoder *d)
{
	free(d->in);
	free(d->out);
	free(d->cols);
	if (d->zready)
		inflateEnd(&d->z);
	memset(d, 0, sizeof(*d));
	d->fd = -1;
}

static int reserve(unsigned char **buf, size_t *cap, size_t need)
{
	unsigned char *p;

	if (need <= *cap)
		return 0;
	p = realloc(*buf, need);
	if (!p)
		return -1;
	*buf = p;
	*cap = need;
	return 0;
}

static int too_big_for(uint64_t raw, uint64_t z)
{
	return raw > z * ZLIB_MAX_RATIO + 64;
}

const char *hgt_zchunk_bad(const struct hgt_zchunk *zh, const struct hgt_chunk_info *c)
{
	uint64_t n = c->nr_records;

	if (c->nr_bytes < sizeof(*zh))
		return "shorter than its own header";
	if (zh->z_bytes > c->nr_bytes - sizeof(*zh))
		return "a zlib stream longer than its chunk";
	if (sizeof(*zh) + (((uint64_t)zh->z_bytes + 7) & ~7ull) != c->nr_bytes)
		return "bytes after its zlib stream";
	if (zh->raw_bytes % 8 || zh->raw_bytes > HGT_MAX_RAW_BYTES)
		return "a declared size that is not a multiple of 8 or beyond 64 MiB";
	if (zh->raw_bytes < 16 * n || zh->raw_bytes > 248 * n)
		return "a declared size that cannot hold its number of records";
	if (too_big_for(zh->raw_bytes, zh->z_bytes))
		return "a declared size beyond what its zlib stream can hold";
	return NULL;
}

const char *hgt_pchunk_bad(const struct hgt_pchunk *ph, const struct hgt_chunk_info *c)
{
	uint64_t n = c->nr_records, z = 0, words, total;
	unsigned k;

	if (c->nr_bytes < sizeof(*ph))
		return "shorter than its own header";
	if (ph->nr_segs != HGT_PACK_SEGS)
		return "a number of columns that is not 11";
	if (ph->raw_bytes % 8 || ph->raw_bytes > HGT_MAX_RAW_BYTES)
		return "a declared size that is not a multiple of 8 or beyond 64 MiB";
	if (ph->raw_bytes < 16 * n || ph->raw_bytes > 248 * n)
		return "a declared size that cannot hold its number of records";
	words = (ph->raw_bytes - 16 * n) / 4;
	for (k = 0; k < HGT_PACK_SEGS; k++) {
		z += ph->z_bytes[k];
		if (too_big_for(ph->seg_bytes[k], ph->z_bytes[k]))
			return "a column larger than its zlib stream can hold";
	}
	for (k = 0; k < 8; k++)
		if (ph->seg_bytes[k] != n)
			return "a one-byte column that is not one byte a record";
	if (ph->seg_bytes[8] < n || ph->seg_bytes[8] > HGT_VARINT_MAX * n ||
	    ph->seg_bytes[9] < n || ph->seg_bytes[9] > HGT_VARINT_MAX * n ||
	    ph->seg_bytes[10] < words || ph->seg_bytes[10] > HGT_VARINT_MAX * words)
		return "a column of varints whose size cannot match its records";
	/* 8 bytes a record and up to 5 a varint could reach 1.25 times raw_bytes: no more than the
	 * records' own ceiling is ever allocated for them (a packer's chunk is a quarter of it) */
	for (total = 0, k = 0; k < HGT_PACK_SEGS; k++)
		total += ph->seg_bytes[k];
	if (total > HGT_MAX_RAW_BYTES)
		return "columns beyond 64 MiB once inflated";
	if (z > c->nr_bytes - sizeof(*ph))
		return "zlib streams longer than their chunk";
	if (sizeof(*ph) + ((z + 7) & ~7ull) != c->nr_bytes)
		return "bytes after its zlib streams";
	return NULL;
}

/* inflate_exact - @src inflates to exactly @dstlen bytes and ends exactly at its end */
static const char *inflate_exact(struct hgt_decoder *d, const unsigned char *src, size_t srclen,
				 unsigned char *dst, size_t dstlen)
{
	int rc;

	if (!d->zready) {
		if (inflateInit(&d->z) != Z_OK)
			return "zlib could not start";
		d->zready = 1;
	} else if (inflateReset(&d->z) != Z_OK) {
		return "zlib could not start";
	}
	d->z.next_in = (Bytef *)src;
	d->z.avail_in = (uInt)srclen;
	d->z.next_out = dst;
	d->z.avail_out = (uInt)dstlen;
	rc = inflate(&d->z, Z_FINISH);
	if (rc == Z_STREAM_END) {
		if (d->z.avail_out)
			return "a zlib stream that inflates to fewer bytes than declared";
		if (d->z.avail_in)
			return "bytes after the end of a zlib stream";
		return NULL;
	}
	if ((rc == Z_BUF_ERROR || rc == Z_OK) && !d->z.avail_out)
		return "a zlib stream that inflates to more bytes than declared";
	if (rc == Z_BUF_ERROR)
		return "a zlib stream cut short";
	return "a corrupt zlib stream";
}

static int zeros_after(const unsigned char *p, size_t from, size_t to)
{
	for (; from < to; from++)
		if (p[from])
			return 0;
	return 1;
}

/* a varint from [*p, end) into *v, at most @max; -1 when it runs out or is too large */
static int get_varint(const unsigned char **p, const unsigned char *end, uint64_t max, uint64_t *v)
{
	const unsigned char *q = *p;
	unsigned int shift = 0;
	uint64_t x = 0;

	while (q < end && shift < 64) {
		unsigned char b = *q++;

		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (x > max)
				return -1;
			*v = x;
			*p = q;
			return 0;
		}
		shift += 7;
	}
	return -1;
}

/* unpack - a packed chunk's records into d->out; NULL or why not */
static const char *unpack(struct hgt_decoder *d, const struct hgt_chunk_info *c, size_t *raw_len)
{
	const unsigned char *body = d->in, *z, *hp, *ap, *pp, *he, *ae, *pe;
	uint32_t last_arg[256] = { 0 }, last_next = 0, i, k, n = c->nr_records;
	uint8_t last_len[256] = { 0 };
	const uint8_t *cl, *ct, *cf, *ca, *cb0, *cb1, *cb2, *cb3;
	struct hgt_pchunk ph;
	size_t pos = 0, at = 0, total = 0;
	uint64_t prev;
	const char *why;

	memcpy(&ph, body, sizeof(ph));
	why = hgt_pchunk_bad(&ph, c);
	if (why)
		return why;
	for (k = 0; k < HGT_PACK_SEGS; k++)
		total += ph.seg_bytes[k];
	if (reserve(&d->cols, &d->colcap, total + 1) || reserve(&d->out, &d->outcap, ph.raw_bytes + 8))
		return "more memory than there is";
	for (z = body + sizeof(ph), k = 0; k < HGT_PACK_SEGS; k++) {
		why = inflate_exact(d, z, ph.z_bytes[k], d->cols + at, ph.seg_bytes[k]);
		if (why)
			return why;
		z += ph.z_bytes[k];
		at += ph.seg_bytes[k];
	}
	if (!zeros_after(body, (size_t)(z - body), c->nr_bytes))
		return "padding after its zlib streams that is not zeros";
	cl = d->cols;
	ct = cl + n;
	cf = ct + n;
	ca = cf + n;
	cb0 = ca + n;
	cb1 = cb0 + n;
	cb2 = cb1 + n;
	cb3 = cb2 + n;
	hp = cb3 + n;
	he = ap = hp + ph.seg_bytes[8];
	ae = pp = ap + ph.seg_bytes[9];
	pe = pp + ph.seg_bytes[10];
	prev = ph.base_tsc;
	for (i = 0; i < n; i++) {
		struct hgt_rec h;
		uint64_t hi, a, w, dz;
		unsigned char *out = d->out + pos;

		h.type = ct[i];
		h.len = cl[i] ^ last_len[h.type];
		last_len[h.type] = h.len;
		h.flags = cf[i];
		h.aux = ca[i];
		dz = (uint64_t)cb0[i] | (uint64_t)cb1[i] << 8 | (uint64_t)cb2[i] << 16 | (uint64_t)cb3[i] << 24;
		if (h.len < sizeof(h) || h.len % 8 || pos + h.len > ph.raw_bytes)
			return "a record length that does not fit its records";
		if (get_varint(&hp, he, UINT32_MAX, &hi) || get_varint(&ap, ae, UINT64_C(0x1ffffffff), &a))
			return "columns that do not match their records";
		dz |= hi << 32;
		h.tsc = prev + (uint64_t)hgt_unzigzag(dz);
		prev = h.tsc;
		h.arg = (uint32_t)(last_arg[hgt_arg_ref(h.type)] + hgt_unzigzag(a));
		last_arg[h.type] = h.arg;
		memcpy(out, &h, sizeof(h));
		for (k = sizeof(h); k < h.len; k += 4) {
			uint32_t v;

			int zz = h.type == HGT_REC_SWITCH && k == sizeof(h);

			if (get_varint(&pp, pe, zz ? UINT64_C(0x1ffffffff) : UINT32_MAX, &w))
				return "columns that do not match their records";
			v = zz ? (uint32_t)(last_next + hgt_unzigzag(w)) : (uint32_t)w;
			memcpy(out + k, &v, 4);
		}
		if (h.type == HGT_REC_SWITCH)
			last_next = h.arg;
		pos += h.len;
	}
	if (pos != ph.raw_bytes || hp != he || ap != ae || pp != pe)
		return "columns that do not match their records";
	*raw_len = pos;
	return NULL;
}

/* min_len_of - hgt_type_min_len() of every type byte, looked up once (a call a record was a
 * tenth of reading one) */
static const unsigned char *min_len_of(void)
{
	static unsigned char t[256];
	static int made;
	unsigned i;

	if (!made) {
		for (i = 0; i < 256; i++)
			t[i] = (unsigned char)hgt_type_min_len(i);
		made = 1;
	}
	return t;
}

/* stamp_outside - the message of a stamp its window contradicts: by how far, and the window */
static void stamp_outside(const struct hgt_decoder *d, const struct hgt_chunk_info *c, uint64_t tsc,
			  char *desc, size_t len)
{
	int early = tsc < d->start;
	char sp[40];

	snprintf(desc, len, "a record of CPU %u stamped TSC %llu, %s %s the recording's window "
		 "(TSC %llu..%llu) %s: not where its window and neighbours put it", c->cpu,
		 (unsigned long long)tsc, span(d, early ? d->start - tsc : tsc - d->stop, sp, sizeof(sp)),
		 early ? "before" : "after", (unsigned long long)d->start, (unsigned long long)d->stop,
		 early ? "starts" : "ends");
}

/* a chunk's walk so far: its records' count, least and greatest stamp, LOST markers and the
 * events they count; the last stamp (has_prev: there is one, this chunk's or the one before's) */
struct walk {
	size_t pos;
	uint32_t n, nlost;
	uint64_t lo, hi, lost, prev;
	int has_prev;
};

/*
 * walk_fitting - @w on through the records that pass every check of check_records() at once,
 * up to the first that may not (check_records() looks at it then, and says why).
 *
 * The same checks, in fewer instructions a record: the stamp's bounds as one range [first,
 * first + width] (at most 2^63 - 1, and within the window widened by the slack: its stamps are
 * below 2^63 and the slack below 2^43, so nothing wraps), a record's length against its type's
 * least in one subtraction (a multiple of 8 from the least on: what is left below 256 and of 8;
 * below the least, it wraps), and the order against the stamp before as a floor that is 0 when
 * nothing is to be checked. The checks one by one, with @d's fields read for each, were 51
 * instructions a record, a sixth of a merge's reading of the kernel's file (callgrind). A LOST
 * record is left to check_records() (its least is beyond any length), which counts what it lost
 * and comes back here. A record this walk leaves is checked there one check at a time: this walk
 * may be stricter than they are (a type whose least is not of 8), never less.
 */
static void walk_fitting(const struct hgt_decoder *d, const unsigned char *r, size_t len, struct walk *w)
{
	static uint16_t least[256];	/* max(the header, hgt_type_min_len()) of a type; LOST 256 */
	static int made;
	const uint64_t slack = d->slack, keep = slack ? UINT64_MAX : 0;
	const uint64_t first = d->has_win && d->start > slack ? d->start - slack : 0;
	const uint64_t last = d->has_win && d->stop + slack < HGT_MAX_TSC ? d->stop + slack : HGT_MAX_TSC;
	const uint64_t width = last - first;
	uint64_t lo = w->lo, hi = w->hi, lost = w->lost, tsc;
	uint64_t floor = w->has_prev ? w->prev & keep : 0;	/* tsc + slack may not go below it */
	size_t pos = w->pos, at = pos;
	uint32_t n = w->n, nlost = w->nlost;
	unsigned i;

	if (!made) {
		for (i = 0; i < 256; i++)
			least[i] = (uint16_t)(i == HGT_REC_LOST ? 256 : hgt_type_min_len(i) > sizeof(struct hgt_rec) ?
					      hgt_type_min_len(i) : sizeof(struct hgt_rec));
		made = 1;
	}
	if (first > last)		/* a window no stamp fits: every record is the checks' */
		return;
	while (len - pos >= sizeof(struct hgt_rec)) {
		const unsigned char *p = r + pos;
		unsigned type = p[8], rlen = p[9];

		memcpy(&tsc, p, sizeof(tsc));
		if (((rlen - least[type]) & ~0xf8u) || rlen > len - pos || tsc - first > width || tsc + slack < floor)
			break;
		floor = tsc & keep;
		if (tsc < lo)
			lo = tsc;
		if (tsc > hi)
			hi = tsc;
		n++;
		at = pos;
		pos += rlen;
	}
	if (n == w->n)
		return;
	memcpy(&w->prev, r + at, sizeof(w->prev));
	w->has_prev = 1;
	w->pos = pos;
	w->n = n;
	w->nlost = nlost;
	w->lo = lo;
	w->hi = hi;
	w->lost = lost;
}

/* check_records - walk @len bytes of records: lengths, types' payloads, the count; and the
 * chunk's tally for the cursor (d->lo, hi, nlost, lost) */
static int check_records(struct hgt_decoder *d, const struct hgt_chunk_info *c, const unsigned char *r,
			 size_t len, struct hg_err *err)
{
	const unsigned char *min_len = min_len_of();
	struct walk w = { .lo = UINT64_MAX, .prev = d->prev, .has_prev = d->has_prev };
	size_t pos;
	uint32_t n;
	int plain = c->magic == HGT_CHUNK_MAGIC;
	const char *what = NULL;
	unsigned type = 0, rlen = 0;
	uint64_t tsc = 0, lo, hi, lost, prev;
	uint32_t nlost;
	int has_prev;

	for (;;) {
		/*
		 * most records pass at once; from the first that may not, each check in
		 * turn, then on with the walk from the record after (it stops at a LOST
		 * one, which has passed)
		 */
		walk_fitting(d, r, len, &w);
		pos = w.pos;
		n = w.n;
		lo = w.lo;
		hi = w.hi;
		lost = w.lost;
		nlost = w.nlost;
		prev = w.prev;
		has_prev = w.has_prev;
		if (pos >= len)
			break;
		if (len - pos < sizeof(struct hgt_rec)) {
			what = "corrupt record: shorter than a record header";
			break;
		}
		type = r[pos + 8];
		rlen = r[pos + 9];
		if (rlen < sizeof(struct hgt_rec) || rlen % 8 || rlen > len - pos) {
			what = "corrupt record length";
			break;
		}
		if (rlen < min_len[type]) {
			what = "record too short for its type";
			break;
		}
		memcpy(&tsc, r + pos, sizeof(tsc));
		if (tsc > HGT_MAX_TSC) {
			what = "record stamped beyond 2^63";
			break;
		}
		if (d->has_win && (tsc + d->slack < d->start || tsc > d->stop + d->slack)) {
			what = "record stamped outside the window";
			break;
		}
		if (has_prev && d->slack && tsc + d->slack < prev) {
			what = "record stamped before the one before it";
			break;
		}
		has_prev = 1;
		prev = tsc;
		if (tsc < lo)
			lo = tsc;
		if (tsc > hi)
			hi = tsc;
		if (type == HGT_REC_LOST) {
			struct hgt_lost l;

			memcpy(&l, r + pos + sizeof(struct hgt_rec), sizeof(l));
			lost += l.count;
			nlost++;
		}
		n++;
		pos += rlen;
		w = (struct walk){ .pos = pos, .n = n, .nlost = nlost, .lo = lo, .hi = hi, .lost = lost,
				   .prev = prev, .has_prev = has_prev };
	}
	d->lo = lo;
	d->hi = hi;
	d->nlost = nlost;
	d->lost = lost;
	d->last = prev;
	if (what) {
		char desc[256], sp[40];

		if (!strcmp(what, "record too short for its type"))
			snprintf(desc, sizeof(desc), "%s (a %s record needs %u bytes, this one has %u)", what,
				 hgt_type_name(type), hgt_type_min_len(type), rlen);
		else if (!strcmp(what, "corrupt record length"))
			snprintf(desc, sizeof(desc), "%s %u (a multiple of 8 from 16, within the chunk)", what, rlen);
		else if (!strcmp(what, "record stamped beyond 2^63"))
			snprintf(desc, sizeof(desc), "%s (TSC %llu): not a TSC", what, (unsigned long long)tsc);
		else if (!strcmp(what, "record stamped outside the window"))
			stamp_outside(d, c, tsc, desc, sizeof(desc));
		else if (!strcmp(what, "record stamped before the one before it"))
			snprintf(desc, sizeof(desc), "a record of CPU %u stamped TSC %llu, %s before the one "
				 "before it (TSC %llu): one of the two stamps is not where its neighbours put it",
				 c->cpu, (unsigned long long)tsc, span(d, prev - tsc, sp, sizeof(sp)),
				 (unsigned long long)prev);
		else
			snprintf(desc, sizeof(desc), "%s", what);
		if (plain)
			return hg_err_set(err, "%s: offset %llu: %s", d->path,
					  (unsigned long long)(c->offset + sizeof(struct hgt_chunk) + pos), desc);
		return hg_err_set(err, "%s: offset %llu: record %u of the %s chunk (byte %zu once decoded): %s",
				  d->path, (unsigned long long)c->offset, n,
				  c->magic == HGT_ZCHUNK_MAGIC ? "compressed" : "packed", pos, desc);
	}
	if (n != c->nr_records)
		return hg_err_set(err, "%s: offset %llu: the chunk header says %u records, its bytes hold %u",
				  d->path, (unsigned long long)c->offset, c->nr_records, n);
	return 0;
}

int hgt_decode(struct hgt_decoder *d, const struct hgt_chunk_info *c, const char **recs, size_t *len,
	       struct hg_err *err)
{
	const unsigned char *out;
	size_t n;
	const char *why;

	if (c->magic != HGT_CHUNK_MAGIC && c->magic != HGT_ZCHUNK_MAGIC && c->magic != HGT_PCHUNK_MAGIC)
		return hg_err_set(err, "%s: offset %llu: not a records chunk", d->path,
				  (unsigned long long)c->offset);
	if (reserve(&d->in, &d->incap, (size_t)c->nr_bytes + 8))
		return hg_err_env(err, "%s: offset %llu: no memory for a chunk of %u bytes", d->path,
				  (unsigned long long)c->offset, c->nr_bytes);
	if (hg_pread_all(d->fd, d->in, c->nr_bytes, c->offset + sizeof(struct hgt_chunk)))
		return hg_err_set(err, "%s: offset %llu: truncated chunk (the file is shorter than when it was "
				  "opened, or unreadable)", d->path, (unsigned long long)c->offset);
	if (c->magic == HGT_CHUNK_MAGIC) {
		out = d->in;
		n = c->nr_bytes;
	} else if (c->magic == HGT_ZCHUNK_MAGIC) {
		struct hgt_zchunk zh;

		memcpy(&zh, d->in, sizeof(zh));
		why = hgt_zchunk_bad(&zh, c);
		if (!why && reserve(&d->out, &d->outcap, (size_t)zh.raw_bytes + 8))
			why = "more memory than there is";
		if (!why)
			why = inflate_exact(d, d->in + sizeof(zh), zh.z_bytes, d->out, zh.raw_bytes);
		if (!why && !zeros_after(d->in, sizeof(zh) + zh.z_bytes, c->nr_bytes))
			why = "padding after its zlib stream that is not zeros";
		if (why)
			return hg_err_set(err, "%s: offset %llu: corrupt compressed chunk: %s", d->path,
					  (unsigned long long)c->offset, why);
		out = d->out;
		n = zh.raw_bytes;
	} else {
		why = unpack(d, c, &n);
		if (why)
			return hg_err_set(err, "%s: offset %llu: corrupt packed chunk: %s", d->path,
					  (unsigned long long)c->offset, why);
		out = d->out;
	}
	if (check_records(d, c, out, n, err))
		return -1;
	*recs = (const char *)out;
	*len = n;
	return 0;
}

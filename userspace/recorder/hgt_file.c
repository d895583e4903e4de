// SPDX-License-Identifier: GPL-2.0
/*
 * hgt_file.c - write and read .hgt files (docs/hgtrace-file.md).
 *
 * A file is a prelude, text metadata (provenance), then the chunks exactly as
 * the module's read() returned them, then one stats chunk per CPU and an END
 * chunk. A file without END is from a recording that did not finish: readers
 * say so but still give what is there. Every malformed thing is an error
 * naming the file and the offset.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "hgt_file.h"

int hgt_writer_open(struct hgt_writer *w, const char *path, const char *meta)
{
	struct hgt_file_prelude p;
	size_t len = strlen(meta), padded = (len + 8) & ~(size_t)7;
	static const char zeros[8];

	memset(w, 0, sizeof(*w));
	w->path = path;
	w->f = fopen(path, "wbx");
	if (!w->f && errno == EEXIST)
		w->f = fopen(path, "wb");
	if (!w->f) {
		fprintf(stderr, "hgtrace: cannot create %s: %s\n", path, strerror(errno));
		return -1;
	}
	setvbuf(w->f, NULL, _IOFBF, 1 << 20);
	memcpy(p.magic, HGT_FILE_MAGIC, 8);
	p.version = HGT_FILE_VERSION;
	p.meta_bytes = padded;
	if (hgt_writer_put(w, &p, sizeof(p)) || hgt_writer_put(w, meta, len) ||
	    hgt_writer_put(w, zeros, padded - len))
		return -1;
	return 0;
}

int hgt_writer_put(struct hgt_writer *w, const void *buf, size_t len)
{
	if (w->error)
		return -1;
	if (len && fwrite(buf, 1, len, w->f) != len) {
		w->error = errno ? errno : EIO;
		fprintf(stderr, "hgtrace: writing %s: %s\n", w->path, strerror(w->error));
		return -1;
	}
	w->bytes += len;
	return 0;
}

/*
 * hgt_writer_chunks - the chunks of one read(), as they are or deflated
 *
 * Each chunk is compressed on its own (zlib level 1: the recorder runs on the
 * machine under test, so it must stay cheap), so a damaged chunk loses only
 * itself and readers can still walk the file chunk by chunk.
 */
int hgt_writer_chunks(struct hgt_writer *w, const char *buf, size_t len)
{
	static const char zeros[8];
	size_t off = 0;

	if (!w->compress)
		return hgt_writer_put(w, buf, len);
	while (off + sizeof(struct hgt_chunk) <= len) {
		const struct hgt_chunk *c = (const void *)(buf + off);
		struct hgt_chunk zc = *c;
		struct hgt_zchunk zh;
		uLongf zlen;
		size_t need = compressBound(c->nr_bytes);

		if (need > w->zcap) {
			free(w->zbuf);
			w->zbuf = malloc(need);
			w->zcap = w->zbuf ? need : 0;
			if (!w->zbuf)
				return -1;
		}
		zlen = w->zcap;
		if (compress2(w->zbuf, &zlen, (const Bytef *)(c + 1), c->nr_bytes, 1) != Z_OK) {
			fprintf(stderr, "hgtrace: compressing a chunk failed\n");
			return -1;
		}
		zh.raw_bytes = c->nr_bytes;
		zh.z_bytes = zlen;
		zc.magic = HGT_ZCHUNK_MAGIC;
		zc.nr_bytes = sizeof(zh) + ((zlen + 7) & ~7ul);
		if (hgt_writer_put(w, &zc, sizeof(zc)) || hgt_writer_put(w, &zh, sizeof(zh)) ||
		    hgt_writer_put(w, w->zbuf, zlen) || hgt_writer_put(w, zeros, (8 - zlen % 8) % 8))
			return -1;
		off += sizeof(*c) + c->nr_bytes;
	}
	return 0;
}

int hgt_writer_close(struct hgt_writer *w)
{
	int ret = w->error ? -1 : 0;

	free(w->zbuf);
	w->zbuf = NULL;
	if (w->f && fclose(w->f) && !ret) {
		fprintf(stderr, "hgtrace: closing %s: %s\n", w->path, strerror(errno));
		ret = -1;
	}
	w->f = NULL;
	return ret;
}

int hgt_reader_open(struct hgt_reader *r, const char *path)
{
	struct hgt_file_prelude p;

	memset(r, 0, sizeof(*r));
	r->path = path;
	r->f = fopen(path, "rb");
	if (!r->f) {
		fprintf(stderr, "hgtrace: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fread(&p, sizeof(p), 1, r->f) != 1 || memcmp(p.magic, HGT_FILE_MAGIC, 8)) {
		fprintf(stderr, "hgtrace: %s is not an hgtrace recording (bad magic)\n", path);
		goto fail;
	}
	if (p.version == HGT_FILE_VERSION_PACKED_OLD) {
		fprintf(stderr, "hgtrace: %s was packed by an hgtrace before 2026-11-22 (format version %u), "
			"whose coding this program does not read; pack the plain recording again\n",
			path, p.version);
		goto fail;
	}
	if (p.version != HGT_FILE_VERSION && p.version != HGT_FILE_VERSION_PACKED) {
		fprintf(stderr, "hgtrace: %s has format version %u; this program reads versions %u and %u\n",
			path, p.version, HGT_FILE_VERSION, HGT_FILE_VERSION_PACKED);
		goto fail;
	}
	if (p.meta_bytes > (1u << 20) || p.meta_bytes % 8) {
		fprintf(stderr, "hgtrace: %s: corrupt metadata length %u\n", path, p.meta_bytes);
		goto fail;
	}
	r->version = p.version;
	r->meta = calloc(1, p.meta_bytes + 1);
	if (!r->meta || fread(r->meta, 1, p.meta_bytes, r->f) != p.meta_bytes) {
		fprintf(stderr, "hgtrace: %s: truncated in the metadata\n", path);
		goto fail;
	}
	r->offset = sizeof(p) + p.meta_bytes;
	return 0;
fail:
	hgt_reader_close(r);
	return -1;
}

/* inflate_chunk - turn a compressed chunk back into a plain one */
static int inflate_chunk(struct hgt_reader *r, struct hgt_chunk *c, const char **data)
{
	struct hgt_zchunk zh;
	uLongf out;

	if (c->nr_bytes < sizeof(zh))
		goto bad;
	memcpy(&zh, r->buf, sizeof(zh));
	if (zh.z_bytes > c->nr_bytes - sizeof(zh) || zh.raw_bytes > (64u << 20) || zh.raw_bytes % 8)
		goto bad;
	if (zh.raw_bytes > r->zcap) {
		free(r->zbuf);
		r->zbuf = malloc(zh.raw_bytes ? zh.raw_bytes : 8);
		r->zcap = r->zbuf ? zh.raw_bytes : 0;
		if (!r->zbuf)
			return -1;
	}
	out = zh.raw_bytes;
	if (uncompress(r->zbuf, &out, (const Bytef *)r->buf + sizeof(zh), zh.z_bytes) != Z_OK ||
	    out != zh.raw_bytes)
		goto bad;
	c->magic = HGT_CHUNK_MAGIC;
	c->nr_bytes = zh.raw_bytes;
	*data = (const char *)r->zbuf;
	return 1;
bad:
	fprintf(stderr, "hgtrace: %s: corrupt compressed chunk ending at offset %llu\n",
		r->path, (unsigned long long)r->offset);
	return -1;
}

int hgt_reader_next(struct hgt_reader *r, struct hgt_chunk *c, const char **data)
{
	size_t got = fread(c, 1, sizeof(*c), r->f);

	if (got == 0 && feof(r->f))
		return 0;
	if (got != sizeof(*c)) {
		fprintf(stderr, "hgtrace: %s: truncated chunk header at offset %llu\n",
			r->path, (unsigned long long)r->offset);
		return -1;
	}
	if (c->magic == HGT_END_MAGIC) {
		r->complete = 1;
		return 0;
	}
	if (c->magic != HGT_CHUNK_MAGIC && c->magic != HGT_STATS_MAGIC && c->magic != HGT_TIME_MAGIC &&
	    c->magic != HGT_ZCHUNK_MAGIC && (c->magic != HGT_PCHUNK_MAGIC || r->version < HGT_FILE_VERSION_PACKED)) {
		fprintf(stderr, "hgtrace: %s: corrupt chunk at offset %llu (magic 0x%08x)\n",
			r->path, (unsigned long long)r->offset, c->magic);
		return -1;
	}
	if (c->nr_bytes > (64u << 20) || c->nr_bytes % 8 || c->cpu > 65535) {
		fprintf(stderr, "hgtrace: %s: corrupt chunk at offset %llu (cpu %u, %u bytes)\n",
			r->path, (unsigned long long)r->offset, c->cpu, c->nr_bytes);
		return -1;
	}
	if (c->nr_bytes > r->cap) {
		free(r->buf);
		r->cap = c->nr_bytes;
		r->buf = malloc(r->cap);
		if (!r->buf)
			return -1;
	}
	if (fread(r->buf, 1, c->nr_bytes, r->f) != c->nr_bytes) {
		fprintf(stderr, "hgtrace: %s: truncated chunk at offset %llu\n",
			r->path, (unsigned long long)r->offset);
		return -1;
	}
	r->offset += sizeof(*c) + c->nr_bytes;
	*data = r->buf;
	if (c->magic == HGT_ZCHUNK_MAGIC)
		return inflate_chunk(r, c, data);
	if (c->magic == HGT_PCHUNK_MAGIC) {
		const char *why;
		size_t raw;

		*data = hgt_unpack_records((const unsigned char *)r->buf, c->nr_bytes, c->nr_records, &r->pbuf,
					   &r->pcap, &raw, &why);
		if (!*data) {
			fprintf(stderr, "hgtrace: %s: corrupt packed chunk ending at offset %llu: %s\n",
				r->path, (unsigned long long)r->offset, why);
			return -1;
		}
		c->magic = HGT_CHUNK_MAGIC;
		c->nr_bytes = raw;
	}
	return 1;
}

void hgt_reader_close(struct hgt_reader *r)
{
	if (r->f)
		fclose(r->f);
	free(r->meta);
	free(r->buf);
	free(r->zbuf);
	free(r->pbuf);
	memset(r, 0, sizeof(*r));
}

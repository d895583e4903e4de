// SPDX-License-Identifier: GPL-2.0
/*
 * hgt_write.c - write .hgt files (hg_hgt_write.h, docs/hgtrace-file.md).
 *
 * A file is a prelude, text metadata (provenance), then the chunks exactly as
 * the module's read() returned them (or each deflated), then the trailer:
 * the window, one stats chunk per CPU, and the END marker that says the
 * recording finished.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "hg_hgt_write.h"
#include "hg_io.h"
#include "hg_utf8.h"

static const char zeros[8];

static int fail(struct hgt_writer *w, int errnum, const char *what)
{
	if (!w->error) {
		w->error = errnum ? errnum : -1;
		if (errnum)
			hg_err_set(&w->err, "%s: %s: %s", w->path, what, strerror(errnum));
		else
			hg_err_set(&w->err, "%s: %s", w->path, what);
	}
	return -1;
}

int hgt_writer_open(struct hgt_writer *w, const char *path, uint32_t version, const char *meta)
{
	struct hgt_file_prelude p;
	size_t len = strlen(meta), padded = (len + 8) & ~(size_t)7;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	w->path = path;
	if (padded > UINT32_MAX)
		return fail(w, EINVAL, "metadata too long");
	w->buf = malloc(HGT_WRITER_BUF_BYTES);
	if (!w->buf)
		return fail(w, ENOMEM, "cannot create it");
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (w->fd < 0)
		return fail(w, errno, "cannot create it");
	memcpy(p.magic, HGT_FILE_MAGIC, 8);
	p.version = version;
	p.meta_bytes = (uint32_t)padded;
	if (hgt_writer_put(w, &p, sizeof(p)) || hgt_writer_put(w, meta, len) ||
	    hgt_writer_put(w, zeros, padded - len))
		return -1;
	return 0;
}

/* write_all - @len bytes of @buf to the file; the first failure kept with its reason */
static int write_all(struct hgt_writer *w, const char *buf, size_t len)
{
	return hg_write_all(w->fd, buf, len) ? fail(w, errno, "writing") : 0;
}

static int flush(struct hgt_writer *w)
{
	size_t n = w->used;

	w->used = 0;
	return n ? write_all(w, w->buf, n) : 0;
}

int hgt_writer_put(struct hgt_writer *w, const void *buf, size_t len)
{
	if (w->error)
		return -1;
	if (len >= HGT_WRITER_DIRECT || len > HGT_WRITER_BUF_BYTES - w->used) {
		if (flush(w))
			return -1;
	}
	if (len >= HGT_WRITER_DIRECT) {
		if (write_all(w, buf, len))
			return -1;
	} else if (len) {
		memcpy(w->buf + w->used, buf, len);
		w->used += len;
	}
	w->bytes += len;
	return 0;
}

/*
 * put_chunk - records chunk @c and its @c->nr_bytes of @data, as they are or deflated
 *
 * Each chunk is compressed on its own (zlib level 1: the recorder runs on the
 * machine under test, so it must stay cheap), so a damaged chunk loses only
 * itself and readers can still walk the file chunk by chunk.
 */
static int put_chunk(struct hgt_writer *w, const struct hgt_chunk *c, const void *data)
{
	struct hgt_chunk zc = *c;
	struct hgt_zchunk zh;
	uLongf zlen;
	size_t need = compressBound(c->nr_bytes);

	if (!w->compress)
		return hgt_writer_put(w, c, sizeof(*c)) || hgt_writer_put(w, data, c->nr_bytes) ? -1 : 0;
	if (need > w->zcap) {
		free(w->zbuf);
		w->zbuf = malloc(need);
		w->zcap = w->zbuf ? need : 0;
		if (!w->zbuf)
			return fail(w, ENOMEM, "compressing a chunk");
	}
	zlen = w->zcap;
	if (compress2(w->zbuf, &zlen, data, c->nr_bytes, 1) != Z_OK)
		return fail(w, 0, "compressing a chunk failed");
	zh.raw_bytes = c->nr_bytes;
	zh.z_bytes = zlen;
	zc.magic = HGT_ZCHUNK_MAGIC;
	zc.nr_bytes = sizeof(zh) + ((zlen + 7) & ~7ul);
	if (hgt_writer_put(w, &zc, sizeof(zc)) || hgt_writer_put(w, &zh, sizeof(zh)) ||
	    hgt_writer_put(w, w->zbuf, zlen) || hgt_writer_put(w, zeros, (8 - zlen % 8) % 8))
		return -1;
	return 0;
}

/* hgt_writer_chunks - the chunks of one read(), as they are or deflated */
int hgt_writer_chunks(struct hgt_writer *w, const char *buf, size_t len)
{
	size_t off = 0;

	if (!w->compress)
		return hgt_writer_put(w, buf, len);
	while (off + sizeof(struct hgt_chunk) <= len) {
		const struct hgt_chunk *c = (const void *)(buf + off);

		if (c->nr_bytes > len - off - sizeof(*c))
			return fail(w, 0, "a chunk longer than the buffer it came in");
		if (put_chunk(w, c, c + 1))
			return -1;
		off += sizeof(*c) + c->nr_bytes;
	}
	return 0;
}

/*
 * hgt_writer_records - whole records cut into chunks of at most
 * HGT_WRITE_CHUNK_BYTES each, a record never straddling two (each is at
 * most 248 bytes: hgt_rec.len is a byte). The recorders that convert events
 * one by one (hgtrace-import, hgtrace-ftrace) chunk this way; hgtrace keeps
 * the module's chunks as read() gives them.
 */
int hgt_writer_records(struct hgt_writer *w, uint32_t cpu, const char *recs, size_t len)
{
	size_t off = 0;

	while (off < len) {
		struct hgt_chunk h = { .magic = HGT_CHUNK_MAGIC, .cpu = cpu };
		size_t end = off;

		while (end < len) {
			const struct hgt_rec *r = (const void *)(recs + end);

			if (len - end < sizeof(*r) || r->len < sizeof(*r) || r->len % 8 || r->len > len - end)
				return fail(w, 0, "records that do not walk (a length beyond the buffer or not a multiple of 8)");
			if (end > off && end - off + r->len > HGT_WRITE_CHUNK_BYTES)
				break;
			end += r->len;
			h.nr_records++;
		}
		h.nr_bytes = end - off;
		if (put_chunk(w, &h, recs + off))
			return -1;
		off = end;
	}
	return 0;
}

int hgt_writer_trailer(struct hgt_writer *w, const struct hgt_file_window *win,
		       const struct hgt_cpu_stats *stats, const uint32_t *cpus, size_t nstats)
{
	struct hgt_chunk tc = { .magic = HGT_TIME_MAGIC, .nr_bytes = sizeof(*win), .nr_records = 1 };
	size_t i;

	if (win && (hgt_writer_put(w, &tc, sizeof(tc)) || hgt_writer_put(w, win, sizeof(*win))))
		return -1;
	for (i = 0; i < nstats; i++) {
		struct hgt_chunk c = { .magic = HGT_STATS_MAGIC, .cpu = cpus[i],
				       .nr_bytes = sizeof(stats[i]), .nr_records = 1 };

		if (hgt_writer_put(w, &c, sizeof(c)) || hgt_writer_put(w, &stats[i], sizeof(stats[i])))
			return -1;
	}
	return 0;
}

int hgt_writer_end(struct hgt_writer *w)
{
	struct hgt_chunk end = { .magic = HGT_END_MAGIC };

	return hgt_writer_put(w, &end, sizeof(end));
}

int hgt_writer_close(struct hgt_writer *w)
{
	int ret = w->error ? -1 : 0;

	free(w->zbuf);
	w->zbuf = NULL;
	if (w->fd >= 0) {
		if (!w->error && flush(w))
			ret = -1;
		if (close(w->fd) && !ret)
			ret = fail(w, errno, "closing");
	}
	w->fd = -1;
	free(w->buf);
	w->buf = NULL;
	w->used = 0;
	return ret;
}

void hgt_meta_sanitize(char *s)
{
	unsigned char *p = (unsigned char *)s;
	size_t n = strlen(s), i = 0, k;

	while (i < n) {
		if (p[i] < 0x20 || p[i] == 0x7f) {
			p[i++] = '?';
			continue;
		}
		k = p[i] < 0x80 ? 1 : hg_utf8_seq(p + i, n - i);
		if (!k) {
			p[i++] = '?';
			continue;
		}
		i += k;
	}
}

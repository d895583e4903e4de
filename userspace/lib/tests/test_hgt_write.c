// SPDX-License-Identifier: GPL-2.0
/*
 * test_hgt_write.c - the .hgt writer and the packer: what they write, the
 * reader reads back record for record; failures are reported, not printed.
 */
#include "tap.h"
#include "files.h"
#include "hg_hgt_write.h"

/* varied - @n records of every type, stamps that jump and go back, args that wander */
static void varied(struct buf *r, int n, unsigned seed)
{
	static const uint8_t types[] = { 1, 2, 3, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 33 };
	uint64_t t = 1000000000;
	uint32_t last_next = 0;
	int i;

	for (i = 0; i < n; i++) {
		uint8_t type;
		uint32_t words[8] = { 0 }, nw, k, arg;

		seed = seed * 1103515245 + 12345;
		type = types[(seed >> 16) % sizeof(types)];
		t += (seed >> 8) % 97 == 0 ? (uint64_t)1 << 33 : (seed >> 4) % 20000;
		if ((seed >> 3) % 101 == 0)
			t -= 40;
		arg = (seed >> 5) % 7 == 0 ? 0xffffffffu : (seed >> 12) % 300;
		nw = type == 1 ? 4 : type == 18 ? 6 : type == 19 ? 8 : type == 33 ? (seed >> 9) % 8 :
		     (type == 2 || type == 3 || type == 5 || type == 13 || type == 14 || type == 20) ? 2 : 0;
		for (k = 0; k < nw; k++)
			words[k] = (seed >> (k + 1)) % 3 == 0 ? 0xffffffffu : (seed >> k) % 70000;
		if (type == 1) {
			words[0] = (seed >> 11) % 5 ? last_next : words[0];
			last_next = arg;
		}
		rec(r, t, type, arg, (uint8_t)(seed >> 24), (uint8_t)(seed >> 17), words, nw * 4);
	}
}

static void check_roundtrip(int compress)
{
	struct hgt_writer w;
	struct buf r = { 0 }, chunks = { 0 };
	struct hgt_file_window win = { 5, 500 };
	struct hgt_cpu_stats st[2] = { { 0 } };
	uint32_t cpus[2] = { 0, 1 };
	struct hgt_file *f;
	struct hgt_cursor *c;
	const struct hgt_rec *rec_;
	struct hg_err e;
	const char *path = write_file(compress ? "wz.hgt" : "w.hgt", &r);
	size_t pos = 0;
	int rc, same = 1, n = 0;

	varied(&r, 1000, 3);
	/* 900 records on CPU 0 in three chunks, 100 on CPU 1: as read() returns them */
	{
		size_t cut[4] = { 0 }, off = 0;
		uint64_t tsc;
		int i, k = 0;

		for (i = 0; i < 1000; i++) {
			if (i == 300 || i == 600 || i == 900)
				cut[++k] = off;
			/* the stats that make these records whole: LOST markers count as refused */
			if (r.p[off + 8] == HGT_REC_LOST) {
				uint64_t lost;

				memcpy(&lost, r.p + off + 16, 8);
				st[i >= 900].refused += lost;
			} else {
				st[i >= 900].read++;
			}
			/* the window holds every record (the reader refuses a stamp outside it) */
			memcpy(&tsc, r.p + off, 8);
			if (tsc > win.stop_tsc)
				win.stop_tsc = tsc;
			off += r.p[off + 9];
		}
		for (k = 0; k < 2; k++) {
			st[k].written = st[k].read;
			st[k].produced = st[k].read + st[k].refused;
		}
		for (k = 0; k < 4; k++) {
			size_t end = k < 3 ? cut[k + 1] : r.n;
			struct buf part = { r.p + cut[k], end - cut[k], 0 };

			chunk(&chunks, k < 3 ? 0 : 1, &part, k < 3 ? 300 : 100);
		}
	}
	ok(hgt_writer_open(&w, path, HGT_FILE_VERSION, "format: hgtrace 1\nnr_cpu_ids: 2\n") == 0, "open");
	w.compress = compress;
	ok(hgt_writer_chunks(&w, (char *)chunks.p, chunks.n) == 0 && hgt_writer_trailer(&w, &win, st, cpus, 2) == 0 &&
	   hgt_writer_end(&w) == 0 && hgt_writer_close(&w) == 0, "%s chunks, trailer, END, close",
	   compress ? "compressed" : "plain");
	rc = hgt_open(&f, path, 0, &e);
	ok(rc == 0, "the reader opens what the writer wrote%s%s", rc ? ": " : "", rc ? e.msg : "");
	if (rc)
		return;
	ok(hgt_nr_records(f) == 1000 && hgt_cpu_stats(f, 1) && hgt_cpu_stats(f, 1)->read == st[1].read &&
	   hgt_chunk(f, 0)->magic == (compress ? HGT_ZCHUNK_MAGIC : HGT_CHUNK_MAGIC), "records, stats and coding");
	c = hgt_cursor_open(f, HGT_ALL_CPUS, &e);
	while ((rc = hgt_cursor_next(c, &rec_, &e)) > 0) {
		if (pos + rec_->len > r.n || memcmp(r.p + pos, rec_, rec_->len))
			same = 0;
		pos += rec_->len;
		n++;
	}
	ok(rc == 0 && same && n == 1000 && pos == r.n, "every record back, byte for byte%s%s", rc ? ": " : "",
	   rc ? e.msg : "");
	hgt_cursor_close(c);
	hgt_close(f);
	free(r.p);
	free(chunks.p);
}

/*
 * hgt_writer_records - @n varied records of CPU 3 cut into chunks: each at
 * most HGT_WRITE_CHUNK_BYTES, as full as the next record allows, read back
 * byte for byte; records that do not walk are refused
 */
static void check_records(int compress, int n)
{
	struct hgt_writer w;
	struct buf r = { 0 };
	struct hgt_file *f;
	struct hgt_cursor *c;
	const struct hgt_rec *x;
	struct hg_err e;
	const char *path = compress ? "rz.hgt" : "r.hgt";
	size_t pos = 0, off = 0, chunk_bytes = 0, i, want = 0, nchunks = 0, full = 1;
	uint32_t per_chunk[64] = { 0 };		/* records in each chunk expected */
	int rc, same = 1, got = 0;

	varied(&r, n, 5);
	/* the chunks expected: cut before the record that would pass the limit */
	while (off < r.n) {
		size_t len = r.p[off + 9];

		if (chunk_bytes && chunk_bytes + len > HGT_WRITE_CHUNK_BYTES) {
			want++;
			chunk_bytes = 0;
		}
		chunk_bytes += len;
		per_chunk[want]++;
		off += len;
	}
	want += chunk_bytes > 0;
	path = write_file(path, &(struct buf){ 0 });
	ok(hgt_writer_open(&w, path, HGT_FILE_VERSION, "format: hgtrace 1\nnr_cpu_ids: 4\n") == 0, "open");
	w.compress = compress;
	ok(hgt_writer_records(&w, 3, (char *)r.p, r.n) == 0 && hgt_writer_end(&w) == 0 && hgt_writer_close(&w) == 0,
	   "%d records (%zu bytes) written %s", n, r.n, compress ? "deflated" : "plain");
	rc = hgt_open(&f, path, 0, &e);
	ok(rc == 0, "  ... the reader opens them%s%s", rc ? ": " : "", rc ? e.msg : "");
	if (rc)
		return;
	for (i = 0; i < hgt_nr_chunks(f); i++) {
		const struct hgt_chunk_info *k = hgt_chunk(f, i);

		if (k->magic != (compress ? HGT_ZCHUNK_MAGIC : HGT_CHUNK_MAGIC))
			continue;
		nchunks++;
		/* uncompressed sizes are the limit's; a deflated chunk's header says its deflated size */
		if (k->cpu != 3 || (!compress && k->nr_bytes > HGT_WRITE_CHUNK_BYTES) ||
		    nchunks > 64 || k->nr_records != per_chunk[nchunks - 1])
			full = 0;
	}
	ok(nchunks == want && full, "  ... in %zu chunks of CPU 3, each as full as %u bytes allow (expected %zu)", nchunks,
	   HGT_WRITE_CHUNK_BYTES, want);
	c = hgt_cursor_open(f, HGT_ALL_CPUS, &e);
	while ((rc = hgt_cursor_next(c, &x, &e)) > 0) {
		if (pos + x->len > r.n || memcmp(r.p + pos, x, x->len))
			same = 0;
		pos += x->len;
		got++;
	}
	ok(rc == 0 && same && got == n && pos == r.n, "  ... every record back, byte for byte");
	hgt_cursor_close(c);
	hgt_close(f);
	r.p[9] = 12;
	ok(hgt_writer_open(&w, path, HGT_FILE_VERSION, "format: hgtrace 1\n") == 0 &&
	   hgt_writer_records(&w, 0, (char *)r.p, r.n) == -1 && strstr(w.err.msg, "do not walk"),
	   "  ... a record length not a multiple of 8 is refused: %s", w.err.msg);
	hgt_writer_close(&w);
	free(r.p);
}

static void check_pack(void)
{
	struct buf r = { 0 }, b = { 0 };
	struct hgt_file *f;
	struct hgt_cursor *c;
	const struct hgt_rec *x;
	struct hg_err e;
	unsigned char *out;
	size_t len, pos = 0;
	int rc, same = 1, n = 0;

	varied(&r, HGT_PACK_BLOCK, 11);
	ok(hgt_pack_records((char *)r.p, r.n, HGT_PACK_BLOCK, 5, 9, &out, &len) == 0, "65536 varied records pack");
	ok(len < r.n / 2, "  ... into %zu bytes, from %zu", len, r.n);
	hgt_prelude(&b, 3, "format: hgtrace 3\n");
	put(&b, out, len);
	end_chunk(&b);
	free(out);
	rc = hgt_open(&f, write_file("p.hgt", &b), 0, &e);
	ok(rc == 0, "a packed file opens%s%s", rc ? ": " : "", rc ? e.msg : "");
	if (!rc) {
		c = hgt_cursor_open(f, 5, &e);
		while ((rc = hgt_cursor_next(c, &x, &e)) > 0) {
			if (pos + x->len > r.n || memcmp(r.p + pos, x, x->len))
				same = 0;
			pos += x->len;
			n++;
		}
		ok(rc == 0 && same && n == HGT_PACK_BLOCK && pos == r.n, "unpacked, every record byte for byte%s%s",
		   rc ? ": " : "", rc ? e.msg : "");
		hgt_cursor_close(c);
		hgt_close(f);
	}
	r.p[9] = 12;
	ok(hgt_pack_records((char *)r.p, r.n, HGT_PACK_BLOCK, 5, 9, &out, &len) == -1, "a bad record length: -1");
	r.p[9] = 16;
	ok(hgt_pack_records((char *)r.p, r.n, 3, 5, 9, &out, &len) == -1, "fewer records than the bytes hold: -1");
	free(r.p);
	free(b.p);
}

static void check_failures(void)
{
	struct hgt_writer w;
	char big[4096];
	int i, rc = 0;

	ok(hgt_writer_open(&w, "/nonexistent-dir/x.hgt", 1, "format: hgtrace 1\n") == -1 &&
	   strstr(w.err.msg, "/nonexistent-dir/x.hgt: cannot create it: No such file"),
	   "a file that cannot be created: %s", w.err.msg);
	hgt_writer_close(&w);
	if (hgt_writer_open(&w, "/dev/full", 1, "format: hgtrace 1\n") == 0) {
		memset(big, 0, sizeof(big));
		for (i = 0; i < 1000 && !rc; i++)
			rc = hgt_writer_put(&w, big, sizeof(big));
		rc |= hgt_writer_close(&w);
		ok(rc == -1 && strstr(w.err.msg, "/dev/full: ") && strstr(w.err.msg, "No space"),
		   "a full disk is an error with its reason: %s", w.err.msg);
		ok(hgt_writer_put(&w, big, 1) == -1, "  ... and later writes are refused");
	}
}

/*
 * check_pieces - pieces around the writer's own buffer and its direct-write
 * size, in every order: the file holds them byte for byte, in order
 */
static void check_pieces(void)
{
	static const size_t sizes[] = { 5, 8, HGT_WRITER_DIRECT - 1, HGT_WRITER_DIRECT, 1,
					HGT_WRITER_BUF_BYTES, HGT_WRITER_BUF_BYTES + 7, 3,
					HGT_WRITER_BUF_BYTES - 1, 12, HGT_WRITER_DIRECT + 1, 0, 9 };
	struct buf want = { 0 }, none = { 0 };
	struct hgt_writer w;
	const char *path = write_file("pieces.hgt", &none);
	size_t i, j, total = 0;
	char *piece, *got;
	FILE *f;
	int rc;

	hgt_prelude(&want, 1, "format: hgtrace 1\n");
	rc = hgt_writer_open(&w, path, 1, "format: hgtrace 1\n");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && !rc; i++) {
		piece = malloc(sizes[i] + 1);
		for (j = 0; j < sizes[i]; j++)
			piece[j] = (char)(i * 31 + j * 7);
		rc = hgt_writer_put(&w, piece, sizes[i]);
		put(&want, piece, sizes[i]);
		free(piece);
	}
	rc |= hgt_writer_close(&w);
	got = malloc(want.n + 1);
	f = fopen(path, "rb");
	if (f) {
		total = fread(got, 1, want.n + 1, f);
		fclose(f);
	}
	ok(!rc && w.bytes == want.n && total == want.n && !memcmp(got, want.p, want.n),
	   "pieces of 0 to %u bytes, buffered and written at once: the file is them in order (%zu of %zu bytes)",
	   HGT_WRITER_BUF_BYTES + 7, total, want.n);
	free(got);
	free(want.p);
}

static void check_sanitize(void)
{
	char s[] = "ok caf\xc3\xa9 \x01tab\tbad\xff\xfe nl\n end\x7f";

	hgt_meta_sanitize(s);
	ok(!strcmp(s, "ok caf\xc3\xa9 ?tab?bad?? nl? end?"), "metadata values: UTF-8 kept, the rest '?': %s", s);
}

int main(void)
{
	check_roundtrip(0);
	check_roundtrip(1);
	check_records(0, 1);
	check_records(0, 12000);
	check_records(1, 12000);
	check_pack();
	check_failures();
	check_pieces();
	check_sanitize();
	remove_scratch();
	return tap_done();
}

// SPDX-License-Identifier: GPL-2.0
/*
 * test_hgt_read.c - the .hgt reader: good files in every coding read right,
 * and each kind of bad file docs/hgtrace-file.md lists ("What a reader
 * checks") is refused with the file, the offset and what was wrong.
 */
#include "tap.h"
#include "files.h"
#include "hg_hgt_write.h"

#define META "format: hgtrace 1\nabi: 1.0\ntsc_khz: 1000000\nnr_cpu_ids: 2\ncompression: none\nfilter:\n"

static const struct hgt_switch SW = { .prev_pid = 7, .prev_state = 1, .prev_prio = 120, .next_prio = 99 };
static const struct hgt_comm COMM = { .tgid = 7, .comm = "worker" };
static const struct hgt_lost LOST5 = { 5 };

/* CPU 0: comm, switch, irq entry and exit; CPU 1: softirq entry, 5 lost, softirq exit */
static void recs0(struct buf *b)
{
	rec(b, 100, HGT_REC_COMM, 7, 0, 0, &COMM, sizeof(COMM));
	rec(b, 110, HGT_REC_SWITCH, 42, 1, 1, &SW, sizeof(SW));
	rec(b, 120, HGT_REC_IRQ_ENTRY, 11, 0, 0, NULL, 0);
	rec(b, 130, HGT_REC_IRQ_EXIT, 11, 1, 0, NULL, 0);
}

static void recs1(struct buf *b)
{
	rec(b, 105, HGT_REC_SOFTIRQ_ENTRY, 7, 0, 0, NULL, 0);
	rec(b, 140, HGT_REC_LOST, 0, 0, 0, &LOST5, sizeof(LOST5));
	rec(b, 150, HGT_REC_SOFTIRQ_EXIT, 7, 0, 0, NULL, 0);
}

static void trailer(struct buf *b)
{
	time_chunk(b, 1, 1000000);
	stats_chunk(b, 0, 4, 4, 0, 0, 4, 0);
	stats_chunk(b, 1, 7, 2, 5, 0, 2, 0);
}

enum coding { PLAIN, ZLIB, PACKED };

static void good_file(struct buf *b, enum coding how, int end)
{
	struct buf r0 = { 0 }, r1 = { 0 };

	recs0(&r0);
	recs1(&r1);
	hgt_prelude(b, how == PACKED ? 3 : 1, how == PACKED ?
		    "format: hgtrace 3\nabi: 1.0\ntsc_khz: 1000000\nnr_cpu_ids: 2\n" : META);
	if (how == PLAIN) {
		chunk(b, 0, &r0, 4);
		chunk(b, 1, &r1, 3);
	} else if (how == ZLIB) {
		zchunk(b, 0, &r0, 4, 0, 0);
		zchunk(b, 1, &r1, 3, 0, 0);
	} else {
		unsigned char *out;
		size_t n;

		if (hgt_pack_records((char *)r0.p, r0.n, 4, 0, 9, &out, &n))
			abort();
		put(b, out, n);
		free(out);
		if (hgt_pack_records((char *)r1.p, r1.n, 3, 1, 9, &out, &n))
			abort();
		put(b, out, n);
		free(out);
	}
	trailer(b);
	if (end)
		end_chunk(b);
	free(r0.p);
	free(r1.p);
}

/* read_all - open and read every record: 0 and *n records, or -1 and @e */
static int read_all(const char *path, unsigned flags, struct hg_err *e, int *n)
{
	struct hgt_file *f;
	struct hgt_cursor *c;
	const struct hgt_rec *r;
	int rc;

	*n = 0;
	if (hgt_open(&f, path, flags, e))
		return -1;
	c = hgt_cursor_open(f, HGT_ALL_CPUS, e);
	if (!c) {
		hgt_close(f);
		return -1;
	}
	while ((rc = hgt_cursor_next(c, &r, e)) > 0)
		(*n)++;
	hgt_cursor_close(c);
	hgt_close(f);
	return rc;
}

static int counter;

/* bad - the file is refused, at open or while reading, saying @want, the path and an offset */
static void bad(const struct buf *b, const char *want, const char *what)
{
	char name[32];
	const char *path;
	struct hg_err e = { "", 0 };
	int n, rc;

	snprintf(name, sizeof(name), "bad%d.hgt", ++counter);
	path = write_file(name, b);
	rc = read_all(path, 0, &e, &n);
	ok_msg(rc, &e, want, "%s", what);
	ok(rc == -1 && strstr(e.msg, path) && strstr(e.msg, "offset") && printable(e.msg),
	   "  ... the message names the file and the offset, printably");
}

static void check_good(enum coding how)
{
	static const char *const name[] = { "plain", "zlib", "packed" };
	static const char *const kinds[] = { "comm", "switch", "irq_entry", "irq_exit",
					     "softirq_entry", "lost", "softirq_exit" };
	static const uint64_t tscs[] = { 100, 110, 120, 130, 105, 140, 150 };
	struct buf b = { 0 };
	struct hgt_file *f;
	struct hgt_cursor *c;
	const struct hgt_rec *r;
	struct hg_err e;
	const char *path, *k, *v, *recs;
	uint64_t s0, s1;
	size_t len;
	int i = 0, good = 1, rc;

	good_file(&b, how, 1);
	path = write_file("good.hgt", &b);
	rc = hgt_open(&f, path, 0, &e);
	ok(rc == 0, "%s: a good file opens%s%s", name[how], rc ? ": " : "", rc ? e.msg : "");
	if (rc)
		return;
	ok(hgt_version(f) == (how == PACKED ? 3u : 1u) && hgt_complete(f) && hgt_nr_cpus(f) == 2 &&
	   hgt_nr_records(f) == 7 && hgt_tsc_khz(f) == 1000000, "%s: version, END, CPUs, records, tsc_khz",
	   name[how]);
	ok(hgt_window(f, &s0, &s1) && s0 == 1 && s1 == 1000000, "%s: the window", name[how]);
	ok(hgt_cpu_stats(f, 1) && hgt_cpu_stats(f, 1)->refused == 5 && !hgt_cpu_stats(f, 2),
	   "%s: the stats per CPU", name[how]);
	ok(hgt_meta(f, "tsc_khz") && !strcmp(hgt_meta(f, "tsc_khz"), "1000000") && !hgt_meta(f, "host") &&
	   hgt_meta_at(f, 0, &k, &v) && !strcmp(k, "format") && !hgt_meta_at(f, 100, &k, &v),
	   "%s: metadata by key and in order", name[how]);
	ok(how == PACKED || (hgt_meta(f, "filter") && !strcmp(hgt_meta(f, "filter"), "")),
	   "%s: a key with an empty value", name[how]);
	ok(hgt_nr_chunks(f) == 6 && hgt_chunk(f, 0)->cpu == 0 && hgt_chunk(f, 5)->magic == HGT_END_MAGIC,
	   "%s: the chunk index holds the trailer too", name[how]);
	c = hgt_cursor_open(f, HGT_ALL_CPUS, &e);
	while (c && (rc = hgt_cursor_next(c, &r, &e)) > 0) {
		if (i >= 7 || r->tsc != tscs[i] || strcmp(hgt_type_name(r->type), kinds[i]) ||
		    hgt_cursor_cpu(c) != (i < 4 ? 0u : 1u))
			good = 0;
		i++;
	}
	ok(c && rc == 0 && good && i == 7, "%s: every record, in file order, with its CPU%s%s", name[how],
	   rc ? ": " : "", rc ? e.msg : "");
	hgt_cursor_close(c);
	c = hgt_cursor_open(f, 1, &e);
	i = 0;
	while (c && hgt_cursor_next(c, &r, &e) > 0)
		i += r->type == HGT_REC_LOST && ((const struct hgt_lost *)(r + 1))->count == 5;
	ok(i == 1, "%s: a cursor of CPU 1 sees its LOST marker", name[how]);
	hgt_cursor_close(c);
	rc = hgt_read_chunk(f, 1, &recs, &len, &e);
	ok(rc == 0 && len == 56 && ((const struct hgt_rec *)recs)->type == HGT_REC_SOFTIRQ_ENTRY,
	   "%s: hgt_read_chunk decodes one chunk", name[how]);
	ok_msg(hgt_read_chunk(f, 2, &recs, &len, &e), &e, "not a records chunk", "%s: a time chunk has no records",
	       name[how]);
	hgt_close(f);
	free(b.p);
}

static void check_incomplete(void)
{
	struct buf b = { 0 };
	struct hgt_file *f;
	struct hg_err e;
	const char *path;
	int n;

	good_file(&b, PLAIN, 0);
	path = write_file("noend.hgt", &b);
	ok_msg(hgt_open(&f, path, 0, &e), &e, "did not finish", "no END: refused by default");
	ok(read_all(path, HGT_OPEN_ALLOW_INCOMPLETE, &e, &n) == 0 && n == 7, "no END: read when allowed");
	ok(!hgt_open(&f, path, HGT_OPEN_ALLOW_INCOMPLETE, &e) && !hgt_complete(f), "  ... and says so");
	hgt_close(f);
	free(b.p);

	/* the importer's files: no stats, no nr_cpu_ids, no tsc_khz; a file without a time chunk */
	b = (struct buf){ 0 };
	{
		struct buf r = { 0 };
		uint64_t s0, s1;

		recs0(&r);
		hgt_prelude(&b, 1, "format: hgtrace 1\nsource: trace-cmd\n");
		chunk(&b, 3000, &r, 4);
		end_chunk(&b);
		path = write_file("bare.hgt", &b);
		ok(read_all(path, 0, &e, &n) == 0 && n == 4, "no stats, no window, no nr_cpu_ids: read");
		ok(!hgt_open(&f, path, 0, &e) && !hgt_window(f, &s0, &s1) && hgt_nr_cpus(f) == 3001 &&
		   !hgt_tsc_khz(f), "  ... no window; CPUs from the chunks; tsc_khz 0");
		hgt_close(f);
		free(r.p);
	}
	free(b.p);
}

/*
 * every prefix of a good file: refused with a message naming the file; when
 * incomplete files are allowed, read up to the last whole chunk instead
 */
static void check_cuts(enum coding how)
{
	struct buf b = { 0 }, cut;
	struct hgt_file *f;
	struct hg_err e;
	size_t k, prelude = 16 + 8 * ((strlen(how == PACKED ? "format: hgtrace 3\nabi: 1.0\ntsc_khz: 1000000\n"
							   "nr_cpu_ids: 2\n" : META) + 8) / 8);
	int n, fine = 1, refused = 0, partial = 0, allowed_fine = 1;

	good_file(&b, how, 1);
	for (k = 0; k < b.n; k++) {
		cut = (struct buf){ b.p, k, k };
		if (read_all(write_file("cut.hgt", &cut), 0, &e, &n) == 0)
			fine = 0;
		else if (!strstr(e.msg, "cut.hgt: ") || !printable(e.msg))
			fine = 0;
		else
			refused++;
		if (k < prelude)
			continue;
		/* allowed: read up to the chunk cut short, which hgt_cut_offset names */
		if (read_all(write_file("cut.hgt", &cut), HGT_OPEN_ALLOW_INCOMPLETE, &e, &n) == 0 &&
		    !hgt_open(&f, write_file("cut.hgt", &cut), HGT_OPEN_ALLOW_INCOMPLETE, &e)) {
			if (hgt_complete(f) || (hgt_cut_offset(f) && hgt_cut_offset(f) >= k))
				allowed_fine = 0;
			partial += hgt_cut_offset(f) != 0;
			hgt_close(f);
		} else {
			allowed_fine = 0;
			printf("# cut at %zu, allowed incomplete: %s\n", k, e.msg);
		}
	}
	ok(fine && refused == (int)b.n, "%s: every one of %zu prefixes refused by default, naming the file",
	   how == PLAIN ? "plain" : how == ZLIB ? "zlib" : "packed", b.n);
	ok(allowed_fine && partial > 0, "%s: allowing incomplete files, each prefix read up to its last whole "
	   "chunk (%d with a chunk cut short)", how == PLAIN ? "plain" : how == ZLIB ? "zlib" : "packed", partial);
	cut = (struct buf){ b.p, 0, 0 };
	ok_msg(read_all(write_file("empty.hgt", &cut), 0, &e, &n), &e, "empty file", "an empty file says so");
	cut.n = 4;
	ok_msg(read_all(write_file("four.hgt", &cut), 0, &e, &n), &e, "truncated in the prelude",
	       "4 bytes of magic: truncated");
	free(b.p);
}

/* byte flips: whatever they do, the reader answers with a message or records, never a crash */
static void check_flips(enum coding how)
{
	struct buf b = { 0 };
	struct hg_err e;
	unsigned seed = 7;
	int i, n, fine = 1, refused = 0;

	good_file(&b, how, 1);
	for (i = 0; i < 3000; i++) {
		struct buf m = { malloc(b.n), b.n, b.n };
		int flips = 1 + i % 3, k;

		memcpy(m.p, b.p, b.n);
		for (k = 0; k < flips; k++) {
			seed = seed * 1103515245 + 12345;
			m.p[(seed >> 8) % m.n] ^= (unsigned char)(1 + ((seed >> 20) & 0xff) % 255);
		}
		if (read_all(write_file("flip.hgt", &m), 0, &e, &n)) {
			refused++;
			if (!strstr(e.msg, "flip.hgt: ") || !printable(e.msg))
				fine = 0;
		}
		free(m.p);
	}
	ok(fine && refused > 1000, "%s: 3000 mutated files, %d refused with a printable message",
	   how == PLAIN ? "plain" : how == ZLIB ? "zlib" : "packed", refused);
	free(b.p);
}

static void check_prelude_and_meta(void)
{
	struct buf b = { 0 };

	put(&b, "HG\x01\x1b[31m\n", 10);
	zeros(&b, 30);
	bad(&b, "bad magic \"HG\\x01\\x1b[31m\"", "bad magic, control bytes printed as \\xNN");
	b.n = 0;
	hgt_prelude(&b, 9, "format: hgtrace 1\n");
	end_chunk(&b);
	bad(&b, "format version 9", "an unknown version");
	b.n = 0;
	hgt_prelude(&b, 2, "format: hgtrace 2\n");
	bad(&b, "pack the plain recording again", "version 2 is refused by name");
	b.n = 0;
	hgt_prelude(&b, 1, "format: hgtrace 1\n");
	memcpy(b.p + 12, &(uint32_t){ 20 }, 4);
	bad(&b, "corrupt metadata length 20", "metadata length not a multiple of 8");
	memcpy(b.p + 12, &(uint32_t){ 4096 }, 4);
	bad(&b, "truncated in the metadata", "metadata longer than the file");
	memcpy(b.p + 12, &(uint32_t){ 2u << 20 }, 4);
	bad(&b, "at most 1 MiB", "metadata beyond the format's limit");

#define META_BAD(text, want, what) do { \
	b.n = 0; hgt_prelude(&b, 1, text); end_chunk(&b); bad(&b, want, what); } while (0)
	META_BAD("format: hgtrace 1\nhost: caf\xe9\n", "not UTF-8", "metadata that is not UTF-8");
	META_BAD("format: hgtrace 1\nhost: a\x1b" "b\n", "control character (0x1b)", "a control character");
	META_BAD("format: hgtrace 1\njust words\n", "line 2: not \"key: value\"", "a line without a colon");
	META_BAD("format: hgtrace 1\nkey:value\n", "not \"key: value\"", "no space after the colon");
	META_BAD("format: hgtrace 1\nhost: a\nhost: b\n", "already given", "a key given twice");
	META_BAD("format: hgtrace 9\n", "format \"hgtrace 9\"", "metadata format unknown");
	META_BAD("format: hgtrace 3\n", "prelude says version 1", "metadata format disagrees with the prelude");
	META_BAD("format: hgtrace 1\nabi: 2.0\n", "ABI \"2.0\"", "records of another ABI major");
	META_BAD("format: hgtrace 1\nabi: x\n", "not MAJOR.MINOR", "an abi that is not a version");
	META_BAD("format: hgtrace 1\ntsc_khz: nan\n", "tsc_khz \"nan\"", "tsc_khz nan");
	META_BAD("format: hgtrace 1\ntsc_khz: -5\n", "tsc_khz \"-5\"", "tsc_khz negative");
	META_BAD("format: hgtrace 1\ntsc_khz: 0\n", "tsc_khz \"0\"", "tsc_khz 0");
	META_BAD("format: hgtrace 1\ntsc_khz: 3e6\n", "tsc_khz \"3e6\"", "tsc_khz not a whole number");
	META_BAD("format: hgtrace 1\ntsc_khz: 99999999999\n", "tsc_khz", "tsc_khz beyond 32 bits");
	META_BAD("format: hgtrace 1\nnr_cpu_ids: 0\n", "nr_cpu_ids \"0\"", "nr_cpu_ids 0");
	META_BAD("format: hgtrace 1\nnr_cpu_ids: 9000\n", "nr_cpu_ids \"9000\"", "nr_cpu_ids beyond 8192");
	b.n = 0;
	hgt_prelude(&b, 1, "format: hgtrace 1\n");
	b.p[16 + 20] = 'x';	/* in the NUL padding */
	end_chunk(&b);
	bad(&b, "padding that is not zeros", "metadata padding that is not zeros");
	free(b.p);
}

static void check_chunks(void)
{
	struct buf b = { 0 }, r = { 0 }, r1 = { 0 };
	size_t at;

	recs0(&r);
	recs1(&r1);
	hgt_prelude(&b, 1, META);
	at = b.n;
	chunk(&b, 2, &r, 4);
	end_chunk(&b);
	bad(&b, "CPU 2, but the recording has 2 CPUs (nr_cpu_ids)", "a chunk for a CPU >= nr_cpu_ids");

	b.n = 0;
	hgt_prelude(&b, 1, "format: hgtrace 1\n");
	chunk(&b, 70000, &r, 4);
	end_chunk(&b);
	bad(&b, "CPU 70000, beyond the format's limit of 8192", "without nr_cpu_ids, a CPU >= HGT_MAX_CPUS");

	b.n = 0;
	hgt_prelude(&b, 1, META);
	chunk_hdr(&b, 0x0a0d0001, 0, 0, 0);
	bad(&b, "unknown magic 0x0a0d0001", "an unknown chunk magic, in hex");
	b.n = 0;
	hgt_prelude(&b, 1, META);
	chunk_hdr(&b, 0x44434241, 0, 0, 0);
	bad(&b, "unknown magic 0x44434241 \"ABCD\"", "an unknown printable magic, with its letters");

	b.n = 0;
	hgt_prelude(&b, 1, META);
	chunk_hdr(&b, HGT_CHUNK_MAGIC, 0, 20, 1);
	zeros(&b, 24);
	bad(&b, "20 bytes, not a multiple of 8", "a chunk size not a multiple of 8");
	b.n = 0;
	hgt_prelude(&b, 1, META);
	chunk_hdr(&b, HGT_CHUNK_MAGIC, 0, 128u << 20, 1);
	bad(&b, "beyond the format's 64 MiB", "a chunk beyond 64 MiB");
	b.n = 0;
	hgt_prelude(&b, 1, META);
	chunk_hdr(&b, HGT_CHUNK_MAGIC, 0, 1u << 20, 100);
	zeros(&b, 64);
	bad(&b, "truncated chunk: 1048576 bytes claimed, 64 left", "a chunk longer than the file");
	b.n = 0;
	hgt_prelude(&b, 1, META);
	chunk(&b, 0, &r, 4);
	put(&b, "abc", 3);
	bad(&b, "truncated chunk header (3 bytes left", "a chunk header cut short");

	/* nr_records against the bytes: impossible at open, wrong when decoded */
	b.n = 0;
	hgt_prelude(&b, 1, META);
	chunk(&b, 0, &r, 100);
	end_chunk(&b);
	bad(&b, "says 100 records, which cannot fill its 104 bytes", "nr_records that cannot fit the bytes");
	b.n = 0;
	hgt_prelude(&b, 1, META);
	chunk(&b, 0, &r, 5);
	end_chunk(&b);
	bad(&b, "the chunk header says 5 records, its bytes hold 4", "nr_records disagreeing with its bytes");
	b.n = 0;
	hgt_prelude(&b, 1, META);
	zchunk(&b, 0, &r, 3, 0, 0);
	end_chunk(&b);
	bad(&b, "says 3 records, its bytes hold 4", "a compressed chunk's nr_records disagreeing");

	/* records: the offset is the record's own */
	{
		struct buf w = { 0 };
		char want[64];

		recs0(&w);
		w.p[40 + 9] = 12;	/* the switch: len 12 */
		b.n = 0;
		hgt_prelude(&b, 1, META);
		at = b.n;
		chunk(&b, 0, &w, 4);
		end_chunk(&b);
		snprintf(want, sizeof(want), "offset %zu: corrupt record length 12", at + 16 + 40);
		bad(&b, want, "a record length that is not a multiple of 8, at the record's offset");
		w.p[40 + 9] = 16;	/* a switch of 16 bytes: too short for its payload */
		memmove(w.p + 56, w.p + 72, w.n - 72);
		w.n -= 16;
		b.n = 0;
		hgt_prelude(&b, 1, META);
		chunk(&b, 0, &w, 4);
		end_chunk(&b);
		snprintf(want, sizeof(want), "offset %zu: record too short for its type (a switch", at + 16 + 40);
		bad(&b, want, "a record too short for its type");
		/* stamps the merger's int64_t arithmetic cannot hold */
		w.n = 0;
		recs0(&w);
		memcpy(w.p + 40, &(uint64_t){ 1ull << 63 }, 8);
		b.n = 0;
		hgt_prelude(&b, 1, META);
		chunk(&b, 0, &w, 4);
		end_chunk(&b);
		snprintf(want, sizeof(want), "offset %zu: record stamped beyond 2^63 (TSC 9223372036854775808)",
			 at + 16 + 40);
		bad(&b, want, "a record stamped beyond 2^63, at the record's offset");
		b.n = 0;
		hgt_prelude(&b, 1, META);
		zchunk(&b, 0, &w, 4, 0, 0);
		end_chunk(&b);
		bad(&b, "record 1 of the compressed chunk (byte 40 once decoded): record stamped beyond 2^63",
		    "the same in a compressed chunk");
		free(w.p);
	}
	free(b.p);
	free(r.p);
	free(r1.p);
}

static void check_coded(void)
{
	struct buf b = { 0 }, r = { 0 };
	unsigned char *out;
	size_t n, at;

	recs0(&r);
	hgt_prelude(&b, 1, META);
	zchunk(&b, 0, &r, 4, 64, 0);
	end_chunk(&b);
	bad(&b, "bytes after the end of a zlib stream", "64 bytes of garbage after a compressed chunk's stream");
	b.n = 0;
	hgt_prelude(&b, 1, META);
	zchunk(&b, 0, &r, 4, 0, 8);
	end_chunk(&b);
	bad(&b, "fewer bytes than declared", "a compressed chunk that inflates short");
	b.n = 0;
	hgt_prelude(&b, 1, META);
	zchunk(&b, 0, &r, 4, 0, -8);
	end_chunk(&b);
	bad(&b, "more bytes than declared", "a compressed chunk that inflates beyond its size");
	b.n = 0;
	hgt_prelude(&b, 1, META);
	at = b.n;
	zchunk(&b, 0, &r, 4, 0, 0);
	end_chunk(&b);
	memcpy(b.p + at + 16, &(uint32_t){ 64u << 20 }, 4);
	memcpy(b.p + at + 12, &(uint32_t){ 300000 }, 4);
	bad(&b, "beyond what its zlib stream can hold", "a zlib bomb: 64 MiB declared for a few bytes");
	b.n = 0;
	hgt_prelude(&b, 1, META);
	at = b.n;
	zchunk(&b, 0, &r, 4, 0, 0);
	end_chunk(&b);
	b.p[at + 24 + 3] ^= 0x55;
	bad(&b, "corrupt compressed chunk", "a corrupt zlib stream");
	b.n = 0;
	hgt_prelude(&b, 1, META);
	at = b.n;
	zchunk(&b, 0, &r, 4, 0, 0);
	end_chunk(&b);
	memcpy(b.p + at + 8, &(uint32_t){ *(uint32_t *)(b.p + at + 8) + 8 }, 4);
	/* the chunk claims 8 more bytes, which the END marker provides */
	bad(&b, "bytes after its zlib stream", "a compressed chunk longer than its stream and padding");

	/* packed */
	{
		/* a header whose columns pass each check but add up to 72 MiB: 4 Mi records of 16
		 * bytes, the varint columns at their most, streams just long enough for each */
		struct hgt_pchunk ph = { .raw_bytes = 64u << 20, .nr_segs = HGT_PACK_SEGS };
		uint32_t nrec = 4u << 20, zsum = 0;
		unsigned k;

		for (k = 0; k < HGT_PACK_SEGS; k++) {
			ph.seg_bytes[k] = k < 8 ? nrec : k < 10 ? 5 * nrec : 0;
			ph.z_bytes[k] = ph.seg_bytes[k] / 1032 + 1;
			zsum += ph.z_bytes[k];
		}
		b.n = 0;
		hgt_prelude(&b, 3, "format: hgtrace 3\n");
		chunk_hdr(&b, HGT_PCHUNK_MAGIC, 0, (uint32_t)(sizeof(ph) + ((zsum + 7) & ~7u)), nrec);
		put(&b, &ph, sizeof(ph));
		zeros(&b, (zsum + 7) & ~7u);
		end_chunk(&b);
		bad(&b, "corrupt packed chunk: columns beyond 64 MiB once inflated",
		    "packed columns adding up beyond 64 MiB, refused before any is allocated");
	}
	if (hgt_pack_records((char *)r.p, r.n, 4, 0, 9, &out, &n))
		abort();
	b.n = 0;
	hgt_prelude(&b, 1, META);
	put(&b, out, n);
	end_chunk(&b);
	bad(&b, "packed chunk (pchk) in a version 1 file", "a packed chunk in a version 1 file");
	b.n = 0;
	hgt_prelude(&b, 3, "format: hgtrace 3\n");
	at = b.n;
	put(&b, out, n);
	end_chunk(&b);
	b.p[at + 16 + 104 + 2] ^= 0x55;
	bad(&b, "corrupt packed chunk", "a corrupt zlib stream in a packed chunk");
	b.n = 0;
	hgt_prelude(&b, 3, "format: hgtrace 3\n");
	at = b.n;
	put(&b, out, n);
	end_chunk(&b);
	b.p[at + 16 + 16] ^= 0x7f;	/* the first column's size */
	bad(&b, "corrupt packed chunk: a one-byte column", "a packed chunk's column sizes that do not add up");
	b.n = 0;
	hgt_prelude(&b, 3, "format: hgtrace 3\n");
	at = b.n;
	put(&b, out, n);
	end_chunk(&b);
	memcpy(b.p + at + 16 + 8, &(uint32_t){ 64u << 20 }, 4);
	bad(&b, "corrupt packed chunk", "a packed chunk declaring 64 MiB");
	free(out);
	free(b.p);
	free(r.p);
}

static void check_trailer(void)
{
	struct buf b = { 0 }, r0 = { 0 }, r1 = { 0 };

	recs0(&r0);
	recs1(&r1);
#define FILE_WITH(extra) do { b.n = 0; hgt_prelude(&b, 1, META); chunk(&b, 0, &r0, 4); \
	chunk(&b, 1, &r1, 3); extra; } while (0)
	FILE_WITH(trailer(&b); time_chunk(&b, 1, 2); end_chunk(&b));
	bad(&b, "a second time chunk", "a duplicated time chunk");
	FILE_WITH(time_chunk(&b, 5, 4); end_chunk(&b));
	bad(&b, "starts after it stops (start_tsc 5, stop_tsc 4)", "a window whose start is after its stop");
	FILE_WITH(time_chunk(&b, 5, 1ull << 63); end_chunk(&b));
	bad(&b, "a window stamped beyond 2^63 (stop_tsc 9223372036854775808)", "a window stamped beyond 2^63");
	FILE_WITH(chunk_hdr(&b, HGT_TIME_MAGIC, 0, 8, 1); put64(&b, 1); end_chunk(&b));
	bad(&b, "a time chunk of 8 bytes", "a time chunk shorter than its struct");
	FILE_WITH(chunk_hdr(&b, HGT_STATS_MAGIC, 0, 16, 1); zeros(&b, 16); end_chunk(&b));
	bad(&b, "a stats chunk of 16 bytes", "a stats chunk shorter than its struct");
	FILE_WITH(trailer(&b); stats_chunk(&b, 1, 7, 2, 5, 0, 2, 0); end_chunk(&b));
	bad(&b, "a second stats chunk for CPU 1", "a duplicated stats chunk");
	FILE_WITH(trailer(&b); stats_chunk(&b, 99, 0, 0, 0, 0, 0, 0); end_chunk(&b));
	bad(&b, "a stats chunk of CPU 99, but the recording has 2 CPUs", "stats for CPU 99");
	FILE_WITH(time_chunk(&b, 1, 2); stats_chunk(&b, 0, 4, 4, 0, 0, 4, 0); end_chunk(&b));
	bad(&b, "CPU 1 has 3 records but no stats chunk", "a stats chunk missing while others are there");
	FILE_WITH(time_chunk(&b, 1, 2); stats_chunk(&b, 0, 5, 4, 0, 0, 4, 0);
		  stats_chunk(&b, 1, 7, 2, 5, 0, 2, 0); end_chunk(&b));
	bad(&b, "the stats of CPU 0 do not add up", "stats that do not add up (produced != written + refused)");
	FILE_WITH(time_chunk(&b, 1, 2); stats_chunk(&b, 0, 9, 9, 0, 0, 9, 0);
		  stats_chunk(&b, 1, 7, 2, 5, 0, 2, 0); end_chunk(&b));
	bad(&b, "the stats of CPU 0 do not match its chunks: they say 9 records read",
	    "stats that do not match the records (a records chunk dropped)");
	FILE_WITH(chunk(&b, 0, &r0, 4); trailer(&b); end_chunk(&b));
	bad(&b, "do not match its chunks", "a records chunk duplicated");
	FILE_WITH(time_chunk(&b, 1, 2); stats_chunk(&b, 0, 4, 4, 0, 0, 4, 0);
		  stats_chunk(&b, 1, 6, 2, 4, 0, 2, 0); end_chunk(&b));
	bad(&b, "the records of CPU 1 do not match its stats: 2 records and 5 events lost",
	    "LOST markers that do not match the stats (checked at the end of the records)");
	FILE_WITH(time_chunk(&b, 1, 2); stats_chunk(&b, 0, 4, 4, 0, 0, 4, 0);
		  stats_chunk(&b, 1, 7, 3, 4, 0, 3, 0); end_chunk(&b));
	bad(&b, "the records of CPU 1 do not match its stats: 2 records",
	    "records that are not the stats' read (a LOST marker counted as a record)");
	{
		struct hg_err e;
		int n;

		/* the discard parameter's recordings: everything refused, no marker, no record */
		b.n = 0;
		hgt_prelude(&b, 1, META);
		time_chunk(&b, 1, 2);
		stats_chunk(&b, 0, 500, 0, 500, 0, 0, 0);
		stats_chunk(&b, 1, 300, 0, 300, 0, 0, 0);
		end_chunk(&b);
		ok(read_all(write_file("discard.hgt", &b), 0, &e, &n) == 0 && n == 0,
		   "a recording that refused everything without LOST markers (discard) is read");
	}
	FILE_WITH(trailer(&b); chunk(&b, 0, &r0, 4); end_chunk(&b));
	bad(&b, "a records chunk after the trailer", "records after the trailer");
	FILE_WITH(trailer(&b); end_chunk(&b); chunk(&b, 0, &r0, 4));
	bad(&b, "120 bytes after the END marker", "data after END");
	FILE_WITH(trailer(&b); chunk_hdr(&b, HGT_END_MAGIC, 0, 8, 0); zeros(&b, 8));
	bad(&b, "an END marker whose cpu, bytes and records are not 0", "an END marker with bytes");
	free(b.p);
	free(r0.p);
	free(r1.p);
}

/* the clock rule: the merger's and hgtrace dump's (hgt_check_clock); the file opens either way */
static void check_clock(void)
{
	static const struct { const char *value; int ok; } v[] = {	/* NULL: no clock line */
		{ NULL, 1 }, { "tsc", 1 }, { "rdtsc", 1 }, { "x86-tsc", 1 },
		{ "jiffies", 0 }, { "local", 0 }, { "TSC", 0 }, { "", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct buf b = { 0 };
		struct hgt_file *f;
		struct hg_err e = { "", 0 };
		char meta[160], want[200];
		const char *path;
		int rc;

		snprintf(meta, sizeof(meta), "format: hgtrace 1\ntsc_khz: 1000000\n%s%s%s", v[i].value ? "clock:" : "",
			 v[i].value && *v[i].value ? " " : "", v[i].value ? v[i].value : "");
		hgt_prelude(&b, 1, meta);
		time_chunk(&b, 1, 1000000);
		end_chunk(&b);
		path = write_file("clock.hgt", &b);
		rc = hgt_open(&f, path, 0, &e);
		ok(rc == 0, "clock '%s': the file opens%s%s", v[i].value ? v[i].value : "(none)", rc ? ": " : "",
		   rc ? e.msg : "");
		if (rc) {
			free(b.p);
			continue;
		}
		rc = hgt_check_clock(f, NULL, &e);
		if (v[i].ok) {
			ok(rc == 0, "  ... and is stamped with the TSC");
		} else {
			/* the line's offset: the prelude, then "format: hgtrace 1\ntsc_khz: 1000000\n" */
			snprintf(want, sizeof(want), "%s: offset %u: stamped with clock '%s', not the TSC", path,
				 16 + 35, v[i].value);
			ok_msg(rc, &e, want, "  ... and is refused as not the TSC, naming the file and its line");
			ok(hg_err_status(&e) == HG_EXIT_BAD_INPUT, "  ... bad input (exit 3)");
			ok(hgt_check_clock(f, "run/kernel.hgt", &e) == -1 && !strncmp(e.msg, "run/kernel.hgt: offset ", 23),
			   "  ... by the name the caller gives it");
		}
		hgt_close(f);
		free(b.p);
	}
}

/* read_cpu - every record of @cpu's own cursor: 0, or -1 and @e */
static int read_cpu(const char *path, uint32_t cpu, struct hg_err *e)
{
	struct hgt_file *f;
	struct hgt_cursor *c;
	const struct hgt_rec *r;
	int rc;

	if (hgt_open(&f, path, 0, e))
		return -1;
	c = hgt_cursor_open(f, cpu, e);
	while (c && (rc = hgt_cursor_next(c, &r, e)) > 0)
		;
	hgt_cursor_close(c);
	hgt_close(f);
	return c ? rc : -1;
}

/*
 * where a stamp may lie: inside the window and not before the record before it on its CPU,
 * each give or take a second (HGT_STAMP_SLACK_S) at tsc_khz (1 GHz here), else at
 * HGT_SLACK_TSC_HZ; across chunks, and for a cursor of one CPU or of all
 */
static void check_stamps(void)
{
	static const uint64_t G = 1000000000;	/* a second at this file's tsc_khz */
	static const char *const meta[2] = { META, "format: hgtrace 1\nnr_cpu_ids: 2\n" };
	struct buf b = { 0 }, r0 = { 0 }, r1 = { 0 }, r2 = { 0 };
	struct hg_err e = { "", 0 };
	char want[200];
	const char *path;
	int n;

	/* CPU 0: 10 s, then 9.5 s (half a second back: an NMI's record is never that late, but it
	 * is within the slack); CPU 1 between them, in a chunk of its own */
	rec(&r0, 10 * G, HGT_REC_IRQ_ENTRY, 11, 0, 0, NULL, 0);
	rec(&r0, 10 * G - G / 2, HGT_REC_IRQ_EXIT, 11, 0, 0, NULL, 0);
	rec(&r1, 10 * G + 5, HGT_REC_IRQ_ENTRY, 12, 0, 0, NULL, 0);
	hgt_prelude(&b, 1, META);
	chunk(&b, 0, &r0, 2);
	chunk(&b, 1, &r1, 1);
	time_chunk(&b, 9 * G, 11 * G);
	end_chunk(&b);
	ok(read_all(write_file("stamps.hgt", &b), 0, &e, &n) == 0 && n == 3,
	   "stamps: half a second back on a CPU, within a window: read%s%s", *e.msg ? ": " : "", e.msg);

	/* the second chunk of CPU 0 goes 1.5 s back from the first's last record */
	rec(&r2, 10 * G - G / 2 - 3 * G / 2, HGT_REC_IRQ_ENTRY, 13, 0, 0, NULL, 0);
	b.n = 0;
	hgt_prelude(&b, 1, META);
	chunk(&b, 0, &r0, 2);
	chunk(&b, 1, &r1, 1);
	chunk(&b, 0, &r2, 1);
	time_chunk(&b, 7 * G, 11 * G);
	end_chunk(&b);
	path = write_file("back.hgt", &b);
	snprintf(want, sizeof(want), "%s: offset %zu: a record of CPU 0 stamped TSC %llu, 1.500000 s before the one "
		 "before it (TSC %llu): one of the two stamps is not where its neighbours put it", path,
		 b.n - 16 - 32 - 16, (unsigned long long)(8 * G), (unsigned long long)(10 * G - G / 2));
	ok_msg(read_all(path, 0, &e, &n), &e, want, "stamps: 1.5 s back from its CPU's record before, across "
	       "chunks: refused, naming both stamps");
	ok_msg(read_cpu(path, 0, &e), &e, want, "  ... by a cursor of that CPU alone too");
	ok(read_cpu(path, 1, &e) == 0, "  ... and a cursor of the other CPU reads its own");

	/* the window: 0.9 s outside it is the recorder's start or stop; 1.1 s is not */
	for (n = 0; n < 4; n++) {
		int after = n & 1, far = n >> 1;
		uint64_t t = after ? 11 * G + (far ? 11 : 9) * G / 10 : 9 * G - (far ? 11 : 9) * G / 10;
		int m;

		r2.n = 0;
		rec(&r2, t, HGT_REC_IRQ_ENTRY, 13, 0, 0, NULL, 0);
		b.n = 0;
		hgt_prelude(&b, 1, META);
		chunk(&b, 1, &r2, 1);
		time_chunk(&b, 9 * G, 11 * G);
		end_chunk(&b);
		path = write_file("window.hgt", &b);
		if (!far) {
			ok(read_all(path, 0, &e, &m) == 0 && m == 1, "stamps: 0.9 s %s the window: read",
			   after ? "after" : "before");
			continue;
		}
		/* the record: before END (16), the time chunk (32) and itself (16) */
		snprintf(want, sizeof(want), "%s: offset %zu: a record of CPU 1 stamped TSC %llu, 1.100000 s %s the "
			 "recording's window (TSC %llu..%llu) %s: not where its window and neighbours put it", path,
			 b.n - 16 - 32 - 16, (unsigned long long)t, after ? "after" : "before",
			 (unsigned long long)(9 * G), (unsigned long long)(11 * G), after ? "ends" : "starts");
		ok_msg(read_all(path, 0, &e, &m), &e, want, "stamps: 1.1 s %s the window: refused, with the window",
		       after ? "after" : "before");
	}

	/* no tsc_khz: a second at 10 GHz, said in cycles */
	r2.n = 0;
	rec(&r2, 30 * G, HGT_REC_IRQ_ENTRY, 13, 0, 0, NULL, 0);
	rec(&r2, 30 * G - 9 * G, HGT_REC_IRQ_EXIT, 13, 0, 0, NULL, 0);
	b.n = 0;
	hgt_prelude(&b, 1, meta[1]);
	chunk(&b, 0, &r2, 2);
	end_chunk(&b);
	ok(read_all(write_file("norate.hgt", &b), 0, &e, &n) == 0 && n == 2,
	   "stamps: no tsc_khz, no window: 9e9 cycles back is within a second at 10 GHz");
	r2.n = 0;
	rec(&r2, 30 * G, HGT_REC_IRQ_ENTRY, 13, 0, 0, NULL, 0);
	rec(&r2, 30 * G - 11 * G, HGT_REC_IRQ_EXIT, 13, 0, 0, NULL, 0);
	b.n = 0;
	hgt_prelude(&b, 1, meta[1]);
	chunk(&b, 0, &r2, 2);
	end_chunk(&b);
	ok_msg(read_all(write_file("norate.hgt", &b), 0, &e, &n), &e, "11000000000 cycles before the one before it",
	       "stamps: 1.1e10 cycles back is not, said in cycles");
	free(b.p);
	free(r0.p);
	free(r1.p);
	free(r2.p);
}

/* the trailer of a recorder that says its mode: its window and each CPU's stats, END or not */
static void check_lost_trailer(void)
{
	static const char *const mode_meta = META "mode: overwrite\n";
	struct buf b = { 0 }, r0 = { 0 };
	struct hg_err e[HGT_CHECK_MAX];
	struct hgt_file *f;
	int i;

	recs0(&r0);
	for (i = 0; i < 8; i++) {
		int mode = i & 1, time = i & 2, stats = i & 4, n;
		size_t end;
		const char *path;

		b.n = 0;
		hgt_prelude(&b, 1, mode ? mode_meta : META);
		chunk(&b, 0, &r0, 4);
		if (time)
			time_chunk(&b, 1, 1000000);
		if (stats)
			stats_chunk(&b, 0, 4, 4, 0, 0, 4, 0);
		end = b.n;
		end_chunk(&b);
		path = write_file("trailer.hgt", &b);
		if (hgt_open(&f, path, 0, &e[0])) {
			ok(0, "trailer: opens: %s", e[0].msg);
			continue;
		}
		n = hgt_check(f, "run/kernel.hgt", e, HGT_CHECK_MAX);
		if (!mode || (time && stats)) {
			ok(n == 0, "trailer: %s, %s window, %s stats: fit", mode ? "mode: overwrite" : "no mode",
			   time ? "a" : "no", stats ? "its" : "no");
		} else {
			char w[2][160];

			snprintf(w[0], sizeof(w[0]), "run/kernel.hgt: offset %zu: the recording ends (END) without its "
				 "time chunk, which its recorder (mode: overwrite) always writes", end);
			snprintf(w[1], sizeof(w[1]), "run/kernel.hgt: offset %zu: the recording ends (END) without the "
				 "stats of CPU 0, which its recorder (mode: overwrite) always writes", end);
			ok(n == !time + !stats && (time || !strncmp(e[0].msg, w[0], strlen(w[0]))) &&
			   (stats || !strncmp(e[n - 1].msg, w[1], strlen(w[1]))) && hg_err_status(&e[0]) == HG_EXIT_BAD_INPUT,
			   "trailer: mode: overwrite, %s window, %s stats: %d problem(s), each named at END's offset "
			   "(%s)", time ? "a" : "no", stats ? "its" : "no", !time + !stats, n ? e[0].msg : "none");
		}
		hgt_close(f);
	}
	free(b.p);
	free(r0.p);
}

/* the records' span: known once every CPU is read to its end, by one cursor or one a CPU */
static void check_span(void)
{
	struct buf b = { 0 };
	struct hgt_file *f;
	struct hgt_cursor *c;
	const struct hgt_rec *r;
	struct hg_err e;
	uint64_t lo = 0, hi = 0;
	int known;

	good_file(&b, PLAIN, 1);
	if (hgt_open(&f, write_file("span.hgt", &b), 0, &e)) {
		ok(0, "span: the file opens: %s", e.msg);
		return;
	}
	ok(!hgt_records_span(f, &lo, &hi), "span: unknown before anything is read");
	c = hgt_cursor_open(f, 0, &e);
	while (hgt_cursor_next(c, &r, &e) > 0)
		;
	hgt_cursor_close(c);
	ok(!hgt_records_span(f, &lo, &hi), "span: unknown while a CPU with records is not read");
	c = hgt_cursor_open(f, 1, &e);
	while (hgt_cursor_next(c, &r, &e) > 0)
		;
	known = hgt_records_span(f, &lo, &hi);
	ok(known && lo == 100 && hi == 150, "span: each CPU read: the least and greatest stamp (%llu..%llu)",
	   (unsigned long long)lo, (unsigned long long)hi);
	hgt_cursor_close(c);
	hgt_close(f);
	if (hgt_open(&f, write_file("span.hgt", &b), 0, &e))
		return;
	c = hgt_cursor_open(f, HGT_ALL_CPUS, &e);
	known = 0;
	while (hgt_cursor_next(c, &r, &e) > 0)
		known |= hgt_records_span(f, &lo, &hi);
	ok(!known, "span: unknown until the cursor of every CPU has reached the end");
	while (hgt_cursor_next(c, &r, &e) > 0)
		;
	ok(hgt_records_span(f, &lo, &hi) && lo == 100 && hi == 150, "span: one cursor of every CPU, read");
	hgt_cursor_close(c);
	hgt_close(f);
	free(b.p);
}

/* the names every output gives the records' numbers: the kernel's own spellings */
static void check_names(void)
{
	unsigned v, named = 0;

	for (v = 0; v < HGT_VEC_MAX; v++)
		named += hgt_vec_name(v) && *hgt_vec_name(v);
	ok(named == HGT_VEC_MAX && !strcmp(hgt_vec_name(HGT_VEC_LOCAL_TIMER), "local_timer") &&
	   !strcmp(hgt_vec_name(HGT_VEC_CALL_FUNCTION_SINGLE), "call_function_single") &&
	   !strcmp(hgt_vec_name(HGT_VEC_THERMAL_APIC), "thermal_apic") && !hgt_vec_name(HGT_VEC_MAX),
	   "vector kinds: %u of %d named, none beyond", named, HGT_VEC_MAX);
	ok(!strcmp(hgt_softirq_name(0), "HI") && !strcmp(hgt_softirq_name(3), "NET_RX") &&
	   !strcmp(hgt_softirq_name(9), "RCU") && !hgt_softirq_name(10),
	   "softirq vectors: HI to RCU, none beyond 9");
	ok(!strcmp(hgt_type_name(HGT_REC_VEC_ENTRY), "vec_entry") && !strcmp(hgt_type_name(999), "unknown"),
	   "record types: vec_entry, unknown beyond");
}

int main(void)
{
	check_names();
	check_good(PLAIN);
	check_good(ZLIB);
	check_good(PACKED);
	check_incomplete();
	check_prelude_and_meta();
	check_chunks();
	check_coded();
	check_trailer();
	check_clock();
	check_stamps();
	check_lost_trailer();
	check_span();
	check_cuts(PLAIN);
	check_cuts(PACKED);
	check_flips(PLAIN);
	check_flips(ZLIB);
	check_flips(PACKED);
	remove_scratch();
	return tap_done();
}

// SPDX-License-Identifier: GPL-2.0
/*
 * test_hgl_read.c - the hourglass trace reader: a good file read right, the
 * info section's types checked, and each kind of bad file refused with the
 * file, the offset and what was wrong (docs/hourglass-trace.md, "What a
 * reader checks").
 */
#include "tap.h"
#include "files.h"

static const char *INFO =
	"{\"file_version\": 1, \"complete\": true, \"t0_tsc\": 9007199254740993, \"duration_ns\": 1000000000,\n"
	" \"tsc\": {\"hz\": 2.5e9, \"invariant\": true},\n"
	" \"threads\": [\n"
	"  {\"thread\": 0, \"tid\": 100, \"workload\": \"CPU_SCAN_YIELD\", \"policy\": \"fifo\", \"priority\": 80,\n"
	"   \"timer\": \"HR\", \"affinity\": \"0,2-3\", \"period_ns\": 1000000, \"amount_ns\": 500000,\n"
	"   \"cpu_time_ns\": 9.5e8, \"accounting\": {\"tsc0\": 1, \"tsc1\": 2, \"schedstat_on_cpu_ns\": 3,\n"
	"   \"schedstat_slices\": 4, \"rusage_user_ns\": 5, \"rusage_system_ns\": 6, \"thread_cputime_ns\": 7}},\n"
	"  {\"thread\": 1, \"tid\": 101, \"affinity\": null, \"fallback\": null}]}";

static void records(struct buf *r)
{
	hgl_rec(r, 100, 200, 0, 0, HGL_REC_INTERVAL, 0, 0);
	hgl_rec(r, 150, 250, 0, 1, HGL_REC_INTERVAL, 0, 1);
	hgl_rec(r, 300, 400, 0, 0, HGL_REC_INTERVAL, HGL_IV_LAST, 0);
	hgl_rec(r, 260, 272, 5, 1, HGL_REC_WAKE, 0x12, 1);	/* 5 ns at 2.5 GHz: 12.5 cycles */
}

/* make - a trace: @info, the records, and END with @nrec records (-1: the true count) */
static void make(struct buf *b, const char *info, int end, int64_t nrec, uint64_t dropped)
{
	struct buf r = { 0 };
	struct hgl_end e;

	records(&r);
	b->n = 0;
	hgl_prelude(b, 1);
	section(b, "info", info, strlen(info));
	section(b, "recs", r.p, r.n);
	if (end) {
		e.nr_records = nrec < 0 ? r.n / sizeof(struct hgl_rec) : (uint64_t)nrec;
		e.dropped = dropped;
		section(b, "end!", &e, sizeof(e));
	}
	free(r.p);
}

static int read_all(const char *path, unsigned flags, struct hg_err *e, int *n)
{
	struct hgl_file *f;
	struct hgl_cursor *c;
	struct hgl_rec r;
	int rc;

	*n = 0;
	if (hgl_open(&f, path, flags, e))
		return -1;
	c = hgl_cursor_open(f, -1, e);
	while ((rc = hgl_cursor_next(c, &r, e)) > 0)
		(*n)++;
	hgl_cursor_close(c);
	hgl_close(f);
	return rc;
}

static int counter;

static void bad(const struct buf *b, const char *want, const char *what)
{
	char name[32];
	const char *path;
	struct hg_err e = { "", 0 };
	int n, rc;

	snprintf(name, sizeof(name), "bad%d.hgl", ++counter);
	path = write_file(name, b);
	rc = read_all(path, 0, &e, &n);
	ok_msg(rc, &e, want, "%s", what);
	ok(rc == -1 && strstr(e.msg, path) && strstr(e.msg, "offset") && printable(e.msg),
	   "  ... the message names the file and the offset, printably");
}

static void bad_info(const char *info, const char *want, const char *what)
{
	struct buf b = { 0 };

	make(&b, info, 1, -1, 0);
	bad(&b, want, what);
	free(b.p);
}

static void check_good(void)
{
	struct buf b = { 0 };
	struct hgl_file *f;
	struct hgl_cursor *c;
	const struct hgl_info *in;
	const struct hgl_thread *t;
	struct hgl_rec r;
	struct hg_err e;
	const char *path;
	int rc, n = 0, m = 0;

	make(&b, INFO, 1, -1, 3);
	path = write_file("good.hgl", &b);
	rc = hgl_open(&f, path, 0, &e);
	ok(rc == 0, "a good trace opens%s%s", rc ? ": " : "", rc ? e.msg : "");
	if (rc)
		return;
	in = hgl_info(f);
	ok(in->tsc_hz == 2.5e9 && in->t0_tsc == 9007199254740993LL && in->duration_ns == 1000000000 &&
	   in->complete == 1 && in->nthreads == 2, "the run's figures, t0_tsc exact beyond 2^53");
	t = &in->threads[0];
	ok(t->thread == 0 && t->tid == 100 && !strcmp(t->workload, "CPU_SCAN_YIELD") && !strcmp(t->policy, "fifo") &&
	   t->priority == 80 && !strcmp(t->timer, "HR") && !strcmp(t->affinity, "0,2-3") &&
	   t->period_ns == 1000000 && t->amount_ns == 500000 && t->cpu_time_ns == 9.5e8, "thread 0's figures");
	ok(t->has_accounting && t->acct_tsc0 == 1 && t->acct_tsc1 == 2 && t->schedstat_on_cpu_ns == 3 &&
	   t->schedstat_slices == 4 && t->rusage_user_ns == 5 && t->rusage_system_ns == 6 &&
	   t->thread_cputime_ns == 7, "thread 0's accounting");
	t = &in->threads[1];
	ok(t->tid == 101 && !t->workload[0] && !t->affinity[0] && !t->has_accounting,
	   "thread 1: absent keys are 0 and \"\", null affinity is \"\"");
	ok(in->json && in->json_len == strlen(INFO) && !strcmp(in->json, INFO), "the info section, as it is");
	ok(hgl_nr_records(f) == 4 && hgl_dropped(f) == 3 && hgl_complete(f), "records, dropped, END");
	ok(!strcmp(hgl_path(f), path), "the path");
	c = hgl_cursor_open(f, 1, &e);
	while ((rc = hgl_cursor_next(c, &r, &e)) > 0)
		n += r.thread == 1;
	ok(rc == 0 && n == 2, "a cursor of thread 1 gives its 2 records");
	hgl_cursor_rewind(c);
	while (hgl_cursor_next(c, &r, &e) > 0)
		m++;
	ok(m == 2, "rewound, the same again");
	hgl_cursor_close(c);
	hgl_close(f);
	free(b.p);
}

static void check_sections(void)
{
	struct buf b = { 0 }, r = { 0 };
	struct hgl_file *f;
	struct hg_err e;
	const char *path;
	struct hgl_end end = { 4, 0 };
	size_t k;
	int n, refused = 0, fine = 1;

	records(&r);
	/* an unknown section is skipped, several record sections add up */
	hgl_prelude(&b, 1);
	section(&b, "xtra", "future", 6);
	section(&b, "info", INFO, strlen(INFO));
	section(&b, "recs", r.p, 64);
	section(&b, "recs", r.p + 64, 64);
	section(&b, "end!", &end, sizeof(end));
	path = write_file("sections.hgl", &b);
	ok(read_all(path, 0, &e, &n) == 0 && n == 4, "unknown sections skipped, two record sections read");

	/* no END: refused unless allowed */
	make(&b, INFO, 0, -1, 0);
	path = write_file("noend.hgl", &b);
	ok_msg(read_all(path, 0, &e, &n), &e, "no END section", "no END: refused by default");
	ok(read_all(path, HGL_OPEN_ALLOW_INCOMPLETE, &e, &n) == 0 && n == 4, "no END: read when allowed");
	ok(!hgl_open(&f, path, HGL_OPEN_ALLOW_INCOMPLETE, &e) && !hgl_complete(f) && !hgl_dropped(f),
	   "  ... and says so");
	hgl_close(f);

	/* every prefix refused with a message, or complete */
	make(&b, INFO, 1, -1, 0);
	for (k = 0; k < b.n; k++) {
		struct buf cut = { b.p, k, k };

		if (read_all(write_file("cut.hgl", &cut), 0, &e, &n) == 0)
			continue;
		refused++;
		if (!strstr(e.msg, "cut.hgl: offset") || !printable(e.msg))
			fine = 0;
	}
	ok(fine && refused == (int)b.n, "every one of %zu prefixes refused, naming the file and the offset", b.n);
	{
		struct buf cut = { b.p, 0, 0 };

		ok_msg(read_all(write_file("empty.hgl", &cut), 0, &e, &n), &e, "empty file", "an empty file says so");
		cut.n = 5;
		ok_msg(read_all(write_file("five.hgl", &cut), 0, &e, &n), &e, "truncated in the prelude",
		       "5 bytes of magic: truncated");
	}

	b.n = 0;
	put(&b, "NOT\x1b[0mHOURGLASS", 16);
	zeros(&b, 16);
	bad(&b, "bad magic \"NOT\\x1b[0mH\"", "bad magic, printed safely");
	b.n = 0;
	hgl_prelude(&b, 2);
	bad(&b, "format version 2.0", "another major version");
	b.n = 0;
	hgl_prelude(&b, 1);
	section(&b, "recs", r.p, r.n);
	section(&b, "end!", &end, sizeof(end));
	bad(&b, "no info section", "no info section");
	b.n = 0;
	hgl_prelude(&b, 1);
	section(&b, "info", INFO, strlen(INFO));
	section(&b, "info", INFO, strlen(INFO));
	bad(&b, "a second info section", "two info sections");
	b.n = 0;
	hgl_prelude(&b, 1);
	section(&b, "info", INFO, strlen(INFO));
	section(&b, "recs", r.p, 40);
	bad(&b, "record section of 40 bytes is not a whole number", "a record section of a part record");
	b.n = 0;
	hgl_prelude(&b, 1);
	section(&b, "\x01\x02" "ab", "x", 1);
	memcpy(b.p + 16 + 8, &(uint64_t){ 1ull << 40 }, 8);
	bad(&b, "section \"\\x01\\x02ab\" of 1099511627776 bytes runs past the end", "a section past the end, "
	    "its tag printed safely");
	b.n = 0;
	hgl_prelude(&b, 1);
	section(&b, "info", INFO, strlen(INFO));
	b.p[b.n - 1] = 'x';
	bad(&b, "padding after section \"info\" that is not zeros", "padding that is not zeros");
	b.n = 0;
	hgl_prelude(&b, 1);
	put(&b, "info", 4);
	put32(&b, 0);
	put64(&b, 20u << 20);
	zeros(&b, 20u << 20);
	bad(&b, "beyond the format's 16 MiB", "an info section beyond 16 MiB");
	make(&b, INFO, 1, 5, 0);
	bad(&b, "END says 5 records, the file holds 4", "END's count disagreeing");
	make(&b, INFO, 1, -1, 0);
	put(&b, "garbage!", 8);
	bad(&b, "8 bytes after the END section", "data after END");
	make(&b, INFO, 1, -1, 0);
	memcpy(b.p + b.n - 24, &(uint64_t){ 8 }, 8);	/* END's size */
	bad(&b, "bad END section: 8 bytes", "an END section of the wrong size");

	/* records */
	{
		struct buf x = { 0 };
		struct hgl_end e1 = { 1, 0 };
		char want[192];
		size_t at;

#define ONE(t0, thread, type, cpu) do { x.n = 0; hgl_rec(&x, t0, t0 + 1, 0, thread, type, 0, cpu); \
	b.n = 0; hgl_prelude(&b, 1); section(&b, "info", INFO, strlen(INFO)); at = b.n + 16; \
	section(&b, "recs", x.p, x.n); section(&b, "end!", &e1, sizeof(e1)); } while (0)
		ONE(1, 0, 9, 0);
		snprintf(want, sizeof(want), "offset %zu: unknown record type 9", at);
		bad(&b, want, "an unknown record type, at the record's offset");
		ONE(1, 7, HGL_REC_INTERVAL, 0);
		bad(&b, "record of thread 7, but the run had 2 threads", "a record of thread >= nthreads");
		ONE(1, 0, HGL_REC_JOB, 50000000);
		bad(&b, "record on CPU 50000000, beyond the format's limit of 8192", "a record of CPU >= HGL_MAX_CPUS");
		/* found by fuzz_merge: stamps the merger's int64_t arithmetic overflowed on */
		ONE(10448351801479585248ull, 0, HGL_REC_INTERVAL, 0);
		snprintf(want, sizeof(want), "offset %zu: record stamped beyond 2^63", at);
		bad(&b, want, "a stamp beyond 2^63, at the record's offset");
		x.n = 0;
		hgl_rec(&x, 7308613717804122648ull, 666047029874ull, 0, 0, HGL_REC_INTERVAL, 0, 0);
		b.n = 0;
		hgl_prelude(&b, 1);
		section(&b, "info", INFO, strlen(INFO));
		section(&b, "recs", x.p, x.n);
		section(&b, "end!", &e1, sizeof(e1));
		bad(&b, "an interval that ends (TSC 666047029874) before it starts (TSC 7308613717804122648)",
		    "an interval that ends before it starts");
		x.n = 0;
		hgl_rec(&x, 7506, 6, (uint64_t)-3000, 0, HGL_REC_WAKE, 0x12, 0);	/* due 7500 cycles after */
		b.n = 0;
		hgl_prelude(&b, 1);
		section(&b, "info", INFO, strlen(INFO));
		section(&b, "recs", x.p, x.n);
		section(&b, "end!", &e1, sizeof(e1));
		{
			struct hg_err e;
			int n;

			ok(!read_all(write_file("early.hgl", &b), 0, &e, &n) && n == 1,
			   "a wake-up 3000 ns early: its lateness (t2) is signed, not a stamp");
		}
		x.n = 0;
		hgl_rec(&x, 5, 0, 1ull << 63, 0, HGL_REC_JOB, 0, 0);
		b.n = 0;
		hgl_prelude(&b, 1);
		section(&b, "info", INFO, strlen(INFO));
		section(&b, "recs", x.p, x.n);
		section(&b, "end!", &e1, sizeof(e1));
		bad(&b, "record stamped beyond 2^63", "a job whose deadline is beyond 2^63");
		/* records that contradict each other or the run's rate (issue 37: the merger refused
		 * them, hgtrace dump printed them without a word); the second record's offset */
#define TWO(a0, a1, a2, atype, b0, b1, b2, btype) do { x.n = 0; \
	hgl_rec(&x, a0, a1, a2, 0, atype, 0, 0); hgl_rec(&x, b0, b1, b2, 0, btype, 0, 0); \
	b.n = 0; hgl_prelude(&b, 1); section(&b, "info", INFO, strlen(INFO)); at = b.n + 16 + 32; \
	section(&b, "recs", x.p, x.n); section(&b, "end!", &(struct hgl_end){ 2, 0 }, sizeof(e1)); } while (0)
		TWO(100, 1ull << 62, 0, HGL_REC_INTERVAL, 200, 300, 0, HGL_REC_INTERVAL);
		snprintf(want, sizeof(want), "offset %zu: thread 0: an interval that starts (TSC 200) before its "
			 "previous one ended (TSC 4611686018427387904)", at);
		bad(&b, want, "an interval that starts before its thread's previous one ended");
		TWO(100, 200, 0, HGL_REC_INTERVAL, 300, 1ull << 62, 5, HGL_REC_WAKE);
		snprintf(want, sizeof(want), "offset %zu: thread 0: a wake-up due at TSC 300 and first read at TSC "
			 "4611686018427387904, but 5 ns late", at);
		bad(&b, want, "a wake-up whose stamps its lateness contradicts");
		TWO(100, 200, 0, HGL_REC_INTERVAL, 300, 0, 299, HGL_REC_JOB);
		bad(&b, "a job released at TSC 300 with its deadline at TSC 299", "a job due before its release");
		TWO(100, 200, 0, HGL_REC_INTERVAL, 300, 250, 400, HGL_REC_JOB);
		bad(&b, "and its completion at TSC 250", "a job done before its release");
		TWO(100, 200, 0, HGL_REC_INTERVAL, 200, 300, 0, HGL_REC_INTERVAL);
		{
			struct hg_err e;
			int n;

			ok(!read_all(write_file("touching.hgl", &b), 0, &e, &n) && n == 2,
			   "an interval that starts where the previous one ended");
		}
#undef TWO
		free(x.p);
	}
	free(b.p);
	free(r.p);
}

static void check_info(void)
{
	bad_info("null", "the info section is JSON null, not an object", "info null");
	bad_info("[1]", "is an array, not an object", "info an array");
	bad_info("{\"tsc\": {\"hz\": 1e9}, \"threads\": []", "not valid JSON", "info cut short");
	bad_info("{\"tsc\": {\"hz\": 1e9}, \"threads\": [], \"s\": \"caf\xe9\"}", "not valid UTF-8",
		 "info not UTF-8");
	bad_info("{\"tsc\": {\"hz\": 1e9}, \"threads\": [], \"threads\": []}", "twice", "a duplicate key");
	bad_info("{\"threads\": []}", "tsc is missing", "tsc missing");
	bad_info("{\"tsc\": 5, \"threads\": []}", "tsc is a number, not an object", "tsc not an object");
	bad_info("{\"tsc\": {}, \"threads\": []}", "tsc.hz is missing", "tsc.hz missing");
	bad_info("{\"tsc\": {\"hz\": \"fast\"}, \"threads\": []}", "tsc.hz is a string, not a number", "tsc.hz a string");
	bad_info("{\"tsc\": {\"hz\": 0}, \"threads\": []}", "tsc.hz is 0, outside", "tsc.hz 0");
	bad_info("{\"tsc\": {\"hz\": -1e9}, \"threads\": []}", "tsc.hz is -1e+09, outside", "tsc.hz negative");
	bad_info("{\"tsc\": {\"hz\": 1e300}, \"threads\": []}", "tsc.hz is 1e+300, outside", "tsc.hz absurd");
	bad_info("{\"tsc\": {\"hz\": null}, \"threads\": []}", "tsc.hz is null, not a number", "tsc.hz null");
	bad_info("{\"tsc\": {\"hz\": 1e9}}", "threads is missing", "threads missing");
	bad_info("{\"tsc\": {\"hz\": 1e9}, \"threads\": {}}", "threads is an object, not an array",
		 "threads not an array");
	bad_info("{\"tsc\": {\"hz\": 1e9}, \"threads\": [{}, {}]}", "threads[0].thread is missing",
		 "a thread without its number");
	bad_info("{\"tsc\": {\"hz\": 1e9}, \"threads\": [{\"thread\": 1}, {\"thread\": 0}]}",
		 "threads[0].thread is 1: threads are numbered 0..n-1", "threads out of order");
	bad_info("{\"tsc\": {\"hz\": 1e9}, \"threads\": [{\"thread\": 0.5}]}", "thread is a number, not a whole number",
		 "a fractional thread number");
	bad_info("{\"tsc\": {\"hz\": 1e9}, \"threads\": [7]}", "threads[0] is not an object", "a thread that is a number");
	bad_info("{\"tsc\": {\"hz\": 1e9}, \"threads\": [{\"thread\": 0, \"tid\": -5}]}", "tid is -5, outside",
		 "a negative tid");
	bad_info("{\"tsc\": {\"hz\": 1e9}, \"threads\": [{\"thread\": 0, \"workload\": 3}]}",
		 "workload is a number, not a string", "a workload that is a number");
	bad_info("{\"tsc\": {\"hz\": 1e9}, \"threads\": [{\"thread\": 0, \"workload\": \"A_VERY_LONG_WORKLOAD_NAME\"}]}",
		 "workload is longer than 15 bytes", "a workload name too long");
	bad_info("{\"tsc\": {\"hz\": 1e9}, \"threads\": [{\"thread\": 0, \"accounting\": []}]}",
		 "threads[0].accounting is an array, not an object", "accounting not an object");
	bad_info("{\"tsc\": {\"hz\": 1e9}, \"threads\": [{\"thread\": 0, \"accounting\": {\"tsc0\": \"x\"}}]}",
		 "threads[0].accounting.tsc0 is a string", "accounting.tsc0 a string");
	bad_info("{\"tsc\": {\"hz\": 1e9}, \"threads\": [{\"thread\": 0, \"cpu_time_ns\": true}]}",
		 "cpu_time_ns is a boolean, not a number", "cpu_time_ns a boolean");
	bad_info("{\"tsc\": {\"hz\": 1e9}, \"complete\": 1, \"threads\": []}", "complete is a number, not true or false",
		 "complete not a boolean");
	bad_info("{\"tsc\": {\"hz\": 1e9}, \"t0_tsc\": -1, \"threads\": []}", "t0_tsc is -1, outside", "t0_tsc negative");
	bad_info("{\"tsc\": {\"hz\": 1e9}, \"threads_n\": 3, \"threads\": [{\"thread\": 0}]}",
		 "says threads_n 3 but lists 1", "threads_n disagreeing with threads");
	{
		/* 4097 threads: beyond HGL_MAX_THREADS */
		size_t cap = 4097 * 16 + 64, o;
		char *s = malloc(cap);
		int k;

		o = (size_t)sprintf(s, "{\"tsc\": {\"hz\": 1e9}, \"threads\": [");
		for (k = 0; k < 4097; k++)
			o += (size_t)sprintf(s + o, "%s{\"thread\":%d}", k ? "," : "", k);
		strcpy(s + o, "]}");
		bad_info(s, "lists 4097 threads, beyond the format's 4096", "more threads than the format allows");
		free(s);
	}
	{
		struct buf b = { 0 };
		struct hgl_file *f;
		struct hg_err e;
		const char *info = "{\"tsc\": {\"hz\": 1e9}, \"threads\": [{\"thread\": 0, \"affinity\": "
				   "\"0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,40,42,44,46,48\"}]}";

		b.n = 0;
		hgl_prelude(&b, 1);
		section(&b, "info", info, strlen(info));
		section(&b, "end!", &(struct hgl_end){ 0, 0 }, 16);
		ok(!hgl_open(&f, write_file("aff.hgl", &b), 0, &e) && strlen(hgl_info(f)->threads[0].affinity) == 63 &&
		   strstr(hgl_info(f)->threads[0].affinity, "...") && hgl_info(f)->complete == 1,
		   "a long affinity is cut with ...; no records section is 0 records; complete absent is true");
		hgl_close(f);
		free(b.p);
	}
}

/* byte flips: whatever they do, the reader answers with a message or records, never a crash */
static void check_flips(void)
{
	struct buf b = { 0 };
	struct hg_err e;
	unsigned seed = 11;
	int i, n, fine = 1, refused = 0;

	make(&b, INFO, 1, -1, 0);
	for (i = 0; i < 3000; i++) {
		struct buf m = { malloc(b.n), b.n, b.n };
		int k;

		memcpy(m.p, b.p, b.n);
		for (k = 0; k <= i % 3; k++) {
			seed = seed * 1103515245 + 12345;
			m.p[(seed >> 8) % m.n] ^= (unsigned char)(1 + ((seed >> 20) & 0xff) % 255);
		}
		if (read_all(write_file("flip.hgl", &m), 0, &e, &n)) {
			refused++;
			if (!strstr(e.msg, "flip.hgl: offset") || !printable(e.msg))
				fine = 0;
		}
		free(m.p);
	}
	ok(fine && refused > 1000, "3000 mutated traces, %d refused with a printable message naming the offset",
	   refused);
	free(b.p);
}

/*
 * The cursors of several threads share the blocks they read (hourglass writes a thread's
 * records 256 at a time from a shared pool, so a block holds many threads' records): each
 * still gives its thread's records in file order, read side by side or one after another,
 * and a record spoilt after the file was opened fails every cursor that passes it, after
 * the records before it, as a cursor that looked at every record did.
 */
#define SH_THREADS	3
#define SH_RECS		5000	/* three blocks of 2048 */
#define SH_BAD		2100	/* in the second block */

static int sh_thread(int i)
{
	return i / 100 % SH_THREADS;	/* chunks of 100 a thread, in turn */
}

static void check_shared_blocks(void)
{
	static const char info[] = "{\"file_version\": 1, \"complete\": true, \"t0_tsc\": 0, \"duration_ns\": 1,"
		" \"tsc\": {\"hz\": 1e9}, \"threads\": [{\"thread\": 0}, {\"thread\": 1}, {\"thread\": 2}]}";
	struct buf b = { 0 }, r = { 0 };
	struct hgl_file *f;
	struct hgl_cursor *c[SH_THREADS + 1];
	struct hgl_rec x;
	struct hgl_end e;
	struct hg_err err;
	const char *path;
	uint64_t recs_off;
	int i, k, rc, got[SH_THREADS + 1] = { 0 }, order = 1, before[SH_THREADS + 1] = { 0 }, fails = 0, fine = 1;
	int live;
	FILE *w;

	for (i = 0; i < SH_RECS; i++)
		hgl_rec(&r, 1000 + (uint64_t)i * 10, 1005 + (uint64_t)i * 10, (uint64_t)i, (uint16_t)sh_thread(i),
			HGL_REC_INTERVAL, 0, 0);
	hgl_prelude(&b, 1);
	section(&b, "info", info, strlen(info));
	recs_off = b.n + 16;
	section(&b, "recs", r.p, r.n);
	e.nr_records = SH_RECS;
	e.dropped = 0;
	section(&b, "end!", &e, sizeof(e));
	path = write_file("shared.hgl", &b);
	rc = hgl_open(&f, path, 0, &err);
	ok(rc == 0, "a trace of three threads in chunks opens%s%s", rc ? ": " : "", rc ? err.msg : "");
	if (rc)
		goto out;

	/* side by side: one record of each thread in turn, and a thread the run does not have */
	for (k = 0; k <= SH_THREADS; k++)
		c[k] = hgl_cursor_open(f, k, &err);
	do {
		live = 0;
		for (k = 0; k <= SH_THREADS; k++) {
			if ((rc = hgl_cursor_next(c[k], &x, &err)) <= 0)
				continue;
			live = 1;
			/* t2 is the record's place in the file */
			if (x.thread != k || sh_thread((int)x.t2) != k || (got[k] && (int)x.t2 <= before[k]))
				order = 0;
			before[k] = (int)x.t2;
			got[k]++;
		}
	} while (live);
	ok(order && got[0] == 1700 && got[1] == 1700 && got[2] == 1600 && got[3] == 0,
	   "side by side, each thread's records in file order: %d %d %d, and %d of a thread not in the run",
	   got[0], got[1], got[2], got[3]);

	/* one after another: each cursor reads the blocks again where the others let them go */
	for (k = 0; k < SH_THREADS; k++) {
		int n = 0;

		hgl_cursor_rewind(c[k]);
		while (hgl_cursor_next(c[k], &x, &err) > 0)
			n += x.thread == k;
		fine &= n == got[k];
	}
	ok(fine, "one after another, rewound: the same records");

	/* a record spoilt after the file was opened: an unknown type */
	w = fopen(path, "r+b");
	if (w) {
		struct hgl_rec bad = { 0 };

		fseek(w, (long)(recs_off + SH_BAD * sizeof(struct hgl_rec)), SEEK_SET);
		bad.type = 99;
		fwrite(&bad, sizeof(bad), 1, w);
		fclose(w);
	}
	for (k = 0; k < SH_THREADS; k++) {
		int n = 0, want = 0;

		hgl_cursor_rewind(c[k]);
		for (i = 0; i < SH_BAD; i++)
			want += sh_thread(i) == k;
		while ((rc = hgl_cursor_next(c[k], &x, &err)) > 0)
			n++;
		if (rc == -1 && n == want && strstr(err.msg, "unknown record type 99"))
			fails++;
		else
			fprintf(stderr, "# thread %d: %d records then %d (%s), %d wanted\n", k, n, rc,
				rc ? err.msg : "", want);
	}
	ok(fails == SH_THREADS, "every thread's cursor fails at the spoilt record, after its records before it");
	for (k = 0; k <= SH_THREADS; k++)
		hgl_cursor_close(c[k]);
	hgl_close(f);
out:
	free(r.p);
	free(b.p);
}

int main(void)
{
	check_good();
	check_shared_blocks();
	check_flips();
	check_sections();
	check_info();
	remove_scratch();
	return tap_done();
}

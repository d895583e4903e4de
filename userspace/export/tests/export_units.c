// SPDX-License-Identifier: GPL-2.0
/*
 * export_units.c - unit tests of the exporters' parts: the reorder window,
 * JSON escaping and number formatting, trace-cmd's TSC arithmetic, the
 * page writer read back. Prints TAP; exits 1 if any test fails.
 *
 *	export_units TMPDIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"
#include "reorder.h"
#include "tracedat_writer.h"

static int ntest, nfail;

static void ok(int cond, const char *what)
{
	ntest++;
	nfail += !cond;
	printf("%s %d - %s\n", cond ? "ok" : "not ok", ntest, what);
}

/* a deterministic generator: the tests must not depend on the run */
static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct it {
	uint64_t ts;
	uint8_t rank, pad[3];
	uint32_t seq;
	uint8_t rest[16];
};

static void test_reorder(void)
{
	struct ro_window w;
	struct ro_lane l = { 0 };
	uint64_t last = 0, out = 0, t = 1000, n = 200000;
	int sorted = 1, held_ok = 1;
	struct it *p;
	uint64_t i;

	/* records late by up to 50 cycles, the horizon 100: all put back in order */
	ro_init(&w, 1024, 100);
	for (i = 0; i < n; i++) {
		t += 1 + next() % 20;
		p = ro_push(&w, &l, t - next() % 50, 0);
		p->seq = i;
		while ((p = ro_due(&w, &l, l.newest))) {
			sorted &= p->ts >= last;
			last = p->ts;
			out++;
			ro_pop(&l);
		}
		held_ok &= l.n <= w.max;
	}
	while ((p = ro_first(&l))) {
		sorted &= p->ts >= last;
		last = p->ts;
		out++;
		ro_pop(&l);
	}
	ok(sorted && out == n, "reorder: jitter within the horizon comes out in order, every item once");
	ok(w.reordered > n / 4 && w.clamped == 0, "reorder: late items counted as reordered, none clamped");
	ok(held_ok, "reorder: a lane never holds more than its maximum");

	/* one item older than what was handed out: given that time, and counted */
	p = ro_push(&w, &l, 10, 0);
	ok(p && p->ts == last && w.clamped == 1, "reorder: an item older than the handed out is clamped");
	ro_pop(&l);
	ro_lane_free(&l);

	/* ties in time: by rank, then by arrival */
	ro_init(&w, 64, 1000);
	p = ro_push(&w, &l, 5, 2);
	p->seq = 1;
	p = ro_push(&w, &l, 5, 0);
	p->seq = 2;
	p = ro_push(&w, &l, 5, 2);
	p->seq = 3;
	p = ro_push(&w, &l, 5, 1);
	p->seq = 4;
	{
		uint32_t order[4], k = 0;

		while ((p = ro_first(&l))) {
			order[k++] = p->seq;
			ro_pop(&l);
		}
		ok(order[0] == 2 && order[1] == 4 && order[2] == 1 && order[3] == 3,
		   "reorder: equal times by rank, then arrival");
	}
	/* a full lane hands out its oldest whatever the horizon */
	ro_init(&w, 64, ~0ULL / 2);
	for (i = 0; i < 1000; i++) {
		ro_push(&w, &l, i, 0);
		while ((p = ro_due(&w, &l, l.newest)))
			ro_pop(&l);
	}
	ok(l.n == 63 && l.flushed == 1000 - 64, "reorder: a full lane hands out its oldest");
	ro_lane_free(&l);
}

static int esc_is(const char *in, size_t n, const char *want)
{
	char buf[256];
	size_t len = json_escape(buf, in, n);

	buf[len] = 0;
	if (strcmp(buf, want))
		printf("# escape: got [%s] want [%s]\n", buf, want);
	return !strcmp(buf, want);
}

static int us_is(uint64_t ns, const char *want)
{
	char buf[64];

	buf[put_us(buf, ns)] = 0;
	if (strcmp(buf, want))
		printf("# put_us(%llu): got [%s] want [%s]\n", (unsigned long long)ns, buf, want);
	return !strcmp(buf, want);
}

static void test_json(void)
{
	char buf[64];

	ok(esc_is("a\"b\\c", 5, "a\\\"b\\\\c"), "json: quote and backslash escaped");
	ok(esc_is("\n\t\x01", 3, "\\n\\t\\u0001"), "json: control characters escaped");
	ok(esc_is("caf\xc3\xa9 \xe2\x82\xac", 9, "caf\xc3\xa9 \xe2\x82\xac"), "json: UTF-8 kept");
	ok(esc_is("bad\xff\xc3", 5, "bad\\ufffd\\ufffd"), "json: bytes that are not UTF-8 become U+FFFD");
	ok(esc_is("\xc0\xaf\xed\xa0\x80", 5, "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd"),
	   "json: overlong forms and surrogates refused");
	ok(us_is(0, "0") && us_is(400, "0.4") && us_is(12345, "12.345") && us_is(1000, "1") &&
	   us_is(1010, "1.01") && us_is(1001, "1.001") && us_is(123456789000ULL, "123456789"),
	   "json: nanoseconds as microseconds, three decimals at most");
	buf[put_sus(buf, -50)] = 0;
	ok(!strcmp(buf, "-0.05"), "json: negative microseconds");
	buf[put_u64(buf, UINT64_MAX)] = 0;
	ok(!strcmp(buf, "18446744073709551615"), "json: the largest integer");
}

static void test_tsc(void)
{
	static const double hz[] = { 1e6, 1e9, 2.6e9, 3.999e9, 5.2e9 };
	int exact = 1, close = 1, fits = 1;
	unsigned i, k;

	for (i = 0; i < sizeof(hz) / sizeof(hz[0]); i++) {
		uint32_t mult, shift;

		td_tsc2nsec(hz[i], &mult, &shift);
		fits &= mult < (1u << 31) && shift <= 32;
		for (k = 0; k < 10000; k++) {
			uint64_t ts = next() >> (next() % 40);
			unsigned __int128 want = ((unsigned __int128)ts * mult) >> shift;
			double ns = ts / hz[i] * 1e9;

			exact &= td_to_ns(ts, mult, shift) == (uint64_t)want;
			close &= ns < 1e6 || (double)want / ns - 1 < 1e-6;
		}
	}
	ok(fits, "tsc2nsec: mult below 2^31, shift at most 32 (trace-cmd keeps mult in an int)");
	ok(exact, "tsc2nsec: trace-cmd's split multiplication is exact");
	ok(close, "tsc2nsec: within a millionth of the frequency's nanoseconds");
}

struct seen {
	uint64_t n, last, missed;
	int order;
};

static int on_entry(void *arg, uint64_t ts, uint64_t missed)
{
	struct seen *s = arg;

	s->order &= ts >= s->last;
	s->last = ts;
	s->n++;
	s->missed += missed;
	return 0;
}

static void test_writer(const char *dir)
{
	static const struct td_field f[] = { { "u32", "n", 4 }, { "__data_loc char[]", "s", 4 } };
	struct hg_err err;
	struct td_event ev;
	struct td_writer *w = td_create(dir, 2, 1e9, &err);
	struct seen s = { 0, 0, 0, 1 };
	uint64_t t = 1, i;
	char *tmp = NULL, path[4096];

	ok(w && !td_event(w, "test", "tick", f, 2, "\"n=%u\", REC->n", &ev, &err), "writer: an event declared");
	ok(ev.id == TD_FIRST_ID && ev.off[0] == 8 && ev.off[1] == 12 && ev.fixed == 16, "writer: its layout");
	for (i = 0; i < 100000; i++) {
		uint8_t *p;

		t += 1 + next() % 1000;
		if (i == 50000)
			t += 1ULL << 30;	/* a time extend */
		if (i == 70000)
			td_lost(td_lane(w, 0, 1), 7);
		p = td_reserve(td_lane(w, 0, 1), t, i % 3 ? 16 : 132);	/* a long one: type_len 0 */
		memcpy(p, &ev.id, 2);
		memcpy(p + 8, &i, 4);
	}
	ok(!td_flush(w, &err), "writer: pages flushed");
	ok(!td_scan(w, 0, 1, on_entry, &s, &err) && s.n == 100000 && s.order && s.last == t && s.missed == 7,
	   "writer: read back, every entry in order, its time, the lost mark");
	ok(td_lane(w, 0, 0)->entries == 0 && td_lane(w, 0, 1)->file_bytes % TD_PAGE == 0,
	   "writer: whole pages, an empty CPU has none");
	snprintf(path, sizeof(path), "%s/units.dat", dir);
	ok(!td_write(w, path, 0, NULL, 0, &tmp, &err) && tmp && !rename(tmp, path), "writer: a file assembled");
	free(tmp);
	td_destroy(w);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: export_units TMPDIR\n");
		return 2;
	}
	test_reorder();
	test_json();
	test_tsc();
	test_writer(argv[1]);
	printf("1..%d\n", ntest);
	return nfail ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * export_units.c - unit tests of the exporters' parts: the reorder window,
 * JSON escaping and number formatting, trace-cmd's TSC arithmetic, the
 * page writer read back, the Perfetto writer's varints, string table and
 * packets. Prints TAP; exits 1 if any test fails.
 *
 *	export_units TMPDIR
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ks_session.h"
#include "pf_writer.h"
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

static int key_cmp(const void *a, const void *b)
{
	const struct it *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* items a few hundred places late, as the exporters' gaps are, across the ring's wrap */
static void test_reorder_deep(void)
{
	enum { N = 100000 };
	struct ro_window w;
	struct ro_lane l = { 0 };
	struct it *want = calloc(N, sizeof(*want)), *p;
	uint32_t *got = calloc(N, sizeof(*got)), i, k = 0, same = 1, wraps = 0, head = 0;

	ro_init(&w, 1024, 3000);
	for (i = 0; i < N; i++) {
		uint64_t t = (uint64_t)i * 10, late = next() % 4 ? 0 : next() % 2000;

		p = ro_push(&w, &l, late > t ? 0 : t - late, next() % 3);
		p->seq = i;
		want[i] = *p;
		while ((p = ro_due(&w, &l, l.newest))) {
			got[k++] = p->seq;
			ro_pop(&l);
			wraps += l.head < head;
			head = l.head;
		}
	}
	while ((p = ro_first(&l))) {
		got[k++] = p->seq;
		ro_pop(&l);
	}
	qsort(want, N, sizeof(*want), key_cmp);
	for (i = 0; i < N && k == N; i++)
		same &= got[i] == want[i].seq;
	ok(same && k == N && !w.clamped && w.reordered > N / 8 && wraps > 10,
	   "reorder: items up to 200 places late come out as a stable sort, across the ring's wrap");
	ro_lane_free(&l);
	free(want);
	free(got);
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
	struct td_event ev, ev2;
	struct seen s = { 0, 0, 0, 1 };
	struct td_writer *w;
	uint64_t t = 1, i, tb, ntock;
	int b, m;
	char *tmp = NULL, path[4096];

	snprintf(path, sizeof(path), "%s/units.dat", dir);
	w = td_create(path, 2, 1e9, &err);

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
	/* a second buffer's 30000 "tock"s, every third one at a tick's time, merged with the ticks */
	b = td_buffer(w, "b", &err);
	ok(b == 1 && !td_event(w, "test", "tock", f, 1, "\"n=%u\", REC->n", &ev2, &err), "writer: a second buffer");
	for (i = 0, tb = 0; i < 30000; i++) {
		uint8_t *p;

		tb += 1 + next() % 3000;
		if (tb > t)
			break;
		p = td_reserve(td_lane(w, b, i % 2), tb, 16);
		memcpy(p, &ev2.id, 2);
		memcpy(p + 8, &i, 4);
	}
	ntock = i;
	ok(!td_write_merged(w, path, 0, b, &m, &tmp, &err) && tmp && !rename(tmp, path),
	   "writer: a file of the two buffers merged assembled");
	memset(&s, 0, sizeof(s));
	s.order = 1;
	ok(m == 2 && !td_scan(w, m, 1, on_entry, &s, &err) && s.n == 100000 + ntock / 2 && s.order && s.last == t &&
	   s.missed == 7 && td_lane(w, m, 0)->entries == (ntock + 1) / 2,
	   "writer: two buffers merged by time, every entry and the lost mark kept, read back from the file");
	printf("# units.dat: %llu ticks, %llu tocks\n", 100000ULL, (unsigned long long)ntock);
	free(tmp);
	td_destroy(w);
}

/*
 * a trace of 200 sequences (ids up to 300: two bytes) on tracks with five-byte uuids, 60000
 * slices with long and short deltas and 300 names, written through a buffer that fills many
 * times: DIR/units.perfetto-trace, which tests/unit/test_export.py reads with Perfetto's
 * definitions
 */
static void test_perfetto_file(const char *dir)
{
	static struct pf_seq seq[200];
	struct pf_writer w;
	char path[4096], name[32];
	uint64_t t = 0;
	int fd, i, k, okw = 1;

	snprintf(path, sizeof(path), "%s/units.perfetto-trace", dir);
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	okw &= fd >= 0 && !pfw_init(&w, fd, 1000, 1 << 20);
	pfw_track(&w, 1, 0, "group", 0, "a group");
	for (k = 0; k < 200; k++) {
		seq[k] = (struct pf_seq){ .uuid = (1ULL << 32) + k, .id = 101 + k };
		snprintf(name, sizeof(name), "track %d", k);
		pfw_track(&w, seq[k].uuid, 1, name, k, NULL);
	}
	for (i = 0; i < 60000; i++) {
		struct pf_ann a = { pfw_name(&w, PF_ANNOTATION_NAME, "i", 1), PFA_INT, (uint64_t)-(int64_t)i };

		k = (i * 7) % 200;
		t += i % 1000 ? 1 + (uint64_t)(i % 300) : 5000000000ULL;
		snprintf(name, sizeof(name), "name %d", i % 300);
		pfw_event(&w, &seq[k], t, TYPE_SLICE_BEGIN, pfw_name(&w, PF_EVENT_NAME, name, strlen(name)), &a, 1);
		pfw_end(&w, &seq[k], t + i % 50);
	}
	pfw_attribute(&w, "units.slices", NULL, 60000);
	okw &= !pfw_flush(&w) && w.events == 120000;
	ok(okw && !close(fd), "writer: 200 sequences, 120000 events written (read back by test_export.py)");
	for (k = 0; k < 200; k++)
		pfw_seq_free(&seq[k]);
	pfw_free(&w);
}

/* the Perfetto writer's parts: varints, lengths over a byte, the bounded string table, UTF-8 */
static void test_perfetto(void)
{
	static const uint8_t v300[] = { 0xac, 0x02 }, vmax[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
								  0xff, 0x01 };
	uint8_t buf[40000], *p, *len;
	struct pf_strtab t;
	struct pf_writer w;
	struct pf_seq s = { .uuid = 7, .id = 3 };
	char clean[PF_NAME_MAX];
	uint32_t a, b;
	size_t n;
	int i, ok_iid = 1;

	p = pb_varint(buf, 300);
	ok(p - buf == 2 && !memcmp(buf, v300, 2), "pb: 300 is ac 02");
	p = pb_varint(buf, UINT64_MAX);
	ok(p - buf == 10 && !memcmp(buf, vmax, 10) && pb_varint_len(UINT64_MAX) == 10, "pb: 2^64-1 is ten bytes");
	/* a length that needs two bytes, then three: the contents move on, intact */
	for (n = 127; n <= 20000; n = n == 127 ? 128 : n == 128 ? 16383 : n == 16383 ? 16384 : 20001) {
		len = pb_open(buf, 2);
		memset(len + 1, 'x', n);
		p = pb_close(len, len + 1 + n);
		ok(p - buf == (long)(1 + pb_varint_len(n) + n) && buf[0] == 0x12 && buf[1 + pb_varint_len(n)] == 'x' &&
		   p[-1] == 'x', "pb: a field of 127, 128, 16383 and 16384 bytes keeps its contents");
	}
	/* the table: the same string the same iid, another dictionary another one, and no more than its bounds */
	pf_strtab_init(&t, 3, 1 << 20);
	a = pf_intern(&t, PF_EVENT_NAME, "irq 30", 6);
	b = pf_intern(&t, PF_ANNOTATION_STRING, "irq 30", 6);
	ok(a && b && a != b && pf_intern(&t, PF_EVENT_NAME, "irq 30", 6) == a, "intern: per string and dictionary");
	ok(pf_intern(&t, PF_EVENT_NAME, "idle", 4) == 3 && !pf_intern(&t, PF_EVENT_NAME, "full", 4) &&
	   t.refused == 1 && pf_intern(&t, PF_EVENT_NAME, "idle", 4) == 3, "intern: a full table refuses new strings only");
	pf_strtab_free(&t);
	pf_strtab_init(&t, 100000, 1 << 20);
	for (i = 0; i < 50000; i++) {
		char name[32];

		ok_iid &= pf_intern(&t, PF_EVENT_NAME, name, snprintf(name, sizeof(name), "task:%d", i)) == (uint32_t)i + 1;
	}
	for (i = 0; i < 50000; i += 7) {
		char name[32];

		ok_iid &= pf_intern(&t, PF_EVENT_NAME, name, snprintf(name, sizeof(name), "task:%d", i)) == (uint32_t)i + 1;
	}
	ok(ok_iid && t.n == 50000, "intern: 50000 names through rehashes, each found again");
	pf_strtab_free(&t);
	n = pf_utf8_clean(clean, sizeof(clean), "bad\xff\x01n\xc3\xa9", 8);
	ok(n == 10 && !memcmp(clean, "bad\xef\xbf\xbd\x01n\xc3\xa9", 10), "utf8: a stray byte is U+FFFD, the rest kept");
	memset(buf, 'a', 300);
	buf[250] = 0xc3;
	buf[251] = 0xa9;
	n = pf_utf8_clean(clean, sizeof(clean), (char *)buf, 300);
	ok(n == PF_NAME_MAX && clean[250] == (char)0xc3, "utf8: cut at PF_NAME_MAX, on a character");
	n = pf_utf8_clean(clean, 251, (char *)buf, 300);
	ok(n == 250, "utf8: a character that does not fit is left out whole");
	/* a writer whose table is full writes the name inline: "cut" (not interned), then its end */
	pfw_init(&w, -1, 1, 1 << 20);
	a = pfw_name(&w, PF_EVENT_NAME, "first", 5);
	b = pfw_name(&w, PF_EVENT_NAME, "cut", 3);
	ok(a == 1 && b == 0 && w.inline_names == 1, "writer: past its bounds, names go inline");
	pfw_begin(&w, &s, 1000, b);
	pfw_end(&w, &s, 1500);
	p = memmem(w.buf, w.len, "\xba\x01\x03" "cut", 6);	/* TrackEvent.name (23), 3 bytes */
	ok(p != NULL && w.events == 2 && s.last_ns == 1500, "writer: an inline name is TrackEvent.name");
	pfw_seq_free(&s);
	pfw_free(&w);
}

/* the session's focus: the first wrong inference among the gaps the kernel explains, in the
 * report's sense (a gap of class other is not one: the session said it was until 2026-11-28) */
static void test_focus(void)
{
	struct ks_focus tiers[KS_FOCUS_N] = { 0 };
	struct hgg_gap g = { 0 };
	const struct ks_focus *f;

	ok(!ks_focus_pick(tiers), "focus: none without gaps");
	g.cls = HGG_C_OTHER;
	g.inferred = HGG_C_TIMER;
	ks_focus_offer(tiers, &g, 100, 110);		/* misread, but not explained */
	g.cls = HGG_C_HIDDEN;
	ks_focus_offer(tiers, &g, 120, 130);		/* nor this */
	f = ks_focus_pick(tiers);
	ok(f && f->t0 == 100, "focus: the first gap when none is explained");
	g.cls = HGG_C_INTERRUPT;
	g.inferred = HGG_C_INTERRUPT;
	ks_focus_offer(tiers, &g, 300, 310);		/* explained and right */
	f = ks_focus_pick(tiers);
	ok(f && f->t0 == 300, "focus: the first explained gap when none is wrong");
	g.inferred = HGG_C_TIMER;
	ks_focus_offer(tiers, &g, 500, 510);		/* explained and wrong */
	g.vol = 1;
	ks_focus_offer(tiers, &g, 50, 60);		/* voluntary: never explained */
	f = ks_focus_pick(tiers);
	ok(f && f->t0 == 500 && f->t1 == 510, "focus: the first explained gap inferred wrong, not the other's");
	ks_focus_wake(tiers, 900, 950, 50, 1, 0, 0);	/* a periodic release's wake-up: after the gaps */
	f = ks_focus_pick(tiers);
	ok(f && f->t0 == 500, "focus: a gap before a periodic thread's wake-up");
	ks_focus_wake(tiers, 1000, 1030, 30, 1, 0, 1);	/* a latency test's samples: the worst first */
	ks_focus_wake(tiers, 2000, 2090, 90, 1, 0, 1);
	ks_focus_wake(tiers, 3000, 3090, 90, 1, 0, 1);	/* as bad, later */
	ks_focus_wake(tiers, 4000, 4010, 10, 1, 0, 1);
	f = ks_focus_pick(tiers);
	ok(f && f->t0 == 2000 && f->t1 == 2090 && f->worst == 90 && !strcmp(ks_focus_name(f), "the worst wake-up"),
	   "focus: a latency test's worst wake-up before any gap, the earliest of equals");
	ok(!strcmp(ks_focus_name(NULL), "the start of the trace"), "focus: the trace's start, named");
}

/* ks_rel_path - the data files named from the session's folder */
static void test_rel_path(void)
{
	static const char *const cases[][3] = {
		{ "/a/b", "/a/b/merged.dat", "merged.dat" },
		{ "/a/b", "/a/c/merged.dat", "../c/merged.dat" },
		{ "/a/b", "/a/bc/x.dat", "../bc/x.dat" },
		{ "/a/b/c", "/x.dat", "../../../x.dat" },
		{ "/", "/x.dat", "x.dat" },
		{ "/a", "/a/b/c/x.dat", "b/c/x.dat" },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *r = ks_rel_path(cases[i][0], cases[i][1]);

		char what[256];

		snprintf(what, sizeof(what), "relative path from %s to %s: %s", cases[i][0], cases[i][1],
			 r ? r : "(null)");
		ok(r && !strcmp(r, cases[i][2]), what);
		free(r);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: export_units TMPDIR\n");
		return 2;
	}
	test_reorder();
	test_reorder_deep();
	test_tsc();
	test_focus();
	test_rel_path();
	test_writer(argv[1]);
	test_perfetto();
	test_perfetto_file(argv[1]);
	printf("1..%d\n", ntest);
	return nfail ? 1 : 0;
}

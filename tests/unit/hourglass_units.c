// SPDX-License-Identifier: GPL-2.0
/*
 * hourglass_units.c - unit tests of hourglass's pure logic: time units, the
 * TSC frequency fit, and the polling loop's interval recording driven by a
 * scripted clock. Prints "ok N - name" / "not ok N - name" (TAP).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "spin.h"
#include "timeunits.h"

static int failures, tests;

#define CHECK(cond, ...) do { \
	tests++; \
	if (cond) { printf("ok %d - ", tests); } \
	else { failures++; printf("not ok %d - ", tests); } \
	printf(__VA_ARGS__); putchar('\n'); \
} while (0)

/* The scripted clock: STEP cycles a read; at each jump time, a gap. */
#define STEP 10
static uint64_t fake_now = 1000, jumps[8], jump_len[8];
static int njumps;

uint64_t hg_rdtsc(void)
{
	int i;

	fake_now += STEP;
	for (i = 0; i < njumps; i++)
		if (jumps[i] && fake_now >= jumps[i]) {
			fake_now += jump_len[i];
			jumps[i] = 0;	/* each gap happens once */
		}
	return fake_now;
}

uint64_t hg_rdtscp(uint32_t *cpu)
{
	*cpu = fake_now > 50000 ? 1 : 0;	/* "migrates" late in the script */
	return hg_rdtsc();
}

static void test_time_units(void)
{
	static const struct { const char *s; uint64_t ns; } good[] = {
		{ "3m", 180000000000ULL }, { "1.5s", 1500000000ULL }, { "1020ms", 1020000000ULL },
		{ "87.0us", 87000ULL }, { "5.3ms", 5300000ULL }, { "60s", 60000000000ULL },
		{ "6m", 360000000000ULL }, { "0.9ms", 900000ULL }, { "250ns", 250ULL },
		{ "17.1ms", 17100000ULL }, { "1h", 3600000000000ULL },
	};
	static const char *const bad[] = { "", "5", "-1s", "ms", "1.5 s", "1.5sec", "1e30s", "abc" };
	uint64_t ns;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		const char *err = hg_parse_time(good[i].s, &ns);

		CHECK(!err && ns == good[i].ns, "time '%s' = %llu ns (got %s %llu)", good[i].s,
		      (unsigned long long)good[i].ns, err ? err : "", (unsigned long long)ns);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(hg_parse_time(bad[i], &ns) != NULL, "time '%s' is refused", bad[i]);
}

static void test_fit(void)
{
	struct hg_tsc_pair a = { .tsc = 1000000, .ns = 5000000000ULL };
	struct hg_tsc_pair b = { .tsc = 1000000 + 2600000000ULL, .ns = 6000000000ULL };
	double hz = hg_tsc_fit_hz(&a, &b);

	CHECK(hz > 2599999999.0 && hz < 2600000001.0, "2.6e9 cycles in 1 s fit 2.6 GHz (%.1f)", hz);
	CHECK(hg_tsc_fit_hz(&b, &a) == 0, "pairs in the wrong order give 0");
	b.ns = a.ns;
	CHECK(hg_tsc_fit_hz(&a, &b) == 0, "pairs at the same time give 0");
}

static struct hg_run run;
static struct hg_thread th;
static struct hgl_rec pool[64];

static void reset(uint64_t gap)
{
	memset(pool, 0, sizeof(pool));
	memset(&th, 0, sizeof(th));
	run.pool = pool;
	run.pool_cap = 64;
	atomic_store(&run.pool_used, 0);
	run.gap_cycles = gap;
	run.tsc.has_rdtscp = true;
	th.run = &run;
	njumps = 0;
}

static void test_spin(void)
{
	struct hg_spin s = { 0 };
	uint64_t need, t_begin, total, got = 0;
	int n = 0, i;

	/* three gaps of 500, 20 (below GAP: not a gap) and 3000 cycles */
	reset(25);
	fake_now = 1000;
	jumps[0] = 2000; jump_len[0] = 500;
	jumps[1] = 4000; jump_len[1] = 10;
	jumps[2] = 6000; jump_len[2] = 3000;
	njumps = 3;
	hg_spin_open(&th, &s);
	t_begin = s.start;
	need = UINT64_MAX;
	hg_spin(&th, &s, &need, 20000, false, NULL);
	hg_spin_close(&th, &s, HGL_IV_LAST);
	for (i = 0; i < 64 && pool[i].type; i++)
		n++;
	CHECK(n == 3, "two real gaps give three intervals (got %d)", n);
	CHECK(pool[0].t0 == t_begin && pool[0].t1 < 2000 && pool[1].t0 >= 2000 + 500,
	      "the first interval ends before the 500-cycle gap and the second starts after it");
	CHECK(pool[1].t1 < 6000 + STEP && pool[2].t0 >= 6000 + 3000,
	      "a 20-cycle hiccup below GAP does not split an interval");
	CHECK(pool[2].flags == HGL_IV_LAST && pool[0].flags == 0, "the last interval is flagged LAST");
	for (i = 0; i < n; i++)
		got += pool[i].t1 - pool[i].t0;
	total = pool[n - 1].t1 - t_begin;
	CHECK(total - got >= 3500 && total - got <= 3500 + 6 * STEP,
	      "time outside intervals is the gaps (%llu cycles)", (unsigned long long)(total - got));
	CHECK(s.last >= 20000 && s.last < 20000 + 2 * STEP, "the loop stops at its stop time");

	/* a preemption just after a gap, between the new interval's stamp and
	 * the read that keeps our bookkeeping out of the next delta: it must
	 * show as a gap, not hide inside the next interval */
	reset(25);
	fake_now = 1000;
	jumps[0] = 2000; jump_len[0] = 500;	/* read 2000 -> 2500: a gap */
	jumps[1] = 2520; jump_len[1] = 5000;	/* stamp 2510, then read 2520 -> 7520 */
	njumps = 2;
	hg_spin_open(&th, &s);
	need = UINT64_MAX;
	hg_spin(&th, &s, &need, 12000, false, NULL);
	hg_spin_close(&th, &s, HGL_IV_LAST);
	CHECK(pool[1].t0 == 2510 && pool[1].t1 == 2510,
	      "the interval cut short right after its start is empty (got %llu-%llu)",
	      (unsigned long long)pool[1].t0, (unsigned long long)pool[1].t1);
	CHECK(pool[2].t0 >= 7520 && pool[2].type == HGL_REC_INTERVAL,
	      "the next interval starts after the hidden preemption (at %llu)",
	      (unsigned long long)pool[2].t0);

	/* need accounting: 5000 cycles of CPU across a 4000-cycle gap */
	reset(25);
	fake_now = 100000;
	jumps[0] = 102000; jump_len[0] = 4000;
	njumps = 1;
	hg_spin_open(&th, &s);
	t_begin = s.start;
	need = 5000;
	hg_spin(&th, &s, &need, UINT64_MAX, false, NULL);
	got = (pool[0].t1 - pool[0].t0) + (s.last - s.start);
	CHECK(need == 0, "need runs out");
	CHECK(got >= 5000 && got <= 5000 + 3 * STEP,
	      "exactly the CPU asked for was received (%llu of 5000)", (unsigned long long)got);
	CHECK(s.last - t_begin >= 9000, "the gap is not counted as CPU");
	CHECK(pool[0].cpu == 1, "each interval carries its CPU");

	/* a full pool: records counted as dropped, never written past the end */
	reset(25);
	run.pool_cap = 3;
	fake_now = 200000;
	for (i = 0; i < 6; i++) {
		jumps[i] = 201000 + 1000 * (uint64_t)i;
		jump_len[i] = 100;
	}
	njumps = 6;
	hg_spin_open(&th, &s);
	need = UINT64_MAX;
	hg_spin(&th, &s, &need, 210000, false, NULL);
	CHECK(th.dropped == 3 && pool[3].type == 0,
	      "6 gaps into 3 records: 3 dropped and counted (got %llu)",
	      (unsigned long long)th.dropped);
}

int main(void)
{
	test_time_units();
	test_fit();
	test_spin();
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * test_hgt_lag.c - a switch's lags (ABI 1.2): the code of kmod/uapi/hgtrace.h,
 * and the two codes carried byte for byte through the packer and the reader.
 */
#include <stdlib.h>
#include "tap.h"
#include "files.h"
#include "hg_hgt_write.h"

/* back - decode(code(v)): exact below 4096, else at most v and within 1/2048 of it */
static int back(uint64_t v)
{
	int64_t c = hgt_lag_cycles(hgt_lag_code(v));

	if (v < 4096)
		return c == (int64_t)v;
	return c >= 0 && (uint64_t)c <= v && (double)(v - (uint64_t)c) <= (double)v / 2048;
}

static void check_code(void)
{
	uint64_t v, worst = 0;
	int all = 1;

	for (v = 0; v < 4096; v++)
		all &= back(v);
	ok(all && hgt_lag_code(4095) == 4095, "exact below 4096 cycles, the code is the value");
	for (v = 4096; v < (uint64_t)4094 << 15; v = v * 1.0007 + 1) {
		if (!back(v))
			all = 0, worst = v;
	}
	ok(all, "within 1/2048 up to 4094 << 15 cycles%s", all ? "" : " (not everywhere)");
	if (!all)
		printf("#   first bad value %llu\n", (unsigned long long)worst);
	ok(hgt_lag_code(4096) == (1 << 12 | 2048) && hgt_lag_cycles(1 << 12 | 2048) == 4096,
	   "4096 takes exponent 1");
	ok(hgt_lag_code(104000) == (5 << 12 | 3250) && hgt_lag_cycles(5 << 12 | 3250) == 104000,
	   "40 us at 2.6 GHz: exponent 5, exact as it happens");
	ok(hgt_lag_code((uint64_t)4094 << 15) == 0xfffe, "the largest code is 0xfffe");
	ok(hgt_lag_code((uint64_t)4095 << 15) == HGT_LAG_UNKNOWN &&
	   hgt_lag_code((uint64_t)1 << 40) == HGT_LAG_UNKNOWN, "beyond: unknown, never a wrong value");
	ok(hgt_lag_cycles(HGT_LAG_UNKNOWN) == -1, "unknown decodes to -1");
}

/* check_carried - switches with lags, packed and read back: the same bytes */
static void check_carried(void)
{
	/* codes; the second switch's next lag is 104000 cycles (5 << 12 | 3250) */
	static const uint16_t lags[][2] = { { 0, 0 }, { 77, 5 << 12 | 3250 }, { 4095, HGT_LAG_UNKNOWN },
					     { HGT_LAG_UNKNOWN, 0xfffe } };
	struct buf r = { 0 }, b = { 0 };
	struct hgt_file *f;
	struct hgt_cursor *c;
	const struct hgt_rec *x;
	struct hg_err e;
	unsigned char *out;
	size_t len, k;
	int rc, n = 0, same = 1;

	for (k = 0; k < 4; k++) {
		struct hgt_switch s = { .prev_pid = 7 + k, .prev_state = 1, .prev_prio = 120,
					.next_prio = 99, .prev_lag = lags[k][0], .next_lag = lags[k][1] };

		rec(&r, 1000 + k, HGT_REC_SWITCH, 8 + k, 0, 0, &s, sizeof(s));
	}
	ok(hgt_pack_records((char *)r.p, r.n, 4, 0, 9, &out, &len) == 0, "four switches with lags pack");
	hgt_prelude(&b, 3, "format: hgtrace 3\nabi: 1.2\n");
	put(&b, out, len);
	end_chunk(&b);
	free(out);
	rc = hgt_open(&f, write_file("lag.hgt", &b), 0, &e);
	ok(rc == 0, "the packed file opens%s%s", rc ? ": " : "", rc ? e.msg : "");
	if (!rc) {
		c = hgt_cursor_open(f, 0, &e);
		while ((rc = hgt_cursor_next(c, &x, &e)) > 0) {
			const struct hgt_switch *s = (const void *)(x + 1);

			if (memcmp(r.p + n * x->len, x, x->len))
				same = 0;
			if (n == 1 && hgt_lag_cycles(s->next_lag) != 104000)
				same = 0;
			n++;
		}
		ok(rc == 0 && n == 4 && same, "unpacked: every lag as it was");
		hgt_cursor_close(c);
		hgt_close(f);
	}
	free(r.p);
	free(b.p);
}

int main(void)
{
	check_code();
	check_carried();
	return tap_done();
}

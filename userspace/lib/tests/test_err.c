// SPDX-License-Identifier: GPL-2.0
/* test_err.c - hg_err: messages are formatted, cut to fit, say which exit status they call for,
 * and bytes from files quoted safely */
#include "tap.h"
#include "hg_err.h"

int main(void)
{
	struct hg_err e;
	char q[32], big[2000];

	ok(hg_err_set(&e, "%s: offset %d: %s", "x.hgt", 16, "bad") == -1, "hg_err_set returns -1");
	ok(!strcmp(e.msg, "x.hgt: offset 16: bad"), "the message is formatted: %s", e.msg);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	hg_err_set(&e, "%s", big);
	ok(strlen(e.msg) == HG_ERR_MAX - 1, "a long message is cut to the buffer");
	ok(hg_err_set(NULL, "x") == -1, "a NULL hg_err is allowed");
	ok(hg_err_status(&e) == HG_EXIT_BAD_INPUT, "hg_err_set: a bad input, exit 3");
	ok(hg_err_env(&e, "%s: cannot write it: %s", "m.dat", "No space left on device") == -1 &&
	   !strcmp(e.msg, "m.dat: cannot write it: No space left on device") && hg_err_status(&e) == HG_EXIT_ENV,
	   "hg_err_env: what the machine refused, exit 2: %s", e.msg);
	hg_err_set(&e, "x.hgt: bad");
	ok(hg_err_status(&e) == HG_EXIT_BAD_INPUT, "a later hg_err_set is a bad input again");
	ok(hg_err_env(NULL, "x") == -1, "a NULL hg_err is allowed by hg_err_env too");
	ok(!strcmp(hg_quote(q, sizeof(q), "chnk", 4), "\"chnk\""), "printable bytes as they are: %s", q);
	ok(!strcmp(hg_quote(q, sizeof(q), "a\n\x01\"\\", 5), "\"a\\x0a\\x01\\\"\\\\\""), "control bytes as \\xNN: %s", q);
	ok(!strcmp(hg_quote(q, sizeof(q), "\xff\xfe", 2), "\"\\xff\\xfe\""), "high bytes as \\xNN: %s", q);
	hg_quote(q, 12, "abcdefghijklmnop", 16);
	ok(strlen(q) < 12 && strstr(q, "...\""), "cut with ... to fit: %s", q);
	hg_quote(q, 12, "\x01\x02\x03\x04\x05\x06", 6);
	ok(strlen(q) < 12 && q[strlen(q) - 1] == '"', "escapes are never cut in half: %s", q);
	return tap_done();
}

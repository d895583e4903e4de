// SPDX-License-Identifier: GPL-2.0
/* test_utf8.c - what counts as UTF-8: RFC 3629, no overlong forms, no surrogates */
#include "tap.h"
#include "hg_utf8.h"

static size_t seq(const char *s)
{
	return hg_utf8_seq((const unsigned char *)s, strlen(s));
}

int main(void)
{
	char out[4];

	ok(seq("a") == 1 && seq("\xc3\xa9") == 2 && seq("\xe2\x82\xac") == 3 && seq("\xf0\x9f\x98\x80") == 4,
	   "sequences of 1 to 4 bytes");
	ok(!seq("\x80") && !seq("\xbf"), "a lone continuation byte is not UTF-8");
	ok(!seq("\xc0\x80") && !seq("\xc1\xbf"), "overlong 2-byte forms are not");
	ok(!seq("\xe0\x80\x80") && !seq("\xf0\x80\x80\x80"), "overlong 3- and 4-byte forms are not");
	ok(!seq("\xed\xa0\x80") && !seq("\xed\xbf\xbf"), "surrogates are not");
	ok(!seq("\xf4\x90\x80\x80") && !seq("\xf5\x80\x80\x80"), "nothing above U+10FFFF");
	ok(!seq("\xe2\x82") && !seq("\xe2\x28\xa1"), "a sequence cut short or broken");
	ok(hg_utf8_valid("ab\xc3\xa9x\xff", 6) == 5, "hg_utf8_valid finds the first bad byte");
	ok(hg_utf8_valid("ab\xc3", 3) == 2, "a sequence cut by the end is bad");
	ok(hg_utf8_put(0x20ac, out) == 3 && !memcmp(out, "\xe2\x82\xac", 3), "hg_utf8_put U+20AC");
	ok(hg_utf8_put(0x1f600, out) == 4 && !memcmp(out, "\xf0\x9f\x98\x80", 4), "hg_utf8_put U+1F600");
	ok(hg_utf8_put(0x41, out) == 1 && out[0] == 'A', "hg_utf8_put ASCII");
	return tap_done();
}

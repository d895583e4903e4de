// SPDX-License-Identifier: GPL-2.0
/* test_json.c - the strict JSON parser: good documents read right, every kind of bad one refused */
#include <math.h>
#include <stdlib.h>
#include "tap.h"
#include "hg_json.h"

static struct jv *parse(const char *s, struct hg_err *e)
{
	return jv_parse(s, strlen(s), e);
}

static void refused(const char *s, const char *want, const char *what)
{
	struct hg_err e = { "", 0 };
	struct jv *v = parse(s, &e);

	ok_msg(v ? 0 : -1, &e, want, "refused: %s", what);
	jv_free(v);
}

int main(void)
{
	struct hg_err e;
	struct jv *v;
	const struct jv *x;
	char *deep, *many;
	int i;

	v = parse(" {\"a\": [1, -2.5e3, true, false, null, \"s\\u00e9\\ud83d\\ude00\\n\"], \"b\": {}, "
		  "\"c\": [], \"big\": 1152921504606846977, \"e\": 1e3, \"neg\": -9223372036854775808} ", &e);
	ok(v != NULL, "a document with every kind of value parses");
	if (!v)
		return tap_done();
	ok(jv_type(v) == JV_OBJ && jv_len(v) == 6, "an object of 6 members");
	x = jv_get(v, "a");
	ok(jv_type(x) == JV_ARR && jv_len(x) == 6, "an array of 6");
	ok(jv_is_int(jv_at(x, 0)) && jv_int(jv_at(x, 0)) == 1, "1 is an integer");
	ok(jv_num(jv_at(x, 1)) == -2500 && jv_is_int(jv_at(x, 1)), "-2.5e3 is -2500, integral");
	ok(jv_type(jv_at(x, 2)) == JV_BOOL && jv_bool(jv_at(x, 2)) && !jv_bool(jv_at(x, 3)), "true, false");
	ok(jv_type(jv_at(x, 4)) == JV_NULL, "null");
	ok(!strcmp(jv_str(jv_at(x, 5)), "s\xc3\xa9\xf0\x9f\x98\x80\n"), "escapes and a surrogate pair decoded");
	ok(jv_at(x, 6) == NULL && jv_get(x, "a") == NULL, "out of range and not an object: NULL");
	ok(jv_type(jv_get(v, "b")) == JV_OBJ && jv_len(jv_get(v, "b")) == 0, "an empty object");
	ok(jv_type(jv_get(v, "c")) == JV_ARR && jv_len(jv_get(v, "c")) == 0, "an empty array");
	ok(jv_int(jv_get(v, "big")) == 1152921504606846977LL, "an integer beyond 2^53 keeps every digit");
	ok(jv_is_int(jv_get(v, "e")) && jv_int(jv_get(v, "e")) == 1000, "1e3 is the integer 1000");
	ok(jv_int(jv_get(v, "neg")) == INT64_MIN, "INT64_MIN exactly");
	ok(!strcmp(jv_key_at(v, 1), "b") && jv_key_at(v, 6) == NULL, "keys in order");
	ok(jv_get(v, "zz") == NULL, "an absent key is NULL");
	ok(jv_str(jv_get(v, "a")) == NULL && jv_num(jv_get(v, "b")) == 0, "accessors of the wrong type give nothing");
	jv_free(v);

	v = parse("[1.5, 1e19, 9223372036854775808, 0, -0]", &e);
	ok(v && !jv_is_int(jv_at(v, 0)) && !jv_is_int(jv_at(v, 1)) && !jv_is_int(jv_at(v, 2)),
	   "1.5, 1e19 and 2^63 are not int64");
	ok(v && jv_num(jv_at(v, 2)) == 9223372036854775808.0, "2^63 is still a number");
	ok(v && jv_is_int(jv_at(v, 3)) && jv_is_int(jv_at(v, 4)), "0 and -0 are integers");
	jv_free(v);
	v = parse("\"x\"", &e);
	ok(v && jv_type(v) == JV_STR, "a string as the whole document");
	jv_free(v);

	refused("", "ends where a value", "empty text");
	refused("{\"a\": 1,}", "expected a key", "a trailing comma in an object");
	refused("[1,]", "not a JSON value", "a trailing comma in an array");
	refused("[1] x", "more text after", "text after the value");
	refused("/* c */ 1", "not a JSON value", "a comment");
	refused("NaN", "not a JSON value", "NaN");
	refused("[01]", "expected ','", "a leading zero");
	refused("[1.]", "after its point", "a point without digits");
	refused("[.5]", "not a JSON value", "no digit before the point");
	refused("[-]", "without digits", "a lone minus");
	refused("[1e]", "exponent", "an exponent without digits");
	refused("[1e400]", "too large", "a number beyond a double");
	refused("\"abc", "never ends", "an unterminated string");
	refused("\"a\tb\"", "control character", "a raw tab in a string");
	refused("\"a\xff\"", "not valid UTF-8", "invalid UTF-8 in a string");
	refused("\"\xc0\xaf\"", "not valid UTF-8", "an overlong form");
	refused("\"\\ud800\"", "low half", "a lone high surrogate");
	refused("\"\\udc00\"", "lone low surrogate", "a lone low surrogate");
	refused("\"\\u0000\"", "NUL", "\\u0000");
	refused("\"\\x41\"", "unknown escape", "an unknown escape");
	refused("\"\\u12g4\"", "four hex digits", "a bad \\u escape");
	refused("{\"a\": 1, \"a\": 2}", "the key \"a\" twice", "a duplicate key");
	refused("{\"k1\":1,\"k2\":1,\"k3\":1,\"k4\":1,\"k5\":1,\"k6\":1,\"k7\":1,\"k8\":1,\"k9\":1,\"k3\":2}",
		"the key \"k3\" twice", "a duplicate key among many (sorted check)");
	refused("{\"a\\n\": 1, \"a\\n\": 2}", "the key \"a\\x0a\" twice", "a duplicate key is printed safely");
	refused("{1: 2}", "expected a key", "a key that is not a string");
	refused("{\"a\" 1}", "expected ':'", "a missing colon");
	refused("tru", "not a JSON value", "a cut literal");
	refused("[\xef\xbb\xbf]", "not a JSON value", "a byte order mark inside");

	deep = malloc(200);
	memset(deep, '[', 65);
	memset(deep + 65, ']', 65);
	deep[130] = 0;
	refused(deep, "deeper than 64", "nesting of 65");
	deep[64] = 0;
	memset(deep + 64, ']', 64);
	deep[128] = 0;
	deep[0] = '[';
	v = parse(deep, &e);
	ok(v != NULL, "nesting of 64 is allowed");
	jv_free(v);
	free(deep);

	/* a long array: items pass through the stack, nodes land in the arena */
	many = malloc(2 * 100000 + 3);
	many[0] = '[';
	for (i = 0; i < 100000; i++) {
		many[1 + 2 * i] = '7';
		many[2 + 2 * i] = ',';
	}
	many[2 * 100000] = ']';
	many[2 * 100000 + 1] = 0;
	v = parse(many, &e);
	ok(v && jv_len(v) == 100000 && jv_int(jv_at(v, 99999)) == 7, "an array of 100000 numbers");
	jv_free(v);
	free(many);

	v = jv_parse("{\"a\":1}xyz", 7, &e);
	ok(v && jv_int(jv_get(v, "a")) == 1, "only the given length is read");
	jv_free(v);
	jv_free(NULL);
	return tap_done();
}

// SPDX-License-Identifier: GPL-2.0
/* test_jsonw.c - the JSON writer: whatever it is given, the output parses back as JSON */
#include <math.h>
#include <stdlib.h>
#include "tap.h"
#include "hg_json.h"
#include "hg_jsonw.h"

static char *buf;
static size_t len;

static FILE *mem(void)
{
	free(buf);
	buf = NULL;
	return open_memstream(&buf, &len);
}

int main(void)
{
	struct jsonw w;
	struct hg_err e;
	struct jv *v;
	FILE *f;
	char *line2;
	const char *raw = "{ \"k\" : [ 1 , \"a b\\\" c\" ] ,\n \"m\": null }";

	f = mem();
	jw_begin(&w, f);
	jw_obj(&w, NULL);
	jw_str(&w, "s", "a\"b\\c\n\t\x01\x7f");
	jw_str(&w, "bad", "ok\xff\xc3(\xe2\x82");
	jw_str(&w, "null", NULL);
	jw_int(&w, "i", -42);
	jw_uint(&w, "u", 18446744073709551615ull);
	jw_num(&w, "pi", 3.141592653589793);
	jw_num(&w, "nan", NAN);
	jw_num(&w, "inf", -INFINITY);
	jw_numf(&w, "r", 2.71828, 2);
	jw_numf(&w, "rnan", NAN, 2);
	jw_bool(&w, "t", true);
	jw_null(&w, "z");
	jw_arr(&w, "a");
	jw_int(&w, NULL, 1);
	jw_obj(&w, NULL);
	jw_end_obj(&w);
	jw_arr(&w, NULL);
	jw_end_arr(&w);
	jw_end_arr(&w);
	jw_raw(&w, "raw", raw, strlen(raw));
	jw_str(&w, "k\x01\xff", "key with bad bytes");
	jw_end_obj(&w);
	fclose(f);
	ok(len > 0 && buf[len - 1] == '\n' && !strchr(buf, '\n') + (strchr(buf, '\n') == buf + len - 1),
	   "compact: one line, ended by a newline");
	v = jv_parse(buf, len, &e);
	ok(v != NULL, "the output is valid JSON%s%s", v ? "" : ": ", v ? "" : e.msg);
	if (!v) {
		printf("# %s\n", buf);
		return tap_done();
	}
	ok(!strcmp(jv_str(jv_get(v, "s")), "a\"b\\c\n\t\x01\x7f"), "escapes round-trip");
	ok(!strcmp(jv_str(jv_get(v, "bad")), "ok\xef\xbf\xbd\xef\xbf\xbd(\xef\xbf\xbd\xef\xbf\xbd"),
	   "bytes that are not UTF-8 become U+FFFD: %s", jv_str(jv_get(v, "bad")));
	ok(jv_type(jv_get(v, "null")) == JV_NULL, "a NULL string is null");
	ok(jv_int(jv_get(v, "i")) == -42, "int");
	ok(strstr(buf, "\"u\":18446744073709551615") != NULL, "uint64 max written whole");
	ok(jv_num(jv_get(v, "pi")) == 3.141592653589793, "%%.17g keeps a double exact");
	ok(jv_type(jv_get(v, "nan")) == JV_NULL && jv_type(jv_get(v, "inf")) == JV_NULL, "NaN and -inf: null");
	ok(strstr(buf, "\"r\":2.72") != NULL && jv_type(jv_get(v, "rnan")) == JV_NULL, "numf rounds, NaN null");
	ok(jv_bool(jv_get(v, "t")) && jv_type(jv_get(v, "z")) == JV_NULL, "bool and null");
	ok(jv_len(jv_get(v, "a")) == 3, "nested array with an empty object and array");
	ok(strstr(buf, "\"raw\":{\"k\":[1,\"a b\\\" c\"],\"m\":null}") != NULL,
	   "raw JSON compacted, spaces inside strings kept");
	ok(jv_get(v, "k\x01\xef\xbf\xbd") != NULL, "keys are escaped too");
	jv_free(v);

	/* NDJSON: several top-level values, one a line */
	f = mem();
	jw_begin(&w, f);
	jw_obj(&w, NULL);
	jw_int(&w, "n", 1);
	jw_end_obj(&w);
	jw_obj(&w, NULL);
	jw_int(&w, "n", 2);
	jw_end_obj(&w);
	jw_int(&w, NULL, 3);
	fclose(f);
	ok(!strcmp(buf, "{\"n\":1}\n{\"n\":2}\n3\n"), "top-level values one a line: %s", buf);
	line2 = strchr(buf, '\n') + 1;
	v = jv_parse(line2, strchr(line2, '\n') - line2, &e);
	ok(v && jv_int(jv_get(v, "n")) == 2, "each line parses on its own");
	jv_free(v);

	/* pretty: hourglass's --json */
	f = mem();
	jw_begin(&w, f);
	w.pretty = true;
	jw_obj(&w, NULL);
	jw_int(&w, "a", 1);
	jw_obj(&w, "o");
	jw_str(&w, "s", "x");
	jw_end_obj(&w);
	jw_arr(&w, "e");
	jw_end_arr(&w);
	jw_raw(&w, "r", "{\"x\": 1}", 8);
	jw_end_obj(&w);
	fclose(f);
	ok(!strcmp(buf, "{\n  \"a\": 1,\n  \"o\": {\n    \"s\": \"x\"\n  },\n  \"e\": [],\n  \"r\": {\"x\": 1}\n}\n"),
	   "pretty output, one member a line");
	v = jv_parse(buf, len, &e);
	ok(v != NULL, "pretty output parses");
	jv_free(v);

	f = mem();
	jw_put_string(f, "a\0b", 3);
	fclose(f);
	ok(!strcmp(buf, "\"a\\u0000b\""), "a NUL inside a counted string is escaped: %s", buf);

	f = mem();
	jw_put_string(f, "q\"\xf0\x9f\x98\x80", 6);
	fclose(f);
	ok(!strcmp(buf, "\"q\\\"\xf0\x9f\x98\x80\""), "jw_put_string: valid UTF-8 kept as it is");
	free(buf);
	return tap_done();
}

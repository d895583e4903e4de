// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_json.c - the strict JSON parser (hg_json.h) on any bytes, and what
 * it accepts written back by the one JSON writer (hg_jsonw.h) and parsed
 * again: the second document must be the first (same types, keys in the
 * same order, the same strings and numbers to the bit). So the parser
 * never accepts what the writer cannot say, and the writer never writes
 * what the parser refuses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fz.h"
#include "hg_json.h"
#include "hg_jsonw.h"

static void same(const struct jv *a, const struct jv *b, int depth)
{
	size_t i;

	if (depth > 64)
		fz_fail("a document nested deeper than 64 accepted");
	if (jv_type(a) != jv_type(b))
		fz_fail("a %d came back as a %d", jv_type(a), jv_type(b));
	switch (jv_type(a)) {
	case JV_NULL:
		break;
	case JV_BOOL:
		if (jv_bool(a) != jv_bool(b))
			fz_fail("a boolean changed");
		break;
	case JV_NUM:
		if (jv_num(a) != jv_num(b) || jv_is_int(a) != jv_is_int(b) || jv_int(a) != jv_int(b))
			fz_fail("the number %.17g came back as %.17g", jv_num(a), jv_num(b));
		break;
	case JV_STR:
		if (strcmp(jv_str(a), jv_str(b)))
			fz_fail("a string changed");
		break;
	case JV_ARR:
	case JV_OBJ:
		if (jv_len(a) != jv_len(b))
			fz_fail("a container of %zu items came back with %zu", jv_len(a), jv_len(b));
		for (i = 0; i < jv_len(a); i++) {
			if (jv_type(a) == JV_OBJ) {
				if (strcmp(jv_key_at(a, i), jv_key_at(b, i)))
					fz_fail("a key changed");
				if (jv_get(a, jv_key_at(a, i)) != jv_at(a, i))
					fz_fail("jv_get() and jv_at() disagree on key %zu", i);
			}
			same(jv_at(a, i), jv_at(b, i), depth + 1);
		}
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hg_err err = { "", 0 };
	struct jv *doc = jv_parse((const char *)data, size, &err), *back;
	struct jsonw w;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!doc) {
		if (!err.msg[0] || fz_blames_memory(err.msg))
			fz_fail("a refusal that says \"%s\"", err.msg);
		return 0;
	}
	f = open_memstream(&text, &len);
	if (!f)
		abort();
	jw_begin(&w, f);
	jw_jv(&w, NULL, doc);
	fclose(f);
	back = jv_parse(text, len, &err);
	if (!back)
		fz_fail("the writer wrote what the parser refuses (%s): %.200s", err.msg, text);
	same(doc, back, 0);
	jv_free(back);
	jv_free(doc);
	free(text);
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hg_jsonw.h - the one JSON writer: hourglass's summary, the merger's
 * report, hgtrace dump --json. Strings are escaped and bytes that are not
 * UTF-8 become U+FFFD, so the output is always valid JSON; a number that is
 * not finite is written as null.
 */
#ifndef HG_JSONW_H
#define HG_JSONW_H

#include <stdbool.h>
#include <stdio.h>

#define JW_MAX_DEPTH 64

struct jsonw {
	FILE *f;
	int depth;
	bool first[JW_MAX_DEPTH];
	bool pretty;		/* one member a line, indented */
};

void jw_begin(struct jsonw *w, FILE *f);
/* key NULL inside arrays and at the top level */
void jw_obj(struct jsonw *w, const char *key);
void jw_arr(struct jsonw *w, const char *key);
void jw_end_obj(struct jsonw *w);
void jw_end_arr(struct jsonw *w);
void jw_str(struct jsonw *w, const char *key, const char *v);	/* NULL v: null */
void jw_strn(struct jsonw *w, const char *key, const char *v, size_t n);
void jw_int(struct jsonw *w, const char *key, long long v);
void jw_uint(struct jsonw *w, const char *key, unsigned long long v);
void jw_num(struct jsonw *w, const char *key, double v);	/* %.17g; null if not finite */
void jw_numf(struct jsonw *w, const char *key, double v, int decimals);	/* rounded, for people */
void jw_bool(struct jsonw *w, const char *key, bool v);
void jw_null(struct jsonw *w, const char *key);
/* jw_raw - @json, already valid JSON (a checked document), as the value */
void jw_raw(struct jsonw *w, const char *key, const char *json, size_t n);
struct jv;
/* jw_jv - a parsed value (hg_json.h) written again; NULL @v: null. Integers stay integers. */
void jw_jv(struct jsonw *w, const char *key, const struct jv *v);
/* jw_put_string - @s as a JSON string literal onto @f (for writers of their own) */
void jw_put_string(FILE *f, const char *s, size_t n);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * jsonw.h - a small JSON writer: enough for hourglass's summary.
 */
#ifndef HG_JSONW_H
#define HG_JSONW_H

#include <stdbool.h>
#include <stdio.h>

struct jsonw {
	FILE *f;
	int depth;
	bool first[32];
};

void jw_begin(struct jsonw *w, FILE *f);
void jw_obj(struct jsonw *w, const char *key);
void jw_arr(struct jsonw *w, const char *key);
void jw_end_obj(struct jsonw *w);
void jw_end_arr(struct jsonw *w);
void jw_str(struct jsonw *w, const char *key, const char *v);
void jw_int(struct jsonw *w, const char *key, long long v);
void jw_uint(struct jsonw *w, const char *key, unsigned long long v);
void jw_num(struct jsonw *w, const char *key, double v);
void jw_bool(struct jsonw *w, const char *key, bool v);
void jw_null(struct jsonw *w, const char *key);

#endif

// SPDX-License-Identifier: GPL-2.0
/*
 * jsonw.c - write JSON with correct commas and escapes; a NULL key means
 * an array element.
 */
#include <math.h>
#include "jsonw.h"

static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void lead(struct jsonw *w, const char *key)
{
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = false;
	fputc('\n', w->f);
	for (int i = 0; i < w->depth; i++)
		fputs("  ", w->f);
	if (key) {
		put_string(w->f, key);
		fputs(": ", w->f);
	}
}

void jw_begin(struct jsonw *w, FILE *f)
{
	w->f = f;
	w->depth = 0;
	w->first[0] = true;
	fputc('{', f);
	w->depth = 1;
	w->first[1] = true;
}

static void open_(struct jsonw *w, const char *key, char c)
{
	lead(w, key);
	fputc(c, w->f);
	w->depth++;
	w->first[w->depth] = true;
}

static void close_(struct jsonw *w, char c)
{
	bool empty = w->first[w->depth];

	w->depth--;
	if (!empty) {
		fputc('\n', w->f);
		for (int i = 0; i < w->depth; i++)
			fputs("  ", w->f);
	}
	fputc(c, w->f);
	if (!w->depth)
		fputc('\n', w->f);
}

void jw_obj(struct jsonw *w, const char *key) { open_(w, key, '{'); }
void jw_arr(struct jsonw *w, const char *key) { open_(w, key, '['); }
void jw_end_obj(struct jsonw *w) { close_(w, '}'); }
void jw_end_arr(struct jsonw *w) { close_(w, ']'); }

void jw_str(struct jsonw *w, const char *key, const char *v)
{
	lead(w, key);
	if (v)
		put_string(w->f, v);
	else
		fputs("null", w->f);
}

void jw_int(struct jsonw *w, const char *key, long long v)
{
	lead(w, key);
	fprintf(w->f, "%lld", v);
}

void jw_uint(struct jsonw *w, const char *key, unsigned long long v)
{
	lead(w, key);
	fprintf(w->f, "%llu", v);
}

void jw_num(struct jsonw *w, const char *key, double v)
{
	lead(w, key);
	if (isfinite(v))
		fprintf(w->f, "%.9g", v);
	else
		fputs("null", w->f);
}

void jw_bool(struct jsonw *w, const char *key, bool v)
{
	lead(w, key);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct jsonw *w, const char *key)
{
	lead(w, key);
	fputs("null", w->f);
}

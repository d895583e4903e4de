// SPDX-License-Identifier: GPL-2.0
/*
 * jsonw.c - write JSON with correct commas and escapes (hg_jsonw.h).
 *
 * A NULL key means an array element or a top-level value; a value finished
 * at the top level ends its line, so a program can write one document per
 * line (hgtrace dump --json) or one pretty document (hourglass --json).
 * Whatever bytes a caller hands in, the output stays valid JSON: strings are
 * escaped and what is not UTF-8 becomes U+FFFD, numbers that are not finite
 * become null.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "hg_json.h"
#include "hg_jsonw.h"
#include "hg_utf8.h"

static const char hex[] = "0123456789abcdef";

void jw_put_string(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0;

	fputc('"', f);
	while (i < n) {
		unsigned char c = p[i];
		size_t k;

		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			run++;
			i++;
			continue;
		}
		if (c >= 0x80 && (k = hg_utf8_seq(p + i, n - i))) {
			run += k;
			i += k;
			continue;
		}
		if (run)
			fwrite(p + i - run, 1, run, f);
		run = 0;
		i++;
		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		case '\b': fputs("\\b", f); break;
		case '\f': fputs("\\f", f); break;
		default:
			if (c < 0x20) {
				char u[7] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0 };

				fputs(u, f);
			} else {
				fputs("\xef\xbf\xbd", f);	/* U+FFFD for a byte that is not UTF-8 */
			}
		}
	}
	if (run)
		fwrite(p + n - run, 1, run, f);
	fputc('"', f);
}

#define JW_SP8	"        "
#define JW_SP64	JW_SP8 JW_SP8 JW_SP8 JW_SP8 JW_SP8 JW_SP8 JW_SP8 JW_SP8

/*
 * indent - a new line and two spaces a level, in one write (a report's charts are deep).
 * A constant, not a buffer filled on first use: the merge's and the exporters' threads
 * write JSON at the same time.
 */
static void indent(struct jsonw *w)
{
	static const char line[] = "\n" JW_SP64 JW_SP64;

	_Static_assert(sizeof(line) >= 1 + 2 * JW_MAX_DEPTH, "room for the deepest level");
	fwrite(line, 1, 1 + 2 * (size_t)w->depth, w->f);
}

static void lead(struct jsonw *w, const char *key)
{
	if (!w->depth)
		return;
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = false;
	if (w->pretty)
		indent(w);
	if (key) {
		jw_put_string(w->f, key, strlen(key));
		fputs(w->pretty ? ": " : ":", w->f);
	}
}

/* done - a value finished at the top level ends its line */
static void done(struct jsonw *w)
{
	if (!w->depth)
		fputc('\n', w->f);
}

void jw_begin(struct jsonw *w, FILE *f)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
	w->first[0] = true;
}

static void open_(struct jsonw *w, const char *key, char c)
{
	lead(w, key);
	fputc(c, w->f);
	/* deeper than JW_MAX_DEPTH is a caller's bug: stay in bounds, the commas go wrong */
	if (w->depth < JW_MAX_DEPTH - 1)
		w->depth++;
	w->first[w->depth] = true;
}

static void close_(struct jsonw *w, char c)
{
	bool empty = w->first[w->depth];

	if (w->depth > 0)
		w->depth--;
	if (w->pretty && !empty)
		indent(w);
	fputc(c, w->f);
	done(w);
}

void jw_obj(struct jsonw *w, const char *key) { open_(w, key, '{'); }
void jw_arr(struct jsonw *w, const char *key) { open_(w, key, '['); }
void jw_end_obj(struct jsonw *w) { close_(w, '}'); }
void jw_end_arr(struct jsonw *w) { close_(w, ']'); }

void jw_strn(struct jsonw *w, const char *key, const char *v, size_t n)
{
	lead(w, key);
	if (v)
		jw_put_string(w->f, v, n);
	else
		fputs("null", w->f);
	done(w);
}

void jw_str(struct jsonw *w, const char *key, const char *v)
{
	jw_strn(w, key, v, v ? strlen(v) : 0);
}

void jw_int(struct jsonw *w, const char *key, long long v)
{
	lead(w, key);
	fprintf(w->f, "%lld", v);
	done(w);
}

void jw_uint(struct jsonw *w, const char *key, unsigned long long v)
{
	lead(w, key);
	fprintf(w->f, "%llu", v);
	done(w);
}

void jw_num(struct jsonw *w, const char *key, double v)
{
	lead(w, key);
	if (isfinite(v))
		fprintf(w->f, "%.17g", v);
	else
		fputs("null", w->f);
	done(w);
}

/*
 * fixed_fast - @v as printf's "%.*f" writes it, into @buf (NUL-terminated), when that is sure
 * without printf's exact arithmetic: 0 if not sure (the caller prints it). x = |v| 10^d is off
 * by at most x 2^-53 from the exact product (10^d is exact), under 2^-13 while x < 2^40, so
 * x's nearest integer is the exact value's unless x lies within 2^-10 of a half. printf's
 * multi-precision path cost about 2900 instructions a number (callgrind: most of a report's
 * charts).
 */
static int fixed_fast(char *buf, double v, int decimals)
{
	static const double pow10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
					1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17 };
	double x = fabs(v) * pow10[decimals], fl, frac;
	char digits[24];
	uint64_t n;
	int len = 0, k = 0;

	if (!(x < 1099511627776.0))	/* 2^40 */
		return 0;
	fl = floor(x);
	frac = x - fl;			/* exact below 2^52 */
	if (fabs(frac - 0.5) < 1.0 / 1024)
		return 0;
	n = (uint64_t)fl + (frac > 0.5);
	do {
		digits[len++] = (char)('0' + n % 10);
		n /= 10;
	} while (n);
	while (len <= decimals)		/* at least one digit before the point */
		digits[len++] = '0';
	if (signbit(v))
		buf[k++] = '-';
	while (len > decimals)
		buf[k++] = digits[--len];
	if (decimals) {
		buf[k++] = '.';
		while (len)
			buf[k++] = digits[--len];
	}
	buf[k] = 0;
	return k;
}

void jw_numf(struct jsonw *w, const char *key, double v, int decimals)
{
	char buf[32];
	int n;

	lead(w, key);
	if (decimals < 0)
		decimals = 0;
	if (decimals > 17)
		decimals = 17;
	if (!isfinite(v))
		fputs("null", w->f);
	else if ((n = fixed_fast(buf, v, decimals)))
		fwrite(buf, 1, (size_t)n, w->f);
	else
		fprintf(w->f, "%.*f", decimals, v);
	done(w);
}

void jw_bool(struct jsonw *w, const char *key, bool v)
{
	lead(w, key);
	fputs(v ? "true" : "false", w->f);
	done(w);
}

void jw_null(struct jsonw *w, const char *key)
{
	lead(w, key);
	fputs("null", w->f);
	done(w);
}

/*
 * jw_raw - a checked document as the value; compact output drops the
 * whitespace between its tokens, so that it stays on one line
 */
void jw_raw(struct jsonw *w, const char *key, const char *json, size_t n)
{
	size_t i, run = 0;
	bool in_str = false;

	lead(w, key);
	if (w->pretty) {
		fwrite(json, 1, n, w->f);
		done(w);
		return;
	}
	for (i = 0; i < n; i++) {
		char c = json[i];

		if (in_str) {
			if (c == '\\' && i + 1 < n) {
				run += 2;
				i++;
				continue;
			}
			if (c == '"')
				in_str = false;
		} else if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
			if (run)
				fwrite(json + i - run, 1, run, w->f);
			run = 0;
			continue;
		} else if (c == '"') {
			in_str = true;
		}
		run++;
	}
	if (run)
		fwrite(json + n - run, 1, run, w->f);
	done(w);
}

void jw_jv(struct jsonw *w, const char *key, const struct jv *v)
{
	size_t i;

	switch (v ? jv_type(v) : JV_NULL) {
	case JV_NULL:
		jw_null(w, key);
		break;
	case JV_BOOL:
		jw_bool(w, key, jv_bool(v));
		break;
	case JV_NUM:
		if (jv_is_int(v))
			jw_int(w, key, (long long)jv_int(v));
		else
			jw_num(w, key, jv_num(v));
		break;
	case JV_STR:
		jw_str(w, key, jv_str(v));
		break;
	case JV_ARR:
		jw_arr(w, key);
		for (i = 0; i < jv_len(v); i++)
			jw_jv(w, NULL, jv_at(v, i));
		jw_end_arr(w);
		break;
	case JV_OBJ:
		jw_obj(w, key);
		for (i = 0; i < jv_len(v); i++)
			jw_jv(w, jv_key_at(v, i), jv_at(v, i));
		jw_end_obj(w);
		break;
	}
}

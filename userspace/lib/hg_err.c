// SPDX-License-Identifier: GPL-2.0
/*
 * hg_err.c - the library's one way of saying what was wrong (hg_err.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "hg_err.h"

static int vset(struct hg_err *e, int status, const char *fmt, va_list ap)
{
	if (!e)
		return -1;
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	e->status = status;
	return -1;
}

int hg_err_set(struct hg_err *e, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vset(e, HG_EXIT_BAD_INPUT, fmt, ap);
	va_end(ap);
	return rc;
}

int hg_err_env(struct hg_err *e, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vset(e, HG_EXIT_ENV, fmt, ap);
	va_end(ap);
	return rc;
}

int hg_err_at(struct hg_err *e, const char *path, uint64_t off, const char *fmt, ...)
{
	char what[HG_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return hg_err_set(e, "%s: offset %llu: %s", path, (unsigned long long)off, what);
}

const char *hg_quote(char *out, size_t len, const void *s, size_t n)
{
	const unsigned char *p = s;
	size_t o = 0, i;

	out[o++] = '"';
	for (i = 0; i < n; i++) {
		unsigned char c = p[i];
		size_t need = c >= 0x20 && c < 0x7f && c != '"' && c != '\\' ? 1 : c == '"' || c == '\\' ? 2 : 4;

		if (o + need + 5 > len) {	/* room for ...", NUL */
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		if (need == 1)
			out[o++] = c;
		else if (need == 2) {
			out[o++] = '\\';
			out[o++] = c;
		} else {
			o += snprintf(out + o, len - o, "\\x%02x", c);
		}
	}
	out[o++] = '"';
	out[o] = 0;
	return out;
}

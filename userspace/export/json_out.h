/* SPDX-License-Identifier: GPL-2.0 */
/*
 * json_out.h - what the JSON writers here need in their hot paths, without
 * printf: escaped strings (always valid JSON: bytes that are not UTF-8
 * become U+FFFD), decimal integers, and nanoseconds as microseconds.
 */
#ifndef JSON_OUT_H
#define JSON_OUT_H

#include <stddef.h>
#include <stdint.h>

/* json_escape - @n bytes of @s escaped (no quotes) into @dst, which has room for 6 * @n;
 * returns the length written */
size_t json_escape(char *dst, const char *s, size_t n);

extern const char json_digits2[200];

/* put_u64 - @v in decimal at @p; returns the length */
static inline unsigned put_u64(char *p, uint64_t v)
{
	char tmp[20];
	unsigned n = 20, len;

	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;

		v /= 100;
		tmp[--n] = json_digits2[d + 1];
		tmp[--n] = json_digits2[d];
	}
	if (v >= 10) {
		tmp[--n] = json_digits2[v * 2 + 1];
		tmp[--n] = json_digits2[v * 2];
	} else {
		tmp[--n] = '0' + (char)v;
	}
	len = 20 - n;
	for (unsigned i = 0; i < len; i++)
		p[i] = tmp[n + i];
	return len;
}

static inline unsigned put_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p = '-';
		return 1 + put_u64(p + 1, -(uint64_t)v);
	}
	return put_u64(p, v);
}

/* put_us - @ns nanoseconds as microseconds, three decimals at most: "12.345", "0.4", "7" */
static inline unsigned put_us(char *p, uint64_t ns)
{
	unsigned n = put_u64(p, ns / 1000), f = (unsigned)(ns % 1000);

	if (f) {
		p[n++] = '.';
		p[n++] = '0' + f / 100;
		f %= 100;
		if (f) {
			p[n++] = '0' + f / 10;
			if (f % 10)
				p[n++] = '0' + f % 10;
		}
	}
	return n;
}

static inline unsigned put_sus(char *p, int64_t ns)
{
	if (ns < 0) {
		*p = '-';
		return 1 + put_us(p + 1, -(uint64_t)ns);
	}
	return put_us(p, ns);
}

#endif

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
	static const uint64_t p10[19] = {
		10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL, 100000000ULL,
		1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL, 10000000000000ULL,
		100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
		1000000000000000000ULL, 10000000000000000000ULL,
	};
	unsigned len = 1, i;

	/* the length first, then the digits from the end, two at a time */
	while (len < 20 && v >= p10[len - 1])
		len++;
	i = len;
	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;

		v /= 100;
		p[--i] = json_digits2[d + 1];
		p[--i] = json_digits2[d];
	}
	if (v >= 10) {
		p[--i] = json_digits2[v * 2 + 1];
		p[--i] = json_digits2[v * 2];
	} else {
		p[--i] = '0' + (char)v;
	}
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
		/* three digits, the trailing zeros dropped */
		p[n] = '.';
		p[n + 1] = '0' + f / 100;
		p[n + 2] = json_digits2[(f % 100) * 2];
		p[n + 3] = json_digits2[(f % 100) * 2 + 1];
		n += f % 10 ? 4 : f % 100 ? 3 : 2;
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

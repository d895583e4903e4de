// SPDX-License-Identifier: GPL-2.0
/*
 * json_out.c - JSON string escaping for the exporters (json_out.h).
 */
#include <string.h>

#include "json_out.h"

const char json_digits2[200] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* the length of the UTF-8 sequence at @s (of @n bytes), 0 when it is not one */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len, i;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, cp = c & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* the bytes a JSON string may hold as they are: printable ASCII but the quote and the backslash */
static const uint8_t plain[256] = {
	[0x20 ... 0x21] = 1, [0x23 ... 0x5b] = 1, [0x5d ... 0x7f] = 1,
};

size_t json_escape(char *dst, const char *src, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)src;
	char *d = dst;
	size_t i = 0;

	while (i < n) {
		unsigned c = s[i];
		size_t len, j;

		if (plain[c]) {
			/* a run of plain characters: one copy */
			for (j = i + 1; j < n && plain[s[j]]; j++)
				;
			memcpy(d, s + i, j - i);
			d += j - i;
			i = j;
			continue;
		}
		if (c == '"' || c == '\\') {
			*d++ = '\\';
			*d++ = (char)c;
			i++;
			continue;
		}
		if (c < 0x20) {
			*d++ = '\\';
			switch (c) {
			case '\n': *d++ = 'n'; break;
			case '\t': *d++ = 't'; break;
			case '\r': *d++ = 'r'; break;
			default:
				*d++ = 'u'; *d++ = '0'; *d++ = '0';
				*d++ = hex[c >> 4]; *d++ = hex[c & 15];
			}
			i++;
			continue;
		}
		len = utf8_len(s + i, n - i);
		if (!len) {
			/* not UTF-8: one replacement character per byte, still 6 bytes at most */
			memcpy(d, "\\ufffd", 6);
			d += 6;
			i++;
			continue;
		}
		memcpy(d, s + i, len);
		d += len;
		i += len;
	}
	return d - dst;
}

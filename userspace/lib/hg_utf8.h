/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hg_utf8.h - UTF-8 as RFC 3629 defines it: no overlong forms, no
 * surrogates, nothing above U+10FFFF. Shared by the JSON parser (which
 * refuses bad text), the JSON writer (which replaces it) and the .hgt
 * metadata check.
 */
#ifndef HG_UTF8_H
#define HG_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* hg_utf8_seq - the length (1-4) of the valid sequence at @s, 0 if there is none */
size_t hg_utf8_seq(const unsigned char *s, size_t n);
/* hg_utf8_valid - the offset of the first byte that is not valid UTF-8, or @n */
size_t hg_utf8_valid(const char *s, size_t n);
/* hg_utf8_put - @cp as UTF-8 into @out (4 bytes of room); returns its length */
size_t hg_utf8_put(uint32_t cp, char *out);

#endif

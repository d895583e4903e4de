// SPDX-License-Identifier: GPL-2.0
/*
 * pf_intern.c - the Perfetto writer's string table (pf_intern.h): a hash
 * table of iids over one block of text.
 */
#include <stdlib.h>
#include <string.h>

#include "hg_utf8.h"
#include "pf_intern.h"

#define FIRST_SLOTS	1024

int pf_strtab_init(struct pf_strtab *t, uint32_t max_strings, size_t max_bytes)
{
	memset(t, 0, sizeof(*t));
	t->max = max_strings;
	t->tmax = max_bytes;
	t->nslots = FIRST_SLOTS;
	t->slots = calloc(t->nslots, sizeof(*t->slots));
	return t->slots ? 0 : -1;
}

void pf_strtab_free(struct pf_strtab *t)
{
	free(t->slots);
	free(t->str);
	free(t->text);
	memset(t, 0, sizeof(*t));
}

/* eight bytes at a time, multiplied and folded: names are short, and this is per gap */
static uint64_t hash(enum pf_dict dict, const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL * (n + 1) ^ dict, w;

	while (n >= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 29;
		s += 8;
		n -= 8;
	}
	if (n) {
		w = 0;
		memcpy(&w, s, n);
		h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
	}
	return h ^ h >> 32;
}

static int rehash(struct pf_strtab *t)
{
	uint32_t nslots = t->nslots * 2, i, *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -1;
	for (i = 0; i < t->n; i++) {
		uint32_t k = (uint32_t)t->str[i].hash & (nslots - 1);

		while (slots[k])
			k = (k + 1) & (nslots - 1);
		slots[k] = i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

/* room for one more string of @n bytes, within the bounds */
static int make_room(struct pf_strtab *t, size_t n)
{
	if (t->n >= t->max || t->tlen + n > t->tmax)
		return -1;
	if (2 * (t->n + 1) > t->nslots && rehash(t))
		return -1;
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 256;
		struct pf_str *str = realloc(t->str, cap * sizeof(*str));

		if (!str)
			return -1;
		t->str = str;
		t->cap = cap;
	}
	if (t->tlen + n > t->tcap) {
		size_t cap = t->tcap ? 2 * t->tcap : 16384;
		char *text;

		while (cap < t->tlen + n)
			cap *= 2;
		text = realloc(t->text, cap);
		if (!text)
			return -1;
		t->text = text;
		t->tcap = cap;
	}
	return 0;
}

uint32_t pf_intern(struct pf_strtab *t, enum pf_dict dict, const char *s, size_t n)
{
	uint64_t h = hash(dict, s, n);
	uint32_t k = (uint32_t)h & (t->nslots - 1), id;
	struct pf_str *e;

	for (; (id = t->slots[k]); k = (k + 1) & (t->nslots - 1)) {
		e = &t->str[id - 1];
		if (e->hash == h && e->len == n && e->dict == dict && !memcmp(t->text + e->off, s, n))
			return id;
	}
	if (n > PF_NAME_MAX || make_room(t, n)) {
		t->refused++;
		return 0;
	}
	/* a rehash moved the slots: find the free one again */
	for (k = (uint32_t)h & (t->nslots - 1); t->slots[k]; k = (k + 1) & (t->nslots - 1))
		;
	e = &t->str[t->n];
	*e = (struct pf_str){ h, (uint32_t)t->tlen, (uint16_t)n, (uint8_t)dict };
	memcpy(t->text + t->tlen, s, n);
	t->tlen += n;
	t->slots[k] = ++t->n;
	return t->n;
}

size_t pf_utf8_clean(char *dst, size_t cap, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0, k;

	/* names are ASCII, nearly always: eight bytes at a time while they are */
	while (i + 8 <= n && i + 8 <= cap) {
		uint64_t v;

		memcpy(&v, p + i, 8);
		if (v & 0x8080808080808080ULL)
			break;
		memcpy(dst + i, &v, 8);
		i += 8;
	}
	o = i;
	while (i < n) {
		if (p[i] < 0x80) {
			if (o + 1 > cap)
				break;
			dst[o++] = (char)p[i++];
			continue;
		}
		k = hg_utf8_seq(p + i, n - i);
		if (!k) {
			if (o + 3 > cap)
				break;
			memcpy(dst + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		if (o + k > cap)
			break;
		memcpy(dst + o, p + i, k);
		o += k;
		i += k;
	}
	return o;
}

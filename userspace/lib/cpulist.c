// SPDX-License-Identifier: GPL-2.0
/*
 * cpulist.c - CPU lists as the kernel writes them, "0,2-5,8" (hg_cpulist.h).
 *
 * What is accepted: numbers and ranges separated by commas, an optional
 * newline at the end (as read from /sys), an empty list. What is not: a
 * number above HG_CPULIST_MAX - 1, a range that runs backwards, empty items
 * ("1,,2", "1,"), signs, spaces, anything else. The set's bits are sized to
 * the highest CPU named, so memory is bounded by HG_CPULIST_MAX / 8 bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hg_cpulist.h"

#define WORDS(n) (((size_t)(n) + 63) / 64)

/* grow - room for CPU @cpu; -1 if memory ran out */
static int grow(struct hg_cpuset *set, unsigned cpu)
{
	size_t have = WORDS(set->nbits), need = WORDS(cpu + 1);
	uint64_t *b;

	if (need > have) {
		b = realloc(set->bits, need * sizeof(*b));
		if (!b)
			return -1;
		memset(b + have, 0, (need - have) * sizeof(*b));
		set->bits = b;
	}
	if (cpu + 1 > set->nbits)
		set->nbits = cpu + 1;
	return 0;
}

static int add(struct hg_cpuset *set, unsigned cpu)
{
	if (cpu >= HG_CPULIST_MAX || grow(set, cpu))
		return -1;
	set->bits[cpu / 64] |= 1ull << (cpu % 64);
	return 0;
}

void hg_cpuset_add(struct hg_cpuset *set, unsigned cpu)
{
	add(set, cpu);
}

int hg_cpuset_has(const struct hg_cpuset *set, unsigned cpu)
{
	return cpu < set->nbits && (set->bits[cpu / 64] >> (cpu % 64) & 1);
}

unsigned hg_cpuset_count(const struct hg_cpuset *set)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < WORDS(set->nbits); i++)
		n += __builtin_popcountll(set->bits[i]);
	return n;
}

void hg_cpuset_free(struct hg_cpuset *set)
{
	free(set->bits);
	set->bits = NULL;
	set->nbits = 0;
}

void hg_cpuset_fprint_mask(FILE *f, const struct hg_cpuset *set)
{
	size_t have = WORDS(set->nbits), words = have > 4 ? have : 4, i;

	for (i = words; i-- > 0;)
		fprintf(f, "%016llx", (unsigned long long)(i < have ? set->bits[i] : 0));
}

/* number - a CPU number at *s: digits only, below HG_CPULIST_MAX */
static int number(const char **s, unsigned *v, const char **why)
{
	const char *p = *s;
	unsigned long n = 0;

	if (*p < '0' || *p > '9') {
		*why = "expected a CPU number";
		return -1;
	}
	while (*p >= '0' && *p <= '9') {
		n = n * 10 + (unsigned)(*p++ - '0');
		if (n >= HG_CPULIST_MAX) {
			*why = "a CPU number beyond 8191 (the most a list may name)";
			return -1;
		}
	}
	*v = (unsigned)n;
	*s = p;
	return 0;
}

int hg_cpulist_parse(const char *s, struct hg_cpuset *set, const char **why)
{
	const char *p = s;
	unsigned a, b, c;

	set->bits = NULL;
	set->nbits = 0;
	*why = NULL;
	if (!*p || !strcmp(p, "\n"))
		return 0;
	for (;;) {
		if (number(&p, &a, why))
			goto bad;
		b = a;
		if (*p == '-') {
			p++;
			if (number(&p, &b, why))
				goto bad;
			if (b < a) {
				*why = "a range that runs backwards";
				goto bad;
			}
		}
		if (grow(set, b)) {
			*why = "out of memory";
			goto bad;
		}
		for (c = a; c <= b; c++)
			set->bits[c / 64] |= 1ull << (c % 64);
		if (*p == ',') {
			p++;
			continue;
		}
		if (!*p || (p[0] == '\n' && !p[1]))
			return 0;
		*why = "expected ',' or '-' after a CPU number";
		goto bad;
	}
bad:
	hg_cpuset_free(set);
	return -1;
}

void hg_cpulist_format(const struct hg_cpuset *set, char *buf, size_t len)
{
	char *all, *cut;
	size_t o = 0, cap = 16;
	unsigned a, b;

	if (!len)
		return;
	buf[0] = 0;
	/* at most 8192 CPUs of 4 digits and a comma each */
	cap += (size_t)set->nbits * 6;
	all = malloc(cap);
	if (!all)
		return;
	all[0] = 0;
	for (a = 0; a < set->nbits; a++) {
		if (!hg_cpuset_has(set, a))
			continue;
		for (b = a; b + 1 < set->nbits && hg_cpuset_has(set, b + 1); b++)
			;
		o += (size_t)(b > a ? snprintf(all + o, cap - o, "%s%u-%u", o ? "," : "", a, b) :
				      snprintf(all + o, cap - o, "%s%u", o ? "," : "", a));
		a = b;
	}
	if (o < len) {
		memcpy(buf, all, o + 1);
	} else if (len >= 4) {
		/* whole items only, then "..." */
		all[len - 4] = 0;
		cut = strrchr(all, ',');
		o = cut ? (size_t)(cut - all) + 1 : 0;
		memcpy(buf, all, o);
		memcpy(buf + o, "...", 4);
	}
	free(all);
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pf_intern.h - the Perfetto writer's strings, each kept once with a number:
 * the interning ids (iids) of its event names, debug annotation names and
 * debug annotation string values. A trace names the same few hundred tasks,
 * irqs and causes millions of times; the file says each name once per
 * sequence and refers to it by its iid after that.
 *
 * The table is bounded (@max_strings, @max_bytes at init): past that,
 * pf_intern() returns 0 and the writer puts the name inline, so memory does
 * not grow with a run that names ever more tasks.
 */
#ifndef PF_INTERN_H
#define PF_INTERN_H

#include <stddef.h>
#include <stdint.h>

/* the three dictionaries of InternedData the writer fills: one iid space for all of them */
enum pf_dict { PF_EVENT_NAME, PF_ANNOTATION_NAME, PF_ANNOTATION_STRING, PF_DICTS };

struct pf_str {
	uint64_t hash;
	uint32_t off;		/* in the table's text */
	uint16_t len;
	uint8_t dict;		/* enum pf_dict */
};

struct pf_strtab {
	uint32_t *slots;	/* open addressing: an iid, 0 for an empty slot */
	uint32_t nslots;	/* a power of two, at least twice the strings */
	uint32_t n, max;	/* strings held (iids 1..n), at most */
	struct pf_str *str;	/* str[iid - 1] */
	uint32_t cap;
	char *text;
	size_t tlen, tcap, tmax;
	uint64_t refused;	/* pf_intern calls turned away by the bounds */
};

#define PF_NAME_MAX	255	/* bytes of a name kept; longer ones are cut at a character */

int pf_strtab_init(struct pf_strtab *t, uint32_t max_strings, size_t max_bytes);
void pf_strtab_free(struct pf_strtab *t);

/* pf_intern - the iid of @n bytes at @s (valid UTF-8, at most PF_NAME_MAX) in @dict: found or
 * added. 0 when the table is full or out of memory: write the string inline then. */
uint32_t pf_intern(struct pf_strtab *t, enum pf_dict dict, const char *s, size_t n);

static inline const char *pf_str(const struct pf_strtab *t, uint32_t iid, unsigned *len)
{
	const struct pf_str *e = &t->str[iid - 1];

	*len = e->len;
	return t->text + e->off;
}

static inline enum pf_dict pf_str_dict(const struct pf_strtab *t, uint32_t iid)
{
	return (enum pf_dict)t->str[iid - 1].dict;
}

/* pf_utf8_clean - @n bytes of @s into @dst (@cap bytes of room) with every byte that is not
 * part of valid UTF-8 replaced by U+FFFD (Perfetto's names are protobuf strings), cut at a
 * character when longer. Returns the length written. */
size_t pf_utf8_clean(char *dst, size_t cap, const char *s, size_t n);

#endif

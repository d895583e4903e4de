// SPDX-License-Identifier: GPL-2.0
/*
 * json_parse.c - a strict JSON parser (hg_json.h).
 *
 * RFC 8259 and nothing more: no comments, no trailing commas, no NaN, no
 * single quotes. What it refuses beyond the grammar, so that every reader
 * sees the same document: invalid UTF-8, duplicate keys in an object, a
 * "\u0000" in a string (C strings could not hold it), a number that does
 * not fit a double, nesting deeper than JV_MAX_DEPTH.
 *
 * Memory: every value is a 16-byte node in one arena that jv_free() releases
 * at once, plus the decoded strings; at most about 8 times the text (an
 * array of one-digit numbers), never more than the caller's length allows.
 * Integers keep all their digits (a TSC beyond 2^53 stays exact).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "hg_json.h"
#include "hg_utf8.h"

#define JV_MAX_DEPTH	64
#define ARENA_BLOCK	(64u << 10)

struct jv {
	uint8_t type;		/* enum jv_type */
	uint8_t is_int;		/* JV_NUM written as an integer that fits int64: u.i is exact */
	uint16_t pad;
	uint32_t n;		/* JV_STR bytes, JV_ARR items, JV_OBJ members */
	union {
		double d;
		int64_t i;
		const char *s;
		struct jv *items;	/* JV_OBJ: key (a JV_STR), value, key, value... */
		int b;
	} u;
};

struct block {
	struct block *next;
	size_t used, cap;
	max_align_t data[];
};

/* what jv_parse() returns: the root first, so that the root is the document */
struct doc {
	struct jv root;
	struct block *blocks;
};

struct parser {
	const char *t;
	size_t len, pos;
	int depth;
	struct doc *doc;
	struct jv *stack;	/* the items of the containers being read, innermost last */
	size_t nstack, capstack;
	struct hg_err *err;
};

static void *arena_alloc(struct doc *d, size_t size)
{
	struct block *b = d->blocks;
	void *p;

	size = (size + 15) & ~(size_t)15;
	if (!b || b->cap - b->used < size) {
		size_t cap = size > ARENA_BLOCK ? size : ARENA_BLOCK;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->cap = cap;
		b->used = 0;
		b->next = d->blocks;
		d->blocks = b;
	}
	p = (char *)b->data + b->used;
	b->used += size;
	return p;
}

static int bad(struct parser *p, size_t at, const char *what)
{
	return hg_err_set(p->err, "at byte %zu: %s", at, what);
}

static void skip_ws(struct parser *p)
{
	while (p->pos < p->len) {
		char c = p->t[p->pos];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		p->pos++;
	}
}

static int push(struct parser *p, const struct jv *v)
{
	if (p->nstack == p->capstack) {
		size_t cap = p->capstack ? 2 * p->capstack : 256;
		struct jv *s = realloc(p->stack, cap * sizeof(*s));

		if (!s)
			return hg_err_env(p->err, "out of memory parsing JSON");
		p->stack = s;
		p->capstack = cap;
	}
	p->stack[p->nstack++] = *v;
	return 0;
}

static int hex4(const char *s, uint32_t *v)
{
	int i;

	*v = 0;
	for (i = 0; i < 4; i++) {
		char c = s[i];

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			*v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			*v |= c - 'A' + 10;
		else
			return -1;
	}
	return 0;
}

/* parse_string - at the opening quote; the decoded text goes to the arena */
static int parse_string(struct parser *p, struct jv *v)
{
	size_t start = ++p->pos, end = start, n = 0;
	const unsigned char *t = (const unsigned char *)p->t;
	char *out;

	/* find the end first: the decoded string is never longer than its source */
	while (end < p->len && t[end] != '"') {
		if (t[end] == '\\')
			end++;
		end++;
	}
	if (end >= p->len)
		return bad(p, start - 1, "a string that never ends");
	out = arena_alloc(p->doc, end - start + 1);
	if (!out)
		return hg_err_env(p->err, "out of memory parsing JSON");
	while (p->pos < end) {
		unsigned char c = t[p->pos];

		if (c < 0x20)
			return bad(p, p->pos, "a control character inside a string (it must be escaped)");
		if (c >= 0x80) {
			size_t k = hg_utf8_seq(t + p->pos, end - p->pos);

			if (!k)
				return bad(p, p->pos, "a string that is not valid UTF-8");
			memcpy(out + n, t + p->pos, k);
			n += k;
			p->pos += k;
			continue;
		}
		if (c != '\\') {
			out[n++] = c;
			p->pos++;
			continue;
		}
		c = t[p->pos + 1];
		switch (c) {
		case '"': case '\\': case '/':
			out[n++] = c;
			break;
		case 'b': out[n++] = '\b'; break;
		case 'f': out[n++] = '\f'; break;
		case 'n': out[n++] = '\n'; break;
		case 'r': out[n++] = '\r'; break;
		case 't': out[n++] = '\t'; break;
		case 'u': {
			uint32_t cp, lo;

			if (end - p->pos < 6 || hex4(p->t + p->pos + 2, &cp))
				return bad(p, p->pos, "a \\u escape without four hex digits");
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return bad(p, p->pos, "a lone low surrogate in a \\u escape");
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (end - p->pos < 12 || p->t[p->pos + 6] != '\\' || p->t[p->pos + 7] != 'u' ||
				    hex4(p->t + p->pos + 8, &lo) || lo < 0xdc00 || lo > 0xdfff)
					return bad(p, p->pos, "a high surrogate without its low half");
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				p->pos += 6;
			}
			if (!cp)
				return bad(p, p->pos, "a NUL character (\\u0000) in a string");
			n += hg_utf8_put(cp, out + n);
			p->pos += 6;
			continue;
		}
		default:
			return bad(p, p->pos, "an unknown escape in a string");
		}
		p->pos += 2;
	}
	out[n] = 0;
	p->pos = end + 1;
	v->type = JV_STR;
	v->n = n;
	v->u.s = out;
	return 0;
}

static int digits(struct parser *p)
{
	size_t s = p->pos;

	while (p->pos < p->len && p->t[p->pos] >= '0' && p->t[p->pos] <= '9')
		p->pos++;
	return p->pos > s;
}

static int parse_number(struct parser *p, struct jv *v)
{
	size_t start = p->pos, n;
	int is_int = 1;
	char small[64], *buf = small, *end;

	if (p->t[p->pos] == '-')
		p->pos++;
	if (p->pos < p->len && p->t[p->pos] == '0')
		p->pos++;
	else if (!digits(p))
		return bad(p, start, "a number without digits");
	if (p->pos < p->len && p->t[p->pos] == '.') {
		p->pos++;
		is_int = 0;
		if (!digits(p))
			return bad(p, start, "a number with no digits after its point");
	}
	if (p->pos < p->len && (p->t[p->pos] == 'e' || p->t[p->pos] == 'E')) {
		p->pos++;
		is_int = 0;
		if (p->pos < p->len && (p->t[p->pos] == '+' || p->t[p->pos] == '-'))
			p->pos++;
		if (!digits(p))
			return bad(p, start, "a number with no digits in its exponent");
	}
	v->type = JV_NUM;
	n = p->pos - start;
	if (is_int) {
		const char *s = p->t + start;
		int neg = *s == '-';
		uint64_t m = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
		size_t i;

		for (i = neg; i < n; i++) {
			unsigned dgt = s[i] - '0';

			if (m > (lim - dgt) / 10)
				break;
			m = m * 10 + dgt;
		}
		if (i == n) {
			v->is_int = 1;
			v->u.i = neg ? (int64_t)(0 - m) : (int64_t)m;
			return 0;
		}
	}
	if (n >= sizeof(small)) {
		buf = malloc(n + 1);
		if (!buf)
			return hg_err_env(p->err, "out of memory parsing JSON");
	}
	memcpy(buf, p->t + start, n);
	buf[n] = 0;
	v->u.d = strtod(buf, &end);
	if (buf != small)
		free(buf);
	if (!isfinite(v->u.d))
		return bad(p, start, "a number too large for a double");
	return 0;
}

static int literal(struct parser *p, const char *word, size_t n)
{
	if (p->len - p->pos < n || memcmp(p->t + p->pos, word, n))
		return bad(p, p->pos, "not a JSON value");
	p->pos += n;
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	const struct jv *x = *(const struct jv *const *)a, *y = *(const struct jv *const *)b;

	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	return memcmp(x->u.s, y->u.s, x->n);
}

static int same_key(const struct jv *a, const struct jv *b)
{
	return a->n == b->n && !memcmp(a->u.s, b->u.s, a->n);
}

/* no_duplicates - the keys of an object's @n members, sorted when there are many */
static int no_duplicates(struct parser *p, const struct jv *items, uint32_t n, size_t at)
{
	const struct jv **k;
	uint32_t i, j, dup = UINT32_MAX;
	char q[100];

	if (n <= 8) {
		for (i = 0; i < n && dup == UINT32_MAX; i++)
			for (j = i + 1; j < n; j++)
				if (same_key(&items[2 * i], &items[2 * j])) {
					dup = i;
					break;
				}
	} else {
		k = malloc(n * sizeof(*k));
		if (!k)
			return hg_err_env(p->err, "out of memory parsing JSON");
		for (i = 0; i < n; i++)
			k[i] = &items[2 * i];
		qsort(k, n, sizeof(*k), key_cmp);
		for (i = 1; i < n; i++)
			if (same_key(k[i - 1], k[i])) {
				dup = (uint32_t)(k[i] - items) / 2;
				break;
			}
		free(k);
	}
	if (dup == UINT32_MAX)
		return 0;
	hg_quote(q, sizeof(q), items[2 * dup].u.s, items[2 * dup].n);
	return hg_err_set(p->err, "at byte %zu: the object has the key %s twice", at, q);
}

static int parse_value(struct parser *p, struct jv *v);

/* parse_container - an array or an object; its items pass through the stack */
static int parse_container(struct parser *p, struct jv *v, int obj)
{
	size_t base = p->nstack, start = p->pos;
	char close = obj ? '}' : ']';
	struct jv item;
	uint64_t count = 0;

	if (++p->depth > JV_MAX_DEPTH)
		return bad(p, p->pos, "nesting deeper than 64");
	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->t[p->pos] == close) {
		p->pos++;
	} else {
		for (;;) {
			skip_ws(p);
			memset(&item, 0, sizeof(item));
			if (obj) {
				if (p->pos >= p->len || p->t[p->pos] != '"')
					return bad(p, p->pos, "expected a key (a string)");
				if (parse_string(p, &item) || push(p, &item))
					return -1;
				skip_ws(p);
				if (p->pos >= p->len || p->t[p->pos] != ':')
					return bad(p, p->pos, "expected ':' after a key");
				p->pos++;
				memset(&item, 0, sizeof(item));
			}
			if (parse_value(p, &item) || push(p, &item))
				return -1;
			count++;
			skip_ws(p);
			if (p->pos < p->len && p->t[p->pos] == ',') {
				p->pos++;
				continue;
			}
			if (p->pos < p->len && p->t[p->pos] == close) {
				p->pos++;
				break;
			}
			return bad(p, p->pos, obj ? "expected ',' or '}'" : "expected ',' or ']'");
		}
	}
	if (count > UINT32_MAX)
		return bad(p, start, "a container with too many items");
	v->type = obj ? JV_OBJ : JV_ARR;
	v->n = (uint32_t)count;
	v->u.items = NULL;
	if (p->nstack > base) {
		size_t bytes = (p->nstack - base) * sizeof(struct jv);

		v->u.items = arena_alloc(p->doc, bytes);
		if (!v->u.items)
			return hg_err_env(p->err, "out of memory parsing JSON");
		memcpy(v->u.items, p->stack + base, bytes);
	}
	p->nstack = base;
	p->depth--;
	if (obj && no_duplicates(p, v->u.items, v->n, start))
		return -1;
	return 0;
}

static int parse_value(struct parser *p, struct jv *v)
{
	skip_ws(p);
	if (p->pos >= p->len)
		return bad(p, p->pos, "the text ends where a value should be");
	switch (p->t[p->pos]) {
	case '{':
		return parse_container(p, v, 1);
	case '[':
		return parse_container(p, v, 0);
	case '"':
		return parse_string(p, v);
	case 't':
		v->type = JV_BOOL;
		v->u.b = 1;
		return literal(p, "true", 4);
	case 'f':
		v->type = JV_BOOL;
		v->u.b = 0;
		return literal(p, "false", 5);
	case 'n':
		v->type = JV_NULL;
		return literal(p, "null", 4);
	default:
		if (p->t[p->pos] == '-' || (p->t[p->pos] >= '0' && p->t[p->pos] <= '9'))
			return parse_number(p, v);
		return bad(p, p->pos, "not a JSON value");
	}
}

struct jv *jv_parse(const char *text, size_t len, struct hg_err *err)
{
	struct parser p = { .t = text, .len = len, .err = err };
	struct doc *d = calloc(1, sizeof(*d));

	if (!d) {
		hg_err_env(err, "out of memory parsing JSON");
		return NULL;
	}
	p.doc = d;
	if (parse_value(&p, &d->root))
		goto fail;
	skip_ws(&p);
	if (p.pos != len) {
		bad(&p, p.pos, "more text after the JSON value");
		goto fail;
	}
	free(p.stack);
	return &d->root;
fail:
	free(p.stack);
	jv_free(&d->root);
	return NULL;
}

void jv_free(struct jv *v)
{
	struct doc *d = (struct doc *)v;
	struct block *b, *n;

	if (!d)
		return;
	for (b = d->blocks; b; b = n) {
		n = b->next;
		free(b);
	}
	free(d);
}

enum jv_type jv_type(const struct jv *v)
{
	return v ? (enum jv_type)v->type : JV_NULL;
}

const struct jv *jv_get(const struct jv *obj, const char *key)
{
	size_t n = strlen(key);
	uint32_t i;

	if (!obj || obj->type != JV_OBJ)
		return NULL;
	for (i = 0; i < obj->n; i++) {
		const struct jv *k = &obj->u.items[2 * i];

		if (k->n == n && !memcmp(k->u.s, key, n))
			return &obj->u.items[2 * i + 1];
	}
	return NULL;
}

size_t jv_len(const struct jv *v)
{
	return v && (v->type == JV_ARR || v->type == JV_OBJ) ? v->n : 0;
}

const struct jv *jv_at(const struct jv *arr, size_t i)
{
	if (!arr || i >= jv_len(arr))
		return NULL;
	return arr->type == JV_ARR ? &arr->u.items[i] : &arr->u.items[2 * i + 1];
}

const char *jv_key_at(const struct jv *obj, size_t i)
{
	if (!obj || obj->type != JV_OBJ || i >= obj->n)
		return NULL;
	return obj->u.items[2 * i].u.s;
}

double jv_num(const struct jv *v)
{
	if (!v || v->type != JV_NUM)
		return 0;
	return v->is_int ? (double)v->u.i : v->u.d;
}

int jv_is_int(const struct jv *v)
{
	if (!v || v->type != JV_NUM)
		return 0;
	if (v->is_int)
		return 1;
	/* 1e3 is an integer too; 2^63 and beyond are not int64 */
	return v->u.d == floor(v->u.d) && v->u.d >= -9223372036854775808.0 && v->u.d < 9223372036854775808.0;
}

int64_t jv_int(const struct jv *v)
{
	if (!jv_is_int(v))
		return 0;
	return v->is_int ? v->u.i : (int64_t)v->u.d;
}

const char *jv_str(const struct jv *v)
{
	return v && v->type == JV_STR ? v->u.s : NULL;
}

int jv_bool(const struct jv *v)
{
	return v && v->type == JV_BOOL ? v->u.b : 0;
}

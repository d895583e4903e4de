// SPDX-License-Identifier: GPL-2.0
/*
 * fz_track.c - what the code under test allocated and opened during one
 * input, so that the target can take it all back after a longjmp out of
 * hgmerge's fail() (which, in the product, exits and lets the kernel clean
 * up). Linked with -Wl,--wrap=malloc,... for the objects under test only:
 * their calls come here, everything else (libFuzzer, the sanitizers, libc
 * inside) is left alone.
 *
 * fz_track_reap() ends the zlib streams, closes the files (and frees a
 * memory stream's buffer, which libc made) and frees the blocks still live. A
 * block freed so may still be named by one of the program's static
 * pointers, which the program frees again on its next run (it frees the
 * old table before making a new one): such a free of a reaped block is
 * skipped, not passed on as a double free. A real double free within one
 * run still reaches the allocator, which reports it.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <zlib.h>
#include "fz.h"
#include "fz_track.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
int __real_vasprintf(char **out, const char *fmt, va_list ap);
ssize_t __real_getline(char **line, size_t *cap, FILE *f);
ssize_t __real___getdelim(char **line, size_t *cap, int delim, FILE *f);
char *__real_realpath(const char *path, char *resolved);
FILE *__real_fopen(const char *path, const char *mode);
FILE *__real_fdopen(int fd, const char *mode);
FILE *__real_open_memstream(char **buf, size_t *size);
int __real_fclose(FILE *f);
int __real_inflateInit_(z_streamp s, const char *version, int size);
int __real_inflateEnd(z_streamp s);

/* a set of pointers: open addressing, tombstones, grown at half full */
struct pset {
	uintptr_t *v;
	size_t cap, n, used;
};

#define EMPTY	((uintptr_t)0)
#define GONE	((uintptr_t)1)

static struct pset live, reaped, files, zstreams;
/* the memory streams open, and where each one's buffer is said (libc's, freed after the close) */
static struct mem { FILE *f; char **buf; } *mems;
static size_t nmems, capmems;
static int tracking;
static size_t limit;		/* the largest block the code under test may ask for, 0: any */
/* the thread that runs the inputs: the sets are its own (libFuzzer has a thread of its own) */
static __thread int runner;

/* hash - Fibonacci hashing: the product's high bits, which every bit of @p moves */
static size_t hash(uintptr_t p, size_t cap)
{
	return (size_t)(((uint64_t)p * 0x9e3779b97f4a7c15ull) >> (64 - __builtin_ctzll(cap)));
}

static void pset_add(struct pset *s, uintptr_t p);

static void grow(struct pset *s)
{
	struct pset o = *s;
	size_t i;

	/* room for twice what is there: tombstones go, the table does not grow with them */
	for (s->cap = 1024; s->cap < 4 * (o.n + 1); s->cap *= 2)
		;
	s->v = __real_calloc(s->cap, sizeof(*s->v));
	if (!s->v)
		abort();
	s->n = s->used = 0;
	for (i = 0; i < o.cap; i++)
		if (o.v[i] > GONE)
			pset_add(s, o.v[i]);
	__real_free(o.v);
}

static void pset_add(struct pset *s, uintptr_t p)
{
	size_t i;

	size_t slot = SIZE_MAX;

	if (2 * (s->used + 1) > s->cap)
		grow(s);
	for (i = hash(p, s->cap); s->v[i] != EMPTY; i = (i + 1) & (s->cap - 1)) {
		if (s->v[i] == p)
			return;
		if (s->v[i] == GONE && slot == SIZE_MAX)
			slot = i;
	}
	if (slot == SIZE_MAX) {
		slot = i;
		s->used++;
	}
	s->v[slot] = p;
	s->n++;
}

static void pset_clear(struct pset *s)
{
	if (s->cap)
		memset(s->v, 0, s->cap * sizeof(*s->v));
	s->n = s->used = 0;
}

/* pset_del - 1 if @p was there */
static int pset_del(struct pset *s, uintptr_t p)
{
	size_t i;

	if (!s->cap)
		return 0;
	for (i = hash(p, s->cap); s->v[i] != EMPTY; i = (i + 1) & (s->cap - 1))
		if (s->v[i] == p) {
			s->v[i] = GONE;
			s->n--;
			return 1;
		}
	return 0;
}

static void *took(void *p)
{
	if (p && tracking && runner) {
		pset_del(&reaped, (uintptr_t)p);
		pset_add(&live, (uintptr_t)p);
	}
	return p;
}

static void check_size(size_t n, size_t size)
{
	if (runner && limit && (size && n > limit / size))
		fz_fail("the code under test asked for %zu x %zu bytes, beyond the %zu its input may need", n, size,
			limit);
}

void *__wrap_malloc(size_t n)
{
	check_size(n, 1);
	return took(__real_malloc(n));
}

void *__wrap_calloc(size_t n, size_t size)
{
	check_size(n, size);
	return took(__real_calloc(n, size));
}

void __wrap_free(void *p)
{
	if (!p)
		return;
	if (!runner) {
		__real_free(p);
		return;
	}
	if (pset_del(&live, (uintptr_t)p) || !pset_del(&reaped, (uintptr_t)p))
		__real_free(p);
}

void *__wrap_realloc(void *p, size_t n)
{
	void *q;

	if (!runner)
		return __real_realloc(p, n);
	check_size(n, 1);
	if (p && !pset_del(&live, (uintptr_t)p) && pset_del(&reaped, (uintptr_t)p))
		p = NULL;	/* a static table the last run's reap took: start it again */
	q = __real_realloc(p, n);
	if (!q && p && n)
		pset_add(&live, (uintptr_t)p);
	return took(q);
}

char *__wrap_strdup(const char *s)
{
	return took(__real_strdup(s));
}

char *__wrap_strndup(const char *s, size_t n)
{
	return took(__real_strndup(s, n));
}

int __wrap_vasprintf(char **out, const char *fmt, va_list ap)
{
	int rc = __real_vasprintf(out, fmt, ap);

	if (rc >= 0)
		took(*out);
	return rc;
}

/* a line buffer that getline() may move: noted where it ends up */
static void line_before(char *before)
{
	if (before && runner)
		pset_del(&live, (uintptr_t)before);
}

ssize_t __wrap_getline(char **line, size_t *cap, FILE *f)
{
	ssize_t rc;

	line_before(*line);
	rc = __real_getline(line, cap, f);
	took(*line);
	return rc;
}

/* glibc's stdio.h makes getline() an inline call of this one when optimising */
ssize_t __wrap___getdelim(char **line, size_t *cap, int delim, FILE *f)
{
	ssize_t rc;

	line_before(*line);
	rc = __real___getdelim(line, cap, delim, f);
	took(*line);
	return rc;
}

char *__wrap_realpath(const char *path, char *resolved)
{
	char *r = __real_realpath(path, resolved);

	return resolved ? r : took(r);
}

static FILE *opened(FILE *f)
{
	if (f && tracking && runner)
		pset_add(&files, (uintptr_t)f);
	return f;
}

FILE *__wrap_fopen(const char *path, const char *mode)
{
	return opened(__real_fopen(path, mode));
}

FILE *__wrap_fdopen(int fd, const char *mode)
{
	return opened(__real_fdopen(fd, mode));
}

FILE *__wrap_open_memstream(char **buf, size_t *size)
{
	FILE *f = __real_open_memstream(buf, size);

	if (f && tracking && runner) {
		if (nmems == capmems) {
			capmems = capmems ? 2 * capmems : 16;
			mems = __real_realloc(mems, capmems * sizeof(*mems));
			if (!mems)
				abort();
		}
		mems[nmems++] = (struct mem){ f, buf };
	}
	return f;
}

int __wrap_fclose(FILE *f)
{
	size_t i;
	int rc;

	if (runner) {
		pset_del(&files, (uintptr_t)f);
		for (i = 0; i < nmems; i++)
			if (mems[i].f == f) {
				char **buf = mems[i].buf;

				mems[i] = mems[--nmems];
				rc = __real_fclose(f);
				/* libc's block, which the program frees: not one reaped at its address before */
				pset_del(&reaped, (uintptr_t)*buf);
				return rc;
			}
	}
	return __real_fclose(f);
}

/* zlib's own memory, made by inflateInit(): given back by inflateEnd() before the reap frees the stream */
int __wrap_inflateInit_(z_streamp s, const char *version, int size)
{
	int rc = __real_inflateInit_(s, version, size);

	if (rc == Z_OK && tracking && runner)
		pset_add(&zstreams, (uintptr_t)s);
	return rc;
}

int __wrap_inflateEnd(z_streamp s)
{
	if (runner)
		pset_del(&zstreams, (uintptr_t)s);
	return __real_inflateEnd(s);
}

void fz_track_limit(size_t bytes)
{
	limit = bytes;
}

void fz_track_begin(void)
{
	runner = 1;
	tracking = 1;
}

size_t fz_track_reap(void)
{
	size_t i, n = live.n;

	tracking = 0;
	/* the reaped set only needs the blocks a static may still name: the last run's */
	if (reaped.n > (1u << 20)) {
		__real_free(reaped.v);
		memset(&reaped, 0, sizeof(reaped));
	}
	for (i = 0; i < zstreams.cap; i++)
		if (zstreams.v[i] > GONE)
			__real_inflateEnd((z_streamp)zstreams.v[i]);
	pset_clear(&zstreams);
	for (i = 0; i < files.cap; i++)
		if (files.v[i] > GONE)
			__real_fclose((FILE *)files.v[i]);
	pset_clear(&files);
	for (i = 0; i < nmems; i++) {
		__real_fclose(mems[i].f);
		__real_free(*mems[i].buf);
	}
	nmems = 0;
	for (i = 0; i < live.cap; i++)
		if (live.v[i] > GONE) {
			__real_free((void *)live.v[i]);
			pset_add(&reaped, live.v[i]);
		}
	pset_clear(&live);
	return n;
}

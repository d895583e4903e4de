// SPDX-License-Identifier: GPL-2.0
/*
 * util.c - memory that cannot fail quietly, one way to fail, warnings,
 * temporary files, and the map from the kernel's thread ids to hourglass's
 * thread numbers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"

#ifdef HG_FUZZ
/*
 * The fuzz target's way back (tests/fuzz/fuzz_merge.c): a longjmp instead of
 * the exit, so that one process can merge a million bad inputs. Compiled
 * only with -DHG_FUZZ; the product always exits.
 */
void (*hg_fuzz_on_fail)(void);
#endif

static void vfail(int status, const char *fmt, va_list ap) __attribute__((noreturn, format(printf, 2, 0)));
static void vfail(int status, const char *fmt, va_list ap)
{
	fputs("hgmerge: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
#ifdef HG_FUZZ
	if (hg_fuzz_on_fail)
		hg_fuzz_on_fail();
#endif
	exit(status);
}

void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(HG_EXIT_BAD_INPUT, fmt, ap);
}

void fail_env(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(HG_EXIT_ENV, fmt, ap);
}

void fail_err(const struct hg_err *e)
{
	if (hg_err_status(e) == HG_EXIT_ENV)
		fail_env("%s", e->msg);
	fail("%s", e->msg);
}

static void *checked(void *p, size_t n)
{
	if (!p && n)
		fail_env("out of memory");
	return p;
}

void *xmalloc(size_t n)
{
	return checked(malloc(n ? n : 1), 1);
}

void *xcalloc(size_t n, size_t size)
{
	return checked(calloc(n ? n : 1, size ? size : 1), 1);
}

void *xrealloc(void *p, size_t n)
{
	return checked(realloc(p, n ? n : 1), 1);
}

void cpu_list_add(struct cpu_list *l, uint32_t cpu)
{
	uint32_t i;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 8;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	/* CPUs come in about ascending order, and once each: an insertion from the end */
	for (i = l->n; i > 0 && l->v[i - 1] > cpu; i--)
		l->v[i] = l->v[i - 1];
	l->v[i] = cpu;
	l->n++;
}

void cpu_list_free(struct cpu_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

char *xstrdup(const char *s)
{
	return checked(strdup(s), 1);
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return checked(s, 1);
}

void warn(struct run *r, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	VEC_PUSH(r->warnings, r->nwarnings, r->capwarnings, checked(s, 1));
}

FILE *tmp_stream(const char *dir)
{
	char *path = xasprintf("%s/hgmerge-XXXXXX", dir);
	int fd = mkstemp(path);
	FILE *f;

	if (fd < 0)
		fail("cannot make a temporary file in %s: %s (set TMPDIR)", dir, strerror(errno));
	unlink(path);		/* gone with the process, whatever happens */
	free(path);
	f = fdopen(fd, "w+");
	if (!f)
		fail("cannot use a temporary file in %s: %s", dir, strerror(errno));
	return f;
}

static struct { uint32_t tid; int thread; } *tids;
static int ntids;

static int by_tid(const void *a, const void *b)
{
	const typeof(*tids) *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

void set_tids(struct run *r)
{
	int k;

	free(tids);
	tids = xcalloc(r->nthreads + 1, sizeof(*tids));
	ntids = 0;
	for (k = 0; k < r->nthreads; k++)
		if (r->th[k].tid) {
			tids[ntids].tid = r->th[k].tid;
			tids[ntids++].thread = k;
		}
	qsort(tids, ntids, sizeof(*tids), by_tid);
}

int thread_of_tid(const struct run *r, uint32_t tid)
{
	int lo = 0, hi = ntids;

	(void)r;
	while (lo < hi) {
		int m = (lo + hi) / 2;

		if (tids[m].tid < tid)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < ntids && tids[lo].tid == tid ? tids[lo].thread : -1;
}

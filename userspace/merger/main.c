// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - hgmerge-core: options, and the pass: hourglass's side, the
 * inferences, the kernel's events, the judgement.
 *
 * Not meant to be run by hand: `hourglass report` runs it with what it has
 * read from the run's info section (docs/merge.md, "hgmerge-core").
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		fail("out of memory");
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		fail("out of memory");
	return p;
}

void fail(const char *fmt, ...)
{
	va_list ap;

	fputs("hgmerge-core: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_BAD_INPUT);
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		fail("out of memory");
	va_end(ap);
	return s;
}

static struct { uint32_t tid; int thread; } *tids;
static int ntids;

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

static int by_tid(const void *a, const void *b)
{
	const typeof(*tids) *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hgmerge-core --hgl FILE --kernel FILE --hz HZ --margin CYCLES\n"
		"                    --thread TID,RT,PRIO,NEVER_BLOCKS,NEVER_YIELDS[,ACCT0,ACCT1] ...\n"
		"                    [--name NAME] [-o OUT]\n\n"
		"The merger's per-gap path in one pass: gaps from hourglass's intervals, the\n"
		"inferences, the kernel's events, the judgement, as JSON of raw figures.\n"
		"Run by `hourglass report`, which reads the run's info section and turns the\n"
		"output into the report (docs/merge.md). Exit status: 0 done, 2 bad usage,\n"
		"3 bad input (the message names the file).\n");
}

static void bad_usage(const char *what, const char *arg)
{
	fprintf(stderr, "hgmerge-core: %s '%s'\n", what, arg ? arg : "");
	usage(stderr);
	exit(EXIT_BAD_USAGE);
}

static void add_thread(struct run *r, const char *arg)
{
	struct thread_cfg t = { 0 };
	long long a0 = 0, a1 = 0;
	int n = sscanf(arg, "%u,%d,%d,%d,%d,%lld,%lld", &t.tid, &t.rt, &t.prio, &t.cpu_workload, &t.cpu_bound,
		       &a0, &a1);

	if (n != 5 && n != 7)
		bad_usage("bad --thread", arg);
	t.acct = n == 7;
	t.acct0 = a0;
	t.acct1 = a1;
	r->th = xrealloc(r->th, (r->nthreads + 1) * sizeof(*r->th));
	r->th[r->nthreads] = t;
	if (t.tid) {
		tids = xrealloc(tids, (ntids + 1) * sizeof(*tids));
		tids[ntids].tid = t.tid;
		tids[ntids++].thread = r->nthreads;
	}
	r->nthreads++;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "hgl", required_argument, NULL, 'l' }, { "kernel", required_argument, NULL, 'k' },
		{ "hz", required_argument, NULL, 'z' }, { "margin", required_argument, NULL, 'm' },
		{ "thread", required_argument, NULL, 't' }, { "name", required_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' }, { "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct run r = { 0 };
	const char *out = NULL;
	struct judge *j;
	FILE *f = stdout;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'l': r.hgl_path = optarg; break;
		case 'k': r.kernel_path = optarg; break;
		case 'z':
			r.hz = strtod(optarg, &end);
			if (*end || !(r.hz > 0))
				bad_usage("bad --hz", optarg);
			break;
		case 'm':
			r.margin = strtoll(optarg, &end, 10);
			if (*end || r.margin < 0)
				bad_usage("bad --margin", optarg);
			break;
		case 't': add_thread(&r, optarg); break;
		case 'n': sweep_display_name = optarg; break;
		case 'o': out = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return EXIT_BAD_USAGE;
		}
	}
	if (!r.hgl_path || !r.kernel_path || !r.hz || optind != argc)
		bad_usage("needs --hgl, --kernel and --hz, and nothing else; got", optind < argc ? argv[optind] : "");
	qsort(tids, ntids, sizeof(*tids), by_tid);
	load_hourglass(&r);
	infer_all(&r);
	j = judge_new(&r);
	sweep_kernel(&r, j);
	if (out && !(f = fopen(out, "w")))
		fail("%s: cannot write it", out);
	judge_output(j, &r, f);
	if (fflush(f) || ferror(f) || (out && fclose(f)))
		fail("%s: write error", out ? out : "standard output");
	return 0;
}

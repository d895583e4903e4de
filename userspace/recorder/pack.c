// SPDX-License-Identifier: GPL-2.0
/*
 * pack.c - hgtrace pack: rewrite a recording with packed chunks.
 *
 *   hgtrace pack IN.hgt [-o OUT.hgt] [-l LEVEL]
 *
 * Every record is kept, bit for bit; only the chunks change: each CPU's
 * records in blocks of HGT_PACK_BLOCK, as columns, deflated (userspace/lib/hgt_pack.c).
 * The trailer (window, per-CPU counters, END) is copied after the last
 * block. The output is written beside the target and renamed over it at
 * the end, so IN may be OUT, and a failure leaves the input as it was.
 * `hgtrace record -z` calls this once the workload has finished.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hg_hgt.h"
#include "hg_hgt_write.h"
#include "hgt_dev.h"
#include "hgtrace_cmds.h"

struct block { char *p; size_t len, cap; uint32_t n; };

struct packer {
	struct hgt_writer w;
	struct block *cpu;	/* one block being filled per CPU */
	uint32_t ncpu;
	int level;
};

static int flush_block(struct packer *k, uint32_t cpu)
{
	struct block *b = &k->cpu[cpu];
	unsigned char *out;
	size_t len;
	int ret;

	if (!b->n)
		return 0;
	if (hgt_pack_records(b->p, b->len, b->n, cpu, k->level, &out, &len)) {
		fprintf(stderr, "hgtrace: packing CPU %u's records failed\n", cpu);
		return -1;
	}
	ret = hgt_writer_put(&k->w, out, len);
	if (ret)
		fprintf(stderr, "hgtrace: %s\n", k->w.err.msg);
	free(out);
	b->len = 0;
	b->n = 0;
	return ret;
}

static int add_record(struct packer *k, uint32_t cpu, const struct hgt_rec *h)
{
	struct block *b;

	if (cpu >= k->ncpu) {
		struct block *nb = realloc(k->cpu, ((size_t)cpu + 1) * sizeof(*nb));

		if (!nb)
			return -1;
		memset(nb + k->ncpu, 0, ((size_t)cpu + 1 - k->ncpu) * sizeof(*nb));
		k->cpu = nb;
		k->ncpu = cpu + 1;
	}
	b = &k->cpu[cpu];
	if (b->len + h->len > b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 1 << 20;
		char *p = realloc(b->p, cap);

		if (!p)
			return -1;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, h, h->len);
	b->len += h->len;
	if (++b->n == HGT_PACK_BLOCK && flush_block(k, cpu))
		return -1;
	return 0;
}

/* packed_meta - the metadata, saying how the file is coded now */
static char *packed_meta(const struct hgt_file *f, int level)
{
	char *m = NULL;
	size_t len = 0, i;
	FILE *o = open_memstream(&m, &len);
	const char *key, *val;

	if (!o)
		return NULL;
	for (i = 0; hgt_meta_at(f, i, &key, &val); i++) {
		if (!strcmp(key, "compression"))
			fprintf(o, "compression: packed (columns, zlib %d)\n", level);
		else if (!strcmp(key, "format"))
			fprintf(o, "format: hgtrace %d\n", HGT_FILE_VERSION_PACKED);
		else
			fprintf(o, *val ? "%s: %s\n" : "%s:\n", key, val);
	}
	if (fclose(o)) {
		free(m);
		return NULL;
	}
	return m;
}

/* copy_trailer - the window and the counters as they were */
static int copy_trailer(struct packer *k, const struct hgt_file *f)
{
	struct hgt_file_window win;
	struct hgt_cpu_stats *st;
	uint32_t *cpus, cpu, n = 0, ncpu = 0;
	size_t i;
	int ret;

	for (i = 0; i < hgt_nr_chunks(f); i++)
		if (hgt_chunk(f, i)->magic == HGT_STATS_MAGIC && hgt_chunk(f, i)->cpu + 1 > ncpu)
			ncpu = hgt_chunk(f, i)->cpu + 1;
	st = calloc(ncpu + 1, sizeof(*st));
	cpus = calloc(ncpu + 1, sizeof(*cpus));
	if (!st || !cpus) {
		free(st);
		free(cpus);
		return -1;
	}
	for (cpu = 0; cpu < ncpu; cpu++)
		if (hgt_cpu_stats(f, cpu)) {
			st[n] = *hgt_cpu_stats(f, cpu);
			cpus[n++] = cpu;
		}
	if (hgt_window(f, &win.start_tsc, &win.stop_tsc))
		ret = hgt_writer_trailer(&k->w, &win, st, cpus, n);
	else		/* a file without a window keeps none: only the stats */
		ret = hgt_writer_trailer(&k->w, NULL, st, cpus, n);
	free(st);
	free(cpus);
	return ret;
}

int hgt_pack_file(const char *in, const char *out, int level)
{
	struct packer k = { .level = level };
	struct hgt_file *f = NULL;
	struct hgt_cursor *c = NULL;
	const struct hgt_rec *r;
	struct hg_err err;
	char *tmp = NULL, *meta = NULL;
	int rc, ret = -2, complete;
	uint32_t i;

	if (hgt_open(&f, in, HGT_OPEN_ALLOW_INCOMPLETE, &err)) {
		fprintf(stderr, "hgtrace: %s\n", err.msg);
		return -1;
	}
	complete = hgt_complete(f);
	if (asprintf(&tmp, "%s.packing", out) < 0 || !(meta = packed_meta(f, level)))
		goto out;
	if (hgt_writer_open(&k.w, tmp, HGT_FILE_VERSION_PACKED, meta)) {
		fprintf(stderr, "hgtrace: %s\n", k.w.err.msg);
		goto out_w;
	}
	c = hgt_cursor_open(f, HGT_ALL_CPUS, &err);
	if (!c) {
		fprintf(stderr, "hgtrace: %s\n", err.msg);
		ret = -1;
		goto out_w;
	}
	while ((rc = hgt_cursor_next(c, &r, &err)) > 0) {
		if (add_record(&k, hgt_cursor_cpu(c), r)) {
			if (!k.w.error)
				fprintf(stderr, "hgtrace: out of memory packing %s\n", in);
			goto out_w;
		}
	}
	if (rc < 0) {
		fprintf(stderr, "hgtrace: %s\n", err.msg);
		ret = -1;
		goto out_w;
	}
	for (i = 0; i < k.ncpu; i++)
		if (flush_block(&k, i))
			goto out_w;
	if (copy_trailer(&k, f) || (complete && hgt_writer_end(&k.w))) {
		fprintf(stderr, "hgtrace: %s\n", k.w.error ? k.w.err.msg : "out of memory");
		goto out_w;
	}
	if (hgt_writer_close(&k.w)) {
		fprintf(stderr, "hgtrace: %s\n", k.w.err.msg);
		goto out;
	}
	if (rename(tmp, out)) {
		fprintf(stderr, "hgtrace: cannot rename %s to %s: %s\n", tmp, out, strerror(errno));
		goto out;
	}
	ret = complete ? 0 : 1;
	if (!complete)
		fprintf(stderr, "hgtrace: %s: the recording did not finish (no END marker); packed as it is\n", in);
	goto out;
out_w:
	hgt_writer_close(&k.w);
out:
	if (ret < 0 && tmp)
		unlink(tmp);	/* the input stays as it was */
	hgt_cursor_close(c);
	hgt_close(f);
	for (i = 0; i < k.ncpu; i++)
		free(k.cpu[i].p);
	free(k.cpu);
	free(tmp);
	free(meta);
	return ret;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hgtrace pack IN.hgt [-o OUT.hgt] [-l LEVEL]\n\n"
		"Rewrite a recording with packed chunks: each CPU's records as columns of small\n"
		"differences, deflated. Every record is kept bit for bit; files shrink to about\n"
		"an eighth of plain (a quarter of trace-cmd's compressed trace.dat) and need\n"
		"readers of file format 3 (this hgtrace, hourglass report).\n\n"
		"  -o, --output FILE   write here (default: IN itself, replaced when done)\n"
		"  -l, --level N       zlib level 1-9 (default 9)\n"
		"  -h, --help          this text\n\n"
		"Exit status: 0 packed, 1 bad usage, 2 cannot write, 3 bad or unfinished input\n"
		"(an unfinished one is packed as it is).\n");
}

int hgt_cmd_pack(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, 0, 'o' }, { "level", required_argument, 0, 'l' },
		{ "help", no_argument, 0, 'h' }, { 0 }
	};
	const char *out = NULL;
	int level = 9, c, rc;
	char *end;

	while ((c = getopt_long(argc, argv, "o:l:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'l':
			level = (int)strtol(optarg, &end, 10);
			if (*end || level < 1 || level > 9) {
				fprintf(stderr, "hgtrace pack: bad level '%s' (1-9)\n", optarg);
				return HGT_EXIT_USAGE;
			}
			break;
		case 'h': usage(stdout); return HGT_EXIT_OK;
		default: usage(stderr); return HGT_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "hgtrace pack: needs one input file\n");
		usage(stderr);
		return HGT_EXIT_USAGE;
	}
	rc = hgt_pack_file(argv[optind], out ? out : argv[optind], level);
	if (rc == -2)
		return HGT_EXIT_ENV;
	return rc ? HGT_EXIT_DATA : HGT_EXIT_OK;
}

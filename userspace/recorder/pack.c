// SPDX-License-Identifier: GPL-2.0
/*
 * pack.c - hgtrace pack: rewrite a recording with packed chunks.
 *
 *   hgtrace pack IN.hgt [-o OUT.hgt] [-l LEVEL]
 *
 * Every record is kept, bit for bit; only the chunks change: each CPU's
 * records in blocks of HGT_PACK_BLOCK, as columns, deflated (hgt_pack.c).
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
#include "hgt_dev.h"
#include "hgt_file.h"
#include "hgtrace_cmds.h"

struct block { char *p; size_t len, cap; uint32_t n; };

struct packer {
	struct hgt_writer w;
	struct block *cpu;
	size_t ncpu;
	int level;
	char *trailer;		/* time and stats chunks, copied after the last block */
	size_t tlen;
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
	free(out);
	b->len = 0;
	b->n = 0;
	return ret;
}

static int add_records(struct packer *k, const struct hgt_chunk *c, const char *data)
{
	size_t pos = 0;

	if (c->cpu >= k->ncpu) {
		struct block *nb = realloc(k->cpu, (c->cpu + 1) * sizeof(*nb));

		if (!nb)
			return -1;
		memset(nb + k->ncpu, 0, (c->cpu + 1 - k->ncpu) * sizeof(*nb));
		k->cpu = nb;
		k->ncpu = c->cpu + 1;
	}
	while (pos + sizeof(struct hgt_rec) <= c->nr_bytes) {
		const struct hgt_rec *h = (const void *)(data + pos);
		struct block *b = &k->cpu[c->cpu];

		if (h->len < sizeof(*h) || h->len % 8 || pos + h->len > c->nr_bytes) {
			fprintf(stderr, "hgtrace: %s: corrupt record in a chunk of CPU %u\n", k->w.path, c->cpu);
			return -1;
		}
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
		pos += h->len;
		if (++b->n == HGT_PACK_BLOCK && flush_block(k, c->cpu))
			return -1;
	}
	return 0;
}

static int keep_trailer(struct packer *k, const struct hgt_chunk *c, const char *data)
{
	char *t = realloc(k->trailer, k->tlen + sizeof(*c) + c->nr_bytes);

	if (!t)
		return -1;
	memcpy(t + k->tlen, c, sizeof(*c));
	memcpy(t + k->tlen + sizeof(*c), data, c->nr_bytes);
	k->trailer = t;
	k->tlen += sizeof(*c) + c->nr_bytes;
	return 0;
}

/* the metadata, saying how the file is compressed now */
static char *packed_meta(const char *meta, int level)
{
	size_t len = strlen(meta);
	char *m = malloc(len + 64), *o = m;
	const char *line = meta;

	if (!m)
		return NULL;
	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line + 1) : strlen(line);

		if (!strncmp(line, "compression:", 12))
			o += sprintf(o, "compression: packed (columns, zlib %d)\n", level);
		else if (!strncmp(line, "format:", 7))
			o += sprintf(o, "format: hgtrace %d\n", HGT_FILE_VERSION_PACKED);
		else {
			memcpy(o, line, n);
			o += n;
		}
		line += n;
	}
	*o = 0;
	return m;
}

int hgt_pack_file(const char *in, const char *out, int level)
{
	struct packer k = { .level = level };
	struct hgt_reader r;
	struct hgt_chunk c;
	const char *data;
	char *tmp = NULL, *meta = NULL;
	int rc, ret = -2;
	size_t i;

	if (hgt_reader_open(&r, in))
		return -1;
	if (asprintf(&tmp, "%s.packing", out) < 0 || !(meta = packed_meta(r.meta, level)))
		goto out;
	if (hgt_writer_open(&k.w, tmp, meta))
		goto out;
	/* hgt_writer_open wrote version 1: packed chunks need readers of HGT_FILE_VERSION_PACKED */
	{
		uint32_t v = HGT_FILE_VERSION_PACKED;

		if (fseek(k.w.f, 8, SEEK_SET) || fwrite(&v, 4, 1, k.w.f) != 1 || fseek(k.w.f, 0, SEEK_END)) {
			fprintf(stderr, "hgtrace: writing %s: %s\n", tmp, strerror(errno));
			goto out_w;
		}
	}
	while ((rc = hgt_reader_next(&r, &c, &data)) == 1) {
		if (c.magic == HGT_CHUNK_MAGIC ? add_records(&k, &c, data) : keep_trailer(&k, &c, data)) {
			ret = -1;
			goto out_w;
		}
	}
	if (rc < 0) {
		ret = -1;
		goto out_w;
	}
	for (i = 0; i < k.ncpu; i++)
		if (flush_block(&k, i))
			goto out_w;
	if (hgt_writer_put(&k.w, k.trailer, k.tlen))
		goto out_w;
	if (r.complete) {
		struct hgt_chunk end = { .magic = HGT_END_MAGIC };

		if (hgt_writer_put(&k.w, &end, sizeof(end)))
			goto out_w;
	}
	if (hgt_writer_close(&k.w))
		goto out;
	if (rename(tmp, out)) {
		fprintf(stderr, "hgtrace: cannot rename %s to %s: %s\n", tmp, out, strerror(errno));
		goto out;
	}
	ret = r.complete ? 0 : 1;
	if (!r.complete)
		fprintf(stderr, "hgtrace: %s: the recording did not finish (no END marker); packed as it is\n", in);
	goto out;
out_w:
	hgt_writer_close(&k.w);
out:
	if (ret < 0 && tmp)
		unlink(tmp);	/* the input stays as it was */
	hgt_reader_close(&r);
	for (i = 0; i < k.ncpu; i++)
		free(k.cpu[i].p);
	free(k.cpu);
	free(k.trailer);
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
		"readers of file format 2 (this hgtrace, hourglass report, tools/hgtrace_file.py).\n\n"
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

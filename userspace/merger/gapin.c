// SPDX-License-Identifier: GPL-2.0
/*
 * gapin.c - an earlier merge's gap stream of the same run, read back
 * (hgmerge --truth FILE.hgg): the kernel's verdict on each gap without the
 * kernel's recording.
 *
 * Why: hourglass learn scores hundreds of sets of limits on each run. Every
 * one of them sees the same gaps with the same kernel causes; only the
 * inference differs, and the inference reads hourglass's side alone. The
 * kernel's recording (a few hundred thousand events a run) is read once,
 * into the gap stream, and each later merge reads the run's few thousand
 * gaps instead: 0.2 s a merge became a few milliseconds (docs/profile.md).
 *
 * The file is checked whole (docs/gap-stream.md): magic, major, a record
 * size this reader knows, a trailer whose count matches. A gap of the run
 * that the file does not hold is a file of another run: bad input.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "gapin.h"

struct gapin {
	char *path;
	struct hgg_header h;
	struct hgg_gap *v;	/* sorted by (cpu, g0) */
	size_t n;
};

static int by_cpu_g0(const void *x, const void *y)
{
	const struct hgg_gap *a = x, *b = y;

	if (a->cpu != b->cpu)
		return a->cpu < b->cpu ? -1 : 1;
	return a->g0 < b->g0 ? -1 : a->g0 > b->g0;
}

struct gapin *gapin_open(const char *path)
{
	struct gapin *gi = xcalloc(1, sizeof(*gi));
	struct hgg_trailer t;
	FILE *f = fopen(path, "rb");
	size_t cap = 0, rec = sizeof(struct hgg_gap);
	unsigned char *buf;
	long off;

	if (!f)
		fail_env("%s: cannot open it: %s", path, strerror(errno));
	gi->path = xstrdup(path);
	if (fread(&gi->h, sizeof(gi->h), 1, f) != 1 || memcmp(gi->h.magic, HGG_MAGIC, 8))
		fail("%s: offset 0: not a gap stream (hgmerge --gaps; docs/gap-stream.md)", path);
	if (gi->h.major != HGG_MAJOR)
		fail("%s: offset 8: gap stream version %u.%u; this hgmerge reads %u.x", path, gi->h.major,
		     gi->h.minor, HGG_MAJOR);
	/* an older minor's records are shorter: the fields it lacks stay 0 */
	if (gi->h.rec_size < offsetof(struct hgg_gap, switch_path_cycles) || gi->h.rec_size > 4096)
		fail("%s: offset 12: a record of %u bytes: not a gap stream this hgmerge reads", path,
		     gi->h.rec_size);
	buf = xmalloc(gi->h.rec_size);
	for (off = sizeof(gi->h);; off += gi->h.rec_size) {
		struct hgg_gap g = { 0 };

		if (fread(buf, 8, 1, f) != 1)
			fail("%s: offset %ld: cut short: no trailer (HGGEND)", path, off);
		if (!memcmp(buf, "HGGEND\n", 8))
			break;
		if (fread(buf + 8, gi->h.rec_size - 8, 1, f) != 1)
			fail("%s: offset %ld: cut short inside gap %zu", path, off, gi->n);
		memcpy(&g, buf, gi->h.rec_size < rec ? gi->h.rec_size : rec);
		if (gi->h.rec_size < offsetof(struct hgg_gap, turn_cpu) + sizeof(g.turn_cpu))
			g.turn_cpu = -1;	/* before 1.4: no turns known */
		if (g.cls >= HGG_C_N || g.kind >= HGG_KD_N || g.why >= HGG_W_N || g.ncomp > HGG_COMPS ||
		    g.g1 < g.g0)
			fail("%s: offset %ld: gap %zu is not a gap (class %u, kind %u, why %u, %u parts)", path,
			     off, gi->n, g.cls, g.kind, g.why, g.ncomp);
		VEC_PUSH(gi->v, gi->n, cap, g);
	}
	memcpy(t.magic, buf, 8);
	if (fread(&t.nr_gaps, sizeof(t.nr_gaps), 1, f) != 1 || t.nr_gaps != gi->n)
		fail("%s: offset %ld: the trailer counts %llu gaps, the file holds %zu", path, off,
		     (unsigned long long)t.nr_gaps, gi->n);
	free(buf);
	fclose(f);
	qsort(gi->v, gi->n, sizeof(*gi->v), by_cpu_g0);
	return gi;
}

const struct hgg_header *gapin_header(const struct gapin *gi)
{
	return &gi->h;
}

const struct hgg_gap *gapin_find(const struct gapin *gi, const struct gapdef *d)
{
	struct hgg_gap key = { .cpu = d->cpu, .g0 = (uint64_t)d->g0 };
	const struct hgg_gap *g = bsearch(&key, gi->v, gi->n, sizeof(*gi->v), by_cpu_g0);

	if (!g || g->g1 != (uint64_t)d->g1 || g->thread != d->thread || g->next_thread != d->next_thread)
		fail("%s: holds no gap of thread %u on CPU %u at TSC %lld..%lld: the gap stream of another "
		     "run, or of another version of it", gi->path, d->thread, d->cpu, (long long)d->g0,
		     (long long)d->g1);
	return g;
}

void gapin_close(struct gapin *gi)
{
	if (!gi)
		return;
	free(gi->v);
	free(gi->path);
	free(gi);
}

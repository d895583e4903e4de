// SPDX-License-Identifier: GPL-2.0
/*
 * hgl.c - hourglass's side of a run: its intervals, the gaps between them on
 * each CPU, the wake-up and missed-period windows, the CPU changes.
 *
 * The reference is tools/hgmerge/load.py (gaps, migrations) and latency.py
 * (windows); report.py has already checked the file's prelude, info and END
 * sections, so only the records are checked here, with the same messages.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "../hourglass/hgl_trace.h"

/* a stable order by start: qsort is not stable, so ties keep their index */
struct ivref { struct interval iv; size_t idx; };

static int by_t0(const void *a, const void *b)
{
	const struct ivref *x = a, *y = b;

	if (x->iv.t0 != y->iv.t0)
		return x->iv.t0 < y->iv.t0 ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void sort_stable(struct interval *v, size_t n)
{
	struct ivref *t = xcalloc(n ? n : 1, sizeof(*t));
	size_t i;

	for (i = 0; i < n; i++)
		t[i] = (struct ivref){ v[i], i };
	qsort(t, n, sizeof(*t), by_t0);
	for (i = 0; i < n; i++)
		v[i] = t[i].iv;
	free(t);
}

/* the records section, mapped: whatever else the file holds report.py read */
static const struct hgl_rec *map_records(const char *path, size_t *n, size_t *first_off)
{
	struct hgl_prelude p;
	struct stat st;
	const char *m;
	size_t off;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st))
		fail("%s: cannot read it", path);
	if ((size_t)st.st_size < sizeof(p))
		fail("%s: offset 0: too short for an hourglass trace", path);
	m = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		fail("%s: cannot map it", path);
	for (off = sizeof(p); off + sizeof(struct hgl_section) <= (size_t)st.st_size;) {
		struct hgl_section s;

		memcpy(&s, m + off, sizeof(s));
		off += sizeof(s);
		if (s.size > (uint64_t)st.st_size - off)
			fail("%s: offset %zu: a section runs past the end of the file", path, off - sizeof(s));
		if (!memcmp(s.tag, "recs", 4)) {
			if (s.size % sizeof(struct hgl_rec))
				fail("%s: offset %zu: record section of %llu bytes is not a whole number of records",
				     path, off - sizeof(s), (unsigned long long)s.size);
			*n = s.size / sizeof(struct hgl_rec);
			*first_off = off;
			return (const struct hgl_rec *)(m + off);
		}
		if (!memcmp(s.tag, "end!", 4))
			break;
		off += s.size + (-s.size & 7);
	}
	*n = 0;
	*first_off = 0;
	return NULL;
}

static void add_window(struct run *r, size_t *cap, int kind, const struct hgl_rec *x, int64_t g0, int64_t g1)
{
	struct gap w = {
		.g0 = g0, .g1 = g1, .cpu = x->cpu, .thread = x->thread, .tid = r->th[x->thread].tid,
		.window = kind, .r0 = (int64_t)x->t0, .r1 = (int64_t)x->t1, .r2 = (int64_t)x->t2,
		.rflags = x->flags, .rtype = x->type,
	};
	VEC_PUSH(r->wins, r->nwins, *cap, w);
}

void load_hourglass(struct run *r)
{
	size_t n, off, i, k, *cap = xcalloc(r->nthreads + 1, sizeof(*cap)), wcap = 0, gcap = 0, warncap = 0;
	const struct hgl_rec *rec = map_records(r->hgl_path, &n, &off);
	struct interval **per_cpu = NULL;
	size_t *npc = NULL, *cpc = NULL, ncpu = 0;

	r->iv = xcalloc(r->nthreads + 1, sizeof(*r->iv));
	r->niv = xcalloc(r->nthreads + 1, sizeof(*r->niv));
	for (i = 0; i < n; i++) {
		const struct hgl_rec *x = &rec[i];

		if (x->type < HGL_REC_INTERVAL || x->type > HGL_REC_WAKE)
			fail("%s: offset %zu: unknown record type %u", r->hgl_path, off + i * sizeof(*x), x->type);
		if (x->thread >= r->nthreads)
			fail("%s: offset 0: record of thread %u, but the run had %d threads",
			     r->hgl_path, x->thread, r->nthreads);
	}
	for (i = 0; i < n; i++) {
		const struct hgl_rec *x = &rec[i];

		if (x->type == HGL_REC_INTERVAL) {
			struct interval v = { (int64_t)x->t0, (int64_t)x->t1, x->cpu, x->thread, x->flags };

			VEC_PUSH(r->iv[x->thread], r->niv[x->thread], cap[x->thread], v);
		} else if (x->type == HGL_REC_WAKE && (int64_t)x->t1 > (int64_t)x->t0 - r->margin) {
			add_window(r, &wcap, 1, x, (int64_t)x->t0 - r->margin, (int64_t)x->t1);
		} else if (x->type == HGL_REC_JOB && (x->flags & HGL_JOB_MISSED) && x->t2 > x->t0) {
			add_window(r, &wcap, 2, x, (int64_t)x->t0, (int64_t)x->t2);
		}
	}
	for (k = 0; k < (size_t)r->nthreads; k++) {
		struct interval *v = r->iv[k];

		sort_stable(v, r->niv[k]);
		for (i = 1; i < r->niv[k]; i++)
			if (v[i].t0 < v[i - 1].t1)
				fail("%s: thread %zu: intervals overlap at TSC %lld", r->hgl_path, k,
				     (long long)v[i].t0);
		for (i = 0; i < r->niv[k]; i++) {
			uint32_t c = v[i].cpu;

			if (c >= ncpu) {
				size_t nn = c + 1;

				per_cpu = xrealloc(per_cpu, nn * sizeof(*per_cpu));
				npc = xrealloc(npc, nn * sizeof(*npc));
				cpc = xrealloc(cpc, nn * sizeof(*cpc));
				for (; ncpu < nn; ncpu++)
					per_cpu[ncpu] = NULL, npc[ncpu] = cpc[ncpu] = 0;
			}
			VEC_PUSH(per_cpu[c], npc[c], cpc[c], v[i]);
			if (i && v[i].cpu != v[i - 1].cpu) {
				r->migr = xrealloc(r->migr, (r->nmigr + 1) * sizeof(*r->migr));
				r->migr[r->nmigr].thread = k;
				r->migr[r->nmigr].a_t1 = v[i - 1].t1;
				r->migr[r->nmigr++].b_t0 = v[i].t0;
			}
		}
	}
	for (size_t c = 0; c < ncpu; c++) {
		struct interval *v = per_cpu[c];

		sort_stable(v, npc[c]);
		for (i = 1; i < npc[c]; i++) {
			const struct interval *a = &v[i - 1], *b = &v[i];
			struct gap g = { 0 };

			if (b->t0 < a->t1) {
				char *w = xasprintf("%s: threads %u and %u both ran on CPU %zu at TSC %lld: CPU numbers "
						    "from rdtscp are off", r->hgl_path, a->thread, b->thread, c,
						    (long long)b->t0);
				VEC_PUSH(r->warnings, r->nwarnings, warncap, w);
				continue;
			}
			g.thread = a->thread;
			g.tid = r->th[a->thread].tid;
			g.g0 = a->t1;
			g.g1 = b->t0;
			g.cpu = c;
			g.vol = a->flags & HGL_IV_YIELD ? 1 : a->flags & HGL_IV_SLEEP ? 2 : 0;
			g.next_thread = b->thread;
			g.next_tid = r->th[b->thread].tid;
			g.seq = r->ngaps;
			VEC_PUSH(r->gaps, r->ngaps, gcap, g);
		}
		free(per_cpu[c]);
	}
	for (i = 0; i < r->nwins; i++)
		r->wins[i].seq = r->ngaps + i;
	free(per_cpu);
	free(npc);
	free(cpc);
	free(cap);
}

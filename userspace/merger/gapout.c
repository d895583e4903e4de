// SPDX-License-Identifier: GPL-2.0
/*
 * gapout.c - the per-gap stream written out: `--gaps FILE` in the binary
 * format of hg_gaps.h (docs/gap-stream.md), `--gaps-json FILE` as one JSON
 * object a line with every name resolved, for tools and tests.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "export.h"
#include "gapout.h"
#include "hg_jsonw.h"
#include "out_tmp.h"

struct gapout {
	FILE *f;
	char *path, *tmp;
	int json;
	uint64_t n;
	struct infer *in;
	struct run *r;
};

struct gapout *gapout_open(const char *path, int json, struct run *r, struct infer *in)
{
	struct gapout *o = xcalloc(1, sizeof(*o));

	o->path = xstrdup(path);
	o->tmp = xasprintf("%s.partial", path);
	o->json = json;
	o->r = r;
	o->in = in;
	o->f = fopen(o->tmp, "wb");
	if (!o->f)
		fail_env("%s: cannot write it: %s", o->tmp, strerror(errno));
	out_track(o->tmp);	/* removed if the merge stops half-way */
	if (!json) {
		struct hgg_header h = { .major = HGG_MAJOR, .minor = HGG_MINOR, .rec_size = sizeof(struct hgg_gap),
					.tsc_hz = r->hz, .base_tsc = (uint64_t)r->base, .nthreads = r->nthreads,
					.ncpus = r->ncpus };

		memcpy(h.magic, HGG_MAGIC, 8);
		fwrite(&h, sizeof(h), 1, o->f);
	}
	return o;
}

out_of_line void gapout_gap(struct gapout *o, const struct hgg_gap *g, const struct gap_detail *d)
{
	struct jsonw w;
	char buf[256];
	int i;

	o->n++;
	if (!o->json) {
		fwrite(g, sizeof(*g), 1, o->f);
		return;
	}
	jw_begin(&w, o->f);
	jw_obj(&w, NULL);
	jw_numf(&w, "t", t_of(o->r, (int64_t)g->g0), 9);
	jw_uint(&w, "g0", g->g0);
	jw_uint(&w, "g1", g->g1);
	jw_uint(&w, "cpu", g->cpu);
	jw_uint(&w, "thread", g->thread);
	jw_uint(&w, "next_thread", g->next_thread);
	jw_uint(&w, "vol", g->vol);
	jw_str(&w, "inferred", hgg_class_name[g->inferred]);
	jw_str(&w, "why_inferred", infer_why(o->in, g, buf, sizeof(buf)));
	jw_str(&w, "actual", hgg_class_name[g->cls]);
	jw_str(&w, "kind", hgg_kind_name[g->kind]);
	jw_str(&w, "why", why_text[g->why]);
	jw_str(&w, "cause", names_cause(g, buf, sizeof(buf)));
	jw_str(&w, "primary", g->flags & HGG_F_PRIMARY ? names_comp(g->primary_kind, g->primary_id, buf,
								      sizeof(buf)) : NULL);
	jw_uint(&w, "n_events", g->n_events);
	jw_bool(&w, "out", g->flags & HGG_F_OUT);
	jw_bool(&w, "preempted", g->flags & HGG_F_PREEMPTED);
	jw_bool(&w, "in", g->flags & HGG_F_IN);
	jw_bool(&w, "migrated", g->flags & HGG_F_MIGRATED);
	if (g->flags & HGG_F_OUT)
		jw_str(&w, "out_to", names_task(g->out_pid, buf, sizeof(buf)));
	jw_uint(&w, "self_cycles", g->self_cycles);
	jw_uint(&w, "explained_cycles", g->explained_cycles);
	jw_uint(&w, "handler_cycles", g->handler_cycles);
	jw_uint(&w, "switch_path_cycles", g->switch_path_cycles);
	jw_uint(&w, "tick_cycles", g->tick_cycles);
	jw_bool(&w, "tick", g->flags & HGG_F_TICK);
	jw_uint(&w, "turn_cycles", g->turn_cycles);
	if (g->turn_cpu >= 0)
		jw_int(&w, "turn_cpu", g->turn_cpu);
	else
		jw_null(&w, "turn_cpu");
	jw_obj(&w, "components");
	for (i = 0; i < d->ncomp; i++)
		jw_uint(&w, names_comp(d->comp[i].kind, d->comp[i].id, buf, sizeof(buf)), d->comp[i].cycles);
	jw_end_obj(&w);
	jw_end_obj(&w);
}

void gapout_finish(struct gapout *o)
{
	if (!o->json) {
		struct hgg_trailer t = { .nr_gaps = o->n };

		memcpy(t.magic, "HGGEND\n", 8);
		fwrite(&t, sizeof(t), 1, o->f);
	}
	if (fflush(o->f) || ferror(o->f) || fclose(o->f))
		fail_env("%s: write error: %s", o->tmp, strerror(errno));
	o->f = NULL;
}

void gapout_commit(struct gapout *o)
{
	struct hg_err err;

	if (out_commit(o->tmp, o->path, &err))
		fail_err(&err);
	free(o->path);
	free(o->tmp);
	free(o);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * ks_session.c - the KernelShark session: which gap, which rows, the JSON
 * (ks_session.h says why it is shaped so).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hg_jsonw.h"
#include "ks_session.h"
#include "out_tmp.h"

#define ZOOM_NS		1000000		/* shown on each side of the gap */
#define MISSED_SHIFT_NS	10		/* KernelShark puts a missed-events entry this far before its record */

void ks_focus_offer(struct ks_focus tiers[KS_FOCUS_N], const struct hgg_gap *g, uint64_t g0, uint64_t g1)
{
	int explained = hgg_explained(g);
	int in[KS_FOCUS_N] = { explained && g->inferred != g->cls, explained, 1 };
	int t;

	/* gaps come per CPU in time order, not in time order overall: keep the earliest */
	for (t = 0; t < KS_FOCUS_N; t++)
		if (in[t] && (!tiers[t].have || g0 < tiers[t].g0))
			tiers[t] = (struct ks_focus){ 1, g0, g1 };
}

const struct ks_focus *ks_focus_pick(const struct ks_focus tiers[KS_FOCUS_N])
{
	int t;

	for (t = 0; t < KS_FOCUS_N; t++)
		if (tiers[t].have)
			return &tiers[t];
	return NULL;
}

struct rows {
	uint32_t mult, shift;
	uint64_t a_ns, b_ns;	/* the gap's ends in KernelShark's nanoseconds */
	uint64_t below_a, below_b;
};

static int count_entry(void *arg, uint64_t ts, uint64_t missed)
{
	struct rows *r = arg;
	uint64_t ns = td_to_ns(ts, r->mult, r->shift);

	if (missed) {
		int64_t m = (int64_t)ns - MISSED_SHIFT_NS;

		r->below_a += m < (int64_t)r->a_ns;
		r->below_b += m < (int64_t)r->b_ns;
	}
	if (ns >= r->b_ns && (int64_t)ns - MISSED_SHIFT_NS >= (int64_t)r->b_ns)
		return 1;	/* the lane is in time order: nothing after this is below either end */
	r->below_a += ns < r->a_ns;
	r->below_b += ns < r->b_ns;
	return 0;
}

/* an absolute name for @path, which need not exist yet (its folder does) */
static char *abs_name(const char *path)
{
	char *dir = out_dir(path), real[PATH_MAX], *out;
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;

	if (!dir || !realpath(dir, real)) {
		free(dir);
		return NULL;
	}
	free(dir);
	out = malloc(strlen(real) + strlen(base) + 2);
	if (out)
		sprintf(out, "%s%s%s", real, strcmp(real, "/") ? "/" : "", base);
	return out;
}

static void put_stream(FILE *f, int sid, const char *file, long long mtime, const unsigned *cpus, unsigned ncpus,
		       int plugins)
{
	unsigned i;

	fprintf(f, "  {\n   \"type\": \"kshark.config.stream\",\n   \"stream id\": %d,\n", sid);
	fputs("   \"data\": {\"type\": \"kshark.config.data\", \"file\": ", f);
	jw_put_string(f, file, strlen(file));
	fprintf(f, ", \"name\": \"top buffer\", \"time\": %lld},\n", mtime);
	fputs("   \"filters\": {\"type\": \"kshark.config.filter\", \"filter mask\": 7},\n", f);
	fprintf(f, "   \"plugins\": {\"type\": \"kshark.config.plugins\", \"registered\": [%s]},\n",
		plugins ? "[\"sched_events\", true], [\"missed_events\", true]" : "");
	fputs("   \"CPUPlots\": [", f);
	for (i = 0; i < ncpus; i++)
		fprintf(f, "%s%u", i ? ", " : "", cpus[i]);
	fputs("],\n   \"TaskPlots\": []\n  }", f);
}

int ks_session_write(const struct ks_session_files *fl, struct td_writer *w, int hg_buf, unsigned ncpus,
		     const uint8_t *hg_cpus, double tsc_hz, const struct ks_focus *gap, char **tmp,
		     struct hg_err *err)
{
	struct rows r = { 0 };
	uint64_t n = 0, last = 0, lo, hi, row_a, row_b;
	struct stat sk, sh;
	char *kabs = NULL, *habs = NULL;
	unsigned *cpus = NULL, nhg = 0, c;
	int bufs[2] = { 0, hg_buf }, b, fd = -1, ret = -1;
	FILE *f = NULL;

	*tmp = NULL;
	td_tsc2nsec(tsc_hz, &r.mult, &r.shift);
	r.a_ns = td_to_ns(gap->g0, r.mult, r.shift);
	r.b_ns = td_to_ns(gap->g1, r.mult, r.shift);
	for (b = 0; b < 2; b++)
		for (c = 0; c < ncpus; c++) {
			struct td_lane *l = td_lane(w, bufs[b], c);
			uint64_t ns = td_to_ns(l->last, r.mult, r.shift);

			if (!l->entries)
				continue;
			/* the kernel file's missed-events marks are entries of KernelShark's table too */
			n += l->entries + (b == 0 ? l->marks : 0);
			if (ns > last)
				last = ns;
			if (td_scan(w, bufs[b], c, count_entry, &r, err))
				return -1;
		}
	row_a = r.below_a < (n ? n - 1 : 0) ? r.below_a : (n ? n - 1 : 0);
	row_b = r.below_b < (n ? n - 1 : 0) ? r.below_b : (n ? n - 1 : 0);
	lo = r.a_ns > ZOOM_NS ? r.a_ns - ZOOM_NS : 0;
	hi = r.b_ns + ZOOM_NS < last ? r.b_ns + ZOOM_NS : last;
	if (hi <= lo)
		hi = lo + 2 * ZOOM_NS;

	if (stat(fl->kernel_tmp, &sk) || stat(fl->hg_tmp, &sh)) {
		hg_err_env(err, "%s: cannot stat the files it names: %s", fl->path, strerror(errno));
		goto out;
	}
	kabs = abs_name(fl->kernel_dat);
	habs = abs_name(fl->hg_dat);
	cpus = calloc(ncpus, sizeof(*cpus));
	if (!kabs || !habs || !cpus) {
		hg_err_env(err, "%s: cannot name the files it opens: %s", fl->path, strerror(errno ? errno : ENOMEM));
		goto out;
	}
	fd = out_create(fl->path, tmp, err);
	if (fd < 0)
		goto out;
	f = fdopen(fd, "w");
	if (!f) {
		hg_err_env(err, "%s: %s", fl->path, strerror(errno));
		close(fd);
		goto out;
	}
	fputs("{\n \"type\": \"kshark.config.session\",\n \"MainWindow\": [1580, 980],\n \"Splitter\": [300, 640],\n", f);
	fprintf(f, " \"Model\": {\"type\": \"kshark.config.model\", \"range\": [%llu, %llu], \"bins\": 1468},\n",
		(unsigned long long)lo, (unsigned long long)hi);
	fputs(" \"data streams\": [\n", f);
	for (c = 0; c < ncpus; c++)
		cpus[c] = c;
	put_stream(f, 0, kabs, (long long)sk.st_mtime, cpus, ncpus, 1);
	fputs(",\n", f);
	for (c = 0; c < ncpus; c++)
		if (hg_cpus[c])
			cpus[nhg++] = c;
	put_stream(f, 1, habs, (long long)sh.st_mtime, cpus, nhg, 0);
	fputs("\n ],\n \"ComboPlots\": [],\n", f);
	fprintf(f, " \"Markers\": {\"type\": \"kshark.config.markers\", \"markA\": {\"isSet\": true, \"row\": %llu}, "
		"\"markB\": {\"isSet\": true, \"row\": %llu}, \"Active\": \"A\"},\n",
		(unsigned long long)row_a, (unsigned long long)row_b);
	fprintf(f, " \"ViewTop\": %llu,\n \"ColorScheme\": 0.75,\n", (unsigned long long)row_a);
	fputs(" \"User Plugins\": {\"type\": \"kshark.config.plugins\", \"obj. files\": []}\n}\n", f);
	if (ferror(f) | fclose(f)) {
		f = NULL;
		hg_err_env(err, "%s: cannot write %s: %s", fl->path, *tmp, strerror(errno));
		goto out;
	}
	f = NULL;
	ret = 0;
out:
	if (f)
		fclose(f);
	if (ret) {
		out_discard(*tmp);
		*tmp = NULL;
	}
	free(kabs);
	free(habs);
	free(cpus);
	return ret;
}

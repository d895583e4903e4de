// SPDX-License-Identifier: GPL-2.0
/*
 * ks_session.c - the KernelShark session: which moment, which rows, the JSON
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

#define ZOOM_MIN_NS	200000		/* shown on each side of the moment, at least ... */
#define START_NS	2000000		/* ... and from the start when there is no moment */
#define MISSED_SHIFT_NS	10		/* KernelShark puts a missed-events entry this far before its record */
#define GRAPH_ROW_PX	58		/* a graph's height and spacing in KernelShark 2.2 (KS_GRAPH_HEIGHT + 20) */

void ks_focus_offer(struct ks_focus tiers[KS_FOCUS_N], const struct hgg_gap *g, uint64_t g0, uint64_t g1)
{
	int explained = hgg_explained(g);
	int in[KS_FOCUS_N] = { [KS_FOCUS_WRONG] = explained && g->inferred != g->cls,
			       [KS_FOCUS_EXPLAINED] = explained, [KS_FOCUS_ANY] = 1 };
	int t;

	/* gaps come per CPU in time order, not in time order overall: keep the earliest */
	for (t = 0; t < KS_FOCUS_N; t++)
		if (in[t] && (!tiers[t].have || g0 < tiers[t].t0))
			tiers[t] = (struct ks_focus){ 1, t, g0, g1, 0, g->cpu, g->thread, g->next_thread };
}

void ks_focus_wake(struct ks_focus tiers[KS_FOCUS_N], uint64_t t0, uint64_t t1, int64_t lateness_ns,
		   uint32_t cpu, int thread, int lat)
{
	struct ks_focus *f = &tiers[lat ? KS_FOCUS_LAT : KS_FOCUS_WAKE];

	/* the worst; of equals, the earliest */
	if (!f->have || lateness_ns > f->worst || (lateness_ns == f->worst && t0 < f->t0))
		*f = (struct ks_focus){ 1, lat ? KS_FOCUS_LAT : KS_FOCUS_WAKE, t0, t1 > t0 ? t1 : t0, lateness_ns,
					cpu, thread, thread };
}

const struct ks_focus *ks_focus_pick(const struct ks_focus tiers[KS_FOCUS_N])
{
	int t;

	for (t = 0; t < KS_FOCUS_N; t++)
		if (tiers[t].have)
			return &tiers[t];
	return NULL;
}

const char *ks_focus_name(const struct ks_focus *f)
{
	static const char *const names[KS_FOCUS_N + 1] = {
		[KS_FOCUS_LAT] = "the worst wake-up", [KS_FOCUS_WRONG] = "the first wrong inference",
		[KS_FOCUS_EXPLAINED] = "the first gap the kernel explains", [KS_FOCUS_ANY] = "the first gap",
		[KS_FOCUS_WAKE] = "the worst wake-up", [KS_FOCUS_N] = "the start of the trace",
	};

	return names[f && f->tier >= 0 && f->tier < KS_FOCUS_N ? f->tier : KS_FOCUS_N];
}

/*
 * The rows of KernelShark's table: all entries of both streams merged by time, stream 0's
 * before stream 1's at equal times, within a stream the lower CPU's first, within a CPU
 * the file's order (kshark_merge_data_entries, pick_next_cpu). A missed-events entry of
 * the trace.dat comes MISSED_SHIFT_NS before its record.
 */
struct rows {
	uint32_t mult, shift;
	uint64_t ns[2];		/* markers A and B: their times in KernelShark's nanoseconds */
	int exact[2];		/* ... at hourglass's event there (stream 1, on CPU @cpu), or the first entry */
	uint32_t cpu;
	uint64_t below[2];	/* the entries before the marker's */
	uint64_t hidden;	/* ... of them, before A's: the trace.dat's hourglass events (hidden by the
				 * session's filter), as many as the companion's before A's */
	int stream;		/* the lane being counted */
	uint32_t lane_cpu;
	uint64_t last;		/* the latest time either marker is at */
};

/* before - whether an entry of the lane at @ns comes before marker @m's row */
static int before(const struct rows *r, int64_t ns, int m)
{
	if (ns < (int64_t)r->ns[m])
		return 1;
	if (ns > (int64_t)r->ns[m] || !r->exact[m])
		return 0;
	/* at the marker's time: stream 0's entries all come first, then stream 1's lower CPUs' */
	return r->stream == 0 || r->lane_cpu < r->cpu;
}

static int count_entry(void *arg, uint64_t ts, uint64_t missed)
{
	struct rows *r = arg;
	int64_t ns = (int64_t)td_to_ns(ts, r->mult, r->shift);
	int m;

	if (ns - MISSED_SHIFT_NS > (int64_t)r->last)
		return 1;	/* the lane is in time order: nothing after this is before either row */
	for (m = 0; m < 2; m++) {
		if (missed && r->stream == 0)
			r->below[m] += before(r, ns - MISSED_SHIFT_NS, m);
		r->below[m] += before(r, ns, m);
	}
	/* the trace.dat's copy of this event: before A's row when at A's time too */
	if (r->stream == 1)
		r->hidden += ns < (int64_t)r->ns[0] || (ns == (int64_t)r->ns[0] && r->exact[0]);
	return 0;
}

char *ks_rel_path(const char *from_dir, const char *to)
{
	size_t common = 0, i, up = 0, n, flen = strlen(from_dir);
	const char *rest;
	char *out;

	/* the longest common prefix that ends at a component's end */
	for (i = 0; from_dir[i] && from_dir[i] == to[i]; i++)
		if (from_dir[i] == '/')
			common = i + 1;
	if (!from_dir[i] && to[i] == '/')
		common = i + 1;
	else if (!from_dir[i] && i == 1)	/* from "/" */
		common = 1;
	rest = to + common;
	/* the components of @from_dir after the common prefix: each a ".." */
	for (i = common; i < flen; i++)
		if ((i == common || from_dir[i - 1] == '/') && from_dir[i] != '/')
			up++;
	n = 3 * up + strlen(rest) + 1;
	out = malloc(n);
	if (!out)
		return NULL;
	out[0] = 0;
	for (i = 0; i < up; i++)
		strcat(out, "../");
	strcat(out, rest);
	return out;
}

/* the folder of @path as an absolute, normalised name (it exists), malloc'd */
static char *abs_dir(const char *path)
{
	char *dir = out_dir(path), real[PATH_MAX];

	if (!dir || !realpath(dir, real)) {
		free(dir);
		return NULL;
	}
	free(dir);
	return strdup(real);
}

/* @file (which need not exist yet) named from the session's folder @ses_dir */
static char *name_from(const char *ses_dir, const char *file)
{
	const char *slash = strrchr(file, '/');
	char *dir = abs_dir(file), *abs, *rel;

	if (!dir)
		return NULL;
	abs = malloc(strlen(dir) + strlen(file) + 2);
	if (!abs) {
		free(dir);
		return NULL;
	}
	sprintf(abs, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", slash ? slash + 1 : file);
	rel = ks_rel_path(ses_dir, abs);
	free(dir);
	free(abs);
	return rel;
}

static void put_data(struct jsonw *j, const char *file, long long mtime)
{
	jw_obj(j, "data");
	jw_str(j, "type", "kshark.config.data");
	jw_str(j, "file", file);
	jw_str(j, "name", "top buffer");
	jw_int(j, "time", mtime);
	jw_end_obj(j);
}

static void put_plugins(struct jsonw *j, const char *const *names, unsigned n)
{
	jw_obj(j, "plugins");
	jw_str(j, "type", "kshark.config.plugins");
	jw_arr(j, "registered");
	for (unsigned i = 0; i < n; i++) {
		jw_arr(j, NULL);
		jw_str(j, NULL, names[i]);
		jw_bool(j, NULL, true);
		jw_end_arr(j);
	}
	jw_end_arr(j);
	jw_end_obj(j);
}

static void put_marker(struct jsonw *j, const char *name, int set, uint64_t row)
{
	jw_obj(j, name);
	jw_bool(j, "isSet", set);
	if (set)
		jw_uint(j, "row", row);
	jw_end_obj(j);
}

int ks_session_write(const struct ks_session_files *fl, const struct ks_session_in *in, char **tmp,
		     struct hg_err *err)
{
	static const char *const kernel_plugins[] = { "sched_events", "missed_events" };
	static const char *const hg_plugins[] = { "hourglass" };
	const struct ks_focus *f = in->focus;
	struct rows r = { 0 };
	uint64_t n = 0, lo, hi, len, margin, row[2] = { 0, 0 }, top = 0;
	struct stat sk, sh, sp;
	char *ses_dir = NULL, *kname = NULL, *hname = NULL;
	int bufs[2] = { in->main_buf, in->hg_buf }, b, fd = -1, ret = -1, plugin = 0;
	unsigned c, rows_shown;
	struct jsonw j;
	FILE *out = NULL;

	*tmp = NULL;
	td_tsc2nsec(in->tsc_hz, &r.mult, &r.shift);
	if (f) {
		r.ns[0] = td_to_ns(f->t0, r.mult, r.shift);
		r.ns[1] = td_to_ns(f->t1, r.mult, r.shift);
		/* a gap's ends are hourglass's events (interval_end, interval_start); a wake-up's
		 * end is its wakeup event, its start (the intended expiry) no event's */
		r.exact[0] = f->tier != KS_FOCUS_LAT && f->tier != KS_FOCUS_WAKE;
		r.exact[1] = 1;
		r.cpu = f->cpu;
		r.last = r.ns[1] > r.ns[0] ? r.ns[1] : r.ns[0];
		for (b = 0; b < 2; b++)
			for (c = 0; c < in->ncpus; c++) {
				struct td_lane *l = td_lane(in->w, bufs[b], c);

				if (!l->entries)
					continue;
				/* the trace.dat's missed-events marks are entries of KernelShark's table too */
				n += l->entries + (b == 0 ? l->marks : 0);
				r.stream = b;
				r.lane_cpu = c;
				if (td_scan(in->w, bufs[b], c, count_entry, &r, err))
					return -1;
			}
		for (b = 0; b < 2; b++)
			row[b] = r.below[b] < (n ? n - 1 : 0) ? r.below[b] : (n ? n - 1 : 0);
		/* the table lists only what the filters show: its row of marker A */
		top = row[0] > r.hidden ? row[0] - r.hidden : 0;
		len = r.ns[1] - r.ns[0];
		margin = len > ZOOM_MIN_NS ? len : ZOOM_MIN_NS;
		lo = r.ns[0] > margin ? r.ns[0] - margin : 0;
		hi = r.ns[1] + margin;
	} else {
		lo = 0;
		hi = START_NS;
	}

	if (stat(fl->kernel_tmp, &sk) || stat(fl->hg_tmp, &sh)) {
		hg_err_env(err, "%s: cannot stat the files it names: %s", fl->path, strerror(errno));
		goto out;
	}
	plugin = fl->plugin && !stat(fl->plugin, &sp);
	ses_dir = abs_dir(fl->path);
	kname = ses_dir ? name_from(ses_dir, fl->kernel_dat) : NULL;
	hname = ses_dir ? name_from(ses_dir, fl->hg_dat) : NULL;
	if (!kname || !hname) {
		hg_err_env(err, "%s: cannot name the files it opens: %s", fl->path, strerror(errno ? errno : ENOMEM));
		goto out;
	}
	fd = out_create(fl->path, tmp, err);
	if (fd < 0)
		goto out;
	out = fdopen(fd, "w");
	if (!out) {
		hg_err_env(err, "%s: %s", fl->path, strerror(errno));
		close(fd);
		goto out;
	}
	jw_begin(&j, out);
	j.pretty = true;
	jw_obj(&j, NULL);
	jw_str(&j, "type", "kshark.config.session");
	jw_arr(&j, "MainWindow");
	jw_int(&j, NULL, 1580);
	jw_int(&j, NULL, 980);
	jw_end_arr(&j);
	/* the graph tall enough for every plot: the kernel's CPUs, the tasks, hourglass's CPUs */
	rows_shown = in->ncpus + (in->tasks[0] != 0) + (in->tasks[1] != 0 && in->tasks[1] != in->tasks[0]);
	for (c = 0; c < in->ncpus; c++)
		rows_shown += !!in->hg_cpus[c];
	jw_arr(&j, "Splitter");
	jw_int(&j, NULL, 140 + GRAPH_ROW_PX * (rows_shown < 10 ? rows_shown : 10));
	jw_int(&j, NULL, 340);
	jw_end_arr(&j);
	jw_obj(&j, "Model");
	jw_str(&j, "type", "kshark.config.model");
	jw_arr(&j, "range");
	jw_uint(&j, NULL, lo);
	jw_uint(&j, NULL, hi);
	jw_end_arr(&j);
	jw_int(&j, "bins", 1468);
	jw_end_obj(&j);

	jw_arr(&j, "data streams");
	/* stream 0: the trace.dat, its hourglass events hidden (stream 1 shows them) */
	jw_obj(&j, NULL);
	jw_str(&j, "type", "kshark.config.stream");
	jw_int(&j, "stream id", 0);
	put_data(&j, kname, (long long)sk.st_mtime);
	jw_obj(&j, "filters");
	jw_str(&j, "type", "kshark.config.filter");
	jw_arr(&j, "hide event filter");
	for (unsigned i = 0; i < in->nhidden; i++)
		jw_str(&j, NULL, in->hidden[i]);
	jw_end_arr(&j);
	jw_int(&j, "filter mask", 7);
	jw_end_obj(&j);
	put_plugins(&j, kernel_plugins, 2);
	jw_arr(&j, "CPUPlots");
	for (c = 0; c < in->ncpus; c++)
		jw_uint(&j, NULL, c);
	jw_end_arr(&j);
	jw_arr(&j, "TaskPlots");
	if (in->tasks[0])
		jw_uint(&j, NULL, in->tasks[0]);
	if (in->tasks[1] && in->tasks[1] != in->tasks[0])
		jw_uint(&j, NULL, in->tasks[1]);
	jw_end_arr(&j);
	jw_end_obj(&j);
	/* stream 1: hourglass's events, drawn by the plugin */
	jw_obj(&j, NULL);
	jw_str(&j, "type", "kshark.config.stream");
	jw_int(&j, "stream id", 1);
	put_data(&j, hname, (long long)sh.st_mtime);
	jw_obj(&j, "filters");
	jw_str(&j, "type", "kshark.config.filter");
	jw_int(&j, "filter mask", 7);
	jw_end_obj(&j);
	put_plugins(&j, hg_plugins, plugin);
	jw_arr(&j, "CPUPlots");
	for (c = 0; c < in->ncpus; c++)
		if (in->hg_cpus[c])
			jw_uint(&j, NULL, c);
	jw_end_arr(&j);
	jw_arr(&j, "TaskPlots");
	jw_end_arr(&j);
	jw_end_obj(&j);
	jw_end_arr(&j);

	jw_arr(&j, "ComboPlots");
	jw_end_arr(&j);
	jw_obj(&j, "Markers");
	jw_str(&j, "type", "kshark.config.markers");
	put_marker(&j, "markA", !!f, row[0]);
	put_marker(&j, "markB", !!f, row[1]);
	jw_str(&j, "Active", "A");
	jw_end_obj(&j);
	jw_uint(&j, "ViewTop", top);
	jw_num(&j, "ColorScheme", 0.75);
	jw_obj(&j, "User Plugins");
	jw_str(&j, "type", "kshark.config.plugins");
	jw_arr(&j, "obj. files");
	if (plugin) {
		jw_obj(&j, NULL);
		jw_str(&j, "type", "kshark.config.library");
		jw_str(&j, "file", fl->plugin);
		jw_str(&j, "name", "hourglass");
		jw_int(&j, "time", (long long)sp.st_mtime);
		jw_end_obj(&j);
	}
	jw_end_arr(&j);
	jw_end_obj(&j);
	jw_end_obj(&j);
	fputc('\n', out);
	if (ferror(out) | fclose(out)) {
		out = NULL;
		hg_err_env(err, "%s: cannot write %s: %s", fl->path, *tmp, strerror(errno));
		goto out;
	}
	out = NULL;
	ret = 0;
out:
	if (out)
		fclose(out);
	if (ret) {
		out_discard(*tmp);
		*tmp = NULL;
	}
	free(ses_dir);
	free(kname);
	free(hname);
	return ret;
}

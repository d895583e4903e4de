// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - hgmerge: one hourglass run and the kernel's recording of it,
 * merged on the TSC in one streaming pass; every gap explained and judged;
 * the report as JSON, and on request the per-gap stream and the exports.
 *
 * `hourglass report` and `hourglass export` run it (docs/merge.md); it can
 * be run by hand as well.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "hg_json.h"
#include "hg_jsonw.h"
#include "export.h"
#include "gapin.h"
#include "gapout.h"
#include "out_tmp.h"
#include "report.h"
#include "xthread.h"

struct opts {
	const char *hgl, *kernel, *name, *report, *gaps, *gaps_json, *ks, *ks_session, *pf, *dir;
	const char *truth;	/* --truth: the kernel's verdicts from an earlier merge's gap stream */
	const char *grid;	/* --grid: more sets of limits to decide beside the run's */
	const char *classes;	/* --classes: each gap's class from a profile's model */
	int no_kernel;		/* --no-kernel: hourglass's side alone, nothing judged */
	int check;		/* --check: both files read and checked as a merge would, nothing merged */
	double margin_us;
	double limits_us[5];	/* --limits: switch, phase, hidden, tick_lo, tick_hi; < 0 calibrated */
	int progress;
	int ready_fd;		/* -1, or where to say that the report is whole */
};

/* a judged gap waiting for its inference, with what it carries */
struct waiting {
	struct hgg_gap g;
	struct gap_detail d;	/* its ev and comp are these: d.ev set again where it is read (the
				 * ring moves its entries as it grows) */
	struct kev ev[SHOW_EVENTS];
	struct hgg_comp *comp;
	int capcomp;
	double due;		/* infer_due(): fixed once the gap is closed, asked once */
};

/* the gaps of one CPU waiting, in order: a ring */
struct wqueue {
	struct waiting *v;
	size_t head, n, cap;
	int listed;		/* in ctx.wcpus */
};

struct ctx {
	struct run *r;
	struct wqueue *wq;	/* per CPU */
	uint32_t nwq;
	struct cpu_list wcpus;	/* the CPUs of wq in use */
	double next_due;	/* the earliest time a waiting queue's first gap can be decided */
	uint64_t waiting;	/* over every CPU */
	struct infer *infer;
	struct tape *tape;		/* the calibration pass's stream, played back; NULL: merged again */
	struct classes *classes;	/* --classes, or NULL */
	struct judge *judge;
	struct latency *lat;
	struct micro *micro;
	struct sbf *sbf;
	struct gapout *gaps, *gaps_json;
	struct ks_export *ks;
	struct pf_export *pf;
	struct xthread *xt;	/* the exporters' threads, when there are exporters */
	int64_t *kmig;		/* per thread: the kernel's last migration of it */
	int *has_kmig;
	struct gapin *truth;	/* --truth's gap stream; NULL otherwise */
	struct grid_lane {	/* --grid: each set of limits, and its confusion */
		double limits_us[3];
		struct infer_lane *lane;
		uint64_t m[HGG_C_UNEXPLAINABLE][HGG_C_OTHER];
	} *lanes;
	size_t nlanes;
};

/* a bad command line is 1 for every program of the project (docs/exit-status.md) */
#define HGMERGE_EXIT_USAGE 1

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hgmerge --hgl FILE --kernel FILE.hgt --report OUT.json [options]\n"
		"       hgmerge --hgl FILE --no-kernel --report OUT.json [options]\n"
		"       hgmerge --hgl FILE --truth FILE.hgg --report OUT.json [options]\n"
		"       hgmerge --hgl FILE --kernel FILE.hgt --check\n\n"
		"Merge an hourglass run (its binary trace, hourglass --trace) with the kernel's\n"
		"recording of it (hgtrace record, or hgtrace-import of a trace.dat) on the TSC:\n"
		"explain every gap, score the gray-box inferences, and write the report as JSON\n"
		"(docs/report-json.md). One pass; memory does not grow with the trace.\n\n"
		"  --hgl FILE            hourglass's trace\n"
		"  --kernel FILE         the kernel's recording (.hgt)\n"
		"  --no-kernel           no recording: every gap inferred from hourglass's side alone,\n"
		"                        none judged (a run where no module or tracefs was at hand)\n"
		"  --truth FILE          the kernel's verdict on each gap from an earlier merge of the\n"
		"                        same run (its --gaps FILE): scored as with the recording, at a\n"
		"                        fraction of the cost, names aside (hourglass learn)\n"
		"  --report FILE         the report (JSON, report_version 2); '-' for stdout\n"
		"  --check               read and check both files as a merge would, every record, and\n"
		"                        stop there: exit 0 when a merge would take them, else its\n"
		"                        refusal (hourglass results, before it trusts a saved report)\n"
		"  --name NAME           how messages and the report name the recording\n"
		"  --dir DIR             the run directory, as the report names it\n"
		"  --gaps FILE           also the per-gap stream (docs/gap-stream.md)\n"
		"  --gaps-json FILE      the same, one JSON object a line, names resolved\n"
		"  --kernelshark FILE    also a trace.dat for trace-cmd and KernelShark\n"
		"  --ks-session FILE     with --kernelshark: a KernelShark session opening on the\n"
		"                        first wrong inference (and FILE-hourglass.dat beside the trace)\n"
		"  --perfetto FILE       also a Perfetto trace (protobuf) for ui.perfetto.dev:\n"
		"                        FILE.perfetto-trace\n"
		"  --label WHAT=NAME     name a load in the report: WHAT is a pid, comm:PREFIX (every task\n"
		"                        whose comm starts so) or irq:N; repeatable\n"
		"  --grid FILE           also decide every gap by each set of limits FILE gives, a line\n"
		"                        each: switch=US,phase=US,hidden=US (the tick's band is --limits'\n"
		"                        or the run's); the report's \"grid\" gives each one's confusion\n"
		"                        matrix (hourglass learn: one pass for many candidates)\n"
		"  --limits switch=US,phase=US,hidden=US,tick_lo=US,tick_hi=US\n"
		"                        the inference's limits instead of the run's calibration (any\n"
		"                        of them, or LIMIT=calibrated; the tick's band both or neither:\n"
		"                        hourglass learn's profile, docs/profile.md)\n"
		"  --classes FILE        each gap's class as FILE gives it (a profile's model: hourglass\n"
		"                        report --profile), in the rules' place: rule \"model\"; gaps it\n"
		"                        does not name are decided by the rules, with a warning\n"
		"  --margin-us US        wake-up windows open this early (default 20: the intended\n"
		"                        expiry is converted from CLOCK_MONOTONIC)\n"
		"  --progress            a progress line on stderr\n"
		"  --ready-fd FD         write \"report\\n\" to FD (then close it) once the report is\n"
		"                        whole at REPORT.partial, before the exports' files are put\n"
		"                        together; REPORT gets its name when they are (and is\n"
		"                        removed if they fail), so a caller can read it meanwhile\n"
		"  -h, --help            this text\n\n"
		"Exit status (docs/exit-status.md): 0 done, 1 bad usage, 2 could not run, 3 bad\n"
		"input (one line naming the file, the offset and what was wrong).\n");
}

static void bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "hgmerge: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n(hgmerge --help tells the options)\n");
	exit(HGMERGE_EXIT_USAGE);
}

/*
 * parse_limits - "switch=US,phase=US,hidden=US,tick_lo=US,tick_hi=US", any of them (the tick's
 * band both or neither, low below high), into @v in that order; 0 or -1. The three limits may
 * be "calibrated": the run's own, as when not given.
 */
static int parse_limits(const char *spec, double *v)
{
	static const char *const key[] = { "switch=", "phase=", "hidden=", "tick_lo=", "tick_hi=" };
	const char *p = spec;
	char *end;
	int k;

	while (*p) {
		for (k = 0; k < 5 && strncmp(p, key[k], strlen(key[k])); k++)
			;
		if (k == 5)
			return -1;
		if (k < 3 && !strncmp(p + strlen(key[k]), "calibrated", 10)) {
			v[k] = -1;	/* the run's own, said explicitly (a --grid line that keeps it) */
			end = (char *)p + strlen(key[k]) + 10;
		} else {
			v[k] = strtod(p + strlen(key[k]), &end);
			if (end == p + strlen(key[k]) || !(v[k] > 0 && v[k] < 1e9))
				return -1;
		}
		if (*end && *end != ',')
			return -1;
		p = *end ? end + 1 : end;
	}
	if ((v[3] > 0) != (v[4] > 0) || (v[3] > 0 && v[3] >= v[4]))
		return -1;
	return p == spec ? -1 : 0;
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "hgl", required_argument, NULL, 'l' }, { "kernel", required_argument, NULL, 'k' },
		{ "name", required_argument, NULL, 'n' }, { "report", required_argument, NULL, 'r' },
		{ "gaps", required_argument, NULL, 'g' }, { "gaps-json", required_argument, NULL, 'j' },
		{ "kernelshark", required_argument, NULL, 'K' }, { "ks-session", required_argument, NULL, 'S' },
		{ "perfetto", required_argument, NULL, 'P' }, { "dir", required_argument, NULL, 'd' },
		{ "margin-us", required_argument, NULL, 'm' }, { "progress", no_argument, NULL, 'p' },
		{ "label", required_argument, NULL, 'L' }, { "ready-fd", required_argument, NULL, 'R' },
		{ "limits", required_argument, NULL, 'T' }, { "truth", required_argument, NULL, 't' },
		{ "no-kernel", no_argument, NULL, 'N' }, { "grid", required_argument, NULL, 'G' },
		{ "classes", required_argument, NULL, 'C' }, { "check", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' }, { 0 }
	};
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->margin_us = 20;
	o->ready_fd = -1;
	o->limits_us[0] = o->limits_us[1] = o->limits_us[2] = o->limits_us[3] = o->limits_us[4] = -1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'l': o->hgl = optarg; break;
		case 'k': o->kernel = optarg; break;
		case 't': o->truth = optarg; break;
		case 'N': o->no_kernel = 1; break;
		case 'c': o->check = 1; break;
		case 'G': o->grid = optarg; break;
		case 'C': o->classes = optarg; break;
		case 'n': o->name = optarg; break;
		case 'r': o->report = optarg; break;
		case 'g': o->gaps = optarg; break;
		case 'j': o->gaps_json = optarg; break;
		case 'K': o->ks = optarg; break;
		case 'S': o->ks_session = optarg; break;
		case 'P': o->pf = optarg; break;
		case 'd': o->dir = optarg; break;
		case 'p': o->progress = 1; break;
		case 'R': {
			long fd = strtol(optarg, &end, 10);

			if (*end || end == optarg || fd < 0 || fd > INT_MAX || fcntl((int)fd, F_GETFD) < 0)
				bad_usage("--ready-fd %s: not an open file descriptor", optarg);
			o->ready_fd = (int)fd;
			break;
		}
		case 'L':
			if (labels_add(optarg))
				bad_usage("--label %s: not PID=NAME, comm:PREFIX=NAME or irq:N=NAME", optarg);
			break;
		case 'T':
			if (parse_limits(optarg, o->limits_us))
				bad_usage("--limits %s: not switch=US,phase=US,hidden=US,tick_lo=US,tick_hi=US (any of "
					  "them, each a number of microseconds above 0; tick_lo and tick_hi together, "
					  "tick_lo below)", optarg);
			break;
		case 'm':
			o->margin_us = strtod(optarg, &end);
			if (*end || !(o->margin_us >= 0 && o->margin_us < 1e6))
				bad_usage("--margin-us: '%s' is not a number of microseconds from 0 to 1000000", optarg);
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(HGMERGE_EXIT_USAGE);
		}
	}
	if (optind < argc)
		bad_usage("unexpected argument '%s'", argv[optind]);
	if (o->check && (o->report || o->gaps || o->gaps_json || o->ks || o->pf || o->truth || o->grid ||
			 o->classes || o->ready_fd >= 0))
		bad_usage("%s", "--check writes nothing: it takes --hgl and --kernel FILE or --no-kernel");
	if (!o->hgl || (!o->report && !o->check))
		bad_usage("%s", "--hgl and --report are required");
	if (!!o->kernel + !!o->truth + o->no_kernel != 1)
		bad_usage("%s", "one of --kernel FILE, --truth FILE and --no-kernel is required");
	if (!o->kernel && (o->ks || o->pf))
		bad_usage("%s", "--kernelshark and --perfetto show the kernel's events: they need --kernel");
	if (o->ready_fd >= 0 && !strcmp(o->report, "-"))
		bad_usage("%s", "--ready-fd goes with a --report file, not '-'");
	if (o->ks_session && !o->ks)
		bad_usage("%s", "--ks-session goes with --kernelshark");
	if (o->ks && (strlen(o->ks) < 4 || strcmp(o->ks + strlen(o->ks) - 4, ".dat")))
		bad_usage("--kernelshark %s: KernelShark opens only files named *.dat", o->ks);
}

static int is_workload(const struct hgl_thread *t, const char *const *names)
{
	for (; *names; names++)
		if (!strcmp(t->workload, *names))
			return 1;
	return 0;
}

/* feature - is @name on in debugfs's list @feats (it lists NAME when on, NO_NAME when off)? -1 not listed */
static int feature(const struct jv *feats, const char *name)
{
	size_t i;

	for (i = 0; i < jv_len(feats); i++) {
		const char *f = jv_type(jv_at(feats, i)) == JV_STR ? jv_str(jv_at(feats, i)) : "";

		if (!strcmp(f, name))
			return 1;
		if (!strncmp(f, "NO_", 3) && !strcmp(f + 3, name))
			return 0;
	}
	return -1;
}

/*
 * read_kernel - what hourglass read of the kernel's settings, from the info section: RT
 * throttling (hourglass since 2026-11-23), the scheduler's features and base slice (since
 * 2026-12-02), and what it measured of the kernel: its cheapest system call (since
 * 2026-12-02). Unknown (older files, or not readable where hourglass ran): -1.
 */
static void read_kernel(struct run *r)
{
	struct hg_err err;
	struct jv *info = jv_parse(r->info->json, r->info->json_len, &err);
	const struct jv *k = info ? jv_get(info, "kernel") : NULL;
	const struct jv *rt = k ? jv_get(k, "sched_rt_runtime_us") : NULL, *pe = k ? jv_get(k, "sched_rt_period_us") : NULL;
	const struct jv *fe = k ? jv_get(k, "sched_features") : NULL, *sl = k ? jv_get(k, "sched_base_slice_ns") : NULL;
	const struct jv *sc;
	int i;

	r->rt_runtime_us = rt && jv_type(rt) == JV_NUM ? (long long)jv_num(rt) : -1;
	r->rt_period_us = pe && jv_type(pe) == JV_NUM ? (long long)jv_num(pe) : -1;
	r->hrtick = r->hrtick_dl = -1;
	if (fe && jv_type(fe) == JV_ARR) {
		/* a list without the name: a kernel without the feature (before 2.6.25), off */
		r->hrtick = feature(fe, "HRTICK") == 1;
		r->hrtick_dl = feature(fe, "HRTICK_DL") == 1;
	}
	r->base_slice_ns = sl && jv_type(sl) == JV_NUM && jv_num(sl) > 0 ? (long long)jv_num(sl) : -1;
	r->cpus_online = k && jv_type(jv_get(k, "cpus_online")) == JV_NUM ? (int)jv_num(jv_get(k, "cpus_online")) : -1;
	sc = info ? jv_get(info, "syscall_cycles") : NULL;
	r->syscall_cycles = sc && jv_type(sc) == JV_NUM && jv_num(sc) > 0 ? (long long)jv_num(sc) : -1;
	/* a deadline thread's runtime: HRTICK_DL's timer ends it */
	for (i = 0; info && i < r->nthreads && i < (int)jv_len(jv_get(info, "threads")); i++) {
		const struct jv *res = jv_get(jv_at(jv_get(info, "threads"), (size_t)i), "reservation");
		const struct jv *rn = res ? jv_get(res, "runtime_ns") : NULL;

		r->th[i].dl_runtime_ns = rn && jv_type(rn) == JV_NUM && jv_num(rn) > 0 ? (int64_t)jv_num(rn) : 0;
	}
	jv_free(info);
}

/*
 * setup_without_recording - the time base and CPUs without the kernel's recording: --truth's
 * gap stream says them as the merge that wrote it had them (its times are the same then);
 * else hourglass's zero, and the CPUs hourglass saw online
 */
static void setup_without_recording(struct run *r, const struct gapin *tr)
{
	if (tr) {
		const struct hgg_header *h = gapin_header(tr);

		if (fabs(h->tsc_hz / r->hz - 1) > 1e-9 || h->nthreads != (uint32_t)r->nthreads)
			fail("%s: a gap stream of %u threads at %.0f Hz; this run has %d at %.0f Hz: another run's",
			     r->kernel_name, h->nthreads, h->tsc_hz, r->nthreads, r->hz);
		r->base = (int64_t)h->base_tsc;
		r->ncpus = h->ncpus;
	} else {
		r->base = r->info->t0_tsc;
		r->ncpus = r->cpus_online > 0 ? (uint32_t)r->cpus_online : 1;
	}
}

/* read_grid - --grid's sets of limits, a line each (blank lines and # comments skipped) */
static void read_grid(struct ctx *c, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	size_t cap = 0, no = 0;

	if (!f)
		fail_env("%s: cannot open it: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		struct grid_lane gl = { 0 };
		double v[5] = { -1, -1, -1, -1, -1 };
		char *p = line + strspn(line, " \t");

		no++;
		p[strcspn(p, "\r\n")] = 0;
		if (!*p || *p == '#')
			continue;
		if (parse_limits(p, v) || v[3] > 0 || v[4] > 0)
			fail("%s: line %zu: '%s' is not switch=US,phase=US,hidden=US (the tick's band is --limits')",
			     path, no, p);
		memcpy(gl.limits_us, v, sizeof(gl.limits_us));
		VEC_PUSH(c->lanes, c->nlanes, cap, gl);
	}
	fclose(f);
	if (!c->nlanes)
		fail("%s: no set of limits in it", path);
}

/* report_grid - each --grid lane's limits and confusion, rows and columns as the report's */
static void report_grid(void *ctx, struct jsonw *w)
{
	struct ctx *c = ctx;
	size_t i;
	int a, k;

	if (!c->nlanes)
		return;
	jw_arr(w, "grid");
	for (i = 0; i < c->nlanes; i++) {
		jw_obj(w, NULL);
		jw_obj(w, "limits_us");
		jw_numf(w, "switch", c->lanes[i].limits_us[0], 4);
		jw_numf(w, "phase", c->lanes[i].limits_us[1], 4);
		jw_numf(w, "hidden", c->lanes[i].limits_us[2], 4);
		jw_end_obj(w);
		jw_arr(w, "matrix");
		for (a = 0; a < HGG_C_UNEXPLAINABLE; a++) {
			jw_arr(w, NULL);
			for (k = 0; k < HGG_C_OTHER; k++)
				jw_uint(w, NULL, c->lanes[i].m[a][k]);
			jw_end_arr(w);
		}
		jw_end_arr(w);
		jw_end_obj(w);
	}
	jw_end_arr(w);
}

/*
 * The least share of hourglass's run its kernel recording must cover to judge it. A recording
 * of hourglass record covers all of it (the recorder starts before hourglass and stops after
 * it), so a shortfall is a recording made otherwise: by hand, or of another run (the demo's
 * latency run given to its three-thread run covered none of it, and the report called every
 * gap unexplainable). A tenth is what a recorder started a moment late or stopped a moment
 * early may miss; beyond it the report would be of a run hourglass did not make, its
 * unexplainable gaps the recording's absence. docs/merge.md, "Checks before merging".
 */
#define COVER_SHARE 0.9

/*
 * run_span - hourglass's run as its trace has it: its first interval's start to its last
 * interval's end, where every gap lies, within what its info section says the run was (from
 * t0_tsc for duration_ns, when it says: one stamp of a damaged interval is not the run); 0
 * when it has no interval (nothing to judge)
 */
static int run_span(struct run *r, int64_t *h0, int64_t *h1)
{
	double said0 = (double)r->info->t0_tsc, said1 = said0 + (double)r->info->duration_ns * 1e-9 * r->hz;
	/* from the walk that measures the threads' disorder (the merge needs it next): hourglass's
	 * trace is read once for both */
	int any = hgside_span(r, h0, h1);

	if (any && r->info->duration_ns > 0) {
		*h0 = (int64_t)fmax((double)*h0, said0);
		*h1 = (int64_t)fmin((double)*h1, said1);
	}
	return any;
}

/*
 * first_kept - the earliest stamp of the records a flight recorder kept: each CPU's first
 * chunk of records read (its records are in commit order, a stamp at most the reader's slack
 * before another, HGT_STAMP_SLACK_S); 0 and *first when there are records
 */
static int first_kept(struct run *r, int64_t *first)
{
	size_t i, n = hgt_nr_chunks(r->hgt);
	uint32_t ncpu = hgt_nr_cpus(r->hgt);
	char *seen = xcalloc(ncpu + 1, 1);
	struct hg_err err;
	int any = 0;

	for (i = 0; i < n; i++) {
		const struct hgt_chunk_info *ci = hgt_chunk(r->hgt, i);
		const char *recs;
		size_t len, pos;

		if (!ci->nr_records || ci->cpu >= ncpu || seen[ci->cpu] ||
		    (ci->magic != HGT_CHUNK_MAGIC && ci->magic != HGT_ZCHUNK_MAGIC && ci->magic != HGT_PCHUNK_MAGIC))
			continue;
		seen[ci->cpu] = 1;
		if (hgt_read_chunk(r->hgt, i, &recs, &len, &err))
			fail_err(&err);
		for (pos = 0; pos < len; pos += ((const struct hgt_rec *)(recs + pos))->len) {
			int64_t t = (int64_t)((const struct hgt_rec *)(recs + pos))->tsc;

			if (!any || t < *first)
				*first = t;
			any = 1;
		}
	}
	free(seen);
	return any;
}

/*
 * check_coverage - the recording's span, @k0..@k1 (its window, or what its records span:
 * @what says which), against hourglass's run (run_span): it covers at least COVER_SHARE of
 * it. A flight recorder (mode: overwrite, hourglass -b) keeps what came last: it covers from
 * its first kept record to its stop, which must start before the run ends and end in the
 * run's last 1 - COVER_SHARE or after (what led to hourglass's stop). Else the merge is
 * refused, naming both files and their spans, in seconds from hourglass's zero (the times of
 * its own output) and in TSC.
 */
static void check_coverage(struct run *r, int64_t k0, int64_t k1, const char *what)
{
	const char *mode = hgt_meta(r->hgt, "mode");
	int flight = mode && !strcmp(mode, "overwrite");
	int64_t h0 = 0, h1 = 0, kept;
	double len, covered, zero = (double)r->info->t0_tsc;

	if (!run_span(r, &h0, &h1) || h1 <= h0)
		return;
	if (flight && first_kept(r, &kept) && kept > k0) {
		k0 = kept;
		what = "keeps records from";
	}
	len = (double)(h1 - h0);
	covered = fmax(0, fmin((double)h1, (double)k1) - fmax((double)h0, (double)k0));
	if (flight ? k0 <= h1 && (double)k1 >= (double)h1 - (1 - COVER_SHARE) * len : covered >= COVER_SHARE * len)
		return;
	fail("%s: the recording %s t=%.6f s to t=%.6f s (TSC %lld..%lld), %s's run t=%.6f s to t=%.6f s (TSC "
	     "%lld..%lld), seconds from hourglass's zero: %s%.1f%% of the run, and a judgement needs %s "
	     "(docs/merge.md): another run's recording?", r->kernel_name, what, ((double)k0 - zero) / r->hz,
	     ((double)k1 - zero) / r->hz, (long long)k0, (long long)k1, hgl_path(r->hgl),
	     ((double)h0 - zero) / r->hz, ((double)h1 - zero) / r->hz, (long long)h0, (long long)h1,
	     flight ? "a flight recorder (mode: overwrite) that covers " : "it covers ", 100 * covered / len,
	     flight ? "it to reach the run's last 10%" : "90%");
}

/* setup - both files open and checked against each other; the threads; the time base */
static void setup(struct run *r, const struct opts *o, const struct gapin *tr)
{
	static const char *const never_blocks[] = { "CPU", "CPU_SCAN", "CPU_PERIODIC", NULL };
	static const char *const never_yields[] = { "CPU", "CPU_SCAN", NULL };
	struct hg_err err;
	const char *khz_s;
	uint64_t w0 = 0, w1 = 0;	/* copied below with or without a window */
	int k;

	if (hgl_open(&r->hgl, o->hgl, 0, &err))
		fail_err(&err);
	if (o->kernel && hgt_open(&r->hgt, o->kernel, 0, &err))
		fail_err(&err);
	r->info = hgl_info(r->hgl);
	r->kernel_name = o->name ? o->name : o->kernel ? o->kernel : o->truth ? o->truth : "(no recording)";
	r->hz = r->info->tsc_hz;
	r->margin = (int64_t)(o->margin_us * 1e-6 * r->hz);
	r->nthreads = r->info->nthreads;
	r->th = xcalloc(r->nthreads + 1, sizeof(*r->th));
	for (k = 0; k < r->nthreads; k++) {
		const struct hgl_thread *t = &r->info->threads[k];

		r->th[k].tid = t->tid;
		r->th[k].rt = !strcmp(t->policy, "fifo") || !strcmp(t->policy, "rr");
		r->th[k].prio = t->priority;
		r->th[k].cpu_workload = is_workload(t, never_blocks);
		r->th[k].cpu_bound = is_workload(t, never_yields);
		snprintf(r->th[k].name, sizeof(r->th[k].name), "hg-thread-%d", k);
	}
	set_tids(r);
	if (hgl_dropped(r->hgl))
		warn(r, "%s: hourglass's buffer filled, %llu records missing: gaps around them are wrong",
		     hgl_path(r->hgl), (unsigned long long)hgl_dropped(r->hgl));
	read_kernel(r);
	if (!r->hgt) {
		setup_without_recording(r, tr);
		return;
	}
	if (hgt_check(r->hgt, r->kernel_name, &err, 1))	/* the library's rules, hgtrace dump's too */
		fail_err(&err);
	khz_s = hgt_meta(r->hgt, "tsc_khz");
	if (khz_s) {
		double khz = strtod(khz_s, NULL), ratio = r->hz / (khz * 1e3);

		/* the kernel's tsc_khz is its boot-time estimate (0.08% off in the emulated
		 * guests); a few percent apart means another counter */
		if (khz > 0 && fabs(ratio - 1) > 0.02)
			fail("%s: the kernel says the TSC runs at %.3f MHz, hourglass measured %.3f MHz: not the same "
			     "counter?", r->kernel_name, khz / 1e3, r->hz / 1e6);
		if (khz > 0 && fabs(ratio - 1) > 0.001)
			warn(r, "TSC rate: kernel %.3f MHz, hourglass %.3f MHz (%+.0f ppm); hourglass's is used",
			     khz / 1e3, r->hz / 1e6, (ratio - 1) * 1e6);
	}
	r->have_window = hgt_window(r->hgt, &w0, &w1);
	r->window[0] = (int64_t)w0;
	r->window[1] = (int64_t)w1;
	/* the one time base of every output: the recording's start, else hourglass's zero */
	r->base = r->have_window ? r->window[0] : r->info->t0_tsc;
	if (r->have_window)	/* else once its records are read (pass) */
		check_coverage(r, r->window[0], r->window[1], "spans");
	r->ncpus = hgt_nr_cpus(r->hgt);
}

/* ---- the sinks of the pass ---- */

/* dispatch - a decided gap to every output */
static void dispatch(struct ctx *c, struct hgg_gap *g, const struct gap_detail *d)
{
	judge_gap(c->judge, g, d, c->infer);
	if (!(g->flags & HGG_F_OUT))
		micro_handlers(c->micro, g->thread, g->handler_cycles);
	if (c->gaps)
		gapout_gap(c->gaps, g, d);
	if (c->gaps_json)
		gapout_gap(c->gaps_json, g, d);
	if (c->xt)
		xthread_gap(c->xt, g);
}

static struct wqueue *wq_of(struct ctx *c, uint32_t cpu)
{
	if (cpu >= c->nwq) {
		uint32_t n = cpu + 1;

		c->wq = xrealloc(c->wq, n * sizeof(*c->wq));
		memset(c->wq + c->nwq, 0, (n - c->nwq) * sizeof(*c->wq));
		c->nwq = n;
	}
	if (!c->wq[cpu].listed) {
		c->wq[cpu].listed = 1;
		cpu_list_add(&c->wcpus, cpu);
	}
	return &c->wq[cpu];
}

/* wq_grow - room for one more gap in @q's ring */
static cold_path void wq_grow(struct wqueue *q)
{
	size_t cap = q->cap ? 2 * q->cap : 64, i;
	struct waiting *v = xcalloc(cap, sizeof(*v));

	for (i = 0; i < q->n; i++)
		v[i] = q->v[(q->head + i) % q->cap];
	for (i = q->n; i < q->cap; i++)		/* keep the spare buffers */
		v[i] = q->v[(q->head + i) % q->cap];
	free(q->v);
	q->v = v;
	q->cap = cap;
	q->head = 0;
}

/* wq_tail - the place after @q's last gap: where the next gap is judged (merge_room) */
static hot_inline struct waiting *wq_tail(struct wqueue *q)
{
	size_t i;

	if (unlikely(q->n == q->cap))
		wq_grow(q);
	i = q->head + q->n;
	return &q->v[i < q->cap ? i : i - q->cap];
}

/*
 * clear_gap - @g all zero, sixteen bytes a store: memset() of its 176 bytes is a `rep stos`, which
 * costs an instruction every 8 bytes (callgrind) besides its setup, for every gap
 */
static hot_inline void clear_gap(struct hgg_gap *g)
{
	typedef uint64_t words __attribute__((vector_size(16), may_alias, aligned(8)));
	words *p = (words *)g;
	size_t i;

	_Static_assert(sizeof(*g) % sizeof(*p) == 0, "a gap's record is whole 16-byte words");
	if (!HG_FAST) {
		memset(g, 0, sizeof(*g));
		return;
	}
#pragma GCC unroll 16
	for (i = 0; i < sizeof(*g) / sizeof(*p); i++)
		p[i] = (words){ 0, 0 };
}

/* merge_room - where the sweep judges a closing gap: @cpu's queue's next place, its record cleared */
void merge_room(void *p, uint32_t cpu, int ncomp, struct gap_room *room)
{
	struct ctx *c = p;
	struct waiting *w = wq_tail(wq_of(c, cpu));

	if (unlikely(ncomp > w->capcomp)) {
		w->capcomp = ncomp;
		w->comp = xrealloc(w->comp, w->capcomp * sizeof(*w->comp));
	}
	clear_gap(&w->g);
	room->g = &w->g;
	room->comp = w->comp;
	room->ev = w->ev;
}

/*
 * decide - @g's inference, and each --grid lane's tallied: every lane's decision falls when the
 * run's own does (they share its calibration), in the same order
 */
static void decide(struct ctx *c, struct hgg_gap *g)
{
	size_t i;

	for (i = 0; i < c->nlanes; i++) {
		struct hgg_gap x = *g;

		infer_lane_decide(c->infer, c->lanes[i].lane, &x);
		if (hgg_in_matrix(&x))
			c->lanes[i].m[x.cls][x.inferred]++;
	}
	infer_decide(c->infer, g);
	if (c->classes)
		classes_apply(c->classes, g);
}

/* merge_gap - a judged gap, in its CPU's queue's next place (merge_room): decided and handed on now,
 * or waiting there behind the CPU's earlier ones */
flatten_hot void merge_gap(void *p, struct hgg_gap *g, const struct gap_detail *d)
{
	struct ctx *c = p;
	/* merge_room() made the CPU's queue and listed it, just before (every gap takes its place
	 * there first: the sweep's, gap_to()'s): not asked again */
	struct wqueue *q = HG_FAST ? &c->wq[g->cpu] : wq_of(c, g->cpu);
	double due = infer_due(c->infer, g);	/* infer_ready() is infer_passed() of it */
	struct waiting *w;

	if (!q->n && infer_passed(c->infer, due)) {
		decide(c, g);
		dispatch(c, g, d);
		return;
	}
	if (!q->n && due < c->next_due)
		c->next_due = due;
	w = wq_tail(q);
	w->due = due;
	w->d = *d;
	q->n++;
	c->waiting++;
}

/* gap_to - a gap made here, not by the sweep, into its place as the sweep's are (merge_room, merge_gap) */
static void gap_to(struct ctx *c, const struct hgg_gap *g, const struct gap_detail *d)
{
	struct gap_room room;
	struct gap_detail det = *d;

	merge_room(c, g->cpu, d->ncomp, &room);
	*room.g = *g;
	memcpy(room.comp, d->comp, (size_t)d->ncomp * sizeof(*room.comp));
	memcpy(room.ev, d->ev, (size_t)d->nev * sizeof(*room.ev));
	det.comp = room.comp;
	det.ev = room.ev;
	merge_gap(c, room.g, &det);
}

/*
 * drain - the waiting gaps that can be decided now, each CPU's in order. Called for every
 * event of hourglass's: it looks at the queues only once the stream has reached the
 * earliest time one of their first gaps can be decided, which it keeps.
 */
static flatten_hot void drain(struct ctx *c)
{
	double next = INFINITY;
	uint32_t i;

	if (!infer_passed(c->infer, c->next_due))
		return;
	for (i = 0; i < c->wcpus.n && c->waiting; i++) {
		struct wqueue *q = &c->wq[c->wcpus.v[i]];
		double d = INFINITY;

		/* each first gap's due time, kept since it closed: to decide it now, or to keep it */
		while (q->n && infer_passed(c->infer, d = q->v[q->head].due)) {
			struct waiting *w = &q->v[q->head];

			w->d.ev = w->ev;
			decide(c, &w->g);
			dispatch(c, &w->g, &w->d);
			q->head = (q->head + 1) % q->cap;
			q->n--;
			c->waiting--;
			d = INFINITY;
		}
		if (d < next)
			next = d;
	}
	c->next_due = next;
}

static void on_window(void *p, const struct window *w)
{
	latency_window(((struct ctx *)p)->lat, w);
}

static void on_switch(void *p, int thread, int64_t tsc, int in)
{
	micro_switch(((struct ctx *)p)->micro, thread, tsc, in);
}

static void on_migrate(void *p, int thread, int64_t tsc)
{
	struct ctx *c = p;

	c->kmig[thread] = tsc;
	c->has_kmig[thread] = 1;
	judge_kernel_migration(c->judge);
}

static flatten_hot void on_record(void *p, const struct hgl_rec *rec)
{
	struct ctx *c = p;

	if (rec->type == HGL_REC_INTERVAL) {
		judge_interval(c->judge, rec);
		sbf_interval(c->sbf, rec);
	}
	if (c->xt)
		xthread_hourglass(c->xt, rec);
}

/* ---- exporters' view of the run ---- */

static const char *x_comm(void *ctx, uint32_t pid) { (void)ctx; return names_comm(pid); }
static const char *x_irq(void *ctx, uint32_t irq) { (void)ctx; return names_irq(irq); }
static const char *x_func(void *ctx, uint32_t id) { (void)ctx; return names_func(id); }

static void x_each(void *ctx, void (*fn)(void *, uint32_t, const char *), void *arg)
{
	(void)ctx;
	names_each_comm(fn, arg);
}

static const char *x_cause(void *ctx, const struct hgg_gap *g, char *buf, unsigned len)
{
	(void)ctx;
	return names_cause(g, buf, len);
}

static const char *x_task(void *ctx, uint32_t pid, char *buf, unsigned len)
{
	(void)ctx;
	return names_task(pid, buf, len);
}

static void open_exports(struct ctx *c, const struct opts *o, struct exp_run *x)
{
	struct run *r = c->r;
	struct hg_err err;
	uint32_t *tids = xcalloc(r->nthreads + 1, sizeof(*tids));
	const char **names = xcalloc(r->nthreads + 1, sizeof(*names));
	const char **work = xcalloc(r->nthreads + 1, sizeof(*work));
	uint64_t *periods = xcalloc(r->nthreads + 1, sizeof(*periods));
	int k;

	for (k = 0; k < r->nthreads; k++) {
		tids[k] = r->th[k].tid;
		names[k] = r->th[k].name;
		work[k] = r->info->threads[k].workload;
		if (r->info->threads[k].period_ns > 0)
			periods[k] = (uint64_t)(r->info->threads[k].period_ns * 1e-9 * r->hz);
	}
	*x = (struct exp_run){
		.tsc_hz = r->hz, .base_tsc = (uint64_t)r->base, .ncpus = r->ncpus,
		.uname = hgt_meta(r->hgt, "kernel") ? hgt_meta(r->hgt, "kernel") : "",
		.nthreads = r->nthreads, .tids = tids, .thread_names = names, .workloads = work,
		.names = { .ctx = NULL, .comm = x_comm, .irq = x_irq, .func = x_func, .each_comm = x_each,
			   .cause = x_cause, .task = x_task },
		.command = o->hgl, .periods = periods,
	};
	if (o->ks && !(c->ks = ks_open(o->ks, o->ks_session, x, &err)))
		fail_err(&err);
	if (o->pf && !(c->pf = pf_open(o->pf, x, &err)))
		fail_err(&err);
	c->xt = xthread_start(c->ks, c->pf);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * check_window - the recording's window against what its records span, from any writer: a
 * record 0.1 s or more outside it (between the module's start or stop and the recorder's stamp
 * of it: up to 17 ms in the emulated guests), or a window reaching far past its records on
 * either side (a generated
 * run once said it ended at 2^62 ns), is a window its own events contradict. Records are
 * read by then. A window may run past its records a little (the recorder's own start and
 * stop, an idle machine), so the reach warned about is the larger of 10 s and the span.
 */
static void check_window(struct run *r)
{
	uint64_t first, last;
	double slack, before, after;

	if (!r->have_window || !hgt_records_span(r->hgt, &first, &last))
		return;
	slack = fmax(10.0 * r->hz, (double)(last - first));
	before = (double)(int64_t)(first - (uint64_t)r->window[0]);
	after = (double)(int64_t)((uint64_t)r->window[1] - last);
	if (before < -0.1 * r->hz || after < -0.1 * r->hz || before > slack || after > slack)
		warn(r, "%s: its window, t=%.6f s to t=%.6f s, is not what its records span (t=%.6f s to t=%.6f s): "
		     "the file's writer gave a wrong window; times are from the window's start",
		     r->kernel_name, 0.0, (double)(r->window[1] - r->window[0]) / r->hz,
		     ((double)first - (double)r->window[0]) / r->hz, ((double)last - (double)r->window[0]) / r->hz);
}

/* check_records_coverage - a recording without a window: what its records span, once read */
static void check_records_coverage(struct run *r)
{
	uint64_t first, last;

	if (r->have_window)
		return;
	if (!hgt_records_span(r->hgt, &first, &last))
		first = last = 0;	/* no records: it covers nothing */
	check_coverage(r, (int64_t)first, (int64_t)last, "'s records span");
}

/*
 * check_only - --check: what a merge would read, read and checked (hourglass's records, every
 * kernel record through a cursor of each CPU, as the pass reads them), then the records'
 * coverage of a recording without a window; setup() has checked the rest
 */
static void check_only(struct run *r)
{
	uint32_t cpu, ncpu;
	struct hg_err err;

	hgside_measure_disorder(r);
	if (!r->hgt)
		return;
	ncpu = hgt_nr_cpus(r->hgt);
	for (cpu = 0; cpu < ncpu; cpu++) {
		struct hgt_cursor *c;
		const char *recs;
		size_t len;
		int rc;

		if (!hgt_cpu_nr_records(r->hgt, cpu))
			continue;
		if (!(c = hgt_cursor_open(r->hgt, cpu, &err)))
			fail_err(&err);
		while ((rc = hgt_cursor_next_chunk(c, &recs, &len, &err)) > 0)
			;
		if (rc < 0)
			fail_err(&err);
		hgt_cursor_close(c);
	}
	check_records_coverage(r);
}

/*
 * gap_without_recording - a gap closed, with no kernel recording to charge it: its kernel side
 * is --truth's record of it, or unknown (unexplainable: no recording); its inference as ever
 */
static void gap_without_recording(struct ctx *c, const struct gapdef *d)
{
	struct hgg_gap g = { .cls = HGG_C_UNEXPLAINABLE, .kind = HGG_KD_UNEXPLAINABLE, .why = HGG_W_NO_RECORDING };
	struct gap_detail det = { 0 };

	if (c->truth)
		g = *gapin_find(c->truth, d);
	g.g0 = (uint64_t)d->g0;
	g.g1 = (uint64_t)d->g1;
	g.cpu = d->cpu;
	g.thread = d->thread;
	g.next_thread = d->next_thread;
	g.vol = d->vol;
	g.inferred = 0;
	g.rule = 0;
	det.comp = g.comp;
	det.ncomp = g.ncomp;
	gap_to(c, &g, &det);
}

/* the one pass: both timelines merged by time, the kernel's first at a tie */
static uint64_t pass(struct ctx *c, const struct opts *o)
{
	struct run *r = c->r;
	struct sweep_sink sink = { .ctx = c, .room = merge_room, .gap = merge_gap, .window = on_window,
				   .switched = on_switch, .migrated = on_migrate, .named = names_record };
	struct sweep *sw = sweep_new(r, c->infer, &sink);
	struct hgside *hs = c->tape ? NULL : hgside_open(r, on_record, c);
	struct kstream *ks = r->hgt ? kstream_open(r) : NULL;
	uint64_t total = r->hgt ? hgt_nr_records(r->hgt) : 0, events = 0;
	double shown = now();
	struct gapper gp;
	/*
	 * From one step to the next: a last step that finds nothing after records that opened
	 * nothing leaves the event the last of them, its kind the step's before, and the gapper
	 * makes nothing of it (hgside_next(), tape_next()); the step is taken all the same.
	 */
	struct hg_ev ev = { 0 };
	struct gapdef g = { 0 };
	int made = 0;
	/* a kernel record goes to more than the sweep (the exporters' thread, --progress): asked
	 * once a record, not twice (the sweep's stores keep the compiler from holding either) */
	const int others = !HG_FAST || c->xt || o->progress;

	gapper_init(&gp, r);
	for (;;) {
		int64_t th = c->tape ? tape_peek(c->tape) : hgside_peek(hs);
		int64_t mt1 = 0;	/* set by gapper_event() where they count (-O3 cannot tell) */
		int mig = 0;

		/* the kernel's records up to hourglass's next event, the kernel's first at a tie */
		const struct hgt_rec *rec;
		uint32_t cpu;

		while (ks && kstream_next_upto(ks, th, &cpu, &rec)) {
			/* a name goes to names.c from the sweep (sink.named), whose first question of a
			 * record is whether it is one of the rarer types: not asked twice */
			sweep_kernel(sw, cpu, rec);
			if (unlikely(others)) {
				if (c->xt)
					xthread_kernel(c->xt, cpu, rec);
				if (o->progress && !(kstream_events(ks) & 0xfffff) && now() - shown > 0.25) {
					shown = now();
					fprintf(stderr, "\rhgmerge: %5.1f%% of %llu kernel events", total ?
						100.0 * kstream_events(ks) / total : 100.0, (unsigned long long)total);
				}
			}
		}
		if (th == INT64_MAX)
			break;
		if (c->tape) {
			tape_next(c->tape, &ev, &made, &g, &mig, &mt1, on_record, c);
		} else {
			hgside_next(hs, &ev);
			made = gapper_event(&gp, &ev, &g, &mig, &mt1);
		}
		infer_seen(c->infer, &ev, made, &g);
		if (!ks && made == 1)
			gap_without_recording(c, &g);
		else if (made == 1)
			sweep_close_gap(sw, &g);
		else if (made == 2 && ks)
			sweep_open_gap(sw, &g);
		/* drain()'s own first test, without its call: infer_seen() just moved the stream to
		 * ev.t, and the stream has not ended (every event of the pass asks) */
		if (!HG_FAST || (c->waiting && (double)ev.t >= c->next_due))
			drain(c);
		if (ev.kind == HGE_START && mig) {
			int k = ev.rec.thread;

			/* a change of CPU between two intervals: did the kernel move it in between? */
			judge_migration_inferred(c->judge, r->th[k].tid && c->has_kmig[k] && c->kmig[k] >= mt1);
		} else if (ev.kind == HGE_WOPEN && ks) {
			sweep_open_window(sw, &ev);
		} else if (ev.kind == HGE_WCLOSE && ks) {
			sweep_close_window(sw, &ev);
		}
	}
	sweep_finish(sw);
	infer_end(c->infer);
	drain(c);
	if (o->progress && ks)
		fprintf(stderr, "\rhgmerge: 100.0%% of %llu kernel events\n", (unsigned long long)total);
	if (c->tape)
		tape_overlaps(c->tape, &gp);
	if (gp.overlaps)
		warn(r, "%s: threads %u and %u both ran on CPU %u at TSC %llu: CPU numbers from rdtscp are off "
		     "(%llu times; no gap is made between such intervals)", hgl_path(r->hgl), gp.overlap_a.thread,
		     gp.overlap_b.thread, gp.overlap_b.cpu, (unsigned long long)gp.overlap_b.t0,
		     (unsigned long long)gp.overlaps);
	if (sweep_backwards(sw))
		warn(r, "%s: %llu kernel events went back in time on their CPU", r->kernel_name,
		     (unsigned long long)sweep_backwards(sw));
	if (ks) {
		check_window(r);
		check_records_coverage(r);
		events = kstream_events(ks);
		kstream_close(ks);
	}
	gapper_free(&gp);
	hgside_close(hs);
	sweep_free(sw);
	return events;
}

/* give up both exports: neither leaves a file */
static void abort_exports(struct ctx *c)
{
	if (c->ks)
		ks_abort(c->ks);
	if (c->pf)
		pf_abort(c->pf);
	c->ks = NULL;
	c->pf = NULL;
}

/* the end of the exporters' stream: their counts final (the report's warnings), their files
 * still being put together on their threads (join_exports) */
static void drain_exports(struct ctx *c)
{
	/* zero: xthread_drained() fills only the summaries of the exporters that run (and
	 * -flto sees that, not that c->ks says which) */
	struct ks_summary ks = { 0 };
	struct pf_summary pf = { 0 };
	struct hg_err err;

	if (!c->xt)
		return;
	if (xthread_drained(c->xt, &ks, &pf, &err)) {
		struct hg_err ignored;

		xthread_join(c->xt, &ignored);
		c->xt = NULL;
		abort_exports(c);
		fail_err(&err);
	}
	if (c->ks && ks.clamped)
		warn(c->r, "the trace.dat: %llu kernel events came later than the reorder window and are shown "
		     "at the time of the last one written on their CPU", (unsigned long long)ks.clamped);
}

/* wait for the exporters' files, and name them once both are whole; on failure, remove
 * @report_tmp (the report of a merge that failed) and say why */
static void join_exports(struct ctx *c, const char *report_tmp)
{
	struct hg_err err;
	struct ks_export *ks = c->ks;
	struct pf_export *pf = c->pf;

	if (!c->xt)
		return;
	if (xthread_join(c->xt, &err)) {
		c->xt = NULL;
		abort_exports(c);
		goto failed;
	}
	c->xt = NULL;
	c->ks = NULL;		/* exp_commit frees both */
	c->pf = NULL;
	if (exp_commit(ks, pf, &err))
		goto failed;
	return;
failed:
	if (report_tmp && out_untrack(report_tmp))
		unlink(report_tmp);
	fail_err(&err);
}

static FILE *open_report(const char *path, char **tmp)
{
	FILE *f;

	if (!strcmp(path, "-")) {
		*tmp = NULL;
		return stdout;
	}
	*tmp = xasprintf("%s.partial", path);
	if (!(f = fopen(*tmp, "w")))
		fail_env("%s: cannot write it: %s", *tmp, strerror(errno));
	out_track(*tmp);
	return f;
}

#ifndef HG_FUZZ
/* a stop by signal (Ctrl-C in hourglass export, a kill): the temporary files go first */
static void on_stop_signal(int sig)
{
	out_discard_pending();
	signal(sig, SIG_DFL);
	raise(sig);
}
#endif

/*
 * A merge that stops half-way (a bad input found in the middle of the pass, a signal, the
 * reader of --report - or of --ready-fd gone) leaves none of its temporary files (the
 * exports', the report's) in the user's folders: before 2026-11-28 the Perfetto trace's was
 * left behind. The exporters' threads block the signals
 * (xthread.c), so that the handler runs on this thread, the one that names the files.
 */
static void remove_temporaries_on_stop(void)
{
#ifndef HG_FUZZ	/* the fuzz target's fail() jumps back and frees what was left: nothing to remove */
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };	/* SIGPIPE: a reader gone */
	struct sigaction sa;
	unsigned i;

	atexit(out_discard_pending);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
#endif
}

int main(int argc, char **argv)
{
	struct opts o;
	struct run r = { 0 };
	struct ctx c = { 0 };
	struct report_in rin = { 0 };
	struct exp_run x;
	const char *tmpdir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	double t0 = now();
	char *tmp;
	FILE *f;

	parse(argc, argv, &o);
	remove_temporaries_on_stop();
	if (o.truth)
		c.truth = gapin_open(o.truth);
	setup(&r, &o, c.truth);
	if (o.check) {
		check_only(&r);
		hgl_close(r.hgl);
		if (r.hgt)
			hgt_close(r.hgt);
		return 0;
	}
	memcpy(r.limits_us, o.limits_us, sizeof(r.limits_us));
	c.r = &r;
	c.next_due = INFINITY;
	names_init(&r);
	hgside_measure_disorder(&r);
	turns_detect(&r);
	/* the calibration pass's stream is played back to the merge's (HG_FAST: compiler.h) */
	c.tape = HG_FAST ? tape_new(&r, tmpdir) : NULL;
	c.infer = infer_calibrate(&r, c.tape);
	if (o.grid) {
		size_t i;

		read_grid(&c, o.grid);
		for (i = 0; i < c.nlanes; i++)
			c.lanes[i].lane = infer_lane_new(c.infer, c.lanes[i].limits_us);
	}
	if (o.classes)
		c.classes = classes_read(o.classes);
	c.judge = judge_new(&r, tmpdir);
	c.lat = latency_new(&r, tmpdir);
	c.micro = micro_new(&r, c.infer);
	c.sbf = sbf_new(&r, c.infer);
	c.kmig = xcalloc(r.nthreads + 1, sizeof(*c.kmig));
	c.has_kmig = xcalloc(r.nthreads + 1, sizeof(*c.has_kmig));
	if (o.gaps)
		c.gaps = gapout_open(o.gaps, 0, &r, c.infer);
	if (o.gaps_json)
		c.gaps_json = gapout_open(o.gaps_json, 1, &r, c.infer);
	if (o.ks || o.pf)
		open_exports(&c, &o, &x);
	rin.events = pass(&c, &o);
	if (c.classes)
		classes_finish(c.classes, &r);
	drain_exports(&c);
	if (c.gaps)
		gapout_finish(c.gaps);
	if (c.gaps_json)
		gapout_finish(c.gaps_json);
	rin.r = &r;
	rin.dir = o.dir;
	rin.infer = c.infer;
	rin.judge = c.judge;
	rin.lat = c.lat;
	rin.micro = c.micro;
	rin.sbf = c.sbf;
	rin.gaps_path = o.gaps;
	rin.ks_path = o.ks;
	rin.pf_path = o.pf;
	rin.seconds = now() - t0;
	rin.truth_path = o.truth;
	rin.extra = report_grid;
	rin.extra_ctx = &c;
	f = open_report(o.report, &tmp);
	report_write(&rin, f);
	if (fflush(f) || ferror(f) || (tmp && fclose(f)))
		fail_env("%s: write error: %s", tmp ? tmp : "standard output", strerror(errno));
	if (o.ready_fd >= 0) {
		/* the report is whole: whoever waits for it (hourglass export's HTML page) may
		 * read it while the exporters' files are put together */
		if (write(o.ready_fd, "report\n", 7) != 7)
			fail_env("--ready-fd %d: cannot write to it: %s", o.ready_fd, strerror(errno));
		close(o.ready_fd);
	}
	join_exports(&c, tmp);
	if (c.gaps)
		gapout_commit(c.gaps);
	if (c.gaps_json)
		gapout_commit(c.gaps_json);
	if (tmp) {
		struct hg_err err;

		if (out_commit(tmp, o.report, &err))
			fail_err(&err);
	}
	free(tmp);
	judge_free(c.judge);
	latency_free(c.lat);
	micro_free(c.micro);
	sbf_free(c.sbf);
	while (c.nlanes)
		infer_lane_free(c.lanes[--c.nlanes].lane);
	free(c.lanes);
	infer_free(c.infer);
	tape_free(c.tape);
	hgl_close(r.hgl);
	if (r.hgt)
		hgt_close(r.hgt);
	gapin_close(c.truth);
	return 0;
}

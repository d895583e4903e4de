// SPDX-License-Identifier: GPL-2.0
/*
 * report.c - the report as JSON, report_version 2 (docs/report-json.md):
 * the run's provenance, what the kernel's recording holds, and every figure
 * the parts computed, each section null when it has nothing to say.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "hg_json.h"
#include "hg_jsonw.h"
#include "report.h"

static void put_run(struct report_in *in, struct jsonw *w, const struct jv *info)
{
	struct run *r = in->r;
	int k;

	jw_obj(w, "run");
	jw_str(w, "dir", in->dir);
	jw_jv(w, "command", jv_get(info, "command"));
	jw_jv(w, "kernel", jv_get(info, "kernel"));
	jw_num(w, "tsc_hz", r->hz);
	jw_int(w, "base_tsc", r->base);
	jw_numf(w, "t0", t_of(r, r->info->t0_tsc), 6);
	jw_numf(w, "duration_s", r->info->duration_ns / 1e9, 6);
	jw_bool(w, "hourglass_complete", r->info->complete && hgl_complete(r->hgl) && !hgl_dropped(r->hgl));
	jw_arr(w, "threads");
	for (k = 0; k < r->nthreads; k++) {
		const struct hgl_thread *t = &r->info->threads[k];

		jw_obj(w, NULL);
		jw_int(w, "thread", k);
		jw_str(w, "name", r->th[k].name);
		jw_uint(w, "tid", t->tid);
		jw_str(w, "workload", t->workload);
		jw_str(w, "policy", t->policy);
		jw_int(w, "priority", t->priority);
		jw_str(w, "timer", t->timer);
		jw_str(w, "affinity", t->affinity);
		if (t->period_ns > 0)
			jw_numf(w, "period_ms", t->period_ns / 1e6, 6);
		else
			jw_null(w, "period_ms");
		jw_end_obj(w);
	}
	jw_end_arr(w);
	jw_end_obj(w);
}

static void put_kernel(struct report_in *in, struct jsonw *w)
{
	struct run *r = in->r;
	uint32_t c, n;
	uint64_t total = 0;
	const char *rec;
	char key[16];

	/* what the actual classes come from: the recording, an earlier merge's gap stream, nothing */
	jw_str(w, "ground_truth", r->hgt ? "kernel recording" : in->truth_path ? "gap stream" : "none");
	if (!r->hgt) {
		jw_str(w, "truth", in->truth_path);
		jw_null(w, "kernel_recording");
		return;
	}
	n = hgt_nr_cpus(r->hgt);
	rec = hgt_meta(r->hgt, "recorder");
	jw_obj(w, "kernel_recording");
	jw_str(w, "path", r->kernel_name);
	jw_str(w, "recorder", rec ? rec : hgt_meta(r->hgt, "source") ? hgt_meta(r->hgt, "source") : "hgtrace.ko");
	jw_uint(w, "events", in->events);
	if (r->have_window) {
		jw_arr(w, "window");
		jw_numf(w, NULL, t_of(r, r->window[0]), 6);
		jw_numf(w, NULL, t_of(r, r->window[1]), 6);
		jw_end_arr(w);
	} else {
		jw_null(w, "window");
	}
	jw_obj(w, "lost");
	for (c = 0; c < n; c++) {
		const struct hgt_cpu_stats *st = hgt_cpu_stats(r->hgt, c);

		if (!st)
			continue;
		snprintf(key, sizeof(key), "%u", c);
		jw_uint(w, key, st->refused + st->overwritten);
		total += st->refused + st->overwritten;
	}
	jw_end_obj(w);
	jw_uint(w, "lost_total", total);
	jw_obj(w, "meta");
	jw_str(w, "kernel", hgt_meta(r->hgt, "kernel"));
	jw_str(w, "tsc_khz", hgt_meta(r->hgt, "tsc_khz"));
	jw_str(w, "mode", hgt_meta(r->hgt, "mode"));
	jw_str(w, "clock", hgt_meta(r->hgt, "clock"));
	jw_end_obj(w);
	turns_report(r, w);
	jw_end_obj(w);
}

static void put_warnings(struct report_in *in, struct jsonw *w, const struct jv *info)
{
	const struct jv *hw = jv_get(info, "warnings");
	size_t i;

	jw_arr(w, "warnings");
	if (hw && jv_type(hw) == JV_ARR)
		for (i = 0; i < jv_len(hw); i++)
			if (jv_type(jv_at(hw, i)) == JV_STR)
				jw_str(w, NULL, jv_str(jv_at(hw, i)));
	for (i = 0; i < in->r->nwarnings; i++)
		jw_str(w, NULL, in->r->warnings[i]);
	jw_end_arr(w);
}

void report_write(struct report_in *in, FILE *f)
{
	struct run *r = in->r;
	struct jsonw w;
	struct hg_err err;
	struct jv *info = jv_parse(r->info->json, r->info->json_len, &err);
	char l1[512], l2[512], l3[512], lvm[512];
	int have12, have3, havevm;
	const struct jv *hv;

	if (!info)
		fail_err(&err);
	have12 = judge_summary(in->judge, l1, l2, sizeof(l1));
	hv = jv_get(jv_get(info, "tsc"), "hypervisor");
	havevm = have12 && jv_type(hv) == JV_STR &&
		 judge_vm_summary(in->judge, jv_str(hv), infer_switch_limit(in->infer), lvm, sizeof(lvm));
	have3 = latency_summary(in->lat, l3, sizeof(l3));
	jw_begin(&w, f);
	w.pretty = 1;
	jw_obj(&w, NULL);
	jw_int(&w, "report_version", 2);
	jw_int(&w, "report_minor", 6);	/* 2.1: kernel_tick, gaps.class_order, latency.stages; 2.2: the
					 * calibration's hrtick figures and notes, the rule hrtick; 2.3: the
					 * calibration's hidden_limit_basis; 2.4: ground_truth, truth,
					 * inference.inferred_all; 2.5: the rule model (--classes); 2.6:
					 * gap composition: kernel_recording.vcpu_turns, gaps.unrecorded,
					 * a wake-up's stage_parts and blame_stage */
	jw_obj(&w, "merger");
	jw_str(&w, "program", "hgmerge");
	jw_str(&w, "version", HGMERGE_VERSION);
	jw_numf(&w, "seconds", in->seconds, 3);
	jw_end_obj(&w);
	jw_arr(&w, "summary");
	if (have12) {
		jw_str(&w, NULL, l1);
		jw_str(&w, NULL, l2);
	}
	if (havevm)
		jw_str(&w, NULL, lvm);
	if (have3)
		jw_str(&w, NULL, l3);
	jw_end_arr(&w);
	put_run(in, &w, info);
	put_kernel(in, &w);
	put_warnings(in, &w, info);
	judge_report(in->judge, &w, in->infer);
	micro_report(in->micro, &w);
	latency_report(in->lat, &w);
	jw_obj(&w, "charts");
	judge_charts(in->judge, &w);
	sbf_report(in->sbf, &w);
	jw_end_obj(&w);
	jw_obj(&w, "files");
	jw_str(&w, "gaps", in->gaps_path);
	jw_str(&w, "kernelshark", in->ks_path);
	jw_str(&w, "perfetto", in->pf_path);
	jw_end_obj(&w);
	if (in->extra)
		in->extra(in->extra_ctx, &w);
	jw_end_obj(&w);
	jv_free(info);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * hg_plugin.c - the hourglass KernelShark plugin's loading side: finds the
 * hourglass events of a stream, keeps each gap's and wake-up's entry and
 * fields as KernelShark loads the stream, names the classes and gives them
 * their colours (hg_plugin.h). KernelShark loads it from a session's "User
 * Plugins" (hgmerge's --ks-session names it) or with `kernelshark -p`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "hg_plugin.h"
#include "libkshark-tepdata.h"

static void hg_ctx_free(struct hg_plugin_ctx *ctx)
{
	if (!ctx)
		return;
	free(ctx->gaps);
	free(ctx->wakes);
	free(ctx);
}

KS_DEFINE_PLUGIN_CONTEXT(struct hg_plugin_ctx, hg_ctx_free);

/* ---- the class names, interned: a new class name in the file needs nothing here ---- */

static char *class_names[HG_CLASSES_MAX];
static unsigned nclasses;

/* the HTML report's colours (tools/hgtools/charts.py, CLASS_COLORS): one look per class */
static const struct {
	const char *name;
	uint8_t rgb[3];
} known[] = {
	{ "switch_hg", { 0x1f, 0x77, 0xb4 } },
	{ "switch_other", { 0xff, 0x7f, 0x0e } },
	{ "timer", { 0x2c, 0xa0, 0x2c } },
	{ "interrupt", { 0xd6, 0x27, 0x28 } },
	{ "hidden", { 0x94, 0x67, 0xbd } },
	{ "other", { 0x8c, 0x56, 0x4b } },
	{ "voluntary", { 0xbc, 0xbd, 0x22 } },
	{ "unexplainable", { 0x00, 0x00, 0x00 } },
};

unsigned hg_class_index(const char *name, unsigned len)
{
	unsigned i;
	char *copy;

	for (i = 0; i < nclasses; i++)
		if (strlen(class_names[i]) == len && !memcmp(class_names[i], name, len))
			return i;
	if (nclasses == HG_CLASSES_MAX)
		return HG_CLASSES_MAX - 1;
	copy = strndup(name, len);
	if (!copy)
		return nclasses ? nclasses - 1 : 0;
	class_names[nclasses] = copy;
	return nclasses++;
}

const char *hg_class_name(unsigned i)
{
	return i < nclasses ? class_names[i] : "?";
}

void hg_class_rgb(unsigned i, uint8_t rgb[3])
{
	const char *name = hg_class_name(i);
	uint32_t h = 2166136261u;
	size_t k;

	for (k = 0; k < sizeof(known) / sizeof(known[0]); k++)
		if (!strcmp(known[k].name, name)) {
			memcpy(rgb, known[k].rgb, 3);
			return;
		}
	/* a class the report did not have when this was written: a colour of its own, the same
	 * in every session (FNV-1a of its name), never grey (kept off the running bars) */
	for (k = 0; name[k]; k++)
		h = (h ^ (uint8_t)name[k]) * 16777619u;
	rgb[0] = 40 + h % 200;
	rgb[1] = 40 + (h >> 8) % 200;
	rgb[2] = 40 + (h >> 16) % 200;
	if (abs(rgb[0] - rgb[1]) < 30 && abs(rgb[1] - rgb[2]) < 30)
		rgb[h >> 24 & 1 ? 0 : 2] = 230;
}

int hg_stream_alone(int sd, struct kshark_entry **data, size_t n)
{
	struct kshark_context *kctx = NULL;
	struct kshark_data_stream *stream;
	struct tep_handle *tep;
	int last = -1, last_hg = 0;
	size_t i;

	if (!kshark_instance(&kctx) || !(stream = kshark_get_data_stream(kctx, sd)) ||
	    !(tep = kshark_get_tep(stream)))
		return 0;
	for (i = 0; i < n; i++) {
		const struct kshark_entry *e = data[i];

		if (e->stream_id != sd || e->event_id < 0)
			continue;	/* another stream's, or a missed-events entry */
		if (e->event_id != last) {
			struct tep_event *ev = tep_find_event(tep, e->event_id);

			last = e->event_id;
			last_hg = ev && !strcmp(ev->system, "hourglass");
		}
		if (!last_hg)
			return 0;
	}
	return 1;
}

/* ---- loading ---- */

/* a string field of @rec (a __data_loc char[]): its bytes and length, without the NUL */
static const char *str_field(struct tep_event *ev, void *rec, const char *name, unsigned *len)
{
	int n = 0;
	const char *s = tep_get_field_raw(NULL, ev, name, rec, &n, 0);

	if (!s || n <= 0) {
		*len = 1;
		return "?";
	}
	*len = strnlen(s, n);
	return s;
}

static void on_gap(struct kshark_data_stream *stream, void *rec, struct kshark_entry *e)
{
	struct hg_plugin_ctx *ctx = __get_context(stream->stream_id);
	struct tep_event *ev;
	const char *s;
	unsigned len;
	int64_t v = 0;
	struct hg_gap *g;

	if (!ctx || !(ev = tep_find_event(kshark_get_tep(stream), ctx->gap_id)))
		return;
	if (ctx->ngaps == ctx->capgaps) {
		size_t cap = ctx->capgaps ? 2 * ctx->capgaps : 1024;
		struct hg_gap *p = realloc(ctx->gaps, cap * sizeof(*p));

		if (!p)
			return;		/* not drawn: the table still lists it */
		ctx->gaps = p;
		ctx->capgaps = cap;
	}
	g = &ctx->gaps[ctx->ngaps++];
	memset(g, 0, sizeof(*g));
	g->e = e;
	kshark_read_record_field_int(stream, rec, "length_ns", &v);
	g->len_ns = v;
	v = 0;
	kshark_read_record_field_int(stream, rec, "agree", &v);
	g->agree = !!v;
	s = str_field(ev, rec, "inferred", &len);
	g->inferred = hg_class_index(s, len);
	/* a voluntary gap: the thread asked for it, nothing was inferred (export.h's table) */
	g->judged = !(len == 9 && !memcmp(s, "voluntary", 9));
	s = str_field(ev, rec, "actual", &len);
	g->actual = hg_class_index(s, len);
}

static void on_wake(struct kshark_data_stream *stream, void *rec, struct kshark_entry *e)
{
	struct hg_plugin_ctx *ctx = __get_context(stream->stream_id);
	int64_t v = 0;

	if (!ctx)
		return;
	if (ctx->nwakes == ctx->capwakes) {
		size_t cap = ctx->capwakes ? 2 * ctx->capwakes : 1024;
		struct hg_wake *p = realloc(ctx->wakes, cap * sizeof(*p));

		if (!p)
			return;
		ctx->wakes = p;
		ctx->capwakes = cap;
	}
	kshark_read_record_field_int(stream, rec, "lateness_ns", &v);
	ctx->wakes[ctx->nwakes++] = (struct hg_wake){ e, v };
}

/* Load this plugin for @stream: 1 when the stream has hourglass's gaps or wake-ups */
int KSHARK_PLOT_PLUGIN_INITIALIZER(struct kshark_data_stream *stream)
{
	struct hg_plugin_ctx *ctx;

	if (!kshark_is_tep(stream))
		return 0;
	ctx = __init(stream->stream_id);
	if (!ctx)
		return 0;
	ctx->gap_id = kshark_find_event_id(stream, "hourglass/gap");
	ctx->wake_id = kshark_find_event_id(stream, "hourglass/wakeup");
	if (ctx->gap_id < 0 && ctx->wake_id < 0) {
		__close(stream->stream_id);
		return 0;
	}
	if (ctx->gap_id >= 0)
		kshark_register_event_handler(stream, ctx->gap_id, on_gap);
	if (ctx->wake_id >= 0)
		kshark_register_event_handler(stream, ctx->wake_id, on_wake);
	kshark_register_draw_handler(stream, hg_draw);
	return 1;
}

/* Unload this plugin */
int KSHARK_PLOT_PLUGIN_DEINITIALIZER(struct kshark_data_stream *stream)
{
	struct hg_plugin_ctx *ctx = __get_context(stream->stream_id);
	int ret = 0;

	if (ctx) {
		if (ctx->gap_id >= 0)
			kshark_unregister_event_handler(stream, ctx->gap_id, on_gap);
		if (ctx->wake_id >= 0)
			kshark_unregister_event_handler(stream, ctx->wake_id, on_wake);
		kshark_unregister_draw_handler(stream, hg_draw);
		ret = 1;
	}
	__close(stream->stream_id);
	return ret;
}

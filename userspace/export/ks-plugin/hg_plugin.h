/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hg_plugin.h - the hourglass KernelShark plugin: what it keeps of a stream
 * while KernelShark loads it (hg_plugin.c), for the drawing (hg_plot.cpp).
 *
 * It reads the events of system "hourglass" that hgmerge's trace.dat export
 * writes (docs/export.md): each gap with its inferred and actual class by
 * name, whatever the names are (a class it has no colour for gets one of its
 * own), and each wake-up with its lateness.
 */
#ifndef HG_PLUGIN_H
#define HG_PLUGIN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "libkshark.h"
#include "libkshark-plugin.h"

#define HG_CLASSES_MAX	64	/* class names told apart; more share the last one's look */

/* a gap as drawn: from its entry's time for @len_ns, in the classes' colours */
struct hg_gap {
	struct kshark_entry *e;
	int64_t len_ns;
	uint8_t inferred, actual;	/* indices into the class names */
	uint8_t agree;
	uint8_t judged;			/* an inference was made: not a voluntary gap */
};

/* a wake-up as drawn: the @lateness_ns before its entry's time (when positive) */
struct hg_wake {
	struct kshark_entry *e;
	int64_t lateness_ns;
};

struct hg_plugin_ctx {
	int gap_id, wake_id;		/* the events' ids in this stream, -1 when absent */
	struct hg_gap *gaps;
	size_t ngaps, capgaps;
	struct hg_wake *wakes;
	size_t nwakes, capwakes;
	int sorted;			/* gaps and wake-ups sorted by time (once, before the first draw) */
	int64_t reach;			/* ... and the longest gap or lateness among them */
	int hg_only;			/* ... and whether the stream holds hourglass's events alone */
};

KS_DECLARE_PLUGIN_CONTEXT_METHODS(struct hg_plugin_ctx)

/* hg_class_index - the index of class @name (interned, shared by every stream) */
unsigned hg_class_index(const char *name, unsigned len);
/* hg_class_name - the name of class @i */
const char *hg_class_name(unsigned i);
/* hg_class_rgb - the colour of class @i: the HTML report's (tools/hgtools/charts.py) for the
 * classes it knows, else one made from the name */
void hg_class_rgb(unsigned i, uint8_t rgb[3]);

/* hg_stream_alone - whether every event of stream @sd among @n entries @data is hourglass's
 * (a session's companion file: its plots are labelled apart from the kernel's) */
int hg_stream_alone(int sd, struct kshark_entry **data, size_t n);

/* the drawing handler, registered for every stream with hourglass's events */
void hg_draw(struct kshark_cpp_argv *argv, int sd, int val, int draw_action);

#ifdef __cplusplus
}
#endif

#endif

// SPDX-License-Identifier: GPL-2.0
/*
 * hg_plot.cpp - the hourglass KernelShark plugin's drawing: on each plot of a
 * stream with hourglass's events (its CPUs' plots, and a task plot of an
 * hourglass thread), every gap where it happened, as a box from its start
 * to its end, 7/10 of the plot's height, whose lower half has the colour of
 * its actual class (what the kernel did) and upper half that of its
 * inferred class (what hourglass said): one colour when the inference was
 * right, two when it was wrong, and then a red triangle over it (none for a
 * voluntary gap: nothing was inferred); each wake-up's lateness as a dark
 * bar at the top, from the intended expiry to the wake-up. A stream of
 * hourglass's events alone (a session's companion file) has its CPU plots
 * labelled "hg CPU N", apart from the kernel's "CPU N".
 *
 * The colours are the HTML report's (hg_plugin.c); docs/export.md shows them.
 */
#include <algorithm>
#include <string>

#include "KsPlotTools.hpp"
#include "KsPlugins.hpp"
#include "hg_plugin.h"

using namespace KsPlot;

static const Color WRONG(255, 0, 0);	/* the HTML report's mark of a wrong inference */
static const Color LATE(40, 40, 40);

/* a filled rectangle between two x and two y (y grows downwards), at least a pixel wide */
static Rectangle *box(int x0, int x1, int ytop, int ybottom, const Color &c)
{
	Rectangle *r = new Rectangle;

	if (x1 <= x0)
		x1 = x0 + 1;
	r->setFill(true);
	r->setPoint(0, x0, ytop);
	r->setPoint(1, x1, ytop);
	r->setPoint(2, x1, ybottom);
	r->setPoint(3, x0, ybottom);
	r->_color = c;
	r->_size = 1;
	return r;
}

/* the red triangle over a wrong inference, pointing down at the box's top edge at @x */
static Triangle *mark(int x, int ytip, int size)
{
	Triangle *t = new Triangle;

	t->setFill(true);
	t->setPoint(0, x - size, ytip - size - 1);
	t->setPoint(1, x + size, ytip - size - 1);
	t->setPoint(2, x, ytip - 1);
	t->_color = WRONG;
	t->_size = 1;
	return t;
}

static Color class_color(unsigned cls)
{
	uint8_t rgb[3];

	hg_class_rgb(cls, rgb);
	return Color(rgb[0], rgb[1], rgb[2]);
}

/* the bins of a time range seen in the model, or false when it is outside */
static bool bins_of(const kshark_trace_histo *h, int64_t t0, int64_t t1, int *b0, int *b1)
{
	if (t1 < h->min || t0 > h->max || h->bin_size <= 0)
		return false;
	*b0 = t0 <= h->min ? 0 : (int)((t0 - h->min) / h->bin_size);
	*b1 = t1 >= h->max ? h->n_bins - 1 : (int)((t1 - h->min) / h->bin_size);
	if (*b0 >= h->n_bins)
		*b0 = h->n_bins - 1;
	if (*b1 >= h->n_bins)
		*b1 = h->n_bins - 1;
	return true;
}

/* whether @e belongs on the plot being drawn (@val: a CPU or a pid), and is shown there */
static bool on_plot(const kshark_entry *e, int val, int draw_action)
{
	if (!(e->visible & KS_GRAPH_VIEW_FILTER_MASK))
		return false;
	if (draw_action & KSHARK_CPU_DRAW)
		return e->cpu == val;
	if (draw_action & KSHARK_TASK_DRAW)
		return e->pid == val;
	return false;
}

/* the longest gap or lateness: how far before the view an event may begin and still be in it */
static int64_t longest(const hg_plugin_ctx *ctx)
{
	int64_t m = 0;

	for (size_t i = 0; i < ctx->ngaps; i++)
		m = std::max(m, ctx->gaps[i].len_ns);
	for (size_t i = 0; i < ctx->nwakes; i++)
		m = std::max(m, ctx->wakes[i].lateness_ns);
	return m;
}

static void sort_once(hg_plugin_ctx *ctx, const kshark_trace_histo *h, int sd)
{
	if (ctx->sorted)
		return;
	/* loaded per CPU, not in time order overall; the drawing looks them up by time */
	std::stable_sort(ctx->gaps, ctx->gaps + ctx->ngaps,
			 [](const hg_gap &a, const hg_gap &b) { return a.e->ts < b.e->ts; });
	std::stable_sort(ctx->wakes, ctx->wakes + ctx->nwakes,
			 [](const hg_wake &a, const hg_wake &b) { return a.e->ts < b.e->ts; });
	ctx->reach = longest(ctx);
	ctx->hg_only = hg_stream_alone(sd, h->data, h->data_size);
	ctx->sorted = 1;
}

extern "C" void hg_draw(struct kshark_cpp_argv *argv_c, int sd, int val, int draw_action)
{
	hg_plugin_ctx *ctx = __get_context(sd);
	KsCppArgV *argv = KS_ARGV_TO_CPP(argv_c);
	Graph *graph = argv->_graph;
	kshark_trace_histo *h = argv->_histo;
	PlotObjList *shapes = argv->_shapes;
	int b0, b1, base, H;
	int64_t from, reach;

	if (!ctx || !graph || graph->size() == 0 || !h)
		return;
	sort_once(ctx, h, sd);
	if (draw_action & KSHARK_CPU_DRAW && ctx->hg_only)
		graph->setLabelText("hg CPU " + std::to_string(val));
	base = graph->bin(0)._base.y();
	H = graph->height();
	reach = ctx->reach;
	from = h->min - reach;

	/* the gaps: the first that may reach into the view, by time */
	hg_gap *g = std::lower_bound(ctx->gaps, ctx->gaps + ctx->ngaps, from,
				     [](const hg_gap &a, int64_t t) { return a.e->ts < t; });
	for (; g < ctx->gaps + ctx->ngaps && g->e->ts <= h->max; g++) {
		if (!on_plot(g->e, val, draw_action) || !bins_of(h, g->e->ts, g->e->ts + g->len_ns, &b0, &b1))
			continue;
		int x0 = graph->bin(b0)._base.x(), x1 = graph->bin(b1)._base.x();
		int mid = base - H * 7 / 20, top = base - H * 7 / 10;

		shapes->push_front(box(x0, x1, mid, base - 1, class_color(g->actual)));
		shapes->push_front(box(x0, x1, top, mid, class_color(g->inferred)));
		if (g->judged && !g->agree)
			shapes->push_front(mark((x0 + std::max(x1, x0 + 1)) / 2, top, std::max(5, H / 4)));
	}

	/* the wake-ups' lateness: each ends at its event, so from the view's start on */
	hg_wake *w = std::lower_bound(ctx->wakes, ctx->wakes + ctx->nwakes, h->min,
				      [](const hg_wake &a, int64_t t) { return a.e->ts < t; });
	for (; w < ctx->wakes + ctx->nwakes && w->e->ts - reach <= h->max; w++) {
		int64_t t0 = w->e->ts - std::max<int64_t>(w->lateness_ns, 0);

		if (!on_plot(w->e, val, draw_action) || !bins_of(h, t0, w->e->ts, &b0, &b1))
			continue;
		shapes->push_front(box(graph->bin(b0)._base.x(), graph->bin(b1)._base.x(), base - H * 19 / 20,
				       base - H * 3 / 4, LATE));
	}
}

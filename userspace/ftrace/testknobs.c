// SPDX-License-Identifier: GPL-2.0
/*
 * testknobs.c - what the guest tests make hgtrace-ftrace do through its environment,
 * compiled into the test build only (build/test/hgtrace-ftrace, HGT_FTRACE_TEST; the
 * Makefile): the product program has neither knob, so no environment can make an
 * installed recorder stop itself or leave events out. ftrace.h says what each does.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evmap.h"
#include "ftrace.h"

#ifndef HGT_FTRACE_TEST
#error "testknobs.c is the test build's only (make: build/test/hgtrace-ftrace)"
#endif

void ft_stage(const char *name)
{
	const char *at = getenv("HGT_FTRACE_STOP_AT");

	/* stop here, so that the test's signal arrives at exactly this point */
	if (at && !strcmp(at, name)) {
		fprintf(stderr, "hgtrace-ftrace: stopping at %s (HGT_FTRACE_STOP_AT)\n", name);
		raise(SIGSTOP);
	}
}

void ft_hide_events(struct hgev_map *map)
{
	const char *hide = getenv("HGT_FTRACE_HIDE");
	unsigned int i;

	for (i = 0; hide && i < hgev_nr_descs(); i++) {
		const struct hgev_desc *d = hgev_desc(i);
		char name[128];
		const char *p;
		size_t n;

		n = snprintf(name, sizeof(name), "%s:%s", d->system, d->name);
		for (p = strstr(hide, name); p; p = strstr(p + 1, name))
			if ((p == hide || p[-1] == ',') && (p[n] == ',' || !p[n]))
				hgev_map_drop(map, i);
	}
}

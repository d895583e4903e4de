// SPDX-License-Identifier: GPL-2.0
/*
 * opts.c - option values both recorders take alike (hg_opts.h).
 */
#include <stdlib.h>
#include <string.h>

#include "hg_opts.h"
#include "hgtrace.h"

double hg_parse_seconds(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v < 0)
		return -1;
	if (!*end || !strcmp(end, "s"))
		return v;
	if (!strcmp(end, "ms"))
		return v / 1e3;
	if (!strcmp(end, "us"))
		return v / 1e6;
	if (!strcmp(end, "m"))
		return v * 60;
	return -1;
}

uint32_t hg_parse_events(const char *list, char *bad, size_t badlen)
{
	static const struct { const char *n; uint32_t b; } names[] = {
		{ "sched", HGT_EV_SCHED }, { "irq", HGT_EV_IRQ }, { "softirq", HGT_EV_SOFTIRQ },
		{ "vectors", HGT_EV_VECTORS }, { "nmi", HGT_EV_NMI }, { "hrtimer", HGT_EV_HRTIMER },
		{ "syscalls", HGT_EV_SYSCALLS }, { "all", HGT_EV_ALL }, { "default", HGT_EV_DEFAULT },
	};
	const char *p = list;
	uint32_t ev = 0;

	/* an empty list, or an empty name between commas, is a name nobody knows */
	do {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].n) == len && !strncmp(p, names[i].n, len))
				break;
		if (i == sizeof(names) / sizeof(names[0])) {
			if (badlen) {
				size_t n = len < badlen - 1 ? len : badlen - 1;

				memcpy(bad, p, n);
				bad[n] = 0;
			}
			return 0;
		}
		ev |= names[i].b;
		p += len;
	} while (*p++ == ',');
	return ev;
}

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

/* a whole decimal number in [lo, hi], or -1 */
static long whole(const char *s, long lo, long hi)
{
	char *end;
	long v;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	v = strtol(s, &end, 10);
	return *end || v < lo || v > hi ? -1 : v;
}

/* cpus_opt - -c: a CPU list that names one CPU at least, within cpus_max */
static int cpus_opt(struct hg_rec_opts *o, const char *arg, struct hg_err *e)
{
	struct hg_cpuset set = { 0 };
	const char *why = NULL;

	if (hg_cpulist_parse(arg, &set, &why) || !hg_cpuset_count(&set)) {
		hg_cpuset_free(&set);
		return hg_err_set(e, "bad CPU list '%s': %s (e.g. 0,2-3)", arg, why ? why : "no CPU in it");
	}
	if (o->cpus_max && set.nbits > o->cpus_max) {
		hg_cpuset_free(&set);
		return hg_err_set(e, "bad CPU list '%s': the module records CPUs 0 to %u", arg, o->cpus_max - 1);
	}
	hg_cpuset_free(&o->cpus);
	o->cpus = set;
	return 1;
}

int hg_rec_opt(struct hg_rec_opts *o, int c, const char *arg, struct hg_err *e)
{
	char bad[32];
	uint32_t ev;
	long v;

	switch (c) {
	case 'd':
		o->duration = hg_parse_seconds(arg);
		if (o->duration <= 0)
			return hg_err_set(e, "bad duration '%s' (e.g. 10s, 500ms)", arg);
		return 1;
	case 'i':
		o->interval = hg_parse_seconds(arg);
		if (o->interval < 0.001 || o->interval > 60)
			return hg_err_set(e, "bad interval '%s' (1ms to 60s)", arg);
		return 1;
	case 'e':
		ev = hg_parse_events(arg, bad, sizeof(bad));
		if (!ev)
			return hg_err_set(e, "unknown event group '%s' (" HG_EVENT_GROUPS ")", bad);
		/* the first -e replaces the default, the next ones add to it */
		o->events = o->events_given++ ? o->events | ev : ev;
		return 1;
	case 'b':
		if ((v = whole(arg, 8, 1L << 20)) < 0)
			return hg_err_set(e, "bad buffer size '%s' (8 to 1048576 KiB)", arg);
		o->buffer_kb = v;
		return 1;
	case 'm':
		if (strcmp(arg, "stop") && strcmp(arg, "overwrite"))
			return hg_err_set(e, "bad mode '%s' (stop or overwrite)", arg);
		o->overwrite = !strcmp(arg, "overwrite");
		return 1;
	case 'r':
		if ((v = whole(arg, 1, 99)) < 0)
			return hg_err_set(e, "bad priority '%s' (1 to 99)", arg);
		o->prio = v;
		return 1;
	case 'C':
		if ((v = whole(arg, 0, 1L << 20)) < 0)
			return hg_err_set(e, "bad reader CPU '%s'", arg);
		o->reader_cpu = v;
		return 1;
	case 'c':
		return cpus_opt(o, arg, e);
	}
	return 0;
}

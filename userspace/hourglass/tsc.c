// SPDX-License-Identifier: GPL-2.0
/*
 * tsc.c - what the TSC is worth on this machine and how fast it runs.
 */
#include <cpuid.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "tsc.h"

static bool cpuinfo_flag(const char *flag)
{
	char line[8192], pat[64];
	FILE *f = fopen("/proc/cpuinfo", "r");
	bool found = false;

	if (!f)
		return false;
	snprintf(pat, sizeof(pat), " %s", flag);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		line[strcspn(line, "\n")] = ' ';
		strcat(line, " ");
		found = strstr(line, pat) && strstr(line, pat)[strlen(pat)] == ' ';
		break;
	}
	fclose(f);
	return found;
}

/* hg_tsc_probe - CPU features and kernel view of the TSC. */
void hg_tsc_probe(struct hg_tsc_info *info)
{
	unsigned int a, b, c, d;
	FILE *f;

	memset(info, 0, sizeof(*info));
	if (__get_cpuid(0x80000001, &a, &b, &c, &d))
		info->has_rdtscp = d & (1u << 27);
	if (__get_cpuid(0x80000007, &a, &b, &c, &d))
		info->invariant = d & (1u << 8);
	if (__get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 31))) {
		unsigned int id[3];
		size_t i;

		/* leaf 0x40000000 is the hypervisor's own, outside __get_cpuid's range check */
		__cpuid(0x40000000, a, id[0], id[1], id[2]);
		memcpy(info->hypervisor, id, 12);
		info->hypervisor[12] = 0;
		for (i = 0; i < 12 && info->hypervisor[i]; i++)
			if (info->hypervisor[i] < 0x20 || info->hypervisor[i] > 0x7e)
				info->hypervisor[i] = '?';
		if (!info->hypervisor[0])
			strcpy(info->hypervisor, "unnamed");
	}
	info->constant = cpuinfo_flag("constant_tsc");
	info->nonstop = cpuinfo_flag("nonstop_tsc");
	strcpy(info->clocksource, "unknown");
	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	if (f) {
		if (fgets(info->clocksource, sizeof(info->clocksource), f))
			info->clocksource[strcspn(info->clocksource, "\n")] = 0;
		fclose(f);
	}
}

/* hg_tsc_cpu - the TSC now and the CPU this thread reads it on; the stamp is
 * the last thing read, so that nothing of ours runs after it. */
uint64_t hg_tsc_cpu(const struct hg_tsc_info *info, uint64_t *tsc)
{
	uint32_t cpu;

	if (info->has_rdtscp) {
		*tsc = hg_rdtscp(&cpu);
		return cpu;
	}
	/* the CPU first: the stamp must come after the call, as rdtscp's does */
	cpu = (uint32_t)sched_getcpu();
	*tsc = hg_rdtsc();
	return cpu;
}

/*
 * hg_tsc_pair - read @clk between two TSC reads, keeping the tightest of a
 * few tries so an interrupt between the reads does not skew the pair.
 */
void hg_tsc_pair(clockid_t clk, struct hg_tsc_pair *p)
{
	int i;

	p->window = UINT64_MAX;
	for (i = 0; i < 16; i++) {
		uint64_t t1 = hg_rdtsc(), ns = hg_clock_ns(clk), t2 = hg_rdtsc();

		if (t2 - t1 < p->window) {
			p->window = t2 - t1;
			p->tsc = t1 + (t2 - t1) / 2;
			p->ns = ns;
		}
	}
}

/* hg_tsc_fit_hz - TSC frequency from two pairs; 0 if they make no sense. */
double hg_tsc_fit_hz(const struct hg_tsc_pair *a, const struct hg_tsc_pair *b)
{
	if (b->ns <= a->ns || b->tsc <= a->tsc)
		return 0;
	return (double)(b->tsc - a->tsc) * 1e9 / (double)(b->ns - a->ns);
}

/* hg_tsc_calibrate - TSC frequency over @ms milliseconds of sleeping. */
double hg_tsc_calibrate(uint64_t ms, struct hg_tsc_pair *first, struct hg_tsc_pair *last)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	hg_tsc_pair(CLOCK_MONOTONIC_RAW, first);
	nanosleep(&ts, NULL);
	hg_tsc_pair(CLOCK_MONOTONIC_RAW, last);
	return hg_tsc_fit_hz(first, last);
}

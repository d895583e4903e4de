/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tsc.h - the time stamp counter: reading it, the CPU it was read on, and
 * its frequency against CLOCK_MONOTONIC_RAW.
 */
#ifndef HG_TSC_H
#define HG_TSC_H

#include <stdint.h>
#include <stdbool.h>
#include <time.h>

#ifdef HG_FAKE_TSC
/* unit tests drive the loop with a scripted clock (tests/unit/hourglass_units.c) */
uint64_t hg_rdtsc(void);
uint64_t hg_rdtscp(uint32_t *cpu);
#else
static inline uint64_t hg_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/*
 * hg_rdtscp - TSC and the CPU it was read on. Linux puts the CPU number in
 * the low 12 bits of TSC_AUX (the node above them).
 */
static inline uint64_t hg_rdtscp(uint32_t *cpu)
{
	uint32_t lo, hi, aux;

	__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
	*cpu = aux & 0xfff;
	return ((uint64_t)hi << 32) | lo;
}
#endif

struct hg_tsc_info {
	bool has_rdtscp;
	bool invariant;		/* CPUID 0x80000007 EDX bit 8 */
	bool constant;		/* /proc/cpuinfo constant_tsc */
	bool nonstop;		/* /proc/cpuinfo nonstop_tsc */
	char clocksource[32];	/* the kernel's current clocksource */
	/* a virtual machine's CPUID vendor (leaf 0x40000000: "TCGTCGTCGTCG" for QEMU's
	 * emulator, "KVMKVMKVM", "Microsoft Hv", "VMwareVMware"), "" where CPUID 1 says no
	 * hypervisor (ECX bit 31): its gaps hold what the host ran (steal) */
	char hypervisor[13];
};

/* A TSC reading and a CLOCK_MONOTONIC_RAW reading taken together. */
struct hg_tsc_pair {
	uint64_t tsc;
	uint64_t ns;
	uint64_t window;	/* TSC cycles between the two TSC reads around ns */
};

void hg_tsc_probe(struct hg_tsc_info *info);
uint64_t hg_tsc_cpu(const struct hg_tsc_info *info, uint64_t *tsc);
void hg_tsc_pair(clockid_t clk, struct hg_tsc_pair *p);
double hg_tsc_fit_hz(const struct hg_tsc_pair *a, const struct hg_tsc_pair *b);
double hg_tsc_calibrate(uint64_t ms, struct hg_tsc_pair *first, struct hg_tsc_pair *last);

static inline uint64_t hg_ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ULL + (uint64_t)ts->tv_nsec;
}

static inline struct timespec hg_ns_ts(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) };

	return ts;
}

static inline uint64_t hg_clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return hg_ts_ns(&ts);
}

#endif

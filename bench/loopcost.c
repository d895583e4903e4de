// SPDX-License-Identifier: GPL-2.0
/*
 * loopcost.c - hourglass's polling loop against a bare rdtsc loop, and the
 * smallest gap the loop detects reliably. Runs on this machine (no guest).
 *
 *   make bench-loop       (or: build/bench/loopcost [repeats])
 *
 * Part 1: ns per iteration of hg_spin (spin.h, the loop hourglass runs, built
 * with an iteration counter) and of `while (rdtsc() < end) n++`, interleaved,
 * 200 ms each, medians of the repeats and their ratio (target <= 1.2).
 * Part 2: delays of known length are put between two reads of the loop, and
 * the fraction that the loop records as gaps is counted, for each length.
 * Prints a table and one JSON line ("loopcost: {...}") for scripts.
 */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "spin.h"

#define RUN_MS 200
#define INJECTIONS 4000

static struct hg_run run;
static struct hg_thread th;

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void reset_pool(void)
{
	atomic_store(&run.pool_used, 0);
	memset(run.pool, 0, run.pool_cap * sizeof(*run.pool));
	th.rec = th.rec_end = NULL;
	th.dropped = 0;
	th.pool_spent = false;
}

static double bare_ns(void)
{
	uint64_t n = 0, t0 = hg_rdtsc(), end = t0 + (uint64_t)(run.hz * RUN_MS / 1e3), now;

	while ((now = hg_rdtsc()) < end)
		n++;
	return (double)(now - t0) * 1e9 / run.hz / (double)n;
}

static double spin_ns(bool scan)
{
	static uint8_t ws[32 * 1024];
	struct hg_spin s = { .scan = ws, .scan_len = sizeof(ws) };
	uint64_t need = UINT64_MAX, work = 0, t0;

	reset_pool();
	hg_spin_open(&th, &s);
	t0 = s.start;
	if (scan)
		hg_spin(&th, &s, &need, t0 + (uint64_t)(run.hz * RUN_MS / 1e3), true, &work);
	else
		hg_spin(&th, &s, &need, t0 + (uint64_t)(run.hz * RUN_MS / 1e3), false, NULL);
	return (double)(s.last - t0) * 1e9 / run.hz / (double)s.iters;
}

/*
 * busy - burn time without reading the TSC: the injected gap. The lfences
 * keep the loop's next rdtsc from running early, out of order, beside the
 * delay, as an interrupt (which serialises) would.
 */
static void __attribute__((noinline)) busy(unsigned int n)
{
	__asm__ __volatile__("lfence" ::: "memory");
	for (unsigned int i = 0; i < n; i++)
		__asm__ __volatile__("" ::: "memory");
	__asm__ __volatile__("lfence" ::: "memory");
}

/*
 * busy_ns - how long busy(n) takes: batches of 1000 calls between two TSC
 * reads (one read costs as much as a short delay), median of 31 batches.
 */
static double busy_ns(unsigned int n)
{
	double v[31];
	int i, j;

	for (i = 0; i < 31; i++) {
		uint64_t a = hg_rdtsc();

		for (j = 0; j < 1000; j++)
			busy(n);
		v[i] = (double)(hg_rdtsc() - a) * 1e9 / run.hz / 1000;
	}
	return median(v, 31);
}

/* detect - fraction of @count injected delays of busy(@n) recorded as gaps */
static double detect(unsigned int n, int count)
{
	struct hg_spin s = { 0 };
	uint64_t need, before;
	int hits = 0, i;

	reset_pool();
	hg_rec_refill(&th);	/* take the first chunk now: counting is by pointer */
	th.rec--;
	hg_spin_open(&th, &s);
	for (i = 0; i < count; i++) {
		need = (uint64_t)(run.hz * 2e-6);	/* 2 us of loop between delays */
		hg_spin(&th, &s, &need, UINT64_MAX, false, NULL);
		before = (uint64_t)(th.rec - run.pool);
		busy(n);
		need = 1;
		hg_spin(&th, &s, &need, UINT64_MAX, false, NULL);
		hits += (uint64_t)(th.rec - run.pool) > before;
	}
	return (double)hits / count;
}

int main(int argc, char **argv)
{
	int repeats = argc > 1 ? atoi(argv[1]) : 11, i;
	double bare[64], spin[64], scan[64], ratio, loop_ns, gap_ns, smallest = NAN;
	static const unsigned int steps[] = { 0, 4, 8, 16, 24, 32, 40, 48, 64, 96, 128, 256, 512 };
	enum { nsteps = sizeof(steps) / sizeof(steps[0]) };
	double delay[nsteps], rate[nsteps];
	struct hg_tsc_pair a, b;
	struct sched_param sp = { .sched_priority = 50 };
	uint64_t over;
	cpu_set_t cpus;

	if (repeats < 3 || repeats > 64)
		repeats = 11;
	/* one CPU, and above time-sharing tasks when allowed: less noise */
	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu(), &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	sched_setscheduler(0, SCHED_FIFO, &sp);

	hg_tsc_probe(&run.tsc);
	run.hz = run.hz_pre = hg_tsc_calibrate(200, &a, &b);
	run.loop_cycles = hg_measure_loop(&over);
	run.gap_cycles = (uint64_t)(2 * run.loop_cycles);
	run.pool_cap = 1 << 20;
	run.pool = calloc(run.pool_cap, sizeof(*run.pool));
	th.run = &run;
	if (!run.pool)
		return 1;
	for (i = 0; i < repeats; i++) {	/* interleaved */
		bare[i] = bare_ns();
		spin[i] = spin_ns(false);
		scan[i] = spin_ns(true);
	}
	ratio = median(spin, repeats) / median(bare, repeats);
	loop_ns = run.loop_cycles * 1e9 / run.hz;
	gap_ns = (double)run.gap_cycles * 1e9 / run.hz;
	printf("TSC %.3f MHz; calibrated loop %.2f ns, GAP %.2f ns (%llu cycles); %d repeats of %d ms\n",
	       run.hz / 1e6, loop_ns, gap_ns, (unsigned long long)run.gap_cycles, repeats, RUN_MS);
	printf("%-34s %10s\n", "loop", "ns/iter");
	printf("%-34s %10.3f\n", "bare rdtsc loop (baseline)", median(bare, repeats));
	printf("%-34s %10.3f   ratio %.3f (target <= 1.2)\n", "hourglass hg_spin", median(spin, repeats), ratio);
	printf("%-34s %10.3f   ratio %.3f\n", "hg_spin with CPU_SCAN 32 KB", median(scan, repeats),
	       median(scan, repeats) / median(bare, repeats));

	printf("\n%-26s %10s\n", "injected delay (ns)", "detected");
	for (i = 0; i < nsteps; i++) {
		delay[i] = busy_ns(steps[i]);
		rate[i] = detect(steps[i], INJECTIONS);
	}
	/* by measured length: the TSC reads overlap a short delay unevenly */
	for (i = 1; i < nsteps; i++)
		for (int j = i; j > 0 && delay[j - 1] > delay[j]; j--) {
			double d = delay[j], r = rate[j];

			delay[j] = delay[j - 1];
			rate[j] = rate[j - 1];
			delay[j - 1] = d;
			rate[j - 1] = r;
		}
	for (i = 0; i < nsteps; i++)
		printf("%-26.1f %9.2f%%\n", delay[i], rate[i] * 100);
	/* reliable: this length and every longer one detected >= 99.9% */
	for (i = nsteps - 1; i >= 0 && rate[i] >= 0.999; i--)
		smallest = delay[i];
	printf("\nsmallest gap detected reliably (>= 99.9%% of %d, and all longer): %.1f ns delay\n"
	       "(the loop sees it plus one iteration, %.1f ns)\n", INJECTIONS, smallest, loop_ns);
	printf("loopcost: {\"loop_ns\": %.3f, \"gap_ns\": %.3f, \"bare_ns\": %.3f, \"spin_ns\": %.3f, "
	       "\"ratio\": %.4f, \"scan_ns\": %.3f, \"smallest_reliable_gap_ns\": %.2f, \"repeats\": %d, "
	       "\"injected\": [", loop_ns, gap_ns, median(bare, repeats), median(spin, repeats), ratio,
	       median(scan, repeats), smallest, repeats);
	for (i = 0; i < nsteps; i++)
		printf("%s[%.2f, %.5f]", i ? ", " : "", delay[i], rate[i]);
	printf("]}\n");
	return 0;
}

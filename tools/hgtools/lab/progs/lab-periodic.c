// SPDX-License-Identifier: GPL-2.0
/*
 * lab-periodic - a periodic SCHED_FIFO task of known period and busy time:
 * every PERIOD it wakes (absolute CLOCK_MONOTONIC sleep), spins BUSY on the
 * TSC, and sleeps again, until SIGTERM. Beside hourglass on the same CPU at
 * a higher priority, each job preempts hourglass once: the gap is the busy
 * time plus a switch out and one back.
 *
 *   lab-periodic -p PERIOD -b BUSY [-P PRIO] [-c CPU] [-o STAMPS]
 *
 * Times as 7ms, 400us, 1s (a bare number is microseconds). PRIO defaults to
 * 90 (SCHED_FIFO; 0 keeps SCHED_OTHER). At the end it writes STAMPS (lab.h:
 * each job's first and last TSC read) and prints "jobs N". Exit 0; 1 bad
 * usage; 2 a policy, affinity or file it could not have.
 */
#include <getopt.h>
#include <unistd.h>

#include "lab.h"

static void usage(void)
{
	fprintf(stderr, "usage: lab-periodic -p PERIOD -b BUSY [-P PRIO] [-c CPU] [-o STAMPS]\n");
}

int main(int argc, char **argv)
{
	int64_t period = -1, busy = -1, late = 0;
	int prio = 90, cpu = -1, c;
	const char *out = NULL;
	struct lab_stamps st;
	struct timespec next;
	uint64_t busy_cyc;
	char head[256];
	double hz;

	while ((c = getopt(argc, argv, "p:b:P:c:o:h")) != -1) {
		switch (c) {
		case 'p': period = lab_parse_ns(optarg); break;
		case 'b': busy = lab_parse_ns(optarg); break;
		case 'P': prio = atoi(optarg); break;
		case 'c': cpu = atoi(optarg); break;
		case 'o': out = optarg; break;
		default: usage(); return c == 'h' ? 0 : 1;
		}
	}
	if (period <= 0 || busy < 0 || busy >= period || optind != argc) {
		usage();
		return 1;
	}
	lab_signals();
	if (lab_pin(cpu, "lab-periodic") || lab_fifo(prio, "lab-periodic"))
		return 2;
	/* a day's jobs at most; at 1 kHz that is 1.4 GB: bound it to what a lab run needs */
	if (lab_stamps_init(&st, 1 << 20)) {
		fprintf(stderr, "lab-periodic: no memory for the stamps\n");
		return 2;
	}
	hz = lab_tsc_hz();
	busy_cyc = (uint64_t)((double)busy * hz / 1e9);
	clock_gettime(CLOCK_MONOTONIC, &next);
	lab_advance(&next, 10000000);
	while (!lab_sleep_until(&next)) {
		uint64_t t0 = lab_tsc(), t1;
		struct timespec now;

		do
			t1 = lab_tsc();
		while (t1 - t0 < busy_cyc);
		lab_stamp(&st, t0, t1);
		lab_advance(&next, period);
		/* a job that ends past the next release starts the next at once; a whole period
		 * behind, the releases move on (counted) instead of catching up in a burst */
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - next.tv_sec) * 1000000000LL + now.tv_nsec - next.tv_nsec > period) {
			late++;
			next = now;
		}
	}
	snprintf(head, sizeof(head), "# program=lab-periodic\n# period_ns=%lld\n# busy_ns=%lld\n# prio=%d\n"
		 "# cpu=%d\n# late=%lld\n", (long long)period, (long long)busy, prio, cpu, (long long)late);
	printf("jobs %zu\n", st.n);
	if (out && lab_stamps_write(&st, out, head, hz))
		return 2;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * lab-ipi - inter-processor interrupts of known rate to one CPU, with no task
 * woken there: from CPU FROM, RATE times a second, read /dev/cpu/TO/cpuid
 * (the cpuid module), which the kernel serves with
 * smp_call_function_single() on CPU TO: one function-call IPI each
 * ("CAL" in /proc/interrupts, call_function_single in the recording).
 *
 *   lab-ipi -r RATE -f FROM -t TO [-P PRIO] [-o STAMPS]
 *
 * PRIO (SCHED_FIFO, default 50; 0 keeps SCHED_OTHER) keeps the rate steady
 * on a busy FROM. STAMPS: each read's TSC before and after (lab.h). Prints
 * "ipis N". Exit 0; 1 bad usage; 2 no /dev/cpu/TO/cpuid (modprobe cpuid), a
 * policy or affinity it could not have.
 */
#include <fcntl.h>
#include <getopt.h>
#include <unistd.h>

#include "lab.h"

int main(int argc, char **argv)
{
	int rate = 0, from = -1, to = -1, prio = 50, fd, c;
	const char *out = NULL;
	struct lab_stamps st;
	struct timespec next;
	char path[64], head[256];
	uint32_t regs[4];
	int64_t period;
	size_t bad = 0;
	double hz;

	while ((c = getopt(argc, argv, "r:f:t:P:o:h")) != -1) {
		switch (c) {
		case 'r': rate = atoi(optarg); break;
		case 'f': from = atoi(optarg); break;
		case 't': to = atoi(optarg); break;
		case 'P': prio = atoi(optarg); break;
		case 'o': out = optarg; break;
		default:
			fprintf(stderr, "usage: lab-ipi -r RATE -f FROM -t TO [-P PRIO] [-o STAMPS]\n");
			return c == 'h' ? 0 : 1;
		}
	}
	if (rate <= 0 || rate > 100000 || from < 0 || to < 0 || from == to || optind != argc) {
		fprintf(stderr, "usage: lab-ipi -r RATE -f FROM -t TO [-P PRIO] [-o STAMPS] (FROM != TO)\n");
		return 1;
	}
	snprintf(path, sizeof(path), "/dev/cpu/%d/cpuid", to);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "lab-ipi: %s: %s (modprobe cpuid)\n", path, strerror(errno));
		return 2;
	}
	lab_signals();
	if (lab_pin(from, "lab-ipi") || lab_fifo(prio, "lab-ipi") || lab_stamps_init(&st, 1 << 20))
		return 2;
	hz = lab_tsc_hz();
	period = 1000000000LL / rate;
	clock_gettime(CLOCK_MONOTONIC, &next);
	lab_advance(&next, 10000000);
	while (!lab_sleep_until(&next)) {
		uint64_t t0 = lab_tsc();

		/* the offset is the cpuid leaf: leaf 0 */
		if (pread(fd, regs, sizeof(regs), 0) != sizeof(regs))
			bad++;
		else
			lab_stamp(&st, t0, lab_tsc());
		lab_advance(&next, period);
	}
	snprintf(head, sizeof(head), "# program=lab-ipi\n# rate_hz=%d\n# from=%d\n# to=%d\n# failed=%zu\n",
		 rate, from, to, bad);
	printf("ipis %zu\n", st.n);
	if (out && lab_stamps_write(&st, out, head, hz))
		return 2;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * lab-io - device interrupts of known rate: RATE times a second, read 4 KiB
 * of FILE past the page cache (O_DIRECT, else the cached pages dropped
 * before each read), so that each read is one request to the device and one
 * completion interrupt. With the device's irq sent to another CPU
 * (/proc/irq/N/smp_affinity_list, set by the scenario) and this program
 * pinned away from it, the interrupt runs there and wakes nothing there: the
 * reader is woken on its own CPU.
 *
 *   lab-io -r RATE -f FILE [-c CPU] [-P PRIO] [-o STAMPS]
 *
 * STAMPS: each read's TSC before and after (lab.h). Prints "reads N".
 * Exit 0; 1 bad usage; 2 a file, policy or affinity it could not have.
 */
#include <fcntl.h>
#include <getopt.h>
#include <unistd.h>

#include "lab.h"

#define CHUNK 4096

int main(int argc, char **argv)
{
	int rate = 0, cpu = -1, prio = 50, fd, direct = 1, c;
	const char *out = NULL, *file = NULL;
	struct lab_stamps st;
	struct timespec next;
	size_t failed = 0;
	char head[512];
	int64_t period;
	void *buf;
	double hz;

	while ((c = getopt(argc, argv, "r:f:c:P:o:h")) != -1) {
		switch (c) {
		case 'r': rate = atoi(optarg); break;
		case 'f': file = optarg; break;
		case 'c': cpu = atoi(optarg); break;
		case 'P': prio = atoi(optarg); break;
		case 'o': out = optarg; break;
		default:
			fprintf(stderr, "usage: lab-io -r RATE -f FILE [-c CPU] [-P PRIO] [-o STAMPS]\n");
			return c == 'h' ? 0 : 1;
		}
	}
	if (rate <= 0 || rate > 100000 || !file || optind != argc) {
		fprintf(stderr, "usage: lab-io -r RATE -f FILE [-c CPU] [-P PRIO] [-o STAMPS]\n");
		return 1;
	}
	fd = open(file, O_RDONLY | O_DIRECT);
	if (fd < 0) {
		direct = 0;
		fd = open(file, O_RDONLY);
	}
	if (fd < 0) {
		fprintf(stderr, "lab-io: %s: %s\n", file, strerror(errno));
		return 2;
	}
	if (posix_memalign(&buf, CHUNK, CHUNK)) {
		fprintf(stderr, "lab-io: no memory\n");
		return 2;
	}
	lab_signals();
	if (lab_pin(cpu, "lab-io") || lab_fifo(prio, "lab-io") || lab_stamps_init(&st, 1 << 20))
		return 2;
	hz = lab_tsc_hz();
	period = 1000000000LL / rate;
	clock_gettime(CLOCK_MONOTONIC, &next);
	lab_advance(&next, 10000000);
	while (!lab_sleep_until(&next)) {
		uint64_t t0;

		if (!direct)
			posix_fadvise(fd, 0, CHUNK, POSIX_FADV_DONTNEED);
		t0 = lab_tsc();
		if (pread(fd, buf, CHUNK, 0) <= 0)
			failed++;
		else
			lab_stamp(&st, t0, lab_tsc());
		lab_advance(&next, period);
	}
	snprintf(head, sizeof(head), "# program=lab-io\n# rate_hz=%d\n# cpu=%d\n# file=%s\n# direct=%d\n# failed=%zu\n",
		 rate, cpu, file, direct, failed);
	printf("reads %zu\n", st.n);
	if (out && lab_stamps_write(&st, out, head, hz))
		return 2;
	return 0;
}

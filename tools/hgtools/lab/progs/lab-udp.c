// SPDX-License-Identifier: GPL-2.0
/*
 * lab-udp - network receive processing of known rate on one CPU, with no task
 * woken there: RATE times a second, send one UDP datagram to a socket of its
 * own over the loopback device, and wait for it there without blocking
 * (polling every 20 us: nothing is woken on the receiving side). With
 * receive packet steering sending lo's packets to another CPU
 * (/sys/class/net/lo/queues/rx-0/rps_cpus, set by the scenario), each
 * datagram is taken in by a NET_RX softirq there, kicked by an IPI from this
 * CPU; since the next is sent only once the last has arrived, datagrams
 * never queue up behind each other: one softirq each, even when the other
 * CPU is slow to run (a vCPU away).
 *
 *   lab-udp -r RATE [-c CPU] [-P PRIO] [-o STAMPS]
 *
 * STAMPS: each datagram's TSC before its send and after its arrival
 * (lab.h); one not there after 100 ms is counted lost and not stamped.
 * Prints "sent N lost M". Exit 0; 1 bad usage; 2 a socket, policy or
 * affinity it could not have.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lab.h"

int main(int argc, char **argv)
{
	int rate = 0, cpu = -1, prio = 50, rx, tx, c;
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	size_t lost = 0, failed = 0;
	const char *out = NULL;
	struct lab_stamps st;
	struct timespec next;
	char buf[64] = "hourglass lab", head[256];
	int64_t period;
	double hz;

	while ((c = getopt(argc, argv, "r:c:P:o:h")) != -1) {
		switch (c) {
		case 'r': rate = atoi(optarg); break;
		case 'c': cpu = atoi(optarg); break;
		case 'P': prio = atoi(optarg); break;
		case 'o': out = optarg; break;
		default:
			fprintf(stderr, "usage: lab-udp -r RATE [-c CPU] [-P PRIO] [-o STAMPS]\n");
			return c == 'h' ? 0 : 1;
		}
	}
	if (rate <= 0 || rate > 100000 || optind != argc) {
		fprintf(stderr, "usage: lab-udp -r RATE [-c CPU] [-P PRIO] [-o STAMPS]\n");
		return 1;
	}
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	rx = socket(AF_INET, SOCK_DGRAM, 0);
	tx = socket(AF_INET, SOCK_DGRAM, 0);
	if (rx < 0 || tx < 0 || bind(rx, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(rx, (struct sockaddr *)&a, &alen)) {
		fprintf(stderr, "lab-udp: a loopback socket: %s (is lo up?)\n", strerror(errno));
		return 2;
	}
	lab_signals();
	if (lab_pin(cpu, "lab-udp") || lab_fifo(prio, "lab-udp") || lab_stamps_init(&st, 1 << 20))
		return 2;
	hz = lab_tsc_hz();
	period = 1000000000LL / rate;
	clock_gettime(CLOCK_MONOTONIC, &next);
	lab_advance(&next, 10000000);
	while (!lab_sleep_until(&next)) {
		struct timespec poll = { 0, 20000 };
		uint64_t t0 = lab_tsc();
		int64_t waited = 0;

		while (recv(rx, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			;	/* a late one, counted lost already */
		if (sendto(tx, buf, sizeof(buf), 0, (struct sockaddr *)&a, sizeof(a)) != sizeof(buf)) {
			failed++;
		} else {
			while (recv(rx, buf, sizeof(buf), MSG_DONTWAIT) <= 0 && waited < 100000000 && !lab_stop) {
				nanosleep(&poll, NULL);
				waited += poll.tv_nsec;
			}
			if (waited >= 100000000 || lab_stop)
				lost++;
			else
				lab_stamp(&st, t0, lab_tsc());
		}
		lab_advance(&next, period);
	}
	snprintf(head, sizeof(head), "# program=lab-udp\n# rate_hz=%d\n# cpu=%d\n# lost=%zu\n# failed=%zu\n",
		 rate, cpu, lost, failed);
	printf("sent %zu lost %zu\n", st.n, lost);
	if (out && lab_stamps_write(&st, out, head, hz))
		return 2;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * lab-hpet - device interrupts of known rate on one CPU that nothing else
 * runs for: a free HPET comparator (/dev/hpet, CONFIG_HPET) in periodic
 * mode at RATE Hz, its interrupt sent to CPU TO. The driver's handler wakes
 * no one (nobody reads the device until the end), so no task runs anywhere
 * for it: in a guest whose vCPUs take turns (the instruction-count clock),
 * the other vCPU stays idle and its turns add nothing to the gaps, unlike an
 * interrupt a load on another CPU has to cause (an IPI, a 9p read).
 *
 *   lab-hpet -r RATE -t TO [-c CPU] [-o INFO]
 *
 * CPU: where lab-hpet itself sleeps (default: no pinning). Runs until
 * SIGTERM or SIGINT, then turns the interrupt off, puts the irq's affinity
 * back and reads the device once: the count of interrupts since it turned
 * them on (the driver's own). INFO: a stamps file (lab.h) with no events,
 * whose '#' lines say the irq, its rate, the TSC when the interrupts were
 * turned on and off, and that count. Prints "irq N hpetT". Exit 0; 1 bad
 * usage; 2 no free comparator, an irq it cannot send to TO, an unwritable
 * INFO.
 *
 * Keep RATE away from the tick's candidate rates and their small multiples
 * (1000, 500, 300, 250, 100 Hz): a device at the tick's rate recurs as the
 * tick does, and nothing in hourglass's data tells the two apart.
 */
#include <fcntl.h>
#include <getopt.h>
#include <linux/hpet.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lab.h"

/* find_irq - the irq whose /proc/interrupts line ends in @name, -1 if none */
static int find_irq(const char *name)
{
	FILE *f = fopen("/proc/interrupts", "r");
	char line[1024];
	int irq = -1;

	if (!f)
		return -1;
	while (irq < 0 && fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\n"), k = strlen(name);
		int v;

		line[n] = 0;
		if (n > k && line[n - k - 1] == ' ' && !strcmp(line + n - k, name) && sscanf(line, " %d:", &v) == 1)
			irq = v;
	}
	fclose(f);
	return irq;
}

/* affinity - write @list to the irq's smp_affinity_list, keeping the old one in @old; 0 or -1 */
static int affinity(int irq, const char *list, char *old, size_t oldlen)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irq);
	if (old) {
		f = fopen(path, "r");
		if (!f || !fgets(old, (int)oldlen, f)) {
			if (f)
				fclose(f);
			return -1;
		}
		fclose(f);
		old[strcspn(old, "\n")] = 0;
	}
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%s\n", list);
	return fclose(f) ? -1 : 0;
}

int main(int argc, char **argv)
{
	int rate = 0, to = -1, cpu = -1, fd, irq, c;
	const char *out = NULL;
	char name[32], cpus[16], old[256] = "", head[512];
	struct hpet_info info;
	struct lab_stamps st;
	uint64_t on, off;
	unsigned long count = 0;
	double hz;

	while ((c = getopt(argc, argv, "r:t:c:o:h")) != -1) {
		switch (c) {
		case 'r': rate = atoi(optarg); break;
		case 't': to = atoi(optarg); break;
		case 'c': cpu = atoi(optarg); break;
		case 'o': out = optarg; break;
		default:
			fprintf(stderr, "usage: lab-hpet -r RATE -t TO [-c CPU] [-o INFO]\n");
			return c == 'h' ? 0 : 1;
		}
	}
	if (rate <= 0 || rate > 8192 || to < 0 || optind != argc) {
		fprintf(stderr, "usage: lab-hpet -r RATE -t TO [-c CPU] [-o INFO] (RATE 1 to 8192 Hz)\n");
		return 1;
	}
	lab_signals();
	if (lab_pin(cpu, "lab-hpet") || lab_stamps_init(&st, 1))
		return 2;
	hz = lab_tsc_hz();
	fd = open("/dev/hpet", O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		fprintf(stderr, "lab-hpet: /dev/hpet: %s (CONFIG_HPET; a comparator the kernel leaves free)\n",
			strerror(errno));
		return 2;
	}
	if (ioctl(fd, HPET_INFO, &info) || ioctl(fd, HPET_IRQFREQ, (unsigned long)rate) || ioctl(fd, HPET_EPI, 0)) {
		fprintf(stderr, "lab-hpet: /dev/hpet: periodic mode at %d Hz: %s\n", rate, strerror(errno));
		return 2;
	}
	if (ioctl(fd, HPET_IE_ON, 0)) {
		fprintf(stderr, "lab-hpet: /dev/hpet: interrupts on: %s\n", strerror(errno));
		return 2;
	}
	on = lab_tsc();
	/* the driver names the irq after the comparator it handed out */
	snprintf(name, sizeof(name), "hpet%u", info.hi_timer);
	snprintf(cpus, sizeof(cpus), "%d", to);
	irq = find_irq(name);
	if (irq < 0 || affinity(irq, cpus, old, sizeof(old))) {
		fprintf(stderr, "lab-hpet: cannot send %s's irq (%d) to CPU %d: %s\n", name, irq, to, strerror(errno));
		ioctl(fd, HPET_IE_OFF, 0);
		return 2;
	}
	printf("irq %d %s\n", irq, name);
	fflush(stdout);
	while (!lab_stop)
		pause();
	ioctl(fd, HPET_IE_OFF, 0);
	off = lab_tsc();
	/* the interrupts since they were turned on (the driver's count; reading resets it) */
	if (read(fd, &count, sizeof(count)) != sizeof(count))
		count = 0;
	if (old[0])
		affinity(irq, old, NULL, 0);
	close(fd);
	snprintf(head, sizeof(head), "# program=lab-hpet\n# rate_hz=%d\n# irq=%d\n# name=%s\n# to=%d\n"
		 "# on_tsc=%llu\n# off_tsc=%llu\n# irqs=%lu\n", rate, irq, name, to, (unsigned long long)on,
		 (unsigned long long)off, count);
	printf("irqs %lu\n", count);
	if (out && lab_stamps_write(&st, out, head, hz))
		return 2;
	return 0;
}

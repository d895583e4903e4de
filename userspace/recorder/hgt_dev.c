// SPDX-License-Identifier: GPL-2.0
/*
 * hgt_dev.c - open /dev/hgtrace and agree on the ABI, with errors that say
 * what to do: load the module, become root, rebuild the mismatched side;
 * then control it in the terms of the module's minor version.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include "hgt_dev.h"

/* hgt_dev_open - open the device and say hello; prints the reason on failure */
int hgt_dev_open(struct hgt_dev *d)
{
	memset(d, 0, sizeof(*d));
	d->fd = open(HGT_DEVICE, O_RDONLY | O_CLOEXEC);
	if (d->fd < 0) {
		int e = errno;

		if (e == ENOENT)
			fprintf(stderr, "hgtrace: %s does not exist: the module is not loaded "
				"(insmod kmod/build/$(uname -r)/hgtrace.ko)\n", HGT_DEVICE);
		else if (e == EACCES || e == EPERM)
			fprintf(stderr, "hgtrace: %s: %s: recording needs root (CAP_SYS_ADMIN)\n",
				HGT_DEVICE, strerror(e));
		else
			fprintf(stderr, "hgtrace: cannot open %s: %s\n", HGT_DEVICE, strerror(e));
		return -1;
	}
	d->hello.abi_major = HGT_ABI_MAJOR;
	d->hello.abi_minor = HGT_ABI_MINOR;
	if (ioctl(d->fd, HGT_IOC_HELLO, &d->hello) < 0) {
		if (errno == EPROTONOSUPPORT)
			fprintf(stderr, "hgtrace: the loaded module speaks ABI %u.%u, this program "
				"ABI %u.%u: load the module built from the same source tree\n",
				d->hello.abi_major, d->hello.abi_minor, HGT_ABI_MAJOR, HGT_ABI_MINOR);
		else
			fprintf(stderr, "hgtrace: %s does not answer the hgtrace handshake (%s): "
				"is it the hgtrace module?\n", HGT_DEVICE, strerror(errno));
		close(d->fd);
		d->fd = -1;
		return -1;
	}
	return 0;
}

void hgt_dev_close(struct hgt_dev *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

/* hgt_dev_ioctl - an ioctl whose failure is reported with what was being done */
/*
 * hgt_dev_owner - the process that owns the module (ABI 1.4: the file that
 * first changed its settings or started it, until its STOP or close), 0 for
 * none, for a module too old to say, or when it cannot be read
 */
pid_t hgt_dev_owner(struct hgt_dev *d)
{
	struct hgt_stats st;

	if (d->hello.abi_minor < 4 || hgt_dev_stats(d, 0, &st))
		return 0;
	return (pid_t)st.owner;
}

int hgt_dev_ioctl(struct hgt_dev *d, unsigned long cmd, void *arg, const char *what)
{
	pid_t owner;
	int e;

	if (ioctl(d->fd, cmd, arg) == 0)
		return 0;
	e = errno;
	owner = e == EBUSY ? hgt_dev_owner(d) : 0;
	if (owner > 0 && owner != getpid())
		fprintf(stderr, "hgtrace: %s: the module belongs to process %d, another recorder "
			"still recording or draining; it is free once that one has finished\n",
			what, (int)owner);
	else
		fprintf(stderr, "hgtrace: %s: %s\n", what, strerror(e));
	errno = e;
	return -1;
}

/* hgt_dev_v1_0 - does the module speak ABI 1.0's layouts only? */
static int hgt_dev_v1_0(const struct hgt_dev *d)
{
	return d->hello.abi_minor == 0;
}

int hgt_dev_get_config(struct hgt_dev *d, struct hgt_config *c)
{
	struct hgt_config_1_0 old;

	memset(c, 0, sizeof(*c));
	if (!hgt_dev_v1_0(d))
		return hgt_dev_ioctl(d, HGT_IOC_GET_CONFIG, c, "reading the configuration");
	if (hgt_dev_ioctl(d, HGT_IOC_GET_CONFIG_1_0, &old, "reading the configuration"))
		return -1;
	c->buffer_bytes = old.buffer_bytes;
	c->mode = old.mode;
	c->events = old.events;
	c->msa_threads = old.msa_threads;
	return 0;
}

int hgt_dev_set_config(struct hgt_dev *d, const struct hgt_config *c)
{
	struct hgt_config_1_0 old;

	if (!hgt_dev_v1_0(d))
		return hgt_dev_ioctl(d, HGT_IOC_CONFIG, (void *)c, "configuring the module");
	/* 1.0 sets the CPUs with the rest: keep the ones in force */
	if (hgt_dev_ioctl(d, HGT_IOC_GET_CONFIG_1_0, &old, "reading the configuration"))
		return -1;
	old.buffer_bytes = c->buffer_bytes;
	old.mode = c->mode;
	old.events = c->events;
	old.msa_threads = c->msa_threads;
	return hgt_dev_ioctl(d, HGT_IOC_CONFIG_1_0, &old, "configuring the module");
}

int hgt_dev_get_cpus(struct hgt_dev *d, uint64_t **bits, unsigned int *nbits)
{
	unsigned int n = d->hello.nr_cpu_ids;
	struct hgt_cpus a = { 0 };
	uint64_t *w;

	if (hgt_dev_v1_0(d)) {
		struct hgt_config_1_0 old;

		if (hgt_dev_ioctl(d, HGT_IOC_GET_CONFIG_1_0, &old, "reading the CPUs recorded"))
			return -1;
		n = n < 256 ? n : 256;	/* all that 1.0 can say */
		w = calloc(4, sizeof(*w));
		if (!w)
			goto nomem;
		memcpy(w, old.cpumask, sizeof(old.cpumask));
		*bits = w;
		*nbits = n;
		return 0;
	}
	w = calloc((n + 63) / 64 ? (n + 63) / 64 : 1, sizeof(*w));
	if (!w)
		goto nomem;
	a.bits = (uintptr_t)w;
	a.nbits = n;
	if (hgt_dev_ioctl(d, HGT_IOC_GET_CPUS, &a, "reading the CPUs recorded")) {
		free(w);
		return -1;
	}
	*bits = w;
	*nbits = n;
	return 0;
nomem:
	fprintf(stderr, "hgtrace: reading the CPUs recorded: out of memory\n");
	return -1;
}

int hgt_dev_set_cpus(struct hgt_dev *d, const uint64_t *bits, unsigned int nbits)
{
	struct hgt_cpus a = { .bits = (uintptr_t)bits, .nbits = nbits };
	struct hgt_config_1_0 old;
	unsigned int cpu;

	for (cpu = 0; cpu < nbits; cpu++) {
		if (!(bits[cpu / 64] >> (cpu % 64) & 1))
			continue;
		if (cpu >= d->hello.nr_cpu_ids) {
			fprintf(stderr, "hgtrace: CPU %u does not exist here (the module counts %u)\n",
				cpu, d->hello.nr_cpu_ids);
			return -1;
		}
		if (hgt_dev_v1_0(d) && cpu >= 256) {
			fprintf(stderr, "hgtrace: CPU %u: the loaded module speaks ABI %u.%u, which records "
				"CPUs 0 to 255 only (load the module built from this tree)\n",
				cpu, d->hello.abi_major, d->hello.abi_minor);
			return -1;
		}
	}
	if (!hgt_dev_v1_0(d))
		return hgt_dev_ioctl(d, HGT_IOC_SET_CPUS, &a, "choosing the CPUs to record");
	if (hgt_dev_ioctl(d, HGT_IOC_GET_CONFIG_1_0, &old, "reading the configuration"))
		return -1;
	memset(old.cpumask, 0, sizeof(old.cpumask));
	for (cpu = 0; cpu < nbits && cpu < 256; cpu++)
		if (bits[cpu / 64] >> (cpu % 64) & 1)
			old.cpumask[cpu / 64] |= 1ull << (cpu % 64);
	return hgt_dev_ioctl(d, HGT_IOC_CONFIG_1_0, &old, "choosing the CPUs to record");
}

int hgt_dev_get_filter(struct hgt_dev *d, struct hgt_filter *f)
{
	memset(f, 0, sizeof(*f));
	if (hgt_dev_v1_0(d))
		return 1;
	return hgt_dev_ioctl(d, HGT_IOC_GET_FILTER, f, "reading the pid filter");
}

int hgt_dev_stats(struct hgt_dev *d, unsigned int cpu, struct hgt_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->cpu = cpu;
	/* 1.0's layout is the start of 1.1's */
	return ioctl(d->fd, hgt_dev_v1_0(d) ? HGT_IOC_STATS_1_0 : HGT_IOC_STATS, st) ? -1 : 0;
}

int hgt_dev_msa(struct hgt_dev *d, struct hgt_msa *m)
{
	return ioctl(d->fd, hgt_dev_v1_0(d) ? HGT_IOC_MSA_1_0 : HGT_IOC_MSA, m) ? -1 : 0;
}

/*
 * hgt_dev_off - recording off: with a module of 1.3 or later the probes stay
 * attached and this waits on no task (HGT_IOC_OFF); an older one has only
 * HGT_IOC_STOP, which detaches them too. Quiet, async-signal-safe (one ioctl):
 * the freeze handler calls it. -1 with errno on failure.
 */
int hgt_dev_off(const struct hgt_dev *d)
{
	return ioctl(d->fd, d->hello.abi_minor >= 3 ? HGT_IOC_OFF : HGT_IOC_STOP) ? -1 : 0;
}

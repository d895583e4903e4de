// SPDX-License-Identifier: GPL-2.0
/*
 * hgt_dev.c - open /dev/hgtrace and agree on the ABI, with errors that say
 * what to do: load the module, become root, rebuild the mismatched side.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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
int hgt_dev_ioctl(struct hgt_dev *d, unsigned long cmd, void *arg, const char *what)
{
	if (ioctl(d->fd, cmd, arg) == 0)
		return 0;
	fprintf(stderr, "hgtrace: %s: %s\n", what, strerror(errno));
	return -1;
}

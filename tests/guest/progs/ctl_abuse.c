// SPDX-License-Identifier: GPL-2.0
/*
 * ctl_abuse - drive /dev/hgtrace the wrong way and check every refusal.
 *
 *   ctl_abuse check    every bad command/argument gets its errno; exit 0 if all did
 *   ctl_abuse hold     open + hello, then wait until stdin closes (a reader left open)
 *   ctl_abuse start    open + hello + START, then exit leaving the module recording
 *   ctl_abuse open     just try to open; print the errno name (for the non-root test)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include "hgtrace.h"

static int failures;

/* expect - an ioctl must fail with exactly this errno */
#define expect(want, call, what) do {						\
	errno = 0;								\
	long _r = (call);							\
	int _e = errno;								\
	if (_r != -1 || _e != (want)) {					\
		printf("FAIL %s: got %ld/%s, want %s\n", what, _r, strerror(_e),	\
		       strerror(want));						\
		failures++;							\
	} else {								\
		printf("ok   %s: %s\n", what, strerror(_e));			\
	}									\
} while (0)

#define expect_ok(call, what) do {						\
	if ((call) != 0) {							\
		printf("FAIL %s: %s\n", what, strerror(errno));			\
		failures++;							\
	} else {								\
		printf("ok   %s\n", what);					\
	}									\
} while (0)

static int open_dev(void)
{
	int fd = open(HGT_DEVICE, O_RDONLY);

	if (fd < 0) {
		printf("FAIL open %s: %s\n", HGT_DEVICE, strerror(errno));
		exit(2);
	}
	return fd;
}

static void hello(int fd)
{
	struct hgt_hello h = { .abi_major = HGT_ABI_MAJOR, .abi_minor = HGT_ABI_MINOR };

	if (ioctl(fd, HGT_IOC_HELLO, &h)) {
		printf("FAIL hello: %s\n", strerror(errno));
		exit(2);
	}
}

static int check(void)
{
	int fd = open_dev(), fd2;
	struct hgt_hello h = { .abi_major = HGT_ABI_MAJOR + 1 };
	struct hgt_config c, good;
	struct hgt_filter flt;
	struct hgt_stats st;
	struct hgt_msa m;
	char buf[8192];

	/* nothing works before the handshake */
	expect(EPROTO, ioctl(fd, HGT_IOC_START), "START before HELLO");
	expect(EPROTO, read(fd, buf, sizeof(buf)), "read before HELLO");
	/* another major is refused, and the module still says what it speaks */
	expect(EPROTONOSUPPORT, ioctl(fd, HGT_IOC_HELLO, &h), "HELLO with another ABI major");
	if (h.abi_major != HGT_ABI_MAJOR) {
		printf("FAIL refused HELLO did not report the module's ABI (%u)\n", h.abi_major);
		failures++;
	}
	expect(EPROTO, ioctl(fd, HGT_IOC_STOP), "STOP after a refused HELLO");
	expect(EFAULT, ioctl(fd, HGT_IOC_HELLO, (void *)8), "HELLO with a bad pointer");
	hello(fd);

	expect(ENOTTY, ioctl(fd, _IO(HGT_IOC_MAGIC, 99)), "unknown command");
	expect(ENOTTY, ioctl(fd, _IO('x', 4)), "foreign magic");
	expect(EINVAL, read(fd, buf, 100), "read into a buffer below HGT_READ_MIN");
	expect(EFAULT, ioctl(fd, HGT_IOC_CONFIG, NULL), "CONFIG with NULL");

	expect_ok(ioctl(fd, HGT_IOC_GET_CONFIG, &good), "GET_CONFIG");
	c = good; c.mode = 7;
	expect(EINVAL, ioctl(fd, HGT_IOC_CONFIG, &c), "CONFIG bad mode");
	c = good; c.events = 1u << 20;
	expect(EINVAL, ioctl(fd, HGT_IOC_CONFIG, &c), "CONFIG unknown event bit");
	c = good; c.events = 0;
	expect(EINVAL, ioctl(fd, HGT_IOC_CONFIG, &c), "CONFIG no events");
	c = good; c.buffer_bytes = 100;
	expect(EINVAL, ioctl(fd, HGT_IOC_CONFIG, &c), "CONFIG buffer too small");
	c = good; c.buffer_bytes = 1ull << 40;
	expect(EINVAL, ioctl(fd, HGT_IOC_CONFIG, &c), "CONFIG buffer too large");
	c = good; memset(c.cpumask, 0, sizeof(c.cpumask)); c.cpumask[3] = 1ull << 63;
	expect(EINVAL, ioctl(fd, HGT_IOC_CONFIG, &c), "CONFIG CPU 255 that does not exist");
	c = good; c.msa_threads = 1u << 30;
	expect(EINVAL, ioctl(fd, HGT_IOC_CONFIG, &c), "CONFIG microstate table too big");

	memset(&flt, 0, sizeof(flt));
	flt.nr = HGT_FILTER_MAX + 1;
	expect(EINVAL, ioctl(fd, HGT_IOC_FILTER, &flt), "FILTER too many pids");
	flt.nr = 1; flt.pids[0] = -5;
	expect(EINVAL, ioctl(fd, HGT_IOC_FILTER, &flt), "FILTER negative pid");

	memset(&st, 0, sizeof(st)); st.cpu = 100000;
	expect(EINVAL, ioctl(fd, HGT_IOC_STATS, &st), "STATS of a CPU that does not exist");
	memset(&m, 0, sizeof(m)); m.pid = 0x3ffffff0;
	expect(ESRCH, ioctl(fd, HGT_IOC_MSA, &m), "MSA of a pid never seen");

	/* while running: no reconfiguration, no reset, no second start */
	expect_ok(ioctl(fd, HGT_IOC_START), "START");
	expect(EBUSY, ioctl(fd, HGT_IOC_START), "START twice");
	expect(EBUSY, ioctl(fd, HGT_IOC_CONFIG, &good), "CONFIG while running");
	flt.nr = 0;
	expect(EBUSY, ioctl(fd, HGT_IOC_FILTER, &flt), "FILTER while running");
	expect(EBUSY, ioctl(fd, HGT_IOC_RESET), "RESET while running");
	/* a second reader may look but must say hello too */
	fd2 = open_dev();
	expect(EPROTO, ioctl(fd2, HGT_IOC_STATS, &st), "second file without HELLO");
	close(fd2);
	usleep(50000);	/* so that some CPU has records to fail to copy */
	{
		/* a pointer the compiler cannot see through: an unmapped user address */
		void *volatile bad = (void *)8;

		expect(EFAULT, read(fd, bad, 8192), "read into a bad pointer");
	}
	expect_ok(ioctl(fd, HGT_IOC_STOP), "STOP");
	expect_ok(ioctl(fd, HGT_IOC_STOP), "STOP when stopped is harmless");
	expect_ok(ioctl(fd, HGT_IOC_RESET), "RESET");
	close(fd);
	printf("%d failures\n", failures);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	int fd;
	char c;

	if (argc != 2)
		return 2;
	if (!strcmp(argv[1], "check"))
		return check();
	if (!strcmp(argv[1], "open")) {
		fd = open(HGT_DEVICE, O_RDONLY);
		printf("%s\n", fd < 0 ? strerrorname_np(errno) : "opened");
		return fd < 0 ? 1 : 0;
	}
	fd = open_dev();
	hello(fd);
	if (!strcmp(argv[1], "start"))
		return ioctl(fd, HGT_IOC_START) ? 1 : 0;
	if (!strcmp(argv[1], "hold")) {
		printf("holding\n");
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
		close(fd);
		return 0;
	}
	return 2;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * ctl_abuse - drive /dev/hgtrace the wrong way and check every refusal.
 *
 *   ctl_abuse check    every bad command/argument gets its errno; exit 0 if all did
 *   ctl_abuse hold     open + hello, then wait until stdin closes (a reader left open)
 *   ctl_abuse start    open + hello + START, then exit leaving the module recording
 *   ctl_abuse open     just try to open; print the errno name (for the non-root test)
 *   ctl_abuse setup    select CPU 0 only and filter pid 1: settings no recorder would leave
 *   ctl_abuse state    print the configuration, CPUs and filter read through the ioctls
 */
#include <errno.h>
#include <stdint.h>
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

/*
 * not_owner - @fd, another file than the module's owner, may look but not
 * change, reset, start, stop or drain (ABI 1.4)
 */
static void not_owner(int fd, const struct hgt_config *good, const char *when)
{
	struct hgt_filter flt = { .nr = 0 };
	uint64_t cpu0 = 1;
	struct hgt_cpus a = { .bits = (uintptr_t)&cpu0, .nbits = 1 };
	char buf[4096], what[160];
	static const struct { unsigned long cmd; const char *name; } cmds[] = {
		{ HGT_IOC_START, "START" }, { HGT_IOC_OFF, "OFF" }, { HGT_IOC_STOP, "STOP" },
		{ HGT_IOC_RESET, "RESET" },
	};
	unsigned int i;

	snprintf(what, sizeof(what), "CONFIG %s", when);
	expect(EBUSY, ioctl(fd, HGT_IOC_CONFIG, good), what);
	snprintf(what, sizeof(what), "FILTER %s", when);
	expect(EBUSY, ioctl(fd, HGT_IOC_FILTER, &flt), what);
	snprintf(what, sizeof(what), "SET_CPUS %s", when);
	expect(EBUSY, ioctl(fd, HGT_IOC_SET_CPUS, &a), what);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		snprintf(what, sizeof(what), "%s %s", cmds[i].name, when);
		expect(EBUSY, ioctl(fd, cmds[i].cmd), what);
	}
	snprintf(what, sizeof(what), "read() %s", when);
	expect(EBUSY, read(fd, buf, sizeof(buf)), what);
}

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

/* check_cpus - the CPU set ioctls (1.1) and 1.0's mask, refused where they must be */
static void check_cpus(int fd, const struct hgt_config *good)
{
	struct hgt_hello h = { .abi_major = HGT_ABI_MAJOR, .abi_minor = HGT_ABI_MINOR };
	static uint64_t words[HGT_CPUS_MAX_BITS / 64 + 1];
	struct hgt_cpus a;
	struct hgt_config_1_0 c10;
	unsigned int n;

	expect_ok(ioctl(fd, HGT_IOC_HELLO, &h), "HELLO again");
	n = h.nr_cpu_ids;
	memset(&a, 0, sizeof(a));
	a.bits = (uintptr_t)words;
	a.nbits = HGT_CPUS_MAX_BITS;
	words[HGT_CPUS_MAX_BITS / 64 - 1] = 1ull << 63;
	expect(EINVAL, ioctl(fd, HGT_IOC_SET_CPUS, &a), "SET_CPUS a CPU beyond nr_cpu_ids");
	words[HGT_CPUS_MAX_BITS / 64 - 1] = 0;
	a.nbits = HGT_CPUS_MAX_BITS + 1;
	expect(EINVAL, ioctl(fd, HGT_IOC_SET_CPUS, &a), "SET_CPUS more bits than HGT_CPUS_MAX_BITS");
	a.nbits = 64;
	a.bits = 8;
	expect(EFAULT, ioctl(fd, HGT_IOC_SET_CPUS, &a), "SET_CPUS with a bad words pointer");
	a.bits = (uintptr_t)words;
	a.flags = 1;
	expect(EINVAL, ioctl(fd, HGT_IOC_SET_CPUS, &a), "SET_CPUS unknown flag");
	a.flags = 0;
	a.reserved[1] = 3;
	expect(EINVAL, ioctl(fd, HGT_IOC_SET_CPUS, &a), "SET_CPUS reserved field not zero");
	a.reserved[1] = 0;
	expect(EFAULT, ioctl(fd, HGT_IOC_SET_CPUS, NULL), "SET_CPUS with NULL");
	/* a set of the last CPU only, read back */
	memset(words, 0, sizeof(words));
	words[(n - 1) / 64] = 1ull << ((n - 1) % 64);
	a.nbits = n;
	expect_ok(ioctl(fd, HGT_IOC_SET_CPUS, &a), "SET_CPUS the last CPU");
	memset(words, 0xff, sizeof(words));
	a.nbits = n - 1;
	expect(ENOSPC, ioctl(fd, HGT_IOC_GET_CPUS, &a), "GET_CPUS with room for nr_cpu_ids - 1");
	if (a.nbits != n) {
		printf("FAIL GET_CPUS ENOSPC said %u bits are needed, not %u\n", a.nbits, n);
		failures++;
	}
	a.nbits = n;
	expect_ok(ioctl(fd, HGT_IOC_GET_CPUS, &a), "GET_CPUS");
	if (words[(n - 1) / 64] != 1ull << ((n - 1) % 64) || (n > 64 && words[0])) {
		printf("FAIL GET_CPUS gave %llx, not CPU %u alone\n",
		       (unsigned long long)words[(n - 1) / 64], n - 1);
		failures++;
	}
	/* 1.0's CONFIG still answers, and refuses a CPU that does not exist */
	expect_ok(ioctl(fd, HGT_IOC_GET_CONFIG_1_0, &c10), "GET_CONFIG of ABI 1.0");
	if (n <= 256 && !(c10.cpumask[(n - 1) / 64] >> ((n - 1) % 64) & 1)) {
		printf("FAIL GET_CONFIG of ABI 1.0 does not show CPU %u\n", n - 1);
		failures++;
	}
	if (n < 256) {
		c10.cpumask[3] = 1ull << 63;
		expect(EINVAL, ioctl(fd, HGT_IOC_CONFIG_1_0, &c10),
		       "CONFIG of ABI 1.0 with CPU 255 that does not exist");
	}
	memset(c10.cpumask, 0, sizeof(c10.cpumask));
	expect_ok(ioctl(fd, HGT_IOC_CONFIG_1_0, &c10), "CONFIG of ABI 1.0, every CPU");
	memset(words, 0, sizeof(words));
	expect_ok(ioctl(fd, HGT_IOC_GET_CPUS, &a), "GET_CPUS after 1.0's CONFIG");
	if (words[(n - 1) / 64] != (n % 64 ? (1ull << (n % 64)) - 1 : ~0ull)) {
		printf("FAIL 1.0's CONFIG with no CPU did not select them all: %llx\n",
		       (unsigned long long)words[(n - 1) / 64]);
		failures++;
	}
	expect_ok(ioctl(fd, HGT_IOC_CONFIG, good), "CONFIG as it was");
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
	c = good; c.msa_threads = 1u << 30;
	expect(EINVAL, ioctl(fd, HGT_IOC_CONFIG, &c), "CONFIG microstate table too big");
	c = good; c.flags = 1;
	expect(EINVAL, ioctl(fd, HGT_IOC_CONFIG, &c), "CONFIG unknown flag");
	c = good; c.reserved[5] = 1;
	expect(EINVAL, ioctl(fd, HGT_IOC_CONFIG, &c), "CONFIG reserved field not zero");
	check_cpus(fd, &good);

	memset(&flt, 0, sizeof(flt));
	flt.nr = HGT_FILTER_MAX + 1;
	expect(EINVAL, ioctl(fd, HGT_IOC_FILTER, &flt), "FILTER too many pids");
	flt.nr = 1; flt.pids[0] = -5;
	expect(EINVAL, ioctl(fd, HGT_IOC_FILTER, &flt), "FILTER negative pid");
	flt.pids[0] = 1; flt.flags = 1;
	expect(EINVAL, ioctl(fd, HGT_IOC_FILTER, &flt), "FILTER unknown flag");

	memset(&st, 0, sizeof(st)); st.cpu = 100000;
	expect(EINVAL, ioctl(fd, HGT_IOC_STATS, &st), "STATS of a CPU that does not exist");
	expect(EINVAL, ioctl(fd, HGT_IOC_STATS_1_0, &st), "STATS of ABI 1.0 of a CPU that does not exist");
	memset(&flt, 0, sizeof(flt)); flt.nr = 2; flt.pids[0] = 1; flt.pids[1] = 77;
	expect_ok(ioctl(fd, HGT_IOC_FILTER, &flt), "FILTER two pids");
	memset(&flt, 0, sizeof(flt));
	expect_ok(ioctl(fd, HGT_IOC_GET_FILTER, &flt), "GET_FILTER");
	if (flt.nr != 2 || flt.pids[0] != 1 || flt.pids[1] != 77) {
		printf("FAIL GET_FILTER gave %u pids (%d, %d), not 1 and 77\n", flt.nr, flt.pids[0], flt.pids[1]);
		failures++;
	}
	memset(&flt, 0, sizeof(flt));
	expect_ok(ioctl(fd, HGT_IOC_FILTER, &flt), "FILTER none");
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
	/* and may not touch the first one's recording (ABI 1.4: the module is the first file's) */
	hello(fd2);
	not_owner(fd2, &good, "while the owner records");
	memset(&st, 0, sizeof(st));
	expect_ok(ioctl(fd2, HGT_IOC_STATS, &st), "STATS from a second file");
	if (st.owner != (uint64_t)getpid()) {
		printf("FAIL STATS owner %llu, not this process %d\n", (unsigned long long)st.owner, getpid());
		failures++;
	}
	close(fd2);
	usleep(50000);	/* so that some CPU has records to fail to copy */
	{
		/* a pointer the compiler cannot see through: an unmapped user address */
		void *volatile bad = (void *)8;

		expect(EFAULT, read(fd, bad, 8192), "read into a bad pointer");
	}
	/* recording off but not yet given up: the owner is draining, nobody else may reset or start */
	expect_ok(ioctl(fd, HGT_IOC_OFF), "OFF");
	fd2 = open_dev();
	hello(fd2);
	not_owner(fd2, &good, "between the owner's OFF and its STOP");
	close(fd2);
	expect_ok(ioctl(fd, HGT_IOC_STOP), "STOP");
	/* given up: a second file may configure (and so owns the module until it closes) */
	fd2 = open_dev();
	hello(fd2);
	expect_ok(ioctl(fd2, HGT_IOC_CONFIG, &good), "CONFIG from a second file after the owner's STOP");
	expect(EBUSY, ioctl(fd, HGT_IOC_RESET), "RESET from the first file once the second configured");
	close(fd2);
	expect_ok(ioctl(fd, HGT_IOC_STOP), "STOP when stopped is harmless");
	expect_ok(ioctl(fd, HGT_IOC_RESET), "RESET");
	close(fd);
	printf("%d failures\n", failures);
	return failures ? 1 : 0;
}

/* setup - settings a recorder must put back: CPU 0 only, a filter of pid 1 */
static int setup(int fd)
{
	uint64_t cpu0 = 1;
	struct hgt_cpus a = { .bits = (uintptr_t)&cpu0, .nbits = 1 };
	struct hgt_filter flt = { .nr = 1, .pids = { 1 } };

	return ioctl(fd, HGT_IOC_SET_CPUS, &a) || ioctl(fd, HGT_IOC_FILTER, &flt) ? 1 : 0;
}

/* state - one line per setting, for a test to compare before and after */
static int state(int fd)
{
	static uint64_t words[HGT_CPUS_MAX_BITS / 64];
	struct hgt_cpus a = { .bits = (uintptr_t)words, .nbits = HGT_CPUS_MAX_BITS };
	struct hgt_stats st = { .cpu = 0 };
	struct hgt_filter flt;
	struct hgt_config c;
	unsigned int i;

	if (ioctl(fd, HGT_IOC_GET_CONFIG, &c) || ioctl(fd, HGT_IOC_GET_CPUS, &a) ||
	    ioctl(fd, HGT_IOC_GET_FILTER, &flt) || ioctl(fd, HGT_IOC_STATS, &st))
		return 1;
	printf("state %s\nbuffer_bytes %llu\nmode %u\nevents 0x%x\nmsa_threads %u\ncpus",
	       st.state == HGT_STATE_RUNNING ? "running" : "stopped",
	       (unsigned long long)c.buffer_bytes, c.mode, c.events, c.msa_threads);
	for (i = 0; i < (a.nbits + 63) / 64; i++)
		printf(" %016llx", (unsigned long long)words[i]);
	printf("\nfilter");
	for (i = 0; i < flt.nr && i < HGT_FILTER_MAX; i++)
		printf(" %d", flt.pids[i]);
	printf("\n");
	return 0;
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
	if (!strcmp(argv[1], "setup"))
		return setup(fd);
	if (!strcmp(argv[1], "state"))
		return state(fd);
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

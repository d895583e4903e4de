// SPDX-License-Identifier: GPL-2.0
/*
 * ctl_fuzz - random control calls against /dev/hgtrace and /proc/hgtrace.
 *
 *   ctl_fuzz root CALLS SEED   as root: random ioctls (known commands with
 *                              random or half-valid arguments, our magic with
 *                              random numbers, any number), reads, reopens, and
 *                              writes to /proc/hgtrace/{status,msa} and the
 *                              discard parameter; each must fail, if it fails,
 *                              with an errno the ABI documents for it
 *   ctl_fuzz user CALLS SEED   run as root: opens /dev/hgtrace and says HELLO,
 *                              then drops to uid/gid 65534 and makes the calls
 *                              on that file, on fresh opens of the device and of
 *                              the /proc files: every one must be refused, with
 *                              EPERM (the call) or EACCES/EPERM (the open)
 *
 * Prints a histogram of results and one line per unexpected result; exits 0
 * only when there was none. Arguments never point into this program's own
 * memory except a scratch area, so the kernel writing through them cannot
 * corrupt the fuzzer. The generator is a fixed xorshift, so a seed repeats a run.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include "hgtrace.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* Three pages: two read-write, filled at random before each call, then one PROT_NONE. */
static char *scratch;
#define PAGE		4096
#define SCRATCH		(2 * PAGE)

static const unsigned int known[] = {
	HGT_IOC_HELLO, HGT_IOC_CONFIG, HGT_IOC_GET_CONFIG, HGT_IOC_FILTER, HGT_IOC_START,
	HGT_IOC_STOP, HGT_IOC_RESET, HGT_IOC_STATS, HGT_IOC_MSA, HGT_IOC_SET_CPUS,
	HGT_IOC_GET_CPUS, HGT_IOC_GET_FILTER, HGT_IOC_CONFIG_1_0, HGT_IOC_GET_CONFIG_1_0,
	HGT_IOC_STATS_1_0, HGT_IOC_MSA_1_0,
};
#define NKNOWN	(sizeof(known) / sizeof(known[0]))

/* what each kind of call may answer; anything else is a finding */
static const int ioctl_errnos[] = { EPROTO, EPROTONOSUPPORT, EFAULT, EINVAL, ENOTTY, EBUSY,
				    EOPNOTSUPP, ENOMEM, ESRCH, ENOSPC, 0 };
/* EBUSY: another of the fuzzer's files owns the module (ABI 1.4) */
static const int read_errnos[] = { EPROTO, EFAULT, EINVAL, EBUSY, 0 };
static const int proc_errnos[] = { EIO, EINVAL, EACCES, EPERM, EFAULT, 0 };

static unsigned long calls, ok_calls, unexpected, errs[200];

static int allowed(const int *set, int e)
{
	for (; *set; set++)
		if (*set == e)
			return 1;
	return 0;
}

static int as_user;

/* note - count a result; an error outside @set, or any success as uid 65534, is a finding */
static void note(long r, const int *set, const char *what, unsigned long cmd)
{
	calls++;
	if (r >= 0) {
		ok_calls++;
		if (as_user && ++unexpected <= 20)
			printf("UNEXPECTED %s 0x%lx succeeded for uid %d\n", what, cmd, getuid());
		return;
	}
	errs[errno < 200 ? errno : 0]++;
	if (!allowed(set, errno)) {
		unexpected++;
		if (unexpected <= 20)
			printf("UNEXPECTED %s 0x%lx: %s\n", what, cmd, strerror(errno));
	}
}

/*
 * vfs_cmd - numbers the VFS answers itself before the driver sees them
 * (FIOCLEX, FIONBIO, FIFREEZE, file-system ioctls...): never sent. Their
 * types: 'T' (0x54) FIO*, 'X' freeze/thaw and fsxattr, 'f' flags, 0x94 clone
 * and dedupe, 0x15 file-system uuid and path, 0 FIBMAP/FIGETBSZ.
 */
static int vfs_cmd(unsigned int cmd)
{
	unsigned int type = _IOC_TYPE(cmd);

	return type == 0x54 || type == 'X' || type == 'f' || type == 0x94 || type == 0x15 || type == 0;
}

static unsigned int random_cmd(void)
{
	unsigned int cmd;

	do {
		switch (below(10)) {
		case 0 ... 4:
			cmd = known[below(NKNOWN)];
			break;
		case 5 ... 7:	/* our magic, any number, direction and size */
			cmd = _IOC(below(4), HGT_IOC_MAGIC, below(32), below(1u << 14));
			break;
		default:
			cmd = (unsigned int)rnd();
		}
	} while (vfs_cmd(cmd));
	return cmd;
}

/* half_valid - a plausible argument for a known command, one field at a time wrong */
static void *half_valid(unsigned int cmd)
{
	size_t size = _IOC_SIZE(cmd), off = below(SCRATCH - size + 1);
	char *p = scratch + off;

	/* sometimes across the end of the last writable page: only what fits is written here */
	if (!below(8)) {
		p = scratch + SCRATCH - below(size + 1);
		size = scratch + SCRATCH - p;
	}
	if (cmd == HGT_IOC_HELLO) {
		struct hgt_hello h = { .abi_major = below(4) ? HGT_ABI_MAJOR : rnd(),
				       .abi_minor = below(3) };

		memcpy(p, &h, size < sizeof(h) ? size : sizeof(h));
	} else if (cmd == HGT_IOC_CONFIG) {
		static const uint64_t sizes[] = { 0, 8192, 65536, 1 << 20, 1ull << 30, 1ull << 31 };
		struct hgt_config c = { .buffer_bytes = sizes[below(6)], .mode = below(3),
					.events = below(2) ? HGT_EV_DEFAULT : (uint32_t)rnd(),
					.msa_threads = below(2) ? below(5000) : (uint32_t)rnd() };

		if (!below(4))
			c.reserved[below(6)] = rnd();
		if (!below(4))
			c.flags = rnd();
		memcpy(p, &c, size < sizeof(c) ? size : sizeof(c));
	} else if (cmd == HGT_IOC_SET_CPUS || cmd == HGT_IOC_GET_CPUS) {
		struct hgt_cpus a = { .nbits = below(2) ? below(300) : (uint32_t)rnd() };

		/* the words: in the scratch area, at its end, or nowhere valid */
		a.bits = below(4) ? (uintptr_t)(scratch + below(SCRATCH)) : rnd();
		if (!below(4))
			a.reserved[below(2)] = 1;
		memcpy(p, &a, size < sizeof(a) ? size : sizeof(a));
	} else if (cmd == HGT_IOC_FILTER) {
		struct hgt_filter f = { .nr = below(70), .flags = below(4) ? 0 : (uint32_t)rnd() };
		unsigned int i;

		for (i = 0; i < HGT_FILTER_MAX; i++)
			f.pids[i] = below(8) ? (int32_t)below(5000) + 1 : (int32_t)rnd();
		memcpy(p, &f, size < sizeof(f) ? size : sizeof(f));
	} else if (cmd == HGT_IOC_STATS || cmd == HGT_IOC_STATS_1_0) {
		uint32_t cpu = below(2) ? below(8) : (uint32_t)rnd();

		memcpy(p, &cpu, size < sizeof(cpu) ? size : sizeof(cpu));
	} else if (cmd == HGT_IOC_MSA || cmd == HGT_IOC_MSA_1_0) {
		int32_t pid = below(2) ? (int32_t)below(2000) : (int32_t)rnd();

		memcpy(p, &pid, size < sizeof(pid) ? size : sizeof(pid));
	}
	return p;
}

static void *random_arg(unsigned int cmd)
{
	unsigned int i;

	for (i = 0; i < SCRATCH / 8; i++)
		((uint64_t *)scratch)[i] = below(3) ? rnd() : below(256);
	switch (below(8)) {
	case 0:
		return NULL;
	case 1:
		return (void *)(uintptr_t)below(65536);			/* low, unmapped */
	case 2:
		return (void *)(uintptr_t)(0xffffffff81000000ull + below(1 << 24));	/* kernel */
	case 3:
		return (void *)(uintptr_t)rnd();			/* anything, non-canonical too */
	case 4:
		return scratch + SCRATCH;				/* the PROT_NONE page */
	default:
		return half_valid(cmd);
	}
}

/* HGT_FUZZ_DEVICE: another file to aim at (/dev/null checks the fuzzer itself, anywhere) */
static const char *device = HGT_DEVICE;

static int open_dev(void)
{
	return open(device, below(2) ? O_RDONLY : O_RDWR);
}

static void hello(int fd)
{
	struct hgt_hello h = { .abi_major = HGT_ABI_MAJOR, .abi_minor = HGT_ABI_MINOR };

	ioctl(fd, HGT_IOC_HELLO, &h);
}

static const char *const writable[] = {
	"/proc/hgtrace/status", "/proc/hgtrace/msa", "/sys/module/hgtrace/parameters/discard",
};

/* proc_write - random bytes to a /proc/hgtrace file (or the discard parameter) */
static void proc_write(void)
{
	const char *path = writable[below(3)];
	char buf[64];
	size_t i, n = below(sizeof(buf)) + 1;
	int fd = open(path, O_WRONLY);

	if (fd < 0) {
		note(-1, as_user ? (const int[]){ EACCES, EPERM, 0 } : proc_errnos, "open for writing", 0);
		return;
	}
	if (as_user) {
		note(0, proc_errnos, path, 0);	/* a finding: opened for writing */
		close(fd);
		return;
	}
	for (i = 0; i < n; i++)
		buf[i] = below(2) ? "01yn \n"[below(6)] : (char)rnd();
	note(write(fd, buf, n), proc_errnos, "write", 0);
	close(fd);
}

/* user_range - would access_ok() pass [p, p + len)? x86-64's user space ends below 2^47 - 4096 */
static int user_range(const void *p, size_t len)
{
	const uint64_t top = (1ull << 47) - 4096;
	uint64_t a = (uintptr_t)p;

	return a <= top && len <= top - a;
}

static void fuzz(int fd, unsigned long n)
{
	static const int user_ioctl[] = { EPERM, 0 };
	/* a buffer outside user space: the VFS may say EFAULT (access_ok) before the module */
	static const int user_read_vfs[] = { EPERM, EFAULT, 0 };
	static const int user_open[] = { EACCES, EPERM, 0 };
	char *rbuf = scratch;
	unsigned long i;

	for (i = 0; i < n; i++) {
		unsigned int cmd;
		long r;

		switch (below(100)) {
		case 0 ... 79:
			cmd = random_cmd();
			r = ioctl(fd, cmd, random_arg(cmd));
			note(r, as_user ? user_ioctl : ioctl_errnos, "ioctl", cmd);
			break;
		case 80 ... 91: {
			size_t len = below(3) ? below(3 * PAGE) : rnd();
			void *dst = below(3) ? (void *)(rbuf + below(SCRATCH)) : random_arg(0);

			r = read(fd, dst, len);
			note(r, !as_user ? read_errnos : user_range(dst, len) ? user_ioctl : user_read_vfs,
			     "read", len);
			break;
		}
		case 92 ... 96:
			proc_write();
			break;
		default: {
			/* a fresh file: as root it replaces ours, said hello to or not */
			int fd2 = open_dev();

			if (as_user) {
				note(fd2, user_open, "open", 0);
				if (fd2 >= 0)
					close(fd2);
				break;
			}
			note(fd2, ioctl_errnos, "open", 0);
			if (fd2 < 0)
				break;
			if (below(4))
				hello(fd2);
			close(fd);
			fd = fd2;
		}
		}
	}
	close(fd);
}

int main(int argc, char **argv)
{
	unsigned long n;
	int fd, e;

	if (argc != 4 || (strcmp(argv[1], "root") && strcmp(argv[1], "user"))) {
		fprintf(stderr, "usage: ctl_fuzz root|user CALLS SEED\n");
		return 2;
	}
	as_user = !strcmp(argv[1], "user");
	n = strtoul(argv[2], NULL, 10);
	rng_state = strtoull(argv[3], NULL, 10) * 0x9e3779b97f4a7c15ull | 1;
	scratch = mmap(NULL, SCRATCH + PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (scratch == MAP_FAILED || mprotect(scratch + SCRATCH, PAGE, PROT_NONE)) {
		perror("ctl_fuzz: scratch");
		return 2;
	}
	if (getenv("HGT_FUZZ_DEVICE"))
		device = getenv("HGT_FUZZ_DEVICE");
	fd = open(device, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "ctl_fuzz: %s: %s\n", device, strerror(errno));
		return 2;
	}
	hello(fd);
	if (as_user && (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
			setresuid(65534, 65534, 65534))) {
		perror("ctl_fuzz: dropping to uid 65534");
		return 2;
	}
	fuzz(fd, n);
	printf("%lu calls as uid %d: %lu succeeded, %lu unexpected\n", calls, getuid(), ok_calls,
	       unexpected);
	for (e = 1; e < 200; e++)
		if (errs[e])
			printf("  %-16s %lu\n", strerrorname_np(e), errs[e]);
	return unexpected ? 1 : 0;
}

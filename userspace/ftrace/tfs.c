// SPDX-License-Identifier: GPL-2.0
/*
 * tfs.c - tracefs for hgtrace-ftrace: checks, our instance, its settings, its counters.
 *
 * Nothing here mounts tracefs (libtracefs would, silently, on its first
 * lookup): an unmounted tracefs is reported, with the command that mounts
 * it, and the library is pinned to the mount we found. Each setting is
 * written, then read back, and a refusal names the file and the value.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <tracefs.h>
#include <event-parse.h>
#include "ftrace.h"
#include "evmap.h"
#include "tfs.h"

/* lib_version - "1.6.4" from the file name of the loaded libtracefs.so.1.6.4 */
static int lib_version(struct dl_phdr_info *info, size_t size, void *data)
{
	char *out = data, real[4096];
	const char *base, *v;

	(void)size;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libtracefs.so") ||
	    !realpath(info->dlpi_name, real))
		return 0;
	base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
	v = strstr(base, ".so.");
	if (v)
		snprintf(out, 32, "%s", v + 4);
	return 1;
}

/* lockdown_mode - the bracketed word of /sys/kernel/security/lockdown, or "" if unknown */
static void lockdown_mode(char *mode, size_t len)
{
	char buf[128] = "", *a, *b;
	FILE *f = fopen("/sys/kernel/security/lockdown", "r");

	mode[0] = 0;
	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f) && (a = strchr(buf, '[')) && (b = strchr(a, ']'))) {
		*b = 0;
		snprintf(mode, len, "%s", a + 1);
	}
	fclose(f);
}

int tfs_check(struct tfs *t)
{
	char path[4096], mode[32];
	int fd, err;

	t->libtracefs[0] = 0;
	dl_iterate_phdr(lib_version, t->libtracefs);
	if (!t->libtracefs[0])
		snprintf(t->libtracefs, sizeof(t->libtracefs), "%s", HG_LIBTRACEFS_BUILT);
	if (tracefs_tracing_dir_is_mounted(false, &t->dir) != 1) {
		fprintf(stderr, "hgtrace-ftrace: tracefs is not mounted; as root: "
			"mount -t tracefs nodev /sys/kernel/tracing\n");
		return -1;
	}
	/* every later call uses this mount, and none tries to mount one */
	tracefs_set_tracing_dir((char *)t->dir);
	snprintf(path, sizeof(path), "%s/trace_clock", t->dir);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	err = errno;
	lockdown_mode(mode, sizeof(mode));
	if (err == EPERM && !strcmp(mode, "confidentiality"))
		fprintf(stderr, "hgtrace-ftrace: %s: the kernel is locked down (lockdown=confidentiality), "
			"which forbids tracefs: no kernel events can be recorded on this boot, with or without "
			"the module; hourglass itself still runs and records its own trace\n", path);
	else if (err == EPERM)
		fprintf(stderr, "hgtrace-ftrace: %s: not permitted (%s); kernel lockdown in confidentiality "
			"mode does this%s\n", path, strerror(err),
			mode[0] ? "" : " (/sys/kernel/security/lockdown cannot be read to tell)");
	else if (err == EACCES && geteuid())
		fprintf(stderr, "hgtrace-ftrace: %s: %s: recording needs root (tracefs is root's)\n",
			path, strerror(err));
	else
		fprintf(stderr, "hgtrace-ftrace: %s: %s\n", path, strerror(err));
	return -1;
}

/*
 * read_text - a tracefs file whole (its size reads as 0: read to the end), NUL-ended,
 * its length in *len; NULL (errno set) when it cannot be read
 */
static char *read_text(const char *path, size_t *len)
{
	size_t size = 8192, used = 0;
	char *buf = malloc(size), *more;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	ssize_t n;

	if (fd < 0 || !buf)
		goto fail;
	for (;;) {
		if (size - used < 2) {
			if (!(more = realloc(buf, size * 2)))
				goto fail;
			buf = more;
			size *= 2;
		}
		n = read(fd, buf + used, size - used - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		if (!n)
			break;
		used += n;
	}
	close(fd);
	buf[used] = 0;
	*len = used;
	return buf;
fail:
	err = errno;
	if (fd >= 0)
		close(fd);
	free(buf);
	errno = err;
	return NULL;
}

/*
 * tfs_load_events - the ring buffer's page header and the format of each event of the
 * table in @groups, nothing else. tracefs_local_events_system() parsed every event of
 * their systems (90 formats on 6.1 for our 31) and then /proc/kallsyms, saved_cmdlines
 * and printk_formats, which only printing an event needs: under emulation kallsyms alone
 * took 1.4 s of a 2.4 s start (docs/hgtrace-ftrace.md, FIGURES). An event whose format
 * is missing or does not parse is left out, as before: check_events() names it.
 */
struct tep_handle *tfs_load_events(struct tfs *t, uint32_t groups)
{
	struct tep_handle *tep = tep_alloc();
	char path[4096], *buf;
	unsigned int i;
	size_t len;

	if (!tep) {
		fprintf(stderr, "hgtrace-ftrace: out of memory\n");
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/events/header_page", t->dir);
	buf = read_text(path, &len);
	if (!buf || tep_parse_header_page(tep, buf, len, sizeof(long))) {
		fprintf(stderr, "hgtrace-ftrace: cannot read the ring buffer's page header %s: %s\n", path,
			buf ? "it does not parse" : strerror(errno));
		free(buf);
		tep_free(tep);
		return NULL;
	}
	free(buf);
	for (i = 0; i < hgev_nr_descs(); i++) {
		const struct hgev_desc *d = hgev_desc(i);

		if (!(d->group & groups))
			continue;
		snprintf(path, sizeof(path), "%s/events/%s/%s/format", t->dir, d->system, d->name);
		buf = read_text(path, &len);
		if (buf)
			tep_parse_event(tep, buf, len, d->system);
		free(buf);
	}
	tep_set_cpus(tep, sysconf(_SC_NPROCESSORS_CONF));
	tep_set_long_size(tep, tep_get_header_page_size(tep));
	return tep;
}

void tfs_remove_stale(int quiet)
{
	/* libtracefs compiles a basic regular expression: no '+' */
	char **list = tracefs_instances("^" FT_INSTANCE_PREFIX "[0-9][0-9]*$");
	int i;

	for (i = 0; list && list[i]; i++) {
		long pid = strtol(list[i] + strlen(FT_INSTANCE_PREFIX), NULL, 10);
		struct tracefs_instance *inst;

		/* alive, or ours from an earlier process with our pid: left alone here */
		if (pid <= 0 || pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		inst = tracefs_instance_alloc(NULL, list[i]);
		if (inst && !tracefs_instance_destroy(inst)) {
			if (!quiet)
				fprintf(stderr, "hgtrace-ftrace: removed instance %s, left by a recorder that was "
					"killed (pid %ld)\n", list[i], pid);
		} else {
			fprintf(stderr, "hgtrace-ftrace: cannot remove instance %s left by a killed recorder: %s\n",
				list[i], strerror(errno));
		}
		tracefs_instance_free(inst);
	}
	tracefs_list_free(list);
}

/* set - write @val to an instance file and check that it took */
static int set(struct tfs *t, const char *file, const char *val, const char *what)
{
	if (tracefs_instance_file_write(t->inst, file, val) < 0) {
		fprintf(stderr, "hgtrace-ftrace: %s: writing '%s' to %s/instances/%s/%s: %s\n", what, val,
			t->dir, t->name, file, strerror(errno));
		return -1;
	}
	return 0;
}

int tfs_create(struct tfs *t)
{
	t->ncpus = sysconf(_SC_NPROCESSORS_CONF);
	snprintf(t->name, sizeof(t->name), FT_INSTANCE_PREFIX "%d", (int)getpid());
	t->inst = tracefs_instance_create(t->name);
	if (!t->inst) {
		fprintf(stderr, "hgtrace-ftrace: cannot create the instance %s/instances/%s: %s\n",
			t->dir, t->name, strerror(errno));
		return -1;
	}
	if (!tracefs_instance_is_new(t->inst)) {
		/* a dead recorder had our pid: its instance is as stale as any */
		if (tracefs_instance_destroy(t->inst)) {
			fprintf(stderr, "hgtrace-ftrace: instance %s exists and cannot be removed: %s\n",
				t->name, strerror(errno));
			tracefs_instance_free(t->inst);
			t->inst = NULL;
			return -1;
		}
		tracefs_instance_free(t->inst);
		t->inst = tracefs_instance_create(t->name);
		if (!t->inst || !tracefs_instance_is_new(t->inst)) {
			fprintf(stderr, "hgtrace-ftrace: cannot create the instance %s\n", t->name);
			tfs_destroy(t);
			return -1;
		}
	}
	/* a new instance records from birth; nothing is enabled yet, but keep it off */
	return set(t, "tracing_on", "0", "stopping the new instance");
}

/*
 * cpumask_hex - the kernel's format: 32-bit hex words, most significant first,
 * comma-separated; NULL if memory ran out
 */
static char *cpumask_hex(const struct ft_opts *o, int ncpus)
{
	int words = (ncpus + 31) / 32, w;
	size_t used = 0, len = (size_t)words * 9 + 1;
	char *buf = malloc(len);

	if (!buf)
		return NULL;
	buf[0] = 0;
	for (w = words - 1; w >= 0 && used < len; w--) {
		uint32_t bits = 0;
		int b;

		for (b = 0; b < 32 && w * 32 + b < ncpus; b++)
			if (ft_cpu_wanted(o, w * 32 + b))
				bits |= 1u << b;
		used += snprintf(buf + used, len - used, "%s%x", used ? "," : "", bits);
	}
	return buf;
}

/*
 * want_kernel_wakes - the instance's buffer_percent set to --drain-at, so that a poll()
 * on a CPU's trace_pipe_raw returns once that much of its buffer is unread, as
 * trace-cmd's splice() waits. Waiting so also makes every event cheaper: while a
 * reader waits for a watermark, the kernel's commit (rb_wakeups) looks at it once a
 * page and otherwise returns two tests sooner than with no waiter (about 0.008 of
 * trace-cmd's whole cost on the instruction-count clock, docs/hgtrace-ftrace.md).
 * Not for the other readers, nor --drain-at 0 (a poll with buffer_percent 0 would
 * wake us at every event). An older kernel without the file leaves the timer
 * alone to decide; -1 only when the file is there and refuses.
 */
static int want_kernel_wakes(struct tfs *t, const struct ft_opts *o)
{
	char pc[16];

	t->kernel_wakes = 0;
	if (o->reader != FT_READ_PAGES || !o->drain_at || !tracefs_file_exists(t->inst, "buffer_percent"))
		return 0;
	snprintf(pc, sizeof(pc), "%d", o->drain_at);
	if (set(t, "buffer_percent", pc, "choosing when the kernel wakes the reader"))
		return -1;
	t->kernel_wakes = 1;
	return 0;
}

int tfs_configure(struct tfs *t, const struct ft_opts *o, const struct hgev_map *map)
{
	char buf[256], *clock, *mask;
	unsigned int i;
	long long kb;
	int cpu, rc;

	for (cpu = t->ncpus; cpu >= 0 && (unsigned)cpu < o->rec.cpus.nbits; cpu++)
		if (hg_cpuset_has(&o->rec.cpus, cpu)) {
			fprintf(stderr, "hgtrace-ftrace: CPU %d does not exist here (%d CPUs)\n", cpu, t->ncpus);
			return -1;
		}
	if (set(t, "trace_clock", "x86-tsc", "choosing the TSC clock"))
		return -1;
	clock = tracefs_get_clock(t->inst);
	if (!clock || strcmp(clock, "x86-tsc")) {
		fprintf(stderr, "hgtrace-ftrace: the instance's clock is %s, not x86-tsc\n",
			clock ? clock : "unreadable");
		free(clock);
		return -1;
	}
	free(clock);
	snprintf(buf, sizeof(buf), "%lu", o->rec.buffer_kb);
	if (set(t, "buffer_size_kb", buf, "sizing the buffers"))
		return -1;
	if (tracefs_instance_file_read_number(t->inst, "buffer_size_kb", &kb) || kb <= 0) {
		fprintf(stderr, "hgtrace-ftrace: cannot read back the instance's buffer_size_kb\n");
		return -1;
	}
	t->buffer_kb = kb;
	if (set(t, "options/overwrite", o->rec.overwrite ? "1" : "0", "choosing the buffer mode"))
		return -1;
	if (want_kernel_wakes(t, o))
		return -1;
	mask = cpumask_hex(o, t->ncpus);
	if (!mask) {
		fprintf(stderr, "hgtrace-ftrace: out of memory choosing the CPUs\n");
		return -1;
	}
	rc = set(t, "tracing_cpumask", mask, "choosing the CPUs");
	free(mask);
	if (rc)
		return -1;
	for (i = 0; i < hgev_nr_descs(); i++) {
		const struct hgev_desc *d = hgev_desc(i);
		char file[160];

		if (!hgev_map_has(map, i))
			continue;
		snprintf(file, sizeof(file), "events/%s/%s/enable", d->system, d->name);
		if (set(t, file, "1", "enabling an event"))
			return -1;
		if (ft_stop)
			return -1;
	}
	return 0;
}

/*
 * open_raw - CPU @cpu's trace_pipe_raw, as tracefs_cpu_open() opens it but close-on-exec;
 * its file descriptor in raw_fd, to poll
 */
static struct tracefs_cpu *open_raw(struct tfs *t, int cpu)
{
	struct tracefs_cpu *tcpu;
	char file[64], *path;
	int fd;

	snprintf(file, sizeof(file), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	path = tracefs_instance_get_file(t->inst, file);
	if (!path)
		return NULL;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	tracefs_put_tracing_file(path);
	if (fd < 0)
		return NULL;
	tcpu = tracefs_cpu_alloc_fd(fd, getpagesize(), true);
	if (!tcpu)
		close(fd);
	else
		t->raw_fd[cpu] = fd;
	return tcpu;
}

int tfs_open_cpus(struct tfs *t, const struct ft_opts *o)
{
	int cpu;

	t->stats_fd = malloc(sizeof(int) * t->ncpus);
	t->raw_fd = malloc(sizeof(int) * t->ncpus);
	t->tcpu = calloc(t->ncpus, sizeof(*t->tcpu));
	if (!t->stats_fd || !t->raw_fd || !t->tcpu)
		return -1;
	for (cpu = 0; cpu < t->ncpus; cpu++)
		t->stats_fd[cpu] = t->raw_fd[cpu] = -1;
	for (cpu = 0; cpu < t->ncpus; cpu++) {
		char file[64];

		if (!ft_cpu_wanted(o, cpu))
			continue;
		/*
		 * close-on-exec: the command is forked after this, and a copy of one
		 * of these in it would keep the instance busy (rmdir: EBUSY) for as
		 * long as the command outlives us
		 */
		snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", cpu);
		t->stats_fd[cpu] = tracefs_instance_file_open(t->inst, file, O_RDONLY | O_CLOEXEC);
		if (o->reader != FT_READ_ITERATE)
			t->tcpu[cpu] = open_raw(t, cpu);
		if (t->stats_fd[cpu] < 0 || (o->reader != FT_READ_ITERATE && !t->tcpu[cpu])) {
			fprintf(stderr, "hgtrace-ftrace: cannot open CPU %d's buffer in instance %s: %s\n",
				cpu, t->name, strerror(errno));
			return -1;
		}
	}
	return 0;
}

void tfs_close_cpus(struct tfs *t)
{
	int cpu;

	for (cpu = 0; cpu < t->ncpus; cpu++) {
		if (t->stats_fd && t->stats_fd[cpu] >= 0)
			close(t->stats_fd[cpu]);
		if (t->tcpu && t->tcpu[cpu])
			tracefs_cpu_close(t->tcpu[cpu]);
	}
	free(t->stats_fd);
	free(t->raw_fd);
	free(t->tcpu);
	t->stats_fd = t->raw_fd = NULL;
	t->tcpu = NULL;
}

int tfs_tracing(struct tfs *t, int on)
{
	return set(t, "tracing_on", on ? "1" : "0", on ? "starting" : "stopping");
}

/* field - the number after "@key: " in a stats text, 0 if absent */
static uint64_t field(const char *text, const char *key)
{
	const char *p = text;
	size_t n = strlen(key);

	while ((p = strstr(p, key))) {
		if ((p == text || p[-1] == '\n') && p[n] == ':')
			return strtoull(p + n + 1, NULL, 10);
		p += n;
	}
	return 0;
}

int tfs_read_stats(struct tfs *t, int cpu, struct tfs_stats *s)
{
	char buf[1024];
	ssize_t n;

	if (!t->stats_fd || cpu >= t->ncpus || t->stats_fd[cpu] < 0)
		return -1;
	n = pread(t->stats_fd[cpu], buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	s->entries = field(buf, "entries");
	s->overrun = field(buf, "overrun");
	s->commit_overrun = field(buf, "commit overrun");
	s->dropped = field(buf, "dropped events");
	s->read = field(buf, "read events");
	s->bytes = field(buf, "bytes");
	return 0;
}

void tfs_destroy(struct tfs *t)
{
	if (!t->inst)
		return;
	/* an open file in the instance would make rmdir fail with EBUSY */
	tfs_close_cpus(t);
	if (tracefs_instance_destroy(t->inst))
		fprintf(stderr, "hgtrace-ftrace: could not remove the instance %s/instances/%s: %s; "
			"remove it with: rmdir %s/instances/%s\n", t->dir, t->name, strerror(errno),
			t->dir, t->name);
	tracefs_instance_free(t->inst);
	t->inst = NULL;
}

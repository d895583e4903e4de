// SPDX-License-Identifier: GPL-2.0
/*
 * record.c - hgtrace-ftrace record: the module-less recording, start to finish.
 *
 *   check tracefs -> read the event formats -> create our instance (tracing
 *   off) -> x86-tsc clock, buffer size, mode, CPUs, events -> open the file
 *   -> fork the command, held -> tracing on -> release the command -> drain
 *   every CPU on our own timer until it ends -> tracing off -> last drain ->
 *   remove the instance -> convert what was read -> the trailer.
 *
 * The drainer is one thread that sleeps on its own absolute timer and, with the
 * pages reader and --drain-at, in the same ppoll() on every CPU's trace_pipe_raw,
 * which the kernel ends once --drain-at percent of that CPU's buffer is unread
 * (the instance's buffer_percent, tfs.c), as trace-cmd's splice() waits for the
 * same watermark: the kernel's looks come on top of the timer's, which are fewer
 * once the kernel wakes us on every CPU (look.h), and the waiting reader makes
 * every event a little cheaper (tfs.c). A
 * drain costs a read() per page; the pages are converted once the command is over,
 * so conversion costs it nothing (spool.h). At each look a CPU's buffer is read
 * only once --drain-at percent of it is unread (its stats file's "bytes"), or
 * sooner when at its pace it would be by the look after next: a run that fits the buffer is copied after the
 * command, not on its CPUs while it runs (on the instruction-count clock that
 * copying was 0.19 of trace-cmd's whole cost, docs/hgtrace-ftrace.md). The other
 * readers, and --drain-at 0, never ask the kernel to wake them.
 *
 * The machine is put back as found on every way out: the instance (our only
 * change, tfs.h) is removed on success, on error, and on SIGINT, SIGTERM or
 * SIGHUP at any point, the handlers being installed before anything is
 * touched; after a signal before tracing started nothing is recorded (exit
 * 130), after it the recording stops and the file is complete up to there.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <x86intrin.h>
#include <tracefs.h>
#include <event-parse.h>
#include <kbuffer.h>
#include "hg_child.h"
#include "hg_hgt_write.h"
#include "hgtrace_cmds.h"
#include "ftrace.h"
#include "evmap.h"
#include "tfs.h"
#include "spool.h"
#include "convert.h"
#include "meta.h"
#include "ksyms.h"
#include "look.h"

/*
 * how long a command that got the same Ctrl-C has to end before it is sent SIGTERM
 * (sooner at a second Ctrl-C): longer than hgtrace record's own 20 s for its command,
 * so that in hourglass record --ftrace (hgtrace-ftrace, hgtrace record, hourglass)
 * our SIGTERM does not reach hgtrace record while hourglass still writes its trace:
 * hgtrace record takes a second signal as a second Ctrl-C and kills its command
 */
#define FT_CHILD_GRACE_MS	30000

struct rec {
	struct ft_opts *o;
	struct tfs t;
	struct tep_handle *tep;
	struct hgev_map *map;
	struct kbuffer *kbuf;
	struct spool sp;
	struct conv cv;
	struct hgt_writer w;
	int writer_open;
	cpu_set_t *cpuset;	/* for tracefs_iterate_raw_events */
	size_t cpuset_size;
	double drain_s, convert_s;
	uint64_t live_conversions;
	uint64_t pages_read;		/* pages read so far (the pages readers) */
	uint64_t pages_run;		/* of them, read while tracing was on */
	uint64_t *unread;		/* per CPU: bytes unread at the last look that left it */
	double last_look;		/* when the last look began (now_s) */
	uint64_t unread_max;		/* after the last look: the fullest CPU's unread bytes */
	double rate_max;		/* the fastest CPU's fill rate before it, bytes a second */
	uint64_t looks;			/* wake-ups of the drainer while recording */
	/*
	 * the kernel's wake-ups at --drain-at (tfs.h kernel_wakes): per CPU, its
	 * trace_pipe_raw to wait on (fd -1, which ppoll() skips, for a CPU not recorded or
	 * whose poll() does not wait for the watermark), and whether it woke us
	 */
	struct pollfd *pfd;
	unsigned char *woke;
	uint64_t kernel_woke;		/* looks the kernel started */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* tgid_of - a pid's thread group from /proc, while the task lives (0 once it is gone) */
static uint32_t tgid_of(uint32_t pid, void *ctx)
{
	char path[64], line[128];
	uint32_t tgid = 0;
	FILE *f;

	(void)ctx;
	if (!pid)
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %u", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/* check_events - say which tracepoints this kernel lacks and what that leaves */
static int check_events(struct rec *r)
{
	uint32_t asked = r->o->rec.events, have = hgev_map_groups(r->map), g;
	static const char *const gname[] = { "sched", "irq", "softirq", "vectors", "nmi", "hrtimer", "syscalls" };
	unsigned int i;
	int bad = 0;

	for (i = 0; i < hgev_nr_descs(); i++) {
		const struct hgev_desc *d = hgev_desc(i);

		if ((d->group & asked) && !hgev_map_has(r->map, i))
			fprintf(stderr, "hgtrace-ftrace: this kernel has no %s:%s event: it is not recorded%s\n",
				d->system, d->name, (d->group & have) ? "; the rest of its group is" : "");
	}
	for (g = 0; g < 7; g++) {
		if (!(asked & (1u << g)) || (have & (1u << g)))
			continue;
		fprintf(stderr, "hgtrace-ftrace: no event of group '%s' exists on this kernel%s\n", gname[g],
			r->o->rec.events_given ? "" : ": recording without it");
		bad |= r->o->rec.events_given;
	}
	if (!have) {
		fprintf(stderr, "hgtrace-ftrace: none of the events asked for exists on this kernel\n");
		return -1;
	}
	if (bad)
		fprintf(stderr, "hgtrace-ftrace: leave the missing groups out of -e to record the others\n");
	return bad ? -1 : 0;
}

/* wait_child - until @pid has exited: a second signal (Ctrl-C and its echo) must not cut the wait short */
static void wait_child(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
}


/*
 * wait_for_more - whether a CPU with @bytes unread can be left to the next look:
 * below @min_bytes and, gaining @grew an -i at the pace since the last look, still
 * below it two -i later (a buffer filling fast is read early: our look is a timer,
 * not the kernel's wake-up at buffer_percent, so the half left must last until
 * then; a longer wait is only chosen while the pace allows it, look.c)
 */
static int wait_for_more(struct rec *r, int cpu, uint64_t bytes, uint64_t grew, uint64_t min_bytes)
{
	if (!min_bytes || bytes + 2 * grew >= min_bytes)
		return 0;
	r->unread[cpu] = bytes;
	return 1;
}

/*
 * kernel_woke_early - @cpu's poll() said it was past --drain-at with far less unread:
 * this kernel's poll does not wait for buffer_percent (older kernels' did not), and
 * would wake us at every event; the timer alone looks at that CPU from now on
 */
static void kernel_woke_early(struct rec *r, int cpu, uint64_t bytes)
{
	r->pfd[cpu].fd = -1;
	if (!r->o->quiet)
		fprintf(stderr, "hgtrace-ftrace: CPU %d's trace_pipe_raw was ready with %llu bytes unread, "
			"under buffer_percent: this kernel does not wait for it; the timer alone looks at "
			"that CPU\n", cpu, (unsigned long long)bytes);
}

/* woken - which CPUs the kernel said are past --drain-at (after a ppoll() on pfd); 1 if any */
static int woken(struct rec *r)
{
	int cpu, any = 0;

	for (cpu = 0; r->pfd && cpu < r->t.ncpus; cpu++) {
		if (r->pfd[cpu].revents & (POLLERR | POLLNVAL))
			r->pfd[cpu].fd = -1;	/* not a file we can wait on: the timer's */
		else if (r->pfd[cpu].revents & POLLIN)
			any = r->woke[cpu] = 1;
	}
	return any;
}

/* kernel_wakes_every_cpu - whether the kernel wakes us at --drain-at on every traced CPU (look.h) */
static int kernel_wakes_every_cpu(const struct rec *r)
{
	int cpu;

	if (!r->pfd)
		return 0;
	for (cpu = 0; cpu < r->t.ncpus; cpu++)
		if (r->t.tcpu[cpu] && r->pfd[cpu].fd < 0)
			return 0;
	return 1;
}

/*
 * drain_pages - one pass over the CPUs: counters, pages until empty (or @limit),
 * counters; a CPU that can wait for more (wait_for_more, @min_bytes) is left for a
 * later pass (its drops are then placed by that pass's counters, as between any
 * two passes)
 */
static int drain_pages(struct rec *r, long limit, uint64_t min_bytes)
{
	double t = now_s(), dt = t - r->last_look, rate;
	uint64_t grew;
	int cpu;

	if (!r->unread && !(r->unread = calloc(r->t.ncpus, sizeof(*r->unread)))) {
		fprintf(stderr, "hgtrace-ftrace: out of memory\n");
		return -1;
	}
	r->unread_max = 0;
	r->rate_max = 0;
	r->last_look = t;
	for (cpu = 0; cpu < r->t.ncpus; cpu++) {
		struct tfs_stats s, e;
		long n = 0;

		if (!r->t.tcpu[cpu])
			continue;
		if (tfs_read_stats(&r->t, cpu, &s)) {
			fprintf(stderr, "hgtrace-ftrace: cannot read CPU %d's counters\n", cpu);
			return -1;
		}
		grew = s.bytes > r->unread[cpu] ? s.bytes - r->unread[cpu] : 0;
		rate = dt > 0 ? grew / dt : 0;
		if (rate > r->rate_max)
			r->rate_max = rate;
		if (r->woke && r->woke[cpu] && s.bytes < min_bytes / 4)
			kernel_woke_early(r, cpu, s.bytes);
		/* at that pace, what it gains in an -i (looks are -i apart or more, look.c) */
		if (!(r->woke && r->woke[cpu]) &&
		    wait_for_more(r, cpu, s.bytes, (uint64_t)(rate * r->o->rec.interval), min_bytes)) {
			if (s.bytes > r->unread_max)
				r->unread_max = s.bytes;
			continue;
		}
		conv_pass_begin(&r->cv, cpu, &s, spool_next(&r->sp, cpu));
		while (!limit || n < limit) {
			char *slot = spool_slot(&r->sp, cpu);
			int got;

			if (!slot) {
				fprintf(stderr, "hgtrace-ftrace: out of memory holding CPU %d's pages\n", cpu);
				return -1;
			}
			got = tracefs_cpu_read(r->t.tcpu[cpu], slot, true);
			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0) {
				fprintf(stderr, "hgtrace-ftrace: reading CPU %d's buffer: %s\n", cpu, strerror(errno));
				return -1;
			}
			if (got == 0)
				break;
			spool_commit(&r->sp, cpu);
			n++;
			r->pages_read++;
			/* stop mode: drops while a page is read are placed by the page (convert.h) */
			if (!r->o->rec.overwrite) {
				if (tfs_read_stats(&r->t, cpu, &e))
					return -1;
				conv_page_read(&r->cv, cpu, &e, spool_next(&r->sp, cpu) - 1);
			}
		}
		if (tfs_read_stats(&r->t, cpu, &e))
			return -1;
		if (r->woke)
			r->woke[cpu] = 0;
		r->unread[cpu] = e.bytes;
		if (e.bytes > r->unread_max)
			r->unread_max = e.bytes;
		conv_pass_end(&r->cv, cpu, &e, spool_next(&r->sp, cpu));
	}
	return 0;
}

static int convert_held(struct rec *r)
{
	int cpu;

	for (cpu = 0; cpu < r->t.ncpus; cpu++)
		if (ft_cpu_wanted(r->o, cpu) && (conv_pages(&r->cv, &r->sp, cpu) || conv_flush(&r->cv, cpu)))
			return -1;
	return 0;
}

static int on_event(struct tep_event *ev, struct tep_record *rec, int cpu, void *ctx)
{
	struct rec *r = ctx;

	(void)ev;
	conv_event(&r->cv, cpu, rec->ts, rec->data, rec->size, rec->missed_events);
	return 0;
}

/* drain_iterate - the same pass through tracefs_iterate_raw_events (for comparison) */
static int drain_iterate(struct rec *r)
{
	int cpu;

	for (cpu = 0; cpu < r->t.ncpus; cpu++) {
		struct tfs_stats s;

		if (!ft_cpu_wanted(r->o, cpu))
			continue;
		if (tfs_read_stats(&r->t, cpu, &s))
			return -1;
		conv_pass_begin(&r->cv, cpu, &s, -1);
	}
	if (tracefs_iterate_raw_events(r->tep, r->t.inst, r->cpuset, r->cpuset_size, on_event, r) < 0) {
		fprintf(stderr, "hgtrace-ftrace: tracefs_iterate_raw_events failed: %s\n", strerror(errno));
		return -1;
	}
	for (cpu = 0; cpu < r->t.ncpus; cpu++) {
		struct tfs_stats e;

		if (!ft_cpu_wanted(r->o, cpu))
			continue;
		if (tfs_read_stats(&r->t, cpu, &e))
			return -1;
		conv_pass_end(&r->cv, cpu, &e, -1);
		if (conv_flush(&r->cv, cpu))
			return -1;
	}
	return 0;
}

/*
 * drain - one pass of whichever reader (the pages readers skip a CPU with fewer than
 * @min_bytes unread); converts now when asked to or when too much is held
 */
static int drain(struct rec *r, long limit, uint64_t min_bytes)
{
	if (r->o->reader == FT_READ_ITERATE)
		return drain_iterate(r);
	if (drain_pages(r, limit, min_bytes))
		return -1;
	if (r->o->reader == FT_READ_LIVE || r->sp.bytes > r->o->spool_max) {
		r->live_conversions += r->o->reader != FT_READ_LIVE;
		return convert_held(r);
	}
	return 0;
}

/* final_drain - after tracing stopped: until every CPU says it holds nothing */
static int final_drain(struct rec *r, struct tfs_stats *final)
{
	int tries, cpu, left = 0;

	for (tries = 0; tries < 5; tries++) {
		if (drain(r, 0, 0))
			return -1;
		left = 0;
		for (cpu = 0; cpu < r->t.ncpus; cpu++) {
			if (!ft_cpu_wanted(r->o, cpu))
				continue;
			if (tfs_read_stats(&r->t, cpu, &final[cpu]))
				return -1;
			left += final[cpu].entries != 0;
		}
		if (!left)
			return 0;
		/* an event reserved before tracing stopped can still be committing */
		usleep(10000);
	}
	for (cpu = 0; cpu < r->t.ncpus; cpu++)
		if (ft_cpu_wanted(r->o, cpu) && final[cpu].entries) {
			fprintf(stderr, "hgtrace-ftrace: CPU %d still holds %llu events that could not be read: "
				"counted as lost\n", cpu, (unsigned long long)final[cpu].entries);
			final[cpu].dropped += final[cpu].entries;
		}
	return 0;
}

/* name_funcs - NAME records for the callbacks seen, on the CPU where each was first seen */
static void name_funcs(struct rec *r, uint64_t ts)
{
	unsigned int n, i;
	const struct hgev_func *f = hgev_funcs(r->map, &n);
	uint64_t *addr = calloc(n ? n : 1, sizeof(*addr));
	char (*names)[32] = calloc(n ? n : 1, 32);

	if (!addr || !names)
		goto out;
	for (i = 0; i < n; i++)
		addr[i] = f[i].addr;
	ksyms_name(addr, n, names);
	for (i = 0; i < n; i++) {
		char rec[64];
		size_t len;

		if (!names[i][0])
			continue;
		len = hgev_name_rec(rec, ts, HGT_NAME_FUNC, f[i].id, names[i]);
		conv_put(&r->cv, f[i].cpu, rec, len);
	}
out:
	free(addr);
	free(names);
}

/* write_trailer - the window, each recorded CPU's counters, the END marker */
static int write_trailer(struct rec *r, const struct hgt_file_window *win)
{
	struct hgt_cpu_stats *st = calloc(r->t.ncpus, sizeof(*st));
	uint32_t *cpus = calloc(r->t.ncpus, sizeof(*cpus));
	size_t n = 0;
	int cpu, ret = -1;

	if (st && cpus) {
		for (cpu = 0; cpu < r->t.ncpus; cpu++)
			if (ft_cpu_wanted(r->o, cpu)) {
				conv_stats(&r->cv, cpu, &st[n]);
				cpus[n++] = cpu;
			}
		ret = hgt_writer_trailer(&r->w, win, st, cpus, n) || hgt_writer_end(&r->w) ? -1 : 0;
	}
	free(st);
	free(cpus);
	return ret;
}

static void print_summary(struct rec *r, const struct tfs_stats *final, double secs)
{
	uint64_t recs = 0, lost = 0, est = 0;
	int cpu;

	fprintf(stderr, "hgtrace-ftrace: %.3f s recorded into %s (%llu bytes) through tracefs instance %s, "
		"now removed\n", secs, r->o->out, (unsigned long long)r->w.bytes, r->t.name);
	fprintf(stderr, "  cpu    events   records  overwritten   refused  (kernel: read  overrun  dropped)\n");
	for (cpu = 0; cpu < r->t.ncpus; cpu++) {
		const struct conv_cpu *c = &r->cv.cpu[cpu];

		if (!ft_cpu_wanted(r->o, cpu))
			continue;
		fprintf(stderr, "  %3d %9llu %9llu %12llu %9llu  %14llu %8llu %8llu\n", cpu,
			(unsigned long long)c->events, (unsigned long long)c->records,
			(unsigned long long)c->lost_over, (unsigned long long)c->lost_refused,
			(unsigned long long)final[cpu].read, (unsigned long long)final[cpu].overrun,
			(unsigned long long)(final[cpu].dropped + final[cpu].commit_overrun));
		recs += c->records;
		lost += c->lost_over + c->lost_refused;
		est += c->estimated;
		if (c->events != final[cpu].read)
			fprintf(stderr, "hgtrace-ftrace: CPU %d: %llu events decoded, the kernel says %llu were read\n",
				cpu, (unsigned long long)c->events, (unsigned long long)final[cpu].read);
		if (c->unconverted || c->bad_pages)
			fprintf(stderr, "hgtrace-ftrace: CPU %d: %llu events not converted, %llu unreadable pages\n",
				cpu, (unsigned long long)c->unconverted, (unsigned long long)c->bad_pages);
	}
	fprintf(stderr, "hgtrace-ftrace: %llu records, %llu events lost%s", (unsigned long long)recs,
		(unsigned long long)lost, lost ? " (see LOST records; a bigger -b, a shorter -i or a lower --drain-at "
		"helps)" : "");
	if (est)
		fprintf(stderr, "; %llu LOST records placed or counted by estimate", (unsigned long long)est);
	if (r->o->reader != FT_READ_ITERATE)
		fprintf(stderr, "\nhgtrace-ftrace: %llu pages read while recording (--drain-at %d%%), %llu after; "
			"%llu looks, %llu of them the kernel's at buffer_percent",
			(unsigned long long)r->pages_run, r->o->drain_at,
			(unsigned long long)(r->pages_read - r->pages_run), (unsigned long long)r->looks,
			(unsigned long long)r->kernel_woke);
	fprintf(stderr, "\nhgtrace-ftrace: after the run: last drain %.3f s, conversion %.3f s%s\n", r->drain_s,
		r->convert_s, r->live_conversions ? " (pages also converted while recording: too many held)" : "");
}

/* setup - everything up to a configured, stopped instance; 1 when a signal came */
static int setup(struct rec *r)
{
	struct ptrid_key key;

	if (tfs_check(&r->t))
		return -1;
	r->tep = tfs_load_events(&r->t, r->o->rec.events);
	if (!r->tep)
		return -1;
	if (tep_get_header_page_size(r->tep) != 8) {
		fprintf(stderr, "hgtrace-ftrace: this kernel's ring buffer is not a 64-bit one; "
			"only x86_64 is supported\n");
		return -1;
	}
	if (ptrid_key_init(&key)) {
		fprintf(stderr, "hgtrace-ftrace: getrandom: %s\n", strerror(errno));
		return -1;
	}
	r->map = hgev_map_alloc(r->tep, r->o->rec.events, &key);
	/* the sub-buffer's commit word is a long: 8 bytes, as checked above */
	r->kbuf = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	if (!r->map || !r->kbuf) {
		fprintf(stderr, "hgtrace-ftrace: out of memory\n");
		return -1;
	}
	hgev_set_tgid_fn(r->map, tgid_of, NULL);
	ft_hide_events(r->map);
	if (check_events(r))
		return -1;
	ft_stage("setup");
	if (ft_stop)
		return 1;
	tfs_remove_stale(r->o->quiet);
	if (tfs_create(&r->t))
		return ft_stop ? 1 : -1;
	ft_stage("instance");
	if (ft_stop)
		return 1;
	if (tfs_configure(&r->t, r->o, r->map))
		return ft_stop ? 1 : -1;
	ft_stage("events");
	if (ft_stop)
		return 1;
	if (tfs_open_cpus(&r->t, r->o))
		return -1;
	return ft_stop ? 1 : 0;
}

static int prepare_reading(struct rec *r)
{
	size_t psize = getpagesize();
	int cpu;

	for (cpu = 0; r->t.tcpu && cpu < r->t.ncpus; cpu++)
		if (r->t.tcpu[cpu]) {
			psize = tracefs_cpu_read_size(r->t.tcpu[cpu]);
			break;
		}
	if (r->t.kernel_wakes) {
		r->pfd = calloc(r->t.ncpus, sizeof(*r->pfd));
		r->woke = calloc(r->t.ncpus, 1);
		if (!r->pfd || !r->woke)
			return -1;
		for (cpu = 0; cpu < r->t.ncpus; cpu++) {
			r->pfd[cpu].fd = r->t.raw_fd[cpu];
			r->pfd[cpu].events = POLLIN;
		}
	}
	if (spool_init(&r->sp, r->t.ncpus, psize) ||
	    conv_init(&r->cv, r->map, r->kbuf, &r->w, r->t.ncpus, r->t.buffer_kb, psize))
		return -1;
	r->cpuset_size = CPU_ALLOC_SIZE(r->t.ncpus);
	r->cpuset = CPU_ALLOC(r->t.ncpus);
	if (!r->cpuset)
		return -1;
	CPU_ZERO_S(r->cpuset_size, r->cpuset);
	for (cpu = 0; cpu < r->t.ncpus; cpu++)
		if (ft_cpu_wanted(r->o, cpu))
			CPU_SET_S(cpu, r->cpuset_size, r->cpuset);
	return 0;
}

/* place_reader - --reader-cpu and --prio: after the command is forked, before it is let go */
static int place_reader(const struct ft_opts *o)
{
	if (o->rec.reader_cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(o->rec.reader_cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "hgtrace-ftrace: cannot pin the reader to CPU %d: %s\n",
				o->rec.reader_cpu, strerror(errno));
			return -1;
		}
	}
	if (o->rec.prio) {
		struct sched_param sp = { .sched_priority = o->rec.prio };

		if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
			fprintf(stderr, "hgtrace-ftrace: cannot use SCHED_FIFO %d for the reader: %s\n",
				o->rec.prio, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/*
 * The signals that end the drainer's wait (hg_wait_until) are blocked but inside it
 * (hg_child.h; a wait is up to FT_LOOK_MAX_S): SIGCHLD from before the command is
 * let go, the stop signals from after, so that one before still keeps the command
 * from starting.
 */

/* add_s - @t moved on by @s seconds */
static void add_s(struct timespec *t, double s)
{
	long ns = (long)(s * 1e9);

	t->tv_nsec += ns % 1000000000L;
	t->tv_sec += ns / 1000000000L + t->tv_nsec / 1000000000L;
	t->tv_nsec %= 1000000000L;
}

int ft_record(struct ft_opts *o)
{
	struct rec r;
	struct tsc_pair p0, p1;
	struct hgt_file_window win = { 0, 0 };
	struct tfs_stats *final = NULL;
	struct timespec next, end;
	struct ft_look look;
	sigset_t wait_mask, saved_mask;
	double wait;
	/* what a CPU's buffer holds unread before a pass during the run reads it (--drain-at) */
	uint64_t drain_min = (uint64_t)o->rec.buffer_kb * 1024 * (unsigned)o->drain_at / 100;
	pid_t child = 0;
	int go_fd = -1, status = 0, child_done = 0, ret = FT_EXIT_ENV, st, cpu, closed_ok = 0, released = 0;
	int kernel_woke = 0;
	double t0 = 0, t;
	char *meta;

	memset(&r, 0, sizeof(r));
	r.o = o;
	tsc_pair_now(&p0);
	st = setup(&r);
	if (st)
		goto out;
	final = calloc(r.t.ncpus, sizeof(*final));
	if (!final || prepare_reading(&r)) {
		fprintf(stderr, "hgtrace-ftrace: out of memory\n");
		goto out;
	}
	/* the TSC's rate over at least 20 ms of set-up */
	tsc_pair_now(&p1);
	if (p1.ns - p0.ns < 20000000ull) {
		usleep((20000000ull - (p1.ns - p0.ns)) / 1000 + 1);
		tsc_pair_now(&p1);
	}
	meta = meta_build(o, &r.t, hgev_map_groups(r.map), tsc_khz_between(&p0, &p1));
	if (!meta || hgt_writer_open(&r.w, o->out, HGT_FILE_VERSION, meta)) {
		if (meta)
			fprintf(stderr, "hgtrace-ftrace: %s\n", r.w.err.msg);
		free(meta);
		r.writer_open = r.w.fd >= 0;
		goto out;
	}
	free(meta);
	r.writer_open = 1;
	if (o->cmd) {
		/* what the command leaves behind if we end it is ours to end (hg_child_end_orphans) */
		if (hg_child_subreaper())
			fprintf(stderr, "hgtrace-ftrace: cannot adopt the command's orphans (%s): if it is "
				"ended, what it started may keep running\n", strerror(errno));
		child = hg_child_start(o->cmd, &go_fd, "hgtrace-ftrace", NULL);
		if (child < 0) {
			fprintf(stderr, "hgtrace-ftrace: fork: %s\n", strerror(errno));
			child = 0;
			goto out;
		}
	}
	/* after the fork: the command keeps our CPUs, policy and signal mask, not the reader's */
	if (place_reader(o))
		goto out;
	if (ft_stop) {
		st = 1;
		goto out;
	}
	if (tfs_tracing(&r.t, 1))
		goto out;
	if (child)
		hg_child_wakes(&saved_mask);
	else
		sigprocmask(SIG_SETMASK, NULL, &saved_mask);
	win.start_tsc = __rdtsc();
	t0 = now_s();
	ft_stage("started");
	if (go_fd >= 0 && !ft_stop) {
		if (hg_child_release(&go_fd))
			fprintf(stderr, "hgtrace-ftrace: could not release the command\n");
		else
			released = 1;
	}

	ret = FT_EXIT_OK;
	hg_stop_wakes(&saved_mask, &wait_mask);
	/* the pages reader can look less often while the buffers have room (look.h) */
	look.interval = o->rec.interval;
	look.buffer_bytes = (uint64_t)r.t.buffer_kb * 1024;
	look.drain_bytes = o->reader == FT_READ_PAGES ? drain_min : 0;
	look.kernel_wakes = kernel_wakes_every_cpu(&r);
	/* the first look by the same rule: nothing unread, no pace yet */
	wait = ft_look_next(&look, 0, 0);
	r.last_look = t0;
	clock_gettime(CLOCK_MONOTONIC, &next);
	end = next;
	add_s(&end, o->rec.duration);
	while (!ft_stop) {
		/* a look the kernel started keeps the timer's next one where it was */
		if (!kernel_woke) {
			add_s(&next, wait);
			if (o->rec.duration && (next.tv_sec > end.tv_sec ||
						(next.tv_sec == end.tv_sec && next.tv_nsec > end.tv_nsec)))
				next = end;
		}
		kernel_woke = hg_wait_until(&next, &wait_mask, r.pfd, r.pfd ? r.t.ncpus : 0) > 0 && woken(&r);
		r.looks++;
		r.kernel_woke += kernel_woke;
		/* a pass reads at most twice what a buffer holds: a flood cannot keep us from -d or a signal */
		if (drain(&r, 2 * (long)r.cv.buffer_pages, drain_min)) {
			ret = FT_EXIT_ENV;
			break;
		}
		if (child && waitpid(child, &status, WNOHANG) == child) {
			child_done = 1;
			break;
		}
		if (o->rec.duration && now_s() - t0 >= o->rec.duration)
			break;
		look.kernel_wakes = kernel_wakes_every_cpu(&r);
		wait = ft_look_next(&look, r.unread_max, r.rate_max);
	}
	sigprocmask(SIG_SETMASK, &saved_mask, NULL);
	win.stop_tsc = __rdtsc();
	tfs_tracing(&r.t, 0);
	r.pages_run = r.pages_read;
	t = now_s();
	if (child && !child_done) {
		if (go_fd >= 0) {
			close(go_fd);
			go_fd = -1;
		}
		/* recording is over (-d, a signal or an error): so is the command */
		if (!(ft_stop && hg_child_ends_itself(child, &status, FT_CHILD_GRACE_MS, &ft_signals))) {
			int left;

			kill(child, SIGTERM);
			wait_child(child, &status);
			left = hg_child_end_orphans(5000);
			if (left)
				fprintf(stderr, "hgtrace-ftrace: ended %d process%s %s left behind\n", left,
					left == 1 ? "" : "es", o->cmd[0]);
		}
		child_done = 1;
	}
	ft_stage("drain");
	if (final_drain(&r, final))
		ret = FT_EXIT_ENV;
	r.drain_s = now_s() - t;
	/* the machine as found before the slow part */
	tfs_destroy(&r.t);
	t = now_s();
	if (ret == FT_EXIT_OK && r.o->reader != FT_READ_ITERATE && convert_held(&r))
		ret = FT_EXIT_ENV;
	for (cpu = 0; ret == FT_EXIT_OK && cpu < r.t.ncpus; cpu++)
		if (ft_cpu_wanted(o, cpu))
			conv_finish(&r.cv, cpu, win.stop_tsc, &final[cpu]);
	if (ret == FT_EXIT_OK)
		name_funcs(&r, win.stop_tsc);
	for (cpu = 0; ret == FT_EXIT_OK && cpu < r.t.ncpus; cpu++)
		if (ft_cpu_wanted(o, cpu) && conv_flush(&r.cv, cpu))
			ret = FT_EXIT_ENV;
	r.convert_s = now_s() - t;
	if (ret == FT_EXIT_OK && (r.cv.error || write_trailer(&r, &win)))
		ret = FT_EXIT_ENV;
	if (hgt_writer_close(&r.w))
		ret = FT_EXIT_ENV;
	else
		closed_ok = 1;
	if (r.w.error)
		fprintf(stderr, "hgtrace-ftrace: %s\n", r.w.err.msg);
	r.writer_open = 0;
	if (!o->quiet && ret == FT_EXIT_OK)
		print_summary(&r, final, now_s() - t0);
	if (ft_stop)
		fprintf(stderr, "hgtrace-ftrace: stopped by signal %d; the file is complete up to there\n",
			(int)ft_signal);
	if (o->compress && closed_ok && ret == FT_EXIT_OK) {
		if (hgt_pack_file(o->out, o->out, 9) < 0) {
			fprintf(stderr, "hgtrace-ftrace: %s left unpacked\n", o->out);
			ret = FT_EXIT_ENV;
		} else if (!o->quiet) {
			struct stat sb;

			if (!stat(o->out, &sb))
				fprintf(stderr, "hgtrace-ftrace: packed %s: %lld bytes\n", o->out, (long long)sb.st_size);
		}
	}
out:
	if (go_fd >= 0)
		close(go_fd);		/* the held command exits 127 without running anything */
	if (child > 0 && !child_done) {
		kill(child, SIGTERM);
		wait_child(child, &status);
	} else if (child > 0 && !released) {
		fprintf(stderr, "hgtrace-ftrace: the command was not started\n");
	} else if (child > 0 && WIFEXITED(status) && WEXITSTATUS(status)) {
		/* said even with -q: a failed command makes the recording suspect */
		fprintf(stderr, "hgtrace-ftrace: the command exited with status %d\n", WEXITSTATUS(status));
	}
	tfs_destroy(&r.t);
	if (r.writer_open) {
		/* nothing was recorded: no file rather than an empty one */
		hgt_writer_close(&r.w);
		unlink(o->out);
	}
	if (st == 1) {
		fprintf(stderr, "hgtrace-ftrace: stopped by signal %d before recording started: nothing "
			"recorded, tracefs left as it was\n", (int)ft_signal);
		ret = FT_EXIT_INTERRUPTED;
	}
	free(final);
	free(r.unread);
	free(r.pfd);
	free(r.woke);
	conv_free(&r.cv);
	spool_free(&r.sp);
	if (r.cpuset)
		CPU_FREE(r.cpuset);
	if (r.kbuf)
		kbuffer_free(r.kbuf);
	hgev_map_free(r.map);
	if (r.tep)
		tep_free(r.tep);
	return ret;
}

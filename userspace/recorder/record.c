// SPDX-License-Identifier: GPL-2.0
/*
 * record.c - hgtrace record: drain the module into a file while a workload runs.
 *
 * How it stays out of the workload's way: one thread, never woken by the
 * kernel (the module has no wait queue and never wakes anybody from a probe);
 * it sleeps on its own absolute timer (--interval, 100 ms by default), woken
 * early only by the command's end and the stop signals, and then drains
 * every CPU in large reads. It can be pinned (--cpu) away from
 * the CPUs under test and run at a real-time priority (--prio) when the
 * buffers would otherwise overflow. Nothing is printed while recording.
 *
 * Losses are never silent: the module counts what it could not store, puts
 * LOST markers in the stream, and the summary prints both per CPU.
 *
 * How it stops without waiting on the workload (docs/hgtrace-abi.md, "Stopping"):
 * recording off (HGT_IOC_OFF: a flag the probes test, which waits for no
 * task), the last records drained and the file finished, the command ended
 * and reaped, and only then the probes detached (HGT_IOC_STOP; before ABI 1.4
 * it waited for the tracepoints' grace periods, which any task preempted
 * inside an RCU read-side section holds up).
 */

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <x86intrin.h>
#include "hg_child.h"
#include "hg_opts.h"
#include "hg_cpulist.h"
#include "hg_hgt_write.h"
#include "hgt_dev.h"
#include "hgtrace_cmds.h"

#define READ_BYTES	(1 << 20)

struct record_opts {
	const char *out;
	struct hg_rec_opts rec;	/* -d -i -e -b -m -r -C -c */
	struct hgt_filter filter;
	int filter_child;	/* add the command's pid to the filter */
	int quiet;
	int compress;
	char **cmd;
};

static volatile sig_atomic_t stop_requested, signals, first_signal;

static void on_signal(int sig)
{
	if (!signals)
		first_signal = sig;
	stop_requested = 1;
	signals++;
}

/*
 * The module as this recorder found it: put back on every way out, Ctrl-C
 * included, so that a recording leaves no trace in the module's settings.
 * A 1.0 module cannot say its pid filter; it is then left empty, as a
 * freshly loaded module has it.
 */
struct saved_state {
	int have;
	int changed;	/* this recorder changed the module's settings: put them back */
	struct hgt_config cfg;
	struct hg_cpuset cpus;
	struct hgt_filter filter;
};

static int save_state(struct hgt_dev *d, struct saved_state *s)
{
	if (hgt_dev_get_config(d, &s->cfg) || hgt_dev_get_cpus(d, &s->cpus.bits, &s->cpus.nbits) ||
	    hgt_dev_get_filter(d, &s->filter) < 0)
		return -1;
	s->have = 1;
	return 0;
}

/*
 * restore_state - not recording, with the settings, CPUs and filter found; -1
 * if any failed. The probes may stay attached (detach(), once the command has
 * ended).
 */
static int restore_state(struct hgt_dev *d, struct saved_state *s)
{
	int err = 0;

	if (!s->have)
		return 0;
	if (!s->changed) {	/* e.g. refused, the module belonging to another recorder */
		free(s->cpus.bits);
		s->have = 0;
		return 0;
	}
	if (hgt_dev_off(d)) {
		fprintf(stderr, "hgtrace: stopping: %s\n", strerror(errno));
		err = -1;
	}
	err |= hgt_dev_set_config(d, &s->cfg);
	err |= hgt_dev_set_cpus(d, s->cpus.bits, s->cpus.nbits);
	err |= hgt_dev_ioctl(d, HGT_IOC_FILTER, &s->filter, "putting the pid filter back");
	if (err)
		fprintf(stderr, "hgtrace: the module's settings could not all be put back as found\n");
	free(s->cpus.bits);
	s->have = 0;
	return err ? -1 : 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* the freeze (on_freeze, below): SIGUSR1 from the command, and where to send OFF */
static const struct hgt_dev *freeze_dev;
static volatile sig_atomic_t frozen;

/*
 * How long a command that got the same Ctrl-C has to end by itself before it
 * is sent SIGTERM (at once at a second Ctrl-C). hourglass blocks signals while
 * it writes its trace, and a SIGTERM after 5 s (then SIGKILL) cut it short in a
 * guest on a loaded host: its trace was never written. hgtrace-ftrace, which
 * runs hgtrace record in `hourglass record --ftrace`, waits longer (30 s).
 */
#define HGT_CHILD_GRACE_S	20

/*
 * command_ends_itself - after a Ctrl-C (SIGINT: the terminal sent the command
 * the same one) or a freeze (SIGUSR1 from the command itself, hourglass -b,
 * which then writes its trace and exits), whether the command ended within
 * HGT_CHILD_GRACE_S and before another signal came. A SIGTERM or SIGHUP
 * reached this recorder alone: no wait.
 */
static int command_ends_itself(pid_t child, int *status)
{
	return (first_signal == SIGINT || frozen) &&
	       hg_child_ends_itself(child, status, HGT_CHILD_GRACE_S * 1000, &signals);
}

/*
 * end_command - the recording is over (-d, Ctrl-C, an error), so is the
 * command: SIGTERM, then SIGKILL after 5 s or at the next Ctrl-C, so that
 * a command that does not die on SIGTERM cannot hold the recorder forever
 * (hackbench interrupted while it sets up its groups is one). The module is
 * already put back and the file finished by then.
 */
static void end_command(pid_t child, int *status, const char *name)
{
	double t = now_s();
	int seen = signals, killed = 0;

	kill(child, SIGTERM);
	for (;;) {
		pid_t r = waitpid(child, status, WNOHANG);

		if (r == child || (r < 0 && errno != EINTR))
			return;
		if (!killed && (now_s() - t > 5 || signals != seen)) {
			fprintf(stderr, "hgtrace: %s did not end on SIGTERM%s: killed\n", name,
				signals != seen ? "" : " within 5 s");
			kill(child, SIGKILL);
			killed = 1;
		}
		usleep(20000);
	}
}

/*
 * The signals that end sleep_until's wait are blocked but inside it
 * (wake_mask; hg_child.h): the command's end and the stop signals. SIGUSR1
 * (on_freeze) is blocked only across sleep_until's last check and its wait:
 * elsewhere, in a drain, it must stop the module at once. So the recorder
 * wakes only when it must drain, not every 100 ms: on the CPU it records,
 * such a wake-up is a gap of hourglass's that the recorder made (a timer off
 * the tick's phase, read as an interrupt: docs/lab.md).
 */
static sigset_t wake_mask;

static void wakes_block(sigset_t *saved)
{
	hg_child_wakes(saved);
	hg_stop_wakes(saved, &wake_mask);
	sigdelset(&wake_mask, SIGINT);
	sigdelset(&wake_mask, SIGTERM);
	sigdelset(&wake_mask, SIGHUP);
	sigdelset(&wake_mask, SIGUSR1);
}

/* earlier - is @a before @b? */
static int earlier(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/*
 * sleep_until - sleep to @next and return early when recording must end:
 * Ctrl-C, the command exited (its status in *status, and 1 returned) or the
 * -d deadline passed (@deadline, seconds on now_s()'s clock, 0 for none).
 * One wait (hg_wait_until with wake_mask), ended by a signal or the time: a
 * recording drained every 10 s still ends as soon as its command does.
 */
static int sleep_until(const struct timespec *next, double deadline, pid_t child, int *status)
{
	sigset_t usr1, was;
	int ended = 0;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	for (;;) {
		struct timespec now, until = *next;

		sigprocmask(SIG_BLOCK, &usr1, &was);
		if (stop_requested)
			break;
		if (child && waitpid(child, status, WNOHANG) == child) {
			ended = 1;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!earlier(&now, next))
			break;
		if (deadline) {	/* seconds on the same clock */
			struct timespec d = { .tv_sec = (time_t)deadline,
					      .tv_nsec = (long)((deadline - (double)(time_t)deadline) * 1e9) };

			if (!earlier(&now, &d))
				break;
			if (earlier(&d, &until))
				until = d;
		}
		hg_wait_until(&until, &wake_mask, NULL, 0);
		sigprocmask(SIG_SETMASK, &was, NULL);
	}
	sigprocmask(SIG_SETMASK, &was, NULL);
	return ended;
}

/*
 * on_freeze - SIGUSR1 from the command (hourglass -b): stop the module here,
 * in the handler, not at the next pass of the loop up to --interval later,
 * so that an overwriting buffer still holds what led to the trigger.
 */

static void on_freeze(int sig)
{
	(void)sig;
	if (freeze_dev && !frozen)
		hgt_dev_off(freeze_dev);
	frozen = 1;
	stop_requested = 1;
}

/*
 * detach - the probes detached, once the command has ended and been reaped:
 * with a module of ABI 1.3 this waits for the tracepoints' grace periods (on
 * 7.3 a normal RCU grace period), which a task preempted inside an RCU
 * read-side section holds up, so it comes after everything the recorded
 * workload could be doing; from 1.4 only the module's unload waits for them
 */
static int detach(struct hgt_dev *d, int quiet)
{
	double t = now_s();

	if (hgt_dev_ioctl(d, HGT_IOC_STOP, NULL, "detaching the probes"))
		return -1;
	if (!quiet && d->hello.abi_minor >= 3)
		fprintf(stderr, "hgtrace: probes detached in %.3f s\n", now_s() - t);
	return 0;
}

static void record_usage(FILE *f)
{
	fprintf(f,
"usage: hgtrace record [options] [-- command [args...]]\n"
"\n"
"Record the kernel's ground truth with hgtrace.ko into a file. Runs until the\n"
"command exits, for -d seconds, or until Ctrl-C, whichever comes first.\n"
"\n"
"  -o, --output FILE      output file (default hgtrace.hgt)\n"
"  -d, --duration TIME    stop after TIME (e.g. 10s, 500ms)\n"
"  -e, --events LIST      comma list of sched,irq,softirq,vectors,nmi,hrtimer,syscalls\n"
"                         or 'all' (default: all but syscalls); repeatable, as\n"
"                         trace-cmd's -e: -e sched -e irq records both\n"
"  -b, --buffer KB        ring buffer per CPU in KiB (default: keep the module's)\n"
"  -m, --mode MODE        stop (when full, drop new events; default) or overwrite\n"
"  -P, --pid PID[,PID]    record task events of these pids/tgids only (CPU events stay),\n"
"                         trace-cmd's -P\n"
"  -F, --follow           add the command's pid to the filter\n"
"  -c, --cpus LIST        record these CPUs only, e.g. 0,2-3 (default all)\n"
"  -i, --interval TIME    drain period (default 100ms)\n"
"  -C, --reader-cpu CPU   pin the draining thread to CPU\n"
"  -r, --prio N           run the draining thread SCHED_FIFO at priority N (trace-cmd's -r)\n"
"  -z, --compress         pack the file once the command has finished (hgtrace pack:\n"
"                         records as columns, deflated): about 8x smaller, nothing\n"
"                         spent on it while the command runs\n"
"  -q, --quiet            no summary\n"
"  -h, --help             this text\n"
"\n"
"The command finds this recorder's pid in HGTRACE_RECORD_PID: SIGUSR1 to it freezes\n"
"the recording at once (the module stops; what it holds is saved): hourglass -b does\n"
"so, and with -m overwrite the file then ends with the stretch before the trigger.\n"
"\n"
"Exit status (docs/exit-status.md): 0 recorded (ended by the command, -d, Ctrl-C\n"
"or a freeze: as trace-cmd record, Ctrl-C is a way to end), 1 bad usage, 2 could not\n"
"record (module, privileges, ABI, a file that cannot be written).\n"
"Lost events are counted per CPU in the summary and marked in the file.\n"
"(-p and -P changed: the pid filter is -P and the reader's priority -r, as in\n"
"trace-cmd; hourglass's -p is a thread's priority.)\n");
}

static int parse_pids(const char *s, struct hgt_filter *f)
{
	char *copy = strdup(s), *save = NULL, *tok;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long v = strtol(tok, &end, 10);

		if (*end || v <= 0 || v > 0x3fffffff || f->nr >= HGT_FILTER_MAX) {
			fprintf(stderr, "hgtrace: bad pid '%s' (positive numbers, at most %d)\n",
				tok, HGT_FILTER_MAX);
			free(copy);
			return -1;
		}
		f->pids[f->nr++] = (int32_t)v;
	}
	free(copy);
	return 0;
}

/* looks_like_option - "-x" or "--xyz" given where a value belongs ("-o --quiet") */
static int looks_like_option(const char *s)
{
	return s[0] == '-' && s[1] && !isdigit((unsigned char)s[1]);
}

static int parse_record_opts(int argc, char **argv, struct record_opts *o)
{
	static const struct option lo[] = {
		HG_REC_LONG_OPTS, { "output", required_argument, 0, 'o' },
		{ "pid", required_argument, 0, 'P' }, { "follow", no_argument, 0, 'F' },
		{ "quiet", no_argument, 0, 'q' }, { "compress", no_argument, 0, 'z' },
		{ "help", no_argument, 0, 'h' }, { 0 }
	};
	struct hg_err err;
	int c;

	memset(o, 0, sizeof(*o));
	o->out = "hgtrace.hgt";
	o->rec.interval = 0.1;
	o->rec.events = HGT_EV_DEFAULT;
	o->rec.reader_cpu = -1;
	o->rec.cpus_max = HGT_CPUS_MAX_BITS;	/* the module's CPU bitmap */
	optind = 1;
	opterr = 0;	/* our own messages, naming the option */
	while ((c = getopt_long(argc, argv, "+:o:" HG_REC_OPTS "p:FP:qzh", lo, NULL)) != -1) {
		/* only a value given as the next word: --output=--x says it meant it */
		if (c != ':' && c != '?' && optarg && optind >= 2 && optarg == argv[optind - 1] &&
		    looks_like_option(optarg)) {
			fprintf(stderr, "hgtrace: %s needs a value, but '%s' that follows it is an option%s\n",
				argv[optind - 2], optarg,
				c == 'o' ? " (for a file of that name write ./ before it)" : "");
			return -1;
		}
		switch (hg_rec_opt(&o->rec, c, optarg, &err)) {
		case 1:
			continue;
		case -1:
			fprintf(stderr, "hgtrace: %s\n", err.msg);
			return -1;
		}
		switch (c) {
		case 'o': o->out = optarg; break;
		case 'p':
			fprintf(stderr, "hgtrace: -p %s: the pid filter is -P (as trace-cmd record's) and the "
				"reader's priority -r; -p is hourglass's thread priority\n", optarg);
			return -1;
		case 'P':
			if (parse_pids(optarg, &o->filter))
				return -1;
			break;
		case 'F': o->filter_child = 1; break;
		case 'q': o->quiet = 1; break;
		case 'z': o->compress = 1; break;
		case 'h': record_usage(stdout); exit(HGT_EXIT_OK);
		case ':':
			fprintf(stderr, "hgtrace: %s needs a value\n", argv[optind - 1]);
			return -1;
		default:
			fprintf(stderr, "hgtrace: unknown option '%s' (hgtrace record --help)\n", argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc)
		o->cmd = &argv[optind];
	if (o->filter_child && !o->cmd) {
		fprintf(stderr, "hgtrace: --follow needs a command after --\n");
		return -1;
	}
	if (!o->cmd && !o->rec.duration)
		fprintf(stderr, "hgtrace: no command and no -d: recording until Ctrl-C\n");
	/* -P meant the reader's priority before: a filter is said aloud, never a surprise */
	if (o->filter.nr && !o->quiet) {
		unsigned int i;

		fprintf(stderr, "hgtrace: recording the task events of pid%s", o->filter.nr > 1 ? "s" : "");
		for (i = 0; i < o->filter.nr; i++)
			fprintf(stderr, " %d", o->filter.pids[i]);
		fprintf(stderr, "%s only (-P)\n", o->filter_child ? " and the command's" : "");
	}
	return 0;
}

/* build_meta - the provenance lines of the file header */
static char *build_meta(const struct record_opts *o, const struct hgt_dev *d,
			const struct hgt_config *cfg, const struct hg_cpuset *cpus,
			int argc, char **argv)
{
	struct utsname u;
	char *buf = NULL, host[256] = "";
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	time_t now = time(NULL);
	int i;

	uname(&u);
	gethostname(host, sizeof(host) - 1);
	/* readers refuse metadata that is not UTF-8 text: free text is made so */
	hgt_meta_sanitize(host);
	hgt_meta_sanitize(u.release);
	hgt_meta_sanitize(u.version);
	fprintf(m, "format: hgtrace %d\n", HGT_FILE_VERSION);
	fprintf(m, "abi: %u.%u\n", d->hello.abi_major, d->hello.abi_minor);
	fprintf(m, "tool_version: %s\n", HGT_TOOL_VERSION);
	fprintf(m, "kernel: %s %s %s\n", u.sysname, u.release, u.version);
	fprintf(m, "preempt_rt: %d\n", strstr(u.version, "PREEMPT_RT") ? 1 : 0);
	fprintf(m, "host: %s\n", host);
	fprintf(m, "tsc_khz: %u\n", d->hello.tsc_khz);
	fprintf(m, "nr_cpu_ids: %u\n", d->hello.nr_cpu_ids);
	fprintf(m, "mode: %s\n", cfg->mode == HGT_MODE_OVERWRITE ? "overwrite" : "stop");
	fprintf(m, "buffer_bytes_per_cpu: %llu\n", (unsigned long long)cfg->buffer_bytes);
	fprintf(m, "events: 0x%x\n", cfg->events);
	fprintf(m, "compression: none\n");	/* hgt_pack_file says so when it packs */
	/* hex, CPU 0 last: 256 bits, or as many words as the machine's CPUs need */
	fprintf(m, "cpumask: ");
	hg_cpuset_fprint_mask(m, cpus);
	fprintf(m, "\n");
	fprintf(m, "filter:");
	for (i = 0; i < (int)o->filter.nr; i++)
		fprintf(m, " %d", o->filter.pids[i]);
	fprintf(m, "\nstart_time: %lld\n", (long long)now);
	fprintf(m, "command_line:");
	for (i = 0; i < argc; i++) {
		char *arg = strdup(argv[i]);

		if (arg) {
			hgt_meta_sanitize(arg);
			fprintf(m, " %s", arg);
			free(arg);
		}
	}
	fprintf(m, "\n");
	fclose(m);
	return buf;
}

/*
 * drain - move what the module has into the file; returns bytes or -1
 *
 * While recording, one pass reads at most `limit` bytes: when events arrive
 * faster than we read (it happens under emulation with hackbench), an
 * unbounded loop would never get back to checking -d, Ctrl-C or the command.
 * The excess is then lost and counted, which is the honest outcome. After
 * STOP nothing is produced any more, so limit 0 means "until empty".
 */
static long drain(struct hgt_dev *d, struct hgt_writer *w, char *buf, long limit,
		  unsigned long long *records)
{
	long total = 0;

	while (!limit || total < limit) {
		ssize_t n = read(d->fd, buf, READ_BYTES);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "hgtrace: reading %s: %s\n", HGT_DEVICE, strerror(errno));
			return -1;
		}
		if (n == 0)
			break;
		if (hgt_writer_chunks(w, buf, n)) {
			fprintf(stderr, "hgtrace: %s\n", w->err.msg);
			return -1;
		}
		for (ssize_t off = 0; records && off + (ssize_t)sizeof(struct hgt_chunk) <= n;) {
			const struct hgt_chunk *c = (const void *)(buf + off);

			*records += c->nr_records;
			off += sizeof(*c) + c->nr_bytes;
		}
		total += n;
	}
	return total;
}

static void print_summary(struct hgt_dev *d, const struct hgt_writer *w, const char *path,
			  double secs)
{
	uint64_t tot_read = 0, tot_lost = 0;
	unsigned int cpu;

	fprintf(stderr, "hgtrace: %.3f s recorded into %s (%llu bytes)\n", secs, path,
		(unsigned long long)w->bytes);
	fprintf(stderr, "  cpu  produced      read  refused  overwritten\n");
	for (cpu = 0; cpu < d->hello.nr_cpu_ids; cpu++) {
		struct hgt_stats st;

		if (hgt_dev_stats(d, cpu, &st))
			continue;
		fprintf(stderr, "  %3u %9llu %9llu %8llu %12llu\n", cpu,
			(unsigned long long)st.s.produced, (unsigned long long)st.s.read,
			(unsigned long long)st.s.refused, (unsigned long long)st.s.overwritten);
		tot_read += st.s.read;
		tot_lost += st.s.refused + st.s.overwritten + st.s.reader_fault;
	}
	fprintf(stderr, "hgtrace: %llu events, %llu lost%s\n", (unsigned long long)tot_read,
		(unsigned long long)tot_lost,
		tot_lost ? " (see LOST markers; a bigger -b or a shorter -i helps)" : "");
}

/* write_trailer - the window, the final counters per CPU, then the END chunk */
static int write_trailer(struct hgt_dev *d, struct hgt_writer *w,
			 const struct hgt_file_window *win)
{
	struct hgt_cpu_stats *st = calloc(d->hello.nr_cpu_ids + 1, sizeof(*st));
	uint32_t *cpus = calloc(d->hello.nr_cpu_ids + 1, sizeof(*cpus));
	unsigned int cpu, n = 0;
	int ret = -1;

	if (!st || !cpus) {
		fprintf(stderr, "hgtrace: out of memory writing the trailer\n");
		goto out;
	}
	for (cpu = 0; cpu < d->hello.nr_cpu_ids; cpu++) {
		struct hgt_stats s;

		if (hgt_dev_stats(d, cpu, &s))
			continue;
		st[n] = s.s;
		cpus[n++] = cpu;
	}
	ret = hgt_writer_trailer(w, win, st, cpus, n) || hgt_writer_end(w) ? -1 : 0;
	if (ret)
		fprintf(stderr, "hgtrace: %s\n", w->err.msg);
out:
	free(st);
	free(cpus);
	return ret;
}

int hgt_cmd_record(int argc, char **argv)
{
	struct record_opts o;
	struct hgt_dev d;
	struct hgt_config cfg;
	struct hg_cpuset cpus = { 0 };	/* as the module has them */
	struct hgt_writer w;
	struct hgt_file_window win = { 0, 0 };
	struct saved_state saved = { 0 };
	struct timespec next;
	sigset_t saved_mask;
	int go_fd = -1, status = 0, ret = HGT_EXIT_ENV, child_done = 0, closed_ok = 0, started = 0;
	int ended = 0;		/* came to the end of the recording's steps, not by a goto */
	int attached = 0;	/* started, and not yet detached */
	pid_t child = 0;
	char *meta, *buf;
	double t0;
	long pass_limit;
	double t_drain, t_off;
	unsigned long long final_records = 0;

	if (parse_record_opts(argc, argv, &o))
		return HGT_EXIT_USAGE;
	/*
	 * Ctrl-C, kill and a closed terminal end the recording the same way
	 * wherever they land: before anything is changed, nothing is; later the
	 * file is finished (empty if recording had not started) and the module
	 * put back as found. No SA_RESTART: a sleep or a wait returns at once.
	 */
	hg_stop_catch(on_signal);
	/*
	 * SIGUSR1, the command's freeze (on_freeze), caught from here on: one
	 * that came before the recording starts ends it as a Ctrl-C would, not
	 * the recorder by the signal's default action with the module set up
	 */
	{
		struct sigaction fz = { .sa_handler = on_freeze };

		sigaction(SIGUSR1, &fz, NULL);
	}
	/*
	 * A write to a pipe nobody reads (a stderr whose reader has gone) must
	 * fail with EPIPE, not kill the recorder with the module recording;
	 * the command's release (hg_child_release) sees to its own pipe.
	 */
	signal(SIGPIPE, SIG_IGN);
	if (hgt_dev_open(&d))
		return HGT_EXIT_ENV;
	buf = malloc(READ_BYTES);
	if (!buf)
		return HGT_EXIT_ENV;

	/* configure while stopped; a running recording belongs to someone else */
	{
		struct hgt_stats st;
		pid_t owner;

		if (hgt_dev_stats(&d, 0, &st)) {
			fprintf(stderr, "hgtrace: reading the module's state: %s\n", strerror(errno));
			goto out;
		}
		owner = hgt_dev_owner(&d);
		if (owner > 0) {
			fprintf(stderr, "hgtrace: the module belongs to process %d, another recorder "
				"(/proc/hgtrace/status: owner); it is free once that one has finished\n",
				(int)owner);
			goto out;
		}
		if (st.state == HGT_STATE_RUNNING) {
			fprintf(stderr, "hgtrace: the module is already recording (a recorder that "
				"died?); 'hgtrace stop' ends it\n");
			goto out;
		}
	}
	if (save_state(&d, &saved))
		goto out;
	if (stop_requested) {
		fprintf(stderr, "hgtrace: interrupted before anything was changed; no file written\n");
		goto out;
	}
	if ((o.rec.events & ~d.hello.events_available)) {
		fprintf(stderr, "hgtrace: this kernel lacks tracepoints for events 0x%x; "
			"see /proc/hgtrace/status\n", o.rec.events & ~d.hello.events_available);
		goto out;
	}
	if (o.cmd) {
		/* what the command leaves behind if we end it is ours to end (hg_child_end_orphans) */
		if (hg_child_subreaper())
			fprintf(stderr, "hgtrace: cannot adopt the command's orphans (%s): if it is ended, "
				"what it started may keep running\n", strerror(errno));
		/* the command finds whom to send SIGUSR1 to freeze the recording (hourglass -b) */
		child = hg_child_start(o.cmd, &go_fd, "hgtrace", "HGTRACE_RECORD_PID");
		if (child < 0) {
			fprintf(stderr, "hgtrace: fork: %s\n", strerror(errno));
			goto out;
		}
		if (o.filter_child) {
			if (o.filter.nr >= HGT_FILTER_MAX) {
				fprintf(stderr, "hgtrace: too many pids for the filter\n");
				goto out_child;
			}
			o.filter.pids[o.filter.nr++] = child;
		}
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.buffer_bytes = (uint64_t)o.rec.buffer_kb * 1024;
	cfg.mode = o.rec.overwrite ? HGT_MODE_OVERWRITE : HGT_MODE_STOP;
	cfg.events = o.rec.events;
	if (hgt_dev_set_config(&d, &cfg))
		goto out_child;
	saved.changed = 1;
	if (hgt_dev_set_cpus(&d, o.rec.cpus.bits, o.rec.cpus.nbits) ||
	    hgt_dev_ioctl(&d, HGT_IOC_FILTER, &o.filter, "setting the pid filter") ||
	    hgt_dev_ioctl(&d, HGT_IOC_RESET, NULL, "resetting the buffers") ||
	    hgt_dev_get_config(&d, &cfg) || hgt_dev_get_cpus(&d, &cpus.bits, &cpus.nbits))
		goto out_child;

	meta = build_meta(&o, &d, &cfg, &cpus, argc, argv);
	if (hgt_writer_open(&w, o.out, HGT_FILE_VERSION, meta)) {
		fprintf(stderr, "hgtrace: %s\n", w.err.msg);
		free(meta);
		hgt_writer_close(&w);
		goto out_child;
	}
	free(meta);

	if (o.rec.reader_cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(o.rec.reader_cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "hgtrace: cannot pin the reader to CPU %d: %s\n",
				o.rec.reader_cpu, strerror(errno));
			goto out_file;
		}
	}
	if (o.rec.prio) {
		struct sched_param sp = { .sched_priority = o.rec.prio };

		if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
			fprintf(stderr, "hgtrace: cannot use SCHED_FIFO %d for the reader: %s\n",
				o.rec.prio, strerror(errno));
			goto out_file;
		}
	}
	/* interrupted while setting up: the file is finished with no events */
	if (!stop_requested) {
		if (hgt_dev_ioctl(&d, HGT_IOC_START, NULL, "starting the recording"))
			goto out_file;
		started = attached = 1;
		freeze_dev = &d;
	}
	win.start_tsc = __rdtsc();
	t0 = now_s();
	if (started && go_fd >= 0 && hg_child_release(&go_fd))
		fprintf(stderr, "hgtrace: could not release the command\n");

	/* one pass may take twice what all the buffers hold */
	pass_limit = (long)(2 * cfg.buffer_bytes * d.hello.nr_cpu_ids);
	wakes_block(&saved_mask);
	clock_gettime(CLOCK_MONOTONIC, &next);
	ret = HGT_EXIT_OK;
	while (started && !stop_requested) {
		long ns = (long)(o.rec.interval * 1e9);

		next.tv_nsec += ns % 1000000000L;
		next.tv_sec += ns / 1000000000L + next.tv_nsec / 1000000000L;
		next.tv_nsec %= 1000000000L;
		/* the command's end stops the recording at once: its last records are read after STOP */
		if (sleep_until(&next, o.rec.duration ? t0 + o.rec.duration : 0, child, &status)) {
			child_done = 1;
			break;
		}
		if (o.rec.duration && now_s() - t0 >= o.rec.duration)
			break;
		if (drain(&d, &w, buf, pass_limit, NULL) < 0) {
			ret = HGT_EXIT_ENV;
			break;
		}
		if (child && waitpid(child, &status, WNOHANG) == child) {
			child_done = 1;
			break;
		}
		if (o.rec.duration && now_s() - t0 >= o.rec.duration)
			break;
	}
	win.stop_tsc = __rdtsc();
	sigprocmask(SIG_SETMASK, &saved_mask, NULL);
	/*
	 * From here on a Ctrl-C changes nothing: the drain is finite, the file is
	 * finished. Recording off, the probes still attached: nothing here waits
	 * on the command, which may still be running (Ctrl-C, -d).
	 */
	t_off = now_s();
	if (hgt_dev_off(&d)) {
		fprintf(stderr, "hgtrace: stopping the recording: %s\n", strerror(errno));
		ret = HGT_EXIT_ENV;
	}
	t_off = now_s() - t_off;
	t_drain = now_s();
	if (drain(&d, &w, buf, 0, &final_records) < 0)
		ret = HGT_EXIT_ENV;
	t_drain = now_s() - t_drain;
	if (ret == HGT_EXIT_OK && write_trailer(&d, &w, &win))
		ret = HGT_EXIT_ENV;
	if (!o.quiet) {
		print_summary(&d, &w, o.out, now_s() - t0);
		/* how fast a full buffer empties: the reader's ceiling (bench/run.py reads it) */
		fprintf(stderr, "hgtrace: final drain: drained %llu records in %.6f s\n",
			final_records, t_drain);
		/* the stop's own cost, without the drain: HGT_IOC_OFF (1.3) or an old module's STOP */
		if (started)
			fprintf(stderr, "hgtrace: recording stopped in %.6f s\n", t_off);
	}
	ended = 1;
out_file:
	/* without the trailer (an error above) the file has no END: dump reads it as incomplete */
	if (hgt_writer_close(&w)) {
		if (ret == HGT_EXIT_OK)
			fprintf(stderr, "hgtrace: %s\n", w.err.msg);
		ret = HGT_EXIT_ENV;
	} else {
		closed_ok = 1;
	}
	/* how the recording ended, said once the file is closed: a full disk shows only there */
	if (ended && ret != HGT_EXIT_OK && started)
		fprintf(stderr, "hgtrace: %s is unfinished (no END): hgtrace dump reads it as incomplete\n", o.out);
	else if (ended && !started && stop_requested)
		fprintf(stderr, "hgtrace: interrupted before the recording started; %s holds no events\n",
			o.out);
	else if (ended && frozen)
		fprintf(stderr, "hgtrace: frozen by SIGUSR1 from the command (hourglass -b): the file ends "
			"where it was asked to\n");
	else if (ended && stop_requested)
		fprintf(stderr, "hgtrace: interrupted; the file is complete up to the interruption\n");
out_child:
	if (restore_state(&d, &saved))
		ret = HGT_EXIT_ENV;
	if (child > 0 && !child_done) {
		if (go_fd >= 0) {
			close(go_fd);	/* the child exits 127 without running anything */
			go_fd = -1;
		}
		if (!(stop_requested && command_ends_itself(child, &status))) {
			int left;

			end_command(child, &status, o.cmd[0]);
			left = hg_child_end_orphans(5000);
			if (left)
				fprintf(stderr, "hgtrace: ended %d process%s %s left behind\n", left,
					left == 1 ? "" : "es", o.cmd[0]);
		}
	}
	/* the command ended and reaped: now the probes can go */
	if (attached && detach(&d, o.quiet))
		ret = HGT_EXIT_ENV;
	attached = 0;
	/* said even with -q: a failed command makes the recording suspect (one never released: no) */
	if (child > 0 && started && WIFEXITED(status) && WEXITSTATUS(status))
		fprintf(stderr, "hgtrace: the command exited with status %d\n", WEXITSTATUS(status));
	/* packed once the command is over, so that packing does not disturb it; on
	 * failure the plain file stays, complete */
	if (o.compress && closed_ok) {
		if (hgt_pack_file(o.out, o.out, 9) < 0) {
			fprintf(stderr, "hgtrace: %s left unpacked\n", o.out);
			ret = HGT_EXIT_ENV;
		} else if (!o.quiet) {
			struct stat st;

			if (!stat(o.out, &st))
				fprintf(stderr, "hgtrace: packed %s: %lld bytes\n", o.out, (long long)st.st_size);
		}
	}
out:
	restore_state(&d, &saved);
	if (attached)
		detach(&d, 1);
	if (go_fd >= 0)
		close(go_fd);
	free(cpus.bits);
	hg_cpuset_free(&o.rec.cpus);
	free(buf);
	freeze_dev = NULL;	/* a late SIGUSR1 must not reach a closed or reused fd */
	hgt_dev_close(&d);
	return ret;
}

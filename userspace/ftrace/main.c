// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - hgtrace-ftrace: record the kernel's ground truth through ftrace,
 * without hgtrace.ko, into the same .hgt file `hgtrace record` writes.
 *
 *   hgtrace-ftrace record [options] [-- command [args...]]
 *   hgtrace record --ftrace [options] [-- command ...]     (the same, through hgtrace)
 *
 * The options are hgtrace record's, with what ftrace cannot do refused by
 * name. The signal handlers go in before anything else, so that a signal at
 * any point ends with the machine as it was (record.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hg_child.h"
#include "hg_cpulist.h"
#include "hg_opts.h"
#include "hgtrace.h"
#include "ftrace.h"

volatile sig_atomic_t ft_stop;
volatile sig_atomic_t ft_signal;
volatile sig_atomic_t ft_signals;

static void on_signal(int sig)
{
	ft_stop = 1;
	ft_signal = sig;
	ft_signals++;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: hgtrace-ftrace record [options] [-- command [args...]]\n"
"       hgtrace record --ftrace [options] [-- command [args...]]\n"
"\n"
"Record the kernel's ground truth through ftrace (no module needed) into a .hgt\n"
"file that hgtrace dump and hourglass report read as they read the module's.\n"
"Runs until the command exits, for -d seconds, or until Ctrl-C. Uses a tracefs\n"
"instance of its own (" FT_INSTANCE_PREFIX "PID) with the x86-tsc clock, and removes it\n"
"on the way out: the top-level buffer and any other tracing stay untouched.\n"
"\n"
"  -o, --output FILE      output file (default hgtrace.hgt)\n"
"  -d, --duration TIME    stop after TIME (e.g. 10s, 500ms)\n"
"  -e, --events LIST      comma list of sched,irq,softirq,vectors,nmi,hrtimer,syscalls\n"
"                         or 'all' (default: all but syscalls)\n"
"  -b, --buffer KB        ring buffer per CPU in KiB (default 2048)\n"
"  -m, --mode MODE        overwrite (default: the kernel marks where events were lost)\n"
"                         or stop (when full, new events are dropped)\n"
"  -c, --cpus LIST        record these CPUs only, e.g. 0,2-3 (default all)\n"
"  -i, --interval TIME    how often the buffers are looked at (default 100ms); a\n"
"                         buffer bigger than 2 MiB with room is looked at less\n"
"                         often, in proportion to its room, at most 1 s apart;\n"
"                         when the kernel wakes the reader (--drain-at), up to\n"
"                         10 s apart unless a buffer fills fast\n"
"      --drain-at PERCENT read a CPU's buffer during the run once it is this full\n"
"                         (the kernel wakes the reader then, as trace-cmd's at\n"
"                         buffer_percent), or would be by the look after next at\n"
"                         its pace (default 50; 0: at every look, never woken);\n"
"                         the rest is read when the run is over\n"
"  -C, --reader-cpu CPU   pin the draining thread to CPU\n"
"  -r, --prio N           run the draining thread SCHED_FIFO at priority N\n"
"  -z, --compress         pack the file once the command has finished\n"
"  -q, --quiet            no summary\n"
"      --reader KIND      pages (default: read while recording, convert after),\n"
"                         live (convert at every drain) or iterate\n"
"                         (tracefs_iterate_raw_events at every drain): for benchmarks\n"
"      --spool-max MB     convert while recording once this much is held (default:\n"
"                         a quarter of the available memory, at most 512)\n"
"  -h, --help             this text\n"
"\n"
"Not available through ftrace: -P/--pid and -F/--follow (the events carry no thread\n"
"group to filter on; record everything and let the analysis select).\n"
"\n"
"Exit status: 0 recorded, 1 bad usage, 2 could not record (tracefs missing or not\n"
"permitted, no x86-tsc clock), 130 a signal came before recording started.\n"
"Lost events are counted per CPU in the summary and marked in the file.\n");
}

int ft_cpu_wanted(const struct ft_opts *o, int cpu)
{
	if (cpu < 0)
		return 0;
	return !o->rec.cpus.nbits || hg_cpuset_has(&o->rec.cpus, (unsigned)cpu);
}

/* default_spool_max - a quarter of MemAvailable, at most 512 MiB, at least 16 MiB */
static size_t default_spool_max(void)
{
	unsigned long long kb = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");
	size_t max = 512ull << 20;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	if (kb && kb * 1024 / 4 < max)
		max = kb * 1024 / 4;
	return max < (16u << 20) ? 16u << 20 : max;
}

static int parse(int argc, char **argv, struct ft_opts *o)
{
	enum { OPT_READER = 256, OPT_SPOOL, OPT_FTRACE, OPT_DRAIN_AT };
	static const struct option lo[] = {
		HG_REC_LONG_OPTS, { "output", required_argument, 0, 'o' },
		{ "pid", required_argument, 0, 'P' }, { "follow", no_argument, 0, 'F' },
		{ "quiet", no_argument, 0, 'q' }, { "compress", no_argument, 0, 'z' },
		{ "reader", required_argument, 0, OPT_READER },
		{ "spool-max", required_argument, 0, OPT_SPOOL }, { "ftrace", no_argument, 0, OPT_FTRACE },
		{ "drain-at", required_argument, 0, OPT_DRAIN_AT }, { "help", no_argument, 0, 'h' }, { 0 }
	};
	struct hg_err err;
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->out = "hgtrace.hgt";
	o->rec.interval = 0.1;
	o->rec.buffer_kb = FT_BUFFER_KB_DEFAULT;
	o->rec.overwrite = 1;
	o->rec.events = HGT_EV_DEFAULT;
	o->rec.reader_cpu = -1;
	o->spool_max = default_spool_max();
	o->drain_at = 50;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:" HG_REC_OPTS "p:P:Fqzh", lo, NULL)) != -1) {
		switch (hg_rec_opt(&o->rec, c, optarg, &err)) {
		case 1:
			continue;
		case -1:
			fprintf(stderr, "hgtrace-ftrace: %s\n", err.msg);
			return -1;
		}
		switch (c) {
		case 'o': o->out = optarg; break;
		case 'p':
		case 'P':
		case 'F':
			fprintf(stderr, "hgtrace-ftrace: -%c is not available through ftrace: its events carry "
				"no thread group to filter on; record everything (the CPU events are kept anyway)\n", c);
			return -1;
		case 'q': o->quiet = 1; break;
		case 'z': o->compress = 1; break;
		case OPT_READER:
			if (!strcmp(optarg, "pages"))
				o->reader = FT_READ_PAGES;
			else if (!strcmp(optarg, "live"))
				o->reader = FT_READ_LIVE;
			else if (!strcmp(optarg, "iterate"))
				o->reader = FT_READ_ITERATE;
			else {
				fprintf(stderr, "hgtrace-ftrace: bad reader '%s' (pages, live or iterate)\n", optarg);
				return -1;
			}
			break;
		case OPT_SPOOL: {
			unsigned long mb = strtoul(optarg, &end, 10);

			if (*end || mb < 1 || mb > (1ul << 20)) {
				fprintf(stderr, "hgtrace-ftrace: bad --spool-max '%s' (MiB, 1 or more)\n", optarg);
				return -1;
			}
			o->spool_max = (size_t)mb << 20;
			break;
		}
		case OPT_DRAIN_AT: {
			long pc = strtol(optarg, &end, 10);

			if (end == optarg || (*end && strcmp(end, "%")) || pc < 0 || pc > 100) {
				fprintf(stderr, "hgtrace-ftrace: bad --drain-at '%s' (a percent, 0 to 100)\n", optarg);
				return -1;
			}
			o->drain_at = (int)pc;
			break;
		}
		case OPT_FTRACE: break;		/* from `hgtrace record --ftrace` */
		case 'h': usage(stdout); exit(FT_EXIT_OK);
		default: usage(stderr); return -1;
		}
	}
	if (optind < argc)
		o->cmd = &argv[optind];
	if (!o->cmd && !o->rec.duration)
		fprintf(stderr, "hgtrace-ftrace: no command and no -d: recording until Ctrl-C\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct ft_opts o;
	int rc;

	hg_stop_catch(on_signal);
	if (argc >= 2 && !strcmp(argv[1], "--version")) {
		printf("hgtrace-ftrace %s (records of ABI %d.%d, libtracefs %s)\n", HG_FTRACE_VERSION,
		       HGT_ABI_MAJOR, HGT_ABI_MINOR, HG_LIBTRACEFS_BUILT);
		return FT_EXIT_OK;
	}
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return FT_EXIT_OK;
	}
	if (argc < 2 || strcmp(argv[1], "record")) {
		usage(stderr);
		return FT_EXIT_USAGE;
	}
	if (parse(argc - 1, argv + 1, &o))
		return FT_EXIT_USAGE;
	o.argc = argc;
	o.argv = argv;
	rc = ft_record(&o);
	hg_cpuset_free(&o.rec.cpus);
	return rc;
}

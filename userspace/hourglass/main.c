// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - hourglass's front end: parse, calibrate, start all threads
 * together, wait, then write every output.
 *
 * A command line that starts with an option is the paper's plain run; a
 * first word that is not an option names a subcommand (the merger's record,
 * report and export will live here).
 */
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "stats.h"
#include "timers.h"

#define HG_START_DELAY_NS 50000000ULL	/* threads start together, 50 ms after go */
#define HG_STACK (256 * 1024)

/*
 * hg_warn - a warning: on stderr at once (a fallback or a doubtful setting is
 * worth knowing before a long run, whatever -o says), and kept for the text,
 * the JSON and the trace. Beyond the room kept, the last one says how many more.
 */
void hg_warn(struct hg_run *run, const char *fmt, ...)
{
	const int room = (int)(sizeof(run->warn) / sizeof(run->warn[0]));
	char msg[sizeof(run->warn[0])];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "hourglass: warning: %s\n", msg);
	if (run->nwarn < room - 1)
		memcpy(run->warn[run->nwarn++], msg, sizeof(msg));
	else
		snprintf(run->warn[room - 1], sizeof(msg), "%d more warnings: see hourglass's standard error",
			 ++run->nwarn - (room - 1));
}

/*
 * read_small - the first line of a small file into @buf (its newline dropped), 0 when
 * it can be read. debugfs's sched files: root only, and debugfs must be mounted.
 */
static int read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int ok = f && fgets(buf, (int)len, f) != NULL;

	if (f)
		fclose(f);
	if (!ok) {
		buf[0] = '\0';
		return -1;
	}
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/*
 * probe_sched - the scheduler's features and base slice, where the kernel shows them
 * (debugfs: sched/features since 5.13, sched_features before; base_slice_ns since 6.6).
 * The merger reads them: with HRTICK the scheduler ends a slice at a timer of its own,
 * and the tick is not the CPU's only timer (docs/merge.md, rule 2b).
 */
static void probe_sched(struct hg_run *run)
{
	char buf[64];

	if (read_small("/sys/kernel/debug/sched/features", run->sched_features, sizeof(run->sched_features)))
		read_small("/sys/kernel/debug/sched_features", run->sched_features, sizeof(run->sched_features));
	run->sched_base_slice_ns = -1;
	if (!read_small("/sys/kernel/debug/sched/base_slice_ns", buf, sizeof(buf))) {
		char *end;
		long long v = strtoll(buf, &end, 10);

		if (end != buf && v > 0)
			run->sched_base_slice_ns = v;
	}
}

static void probe_system(struct hg_run *run)
{
	struct utsname u;
	char buf[8] = "";
	FILE *f;

	uname(&u);
	snprintf(run->kernel, sizeof(run->kernel), "%s %s", u.release, u.version);
	run->preempt_rt = strstr(u.version, "PREEMPT_RT") != NULL;
	f = fopen("/sys/kernel/realtime", "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f) && buf[0] == '1')
			run->preempt_rt = true;
		fclose(f);
	}
	run->cpus_online = (int)sysconf(_SC_NPROCESSORS_ONLN);
	probe_sched(run);
	hg_tsc_probe(&run->tsc);
	if (!run->tsc.invariant && !(run->tsc.constant && run->tsc.nonstop))
		hg_warn(run, "the TSC is not invariant (no constant_tsc/nonstop_tsc, CPUID 80000007 bit 8 clear): its rate may change with frequency scaling or stop in deep idle, so times may be wrong");
	if (strcmp(run->tsc.clocksource, "tsc"))
		hg_warn(run, "the kernel's clocksource is '%s', not tsc: the kernel does not trust the TSC here (virtual machine, or unsynchronised across CPUs)",
			run->tsc.clocksource);
}

/* lock_memory - mlockall, or prefault only when --fallback allows it. */
static int lock_memory(struct hg_run *run)
{
	if (!mlockall(MCL_CURRENT | MCL_FUTURE)) {
		run->mlocked = true;
		return 0;
	}
	if (!run->cfg->fallback) {
		fprintf(stderr, "hourglass: mlockall: %s (needs root, CAP_IPC_LOCK or a 'ulimit -l' of %llu KB or more; --fallback runs with prefaulted memory only)\n",
			strerror(errno),
			(unsigned long long)(run->pool_cap * sizeof(struct hgl_rec) / 1024 +
					     (uint64_t)run->cfg->nthreads * HG_STACK / 1024 + 16384));
		return -1;
	}
	/* the paper's hack: touch every page so it is mapped before timing */
	memset(run->pool, 0, run->pool_cap * sizeof(struct hgl_rec));
	hg_warn(run, "mlockall refused (%s): ran with prefaulted memory, page faults possible under memory pressure",
		strerror(errno));
	return 0;
}

/*
 * warn_timer_slack - a LAT thread on NATIVE at a time-sharing priority: the
 * kernel may fire each of its wake-ups up to the timer slack late (real-time
 * and deadline threads have none), and the figures measure that, not the
 * kernel's latency. The paper's default stays; the user is told.
 */
static void warn_timer_slack(struct hg_run *run)
{
	long slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	int k, first = -1, n = 0;

	for (k = 0; k < run->cfg->nthreads; k++) {
		const struct hg_thread *t = &run->th[k];
		int pol = t->cfg->sched.policy;
		bool rt = !t->fallback[0] && (pol == SCHED_FIFO || pol == SCHED_RR || pol == SCHED_DEADLINE);

		if (t->cfg->workload == HG_W_LAT && t->cfg->timer == HG_T_NATIVE && !rt) {
			if (first < 0)
				first = k;
			n++;
		}
	}
	if (first < 0 || slack <= 1)
		return;
	hg_warn(run, "thread %d%s: -w LAT on the NATIVE timer (the default) at a time-sharing priority: each wake-up may come up to the timer slack (%.0f us here) late, and the lateness measured includes it; -i HR sleeps to an absolute time with 1 ns of slack (or give the thread RTLOW..RTHIGH, which have none)",
		first, n > 1 ? " and others" : "", slack / 1e3);
}

/* check_outputs - fail before the run, not after it, on an unwritable path. */
static int check_outputs(struct hg_config *cfg, FILE **text, FILE **json)
{
	*text = stdout;
	*json = NULL;
	if (cfg->text_path && !(*text = fopen(cfg->text_path, "w"))) {
		fprintf(stderr, "hourglass: -o %s: %s\n", cfg->text_path, strerror(errno));
		return -1;
	}
	if (cfg->json_path && !(*json = fopen(cfg->json_path, "w"))) {
		fprintf(stderr, "hourglass: --json %s: %s\n", cfg->json_path, strerror(errno));
		return -1;
	}
	if (cfg->trace_path) {
		char *d = strdup(cfg->trace_path);

		if (!d || access(dirname(d), W_OK)) {
			fprintf(stderr, "hourglass: --trace %s: directory not writable: %s\n",
				cfg->trace_path, strerror(errno));
			free(d);
			return -1;
		}
		free(d);
	}
	return 0;
}

static int calibrate(struct hg_run *run)
{
	uint64_t over;

	run->hz = hg_tsc_calibrate(100, &run->cal0, &run->cal1);
	if (!(run->hz > 0)) {
		fprintf(stderr, "hourglass: cannot calibrate the TSC: it did not advance against CLOCK_MONOTONIC_RAW over 100 ms\n");
		return -1;
	}
	run->loop_cycles = hg_measure_loop(&over);
	run->syscall_cycles = hg_measure_syscall();
	if (run->cfg->gap_override_ns >= 0)
		run->gap_cycles = hg_ns_to_cycles(run, (uint64_t)run->cfg->gap_override_ns);
	else
		run->gap_cycles = (uint64_t)(2 * run->loop_cycles);
	if (run->gap_cycles <= (uint64_t)run->loop_cycles)
		hg_warn(run, "GAP (%llu cycles) is not above the loop time (%.0f cycles): every iteration may count as a gap",
			(unsigned long long)run->gap_cycles, run->loop_cycles);
	return 0;
}

/* start_threads - create every thread; they set themselves up and wait. */
static int start_threads(struct hg_run *run)
{
	struct hg_config *cfg = run->cfg;
	pthread_attr_t attr;
	int k, e;

	pthread_barrier_init(&run->ready, NULL, (unsigned int)cfg->nthreads + 1);
	pthread_barrier_init(&run->go, NULL, (unsigned int)cfg->nthreads + 1);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, HG_STACK);
	run->main_thread = pthread_self();
	for (k = 0; k < cfg->nthreads; k++) {
		run->th[k].idx = k;
		run->th[k].cfg = &cfg->thread[k];
		run->th[k].run = run;
		e = pthread_create(&run->th[k].pt, &attr, hg_thread_main, &run->th[k]);
		if (e) {
			fprintf(stderr, "hourglass: cannot create thread %d: %s\n", k, strerror(e));
			exit(HG_EXIT_ENV);	/* the barrier would wait forever */
		}
	}
	pthread_attr_destroy(&attr);
	return 0;
}

/*
 * run_workload - start the threads, start them together, wait for them.
 * @bad: an exit code already due (mlockall refused): the threads still set
 * themselves up so that every missing privilege is named at once.
 */
static int run_workload(struct hg_run *run, int bad)
{
	struct hg_config *cfg = run->cfg;
	struct hg_tsc_pair now;
	struct timespec zero = { 0 };
	sigset_t early;
	int k, sig;

	start_threads(run);
	pthread_barrier_wait(&run->ready);
	for (k = 0; k < cfg->nthreads; k++) {
		if (run->th[k].err_exit) {
			fprintf(stderr, "hourglass: %s\n", run->th[k].err);
			bad = bad > run->th[k].err_exit ? bad : run->th[k].err_exit;
		}
		if (run->th[k].fallback[0])
			hg_warn(run, "thread %d: %s", k, run->th[k].fallback);
	}
	if (!bad)
		warn_timer_slack(run);
	if (bad)
		atomic_store(&run->abort_run, 1);
	/* Ctrl-C while setting up: the threads stop before they start */
	sigemptyset(&early);
	sigaddset(&early, SIGINT);
	sigaddset(&early, SIGTERM);
	sigaddset(&early, SIGHUP);
	if (!bad && (sig = sigtimedwait(&early, NULL, &zero)) > 0) {
		hg_request_stop(run, sig);
		fprintf(stderr, "hourglass: interrupted before the run started: nothing measured\n");
	}
	/* the run's zero: a moment shortly ahead, on both clocks */
	hg_tsc_pair(CLOCK_MONOTONIC, &now);
	run->t0_mono = now.ns + HG_START_DELAY_NS;
	run->t0_tsc = now.tsc + hg_ns_to_cycles(run, HG_START_DELAY_NS);
	run->end_tsc = run->t0_tsc + hg_ns_to_cycles(run, cfg->duration_ns);
	run->start_wall_ns = hg_clock_ns(CLOCK_REALTIME) + HG_START_DELAY_NS;
	pthread_barrier_wait(&run->go);
	if (bad) {
		for (k = 0; k < cfg->nthreads; k++)
			pthread_join(run->th[k].pt, NULL);
		return bad;
	}
	hg_monitor(run);
	for (k = 0; k < cfg->nthreads; k++) {
		if (run->th[k].err_exit) {
			fprintf(stderr, "hourglass: %s\n", run->th[k].err);
			bad = run->th[k].err_exit;
		}
	}
	return bad;
}

/* say_trip - the sample that passed -b, on stderr: the run's main finding */
static void say_trip(struct hg_run *run)
{
	const struct hg_trip *tr = &run->trip;

	fprintf(stderr, "hourglass: -b %.3f us passed: thread %d %s %.3f us at %.6f ms (CPU %u): the run stopped there%s\n",
		run->cfg->break_ns / 1e3, tr->thread, tr->kind == HG_TRIP_GAP ? "lost the CPU for" : "woke up late by",
		tr->value_ns / 1e3, (double)(int64_t)(tr->t0 - run->t0_tsc) * 1e3 / run->hz, tr->cpu,
		run->recorder_pid > 0 ? "; hgtrace record was told to freeze the kernel's recording" : "");
}

static int finish(struct hg_run *run, FILE *text, FILE *json)
{
	struct hg_config *cfg = run->cfg;
	struct hg_stats st;
	uint64_t dropped = 0;
	int k, rc = HG_EXIT_OK;

	/*
	 * The rate over the whole run, a check of the run's rate only: the run's
	 * durations were made with the rate measured before it, and reporting them
	 * at another would make them contradict the options that asked for them
	 */
	hg_tsc_pair(CLOCK_MONOTONIC_RAW, &run->cal_end);
	run->hz_over_run = hg_tsc_fit_hz(&run->cal0, &run->cal_end);
	if (run->hz_over_run > 0 && (run->hz_over_run / run->hz > 1.001 || run->hz_over_run / run->hz < 0.999))
		hg_warn(run, "the TSC ran at %.3f MHz over the run but %.3f MHz before it: not a constant-rate TSC",
			run->hz_over_run / 1e6, run->hz / 1e6);
	if (hg_stats_compute(run, &st)) {
		fprintf(stderr, "hourglass: out of memory while summarising the run\n");
		return HG_EXIT_ENV;
	}
	for (k = 0; k < cfg->nthreads; k++)
		dropped += run->th[k].dropped;
	hg_write_text(run, &st, text);
	if (fflush(text) || ferror(text)) {
		fprintf(stderr, "hourglass: writing the text output%s%s: %s\n", cfg->text_path ? " to " : "",
			cfg->text_path ? cfg->text_path : "", strerror(errno));
		rc = HG_EXIT_ENV;
	}
	if (json) {
		hg_write_json(run, &st, json);
		if (fclose(json)) {
			fprintf(stderr, "hourglass: --json %s: %s\n", cfg->json_path, strerror(errno));
			rc = HG_EXIT_ENV;
		}
	}
	if (cfg->trace_path && hg_write_trace(run, &st, cfg->trace_path)) {
		fprintf(stderr, "hourglass: --trace %s: %s\n", cfg->trace_path, strerror(errno));
		rc = HG_EXIT_ENV;
	}
	if (dropped)
		fprintf(stderr, "hourglass: the trace buffer filled: %llu records not kept; output is incomplete (raise -e, now %llu)\n",
			(unsigned long long)dropped, (unsigned long long)cfg->max_records);
	if (run->trip.kind)
		say_trip(run);
	if (run->stop_signal)
		fprintf(stderr, "hourglass: interrupted by %s at %.3f s of %.3f s: the output holds what was measured until then, marked incomplete\n",
			run->stop_signal == SIGINT ? "Ctrl-C (SIGINT)" : run->stop_signal == SIGTERM ? "SIGTERM" : "SIGHUP",
			hg_run_ns(run) / 1e9, cfg->duration_ns / 1e9);
	hg_stats_free(run, &st);
	/* the most telling first: an output lost, then how the run ended */
	if (rc)
		return rc;
	if (run->stop_signal)
		return HG_EXIT_INTERRUPTED;
	if (run->trip.kind)
		return HG_EXIT_BREAK;
	return dropped ? HG_EXIT_INCOMPLETE : HG_EXIT_OK;
}

static int plain_run(int argc, char **argv)
{
	static struct hg_config cfg;
	struct hg_run run = { 0 };
	FILE *text, *json;
	sigset_t sigs;
	int rc;

	if (hg_parse_options(&cfg, argc, argv))
		return HG_EXIT_USAGE;
	if (cfg.dry_run) {
		hg_dry_run(&cfg, stdout);
		return HG_EXIT_OK;
	}
	/* from here, Ctrl-C waits for the monitor: what is measured is never lost */
	hg_signals_setup();
	run.cfg = &cfg;
	run.dma_fd = run.marker_fd = run.dma_held_us = -1;
	if (check_outputs(&cfg, &text, &json))
		return HG_EXIT_ENV;
	probe_system(&run);
	/* POSIX timers signal one thread; nobody else may take the signal */
	sigemptyset(&sigs);
	sigaddset(&sigs, HG_TIMER_SIGNAL);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	run.pool_cap = cfg.max_records;
	run.pool = calloc(run.pool_cap, sizeof(struct hgl_rec));
	run.th = calloc((size_t)cfg.nthreads, sizeof(*run.th));
	if (!run.pool || !run.th) {
		fprintf(stderr, "hourglass: no memory for %llu records (-e)\n",
			(unsigned long long)run.pool_cap);
		return HG_EXIT_ENV;
	}
	rc = lock_memory(&run) ? HG_EXIT_ENV : HG_EXIT_OK;
	if (calibrate(&run))
		return HG_EXIT_ENV;
	if (cfg.break_ns)
		run.break_cycles = hg_ns_to_cycles(&run, cfg.break_ns);
	/* even after a refusal: every missing privilege is named at once */
	if (hg_settings_open(&run))
		rc = HG_EXIT_ENV;
	rc = run_workload(&run, rc);
	hg_settings_close(&run);
	if (rc)
		return rc;
	/* Ctrl-C stays blocked while writing: a second one must not lose the first's data */
	return finish(&run, text, json);
}

/*
 * python_dir - where the hgtools package is: $HG_TOOLS when set; else the directory
 * compiled in by `make install` (HG_PYTHONDIR); else, in the build tree, the tools/
 * beside the build/ that holds this binary (@exe).
 */
/*
 * python_bin - the interpreter: $HG_PYTHON when set; else the system's
 * /usr/bin/python3, which sees the distribution's packages the charts need
 * (python3-matplotlib), whatever python3 comes first in PATH (pyenv, a venv);
 * else python3 from PATH.
 */
static const char *python_bin(void)
{
	const char *env = getenv("HG_PYTHON");

	if (env && *env)
		return env;
	return access("/usr/bin/python3", X_OK) ? "python3" : "/usr/bin/python3";
}

static int python_dir(const char *exe, char *dir, size_t size)
{
	const char *env = getenv("HG_TOOLS");
	char copy[4096];

	if (env)
		return snprintf(dir, size, "%s", env) >= (int)size ? -1 : 0;
#ifdef HG_PYTHONDIR
	(void)exe;
	(void)copy;
	return snprintf(dir, size, "%s", HG_PYTHONDIR) >= (int)size ? -1 : 0;
#else
	snprintf(copy, sizeof(copy), "%s", exe);
	return snprintf(dir, size, "%s/../tools", dirname(copy)) >= (int)size ? -1 : 0;
#endif
}

/*
 * run_tool - record, report and export are the Python package hgtools: run it with
 * this binary's path in HG_BIN, so that record starts this same hourglass.
 *
 * record needs nothing beyond the standard library, and its interpreter's start-up is
 * most of what `hourglass record --ftrace-only` adds to a run (docs/hgtrace-ftrace.md,
 * FIGURES): it runs isolated and without the site (-I -S), our directory appended to
 * the path after the standard library's, as `python3 -I -S -c CODE DIR record ARGS`.
 * The site imports and runs every .pth file of the system's packages (matplotlib's,
 * setuptools'): 0.35-0.45 s in the 6.1 guest under emulation, half of the interpreter's
 * own start. A directory before the standard library's (PYTHONPATH, and the current
 * one that -m puts first) costs a stat per standard module imported, over the guest's
 * 9p root: 0.2 s in the 7.3 guest; and -m's runpy another 0.1 s. report and export keep
 * everything (-m, PYTHONPATH, the site): the HTML page's charts import matplotlib.
 */
static int run_tool(const char *cmd, int argc, char **argv)
{
	char exe[4096], dir[4096], pkg[4096 + 16], path[8192], venv_py[4096 + 32], **args;
	const char *old = getenv("PYTHONPATH"), *py;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int i, a = 0;

	if (n <= 0) {
		perror("hourglass: /proc/self/exe");
		return HG_EXIT_ENV;
	}
	exe[n] = 0;
	if (python_dir(exe, dir, sizeof(dir))) {
		fprintf(stderr, "hourglass %s: the Python package's path is too long\n", cmd);
		return HG_EXIT_ENV;
	}
	snprintf(pkg, sizeof(pkg), "%s/hgtools", dir);
	if (access(pkg, R_OK | X_OK)) {
		fprintf(stderr, "hourglass %s: no Python package at %s (%s): run make install, or this binary from its build tree\n",
			cmd, pkg, strerror(errno));
		return HG_EXIT_ENV;
	}
	/* ours first; what the user had stays reachable (matplotlib in a place of theirs) */
	if (old && *old)
		snprintf(path, sizeof(path), "%s:%s", dir, old);
	else
		snprintf(path, sizeof(path), "%s", dir);
	setenv("HG_BIN", exe, 1);
	setenv("PYTHONPATH", path, 1);
	args = calloc((size_t)argc + 8, sizeof(*args));
	if (!args)
		return HG_EXIT_ENV;
	py = python_bin();
	/*
	 * results needs pyarrow and duckdb, learn --model scikit-learn 1.9 (Debian 12 has 1.2),
	 * which Debian 12 does not package: from a build tree, the virtual environment make set
	 * up beside it has them (scripts/setup.sh); an installed hourglass uses HG_PYTHON or the
	 * system's, and says what is missing
	 */
	if ((!strcmp(cmd, "results") || !strcmp(cmd, "learn")) && !getenv("HG_PYTHON") &&
	    snprintf(venv_py, sizeof(venv_py), "%s/../.venv/bin/python", dir) < (int)sizeof(venv_py) &&
	    !access(venv_py, X_OK))
		py = venv_py;
	args[a++] = (char *)py;
	if (!strcmp(cmd, "record")) {
		sigset_t held;

		/*
		 * Ctrl-C while the interpreter sets itself up (its standard streams, before any
		 * handler of ours or its own) is a "Fatal Python error" and exit 1, not the
		 * interrupted record's 130: held until record's main() has its handlers, which
		 * unblocks them first thing (tools/hgtools/record.py). The mask survives exec.
		 */
		sigemptyset(&held);
		sigaddset(&held, SIGINT);
		sigaddset(&held, SIGTERM);
		sigprocmask(SIG_BLOCK, &held, NULL);
		args[a++] = "-I";
		args[a++] = "-S";
		args[a++] = "-c";
		args[a++] = "import sys; sys.path.append(sys.argv.pop(1)); import hgtools.__main__";
		args[a++] = dir;
	} else {
		args[a++] = "-m";
		args[a++] = "hgtools";
	}
	args[a++] = (char *)cmd;
	for (i = 0; i < argc; i++)
		args[a++] = argv[i];
	execvp(py, args);
	fprintf(stderr, "hourglass %s: cannot run %s (%s): install python3\n", cmd, py, strerror(errno));
	return HG_EXIT_ENV;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		hg_usage(stderr);
		return HG_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		hg_usage(stdout);
		return HG_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("hourglass %s (trace format %d.%d)\n", HG_VERSION, HGL_FORMAT_MAJOR,
		       HGL_FORMAT_MINOR);
		return HG_EXIT_OK;
	}
	if (!strcmp(argv[1], "record") || !strcmp(argv[1], "report") || !strcmp(argv[1], "export") ||
	    !strcmp(argv[1], "learn") || !strcmp(argv[1], "results"))
		return run_tool(argv[1], argc - 2, argv + 2);
	if (argv[1][0] != '-') {
		fprintf(stderr, "hourglass: unknown command '%s': a plain run starts with an option, e.g. 'hourglass -n 1 -d 1s' (see --help)\n",
			argv[1]);
		return HG_EXIT_USAGE;
	}
	return plain_run(argc, argv);
}

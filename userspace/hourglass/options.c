// SPDX-License-Identifier: GPL-2.0
/*
 * options.c - the paper's command line (Appendix A) plus long options.
 *
 * The paper's options are order-sensitive: -t N or -a selects the threads
 * that the following per-thread options (-p, -rh, -rs, -w, -i, -s, -f) change,
 * so getopt cannot parse them. This file walks argv itself.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "hg_cpulist.h"
#include "hourglass.h"
#include "timeunits.h"

struct parser {
	struct hg_config *cfg;
	int argc, i;
	char **argv;
	int sel;		/* selected thread, or -1 with all_sel */
	bool all_sel;
};

static int fail(const char *fmt, ...)
{
	va_list ap;

	fputs("hourglass: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n(hourglass --help shows the options)\n", stderr);
	return -1;
}

/* next_arg - the argument of option @opt, or NULL after an error message. */
static const char *next_arg(struct parser *p, const char *opt, const char *what)
{
	if (p->i + 1 >= p->argc) {
		fail("%s needs %s", opt, what);
		return NULL;
	}
	return p->argv[++p->i];
}

static int arg_time(struct parser *p, const char *opt, const char *what, uint64_t *ns)
{
	const char *s = next_arg(p, opt, what), *err;

	if (!s)
		return -1;
	err = hg_parse_time(s, ns);
	if (err)
		return fail("%s %s: %s", opt, s, err);
	return 0;
}

static int arg_long(struct parser *p, const char *opt, const char *what,
		    long min, long max, long *v)
{
	const char *s = next_arg(p, opt, what);
	char *end;

	if (!s)
		return -1;
	errno = 0;
	*v = strtol(s, &end, 10);
	if (errno || end == s || *end)
		return fail("%s: '%s' is not a whole number", opt, s);
	if (*v < min || *v > max)
		return fail("%s: %ld is out of range %ld..%ld", opt, *v, min, max);
	return 0;
}

/* parse_cpulist - "0,2-3" into a CPU set; -1 and *why if bad */
static int parse_cpulist(const char *s, cpu_set_t *set, const char **why)
{
	struct hg_cpuset cpus;
	unsigned c;

	CPU_ZERO(set);
	if (hg_cpulist_parse(s, &cpus, why))
		return -1;
	if (cpus.nbits > CPU_SETSIZE) {
		*why = "a CPU beyond what this program can pin";
		hg_cpuset_free(&cpus);
		return -1;
	}
	for (c = 0; c < cpus.nbits; c++)
		if (hg_cpuset_has(&cpus, c))
			CPU_SET(c, set);
	hg_cpuset_free(&cpus);
	*why = "no CPU in it";
	return CPU_COUNT(set) ? 0 : -1;
}

static const struct {
	const char *name;
	int policy, prio;
} levels[] = {
	/* Time-sharing levels: nice values, IDLE is SCHED_IDLE. */
	{ "IDLE", SCHED_IDLE, 0 },
	{ "LOW", SCHED_OTHER, 10 },
	{ "NORMAL", SCHED_OTHER, 0 },
	{ "HIGH", SCHED_OTHER, -10 },
	{ "HIGHEST", SCHED_OTHER, -20 },
	/*
	 * SCHED_FIFO levels. PREEMPT_RT runs threaded interrupt handlers at
	 * FIFO 50: RTLOW and RTMED sit below them, RTHIGH above, so the
	 * three levels show the difference between the kernels.
	 */
	{ "RTLOW", SCHED_FIFO, 20 },
	{ "RTMED", SCHED_FIFO, 40 },
	{ "RTHIGH", SCHED_FIFO, 80 },
};

static const struct {
	const char *name;
	enum hg_workload w;
	int nargs;	/* 0, 1 or 2 */
	const char *args;
} workloads[] = {
	{ "CPU", HG_W_CPU, 0, "" },
	{ "CPU_SCAN", HG_W_CPU_SCAN, 1, "<size KB>" },
	{ "CPU_YIELD", HG_W_CPU_YIELD, 1, "<amount>" },
	{ "CPU_SCAN_YIELD", HG_W_CPU_SCAN_YIELD, 2, "<size KB> <amount>" },
	{ "PERIODIC", HG_W_PERIODIC, 2, "<amount> <period>" },
	{ "CPU_PERIODIC", HG_W_CPU_PERIODIC, 2, "<amount> <period>" },
	{ "LAT", HG_W_LAT, 1, "<period>" },
};

static const struct {
	const char *name;
	enum hg_timer_kind t;
} timers[] = {
	{ "NATIVE", HG_T_NATIVE }, { "HR", HG_T_HR }, { "RTC", HG_T_RTC },
	{ "TIMERFD", HG_T_TIMERFD }, { "POSIX", HG_T_POSIX },
};

static const struct {
	const char *name;
	int policy;
} policies[] = {
	{ "other", SCHED_OTHER }, { "batch", SCHED_BATCH }, { "idle", SCHED_IDLE },
	{ "fifo", SCHED_FIFO }, { "rr", SCHED_RR }, { "deadline", SCHED_DEADLINE },
};

const char *hg_workload_name(enum hg_workload w)
{
	size_t i;

	for (i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
		if (workloads[i].w == w)
			return workloads[i].name;
	return "?";
}

const char *hg_timer_name(enum hg_timer_kind t)
{
	size_t i;

	for (i = 0; i < sizeof(timers) / sizeof(timers[0]); i++)
		if (timers[i].t == t)
			return timers[i].name;
	return "?";
}

const char *hg_policy_name(int policy)
{
	size_t i;

	for (i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
		if (policies[i].policy == policy)
			return policies[i].name;
	return "?";
}

/* The per-thread part: every option here changes the selected threads. */
#define FOR_SELECTED(p, tc) \
	for (int _k = 0; _k < (p)->cfg->nthreads; _k++) \
		if (((p)->all_sel || _k == (p)->sel) && ((tc) = &(p)->cfg->thread[_k]))

static int check_selection(struct parser *p, const char *opt)
{
	if (!p->cfg->nthreads)
		return fail("%s is a per-thread option: give -n <threads> before it", opt);
	if (!p->all_sel && p->sel < 0)
		return fail("%s is a per-thread option: select threads with -t <n> or -a first", opt);
	return 0;
}

static int opt_priority(struct parser *p, const char *opt)
{
	const char *s = next_arg(p, opt, "a priority");
	struct hg_thread_cfg *tc;
	size_t i;

	if (!s)
		return -1;
	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		if (strcmp(s, levels[i].name))
			continue;
		FOR_SELECTED(p, tc) {
			tc->sched.policy = levels[i].policy;
			tc->sched.prio = levels[i].prio;
			tc->sched.level = levels[i].name;
		}
		return 0;
	}
	return fail("%s: unknown priority '%s' (IDLE, LOW, NORMAL, HIGH, HIGHEST, RTLOW, RTMED, RTHIGH)",
		    opt, s);
}

static int opt_reservation(struct parser *p, const char *opt, bool soft)
{
	struct hg_thread_cfg *tc;
	uint64_t amount, period;

	if (arg_time(p, opt, "<amount> <period>", &amount) ||
	    arg_time(p, opt, "<amount> <period>", &period))
		return -1;
	if (amount < 1024)
		return fail("%s: amount must be at least 1.024us (SCHED_DEADLINE's smallest runtime)", opt);
	if (amount > period)
		return fail("%s: amount %s is longer than the period", opt, p->argv[p->i - 1]);
	FOR_SELECTED(p, tc) {
		tc->sched.policy = SCHED_DEADLINE;
		tc->sched.prio = 0;
		tc->sched.level = NULL;
		tc->sched.dl_runtime_ns = amount;
		tc->sched.dl_period_ns = period;
		tc->sched.dl_soft = soft;
	}
	return 0;
}

static int opt_workload(struct parser *p, const char *opt)
{
	const char *s = next_arg(p, opt, "a workload");
	struct hg_thread_cfg *tc, w = { 0 };
	uint64_t v[2] = { 0, 0 };
	size_t i;
	int k;

	if (!s)
		return -1;
	for (i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
		if (!strcmp(s, workloads[i].name))
			break;
	if (i == sizeof(workloads) / sizeof(workloads[0]))
		return fail("%s: unknown workload '%s' (CPU, CPU_SCAN, CPU_YIELD, CPU_SCAN_YIELD, PERIODIC, CPU_PERIODIC, LAT)",
			    opt, s);
	w.workload = workloads[i].w;
	for (k = 0; k < workloads[i].nargs; k++) {
		char what[64];
		bool is_size = k == 0 && (w.workload == HG_W_CPU_SCAN ||
					  w.workload == HG_W_CPU_SCAN_YIELD);

		snprintf(what, sizeof(what), "%s", workloads[i].args);
		const char *nx = p->i + 1 < p->argc ? p->argv[p->i + 1] : NULL;

		/* "-3ms" is a negative time, "-i" the next option */
		if (!nx || (nx[0] == '-' && !isdigit((unsigned char)nx[1])))
			return fail("%s %s needs %s", opt, s, workloads[i].args);
		if (is_size) {
			long kb;

			if (arg_long(p, s, "<size KB>", 1, 1L << 30, &kb))
				return -1;
			v[k] = (uint64_t)kb;
		} else {
			char o[64];

			snprintf(o, sizeof(o), "%s %s", opt, s);
			if (arg_time(p, o, what, &v[k]))
				return -1;
			if (!v[k])
				return fail("%s %s: times must be longer than zero", opt, s);
		}
	}
	switch (w.workload) {
	case HG_W_CPU_SCAN:
		w.scan_kb = v[0];
		break;
	case HG_W_CPU_YIELD:
		w.amount_ns = v[0];
		break;
	case HG_W_CPU_SCAN_YIELD:
		w.scan_kb = v[0];
		w.amount_ns = v[1];
		break;
	case HG_W_PERIODIC:
	case HG_W_CPU_PERIODIC:
		w.amount_ns = v[0];
		w.period_ns = v[1];
		if (w.amount_ns > w.period_ns)
			return fail("%s %s: amount is longer than the period: every period would miss", opt, s);
		break;
	case HG_W_LAT:
		w.period_ns = v[0];
		break;
	default:
		break;
	}
	FOR_SELECTED(p, tc) {
		tc->workload = w.workload;
		tc->scan_kb = w.scan_kb;
		tc->amount_ns = w.amount_ns;
		tc->period_ns = w.period_ns;
	}
	return 0;
}

static int opt_timer(struct parser *p, const char *opt)
{
	const char *s = next_arg(p, opt, "a timer");
	struct hg_thread_cfg *tc;
	size_t i;

	if (!s)
		return -1;
	if (!strcmp(s, "MM"))
		return fail("%s MM: multimedia timers exist on Windows only; on Linux use HR", opt);
	for (i = 0; i < sizeof(timers) / sizeof(timers[0]); i++) {
		if (strcmp(s, timers[i].name))
			continue;
		FOR_SELECTED(p, tc)
			tc->timer = timers[i].t;
		return 0;
	}
	return fail("%s: unknown timer '%s' (NATIVE, HR, RTC, TIMERFD, POSIX)", opt, s);
}

static int opt_start_finish(struct parser *p, const char *opt, bool finish)
{
	struct hg_thread_cfg *tc;
	uint64_t t;

	if (arg_time(p, opt, "a time", &t))
		return -1;
	if (finish && !t)
		return fail("%s: a thread cannot finish at 0", opt);
	FOR_SELECTED(p, tc) {
		if (finish)
			tc->finish_ns = t;
		else
			tc->start_ns = t;
	}
	return 0;
}

static int opt_affinity(struct parser *p, const char *opt)
{
	const char *s = next_arg(p, opt, "a CPU list like 0,2-3");
	struct hg_thread_cfg *tc;
	const char *why;
	cpu_set_t set;

	if (!s)
		return -1;
	if (parse_cpulist(s, &set, &why))
		return fail("%s: bad CPU list '%s': %s (write e.g. 0 or 0,2-3)", opt, s, why);
	FOR_SELECTED(p, tc) {
		tc->affinity = set;
		tc->has_affinity = true;
	}
	return 0;
}

static int opt_policy(struct parser *p, const char *opt)
{
	const char *s = next_arg(p, opt, "a policy");
	struct hg_thread_cfg *tc;
	size_t i;

	if (!s)
		return -1;
	for (i = 0; i < sizeof(policies) / sizeof(policies[0]); i++) {
		if (strcmp(s, policies[i].name))
			continue;
		if (policies[i].policy == SCHED_DEADLINE)
			return fail("%s deadline: give the reservation with -rh or -rs <amount> <period>", opt);
		FOR_SELECTED(p, tc) {
			tc->sched.policy = policies[i].policy;
			tc->sched.level = NULL;
			if (tc->sched.policy == SCHED_FIFO || tc->sched.policy == SCHED_RR)
				tc->sched.prio = 50;
			else
				tc->sched.prio = 0;
		}
		return 0;
	}
	return fail("%s: unknown policy '%s' (other, batch, idle, fifo, rr)", opt, s);
}

static int opt_prio(struct parser *p, const char *opt)
{
	struct hg_thread_cfg *tc;
	long v;

	if (arg_long(p, opt, "a priority", -20, 99, &v))
		return -1;
	FOR_SELECTED(p, tc) {
		int pol = tc->sched.policy;

		if ((pol == SCHED_FIFO || pol == SCHED_RR) && (v < 1 || v > 99))
			return fail("%s %ld: SCHED_%s priorities are 1..99", opt, v,
				    pol == SCHED_FIFO ? "FIFO" : "RR");
		if ((pol == SCHED_OTHER || pol == SCHED_BATCH) && v > 19)
			return fail("%s %ld: nice values are -20..19", opt, v);
		if (pol == SCHED_IDLE || pol == SCHED_DEADLINE)
			return fail("%s: SCHED_%s has no priority", opt,
				    pol == SCHED_IDLE ? "IDLE" : "DEADLINE");
		tc->sched.prio = (int)v;
		tc->sched.level = NULL;
	}
	return 0;
}

static void thread_defaults(struct hg_thread_cfg *tc)
{
	memset(tc, 0, sizeof(*tc));
	tc->workload = HG_W_CPU;
	tc->timer = HG_T_NATIVE;
	tc->sched.policy = SCHED_OTHER;
	tc->sched.level = "NORMAL";
}

/* validate - checks that need the whole command line. */
static int validate(struct hg_config *cfg)
{
	int rtc_users = 0, k;

	if (!cfg->nthreads)
		return fail("-n <number of threads> is required");
	for (k = 0; k < cfg->nthreads; k++) {
		struct hg_thread_cfg *tc = &cfg->thread[k];

		if (tc->start_ns >= cfg->duration_ns)
			return fail("thread %d: -s is at or after the end of the run (-d)", k);
		if (tc->finish_ns && tc->finish_ns <= tc->start_ns)
			return fail("thread %d: -f must come after -s", k);
		if (tc->sched.policy == SCHED_DEADLINE && tc->has_affinity)
			return fail("thread %d: a SCHED_DEADLINE reservation (-rh/-rs) cannot be pinned with --affinity: the kernel admits deadline tasks only on a whole root domain (use cpusets instead)",
				    k);
		if (tc->timer == HG_T_RTC && (tc->workload == HG_W_PERIODIC ||
					     tc->workload == HG_W_LAT))
			rtc_users++;
	}
	if (rtc_users > 1)
		return fail("-i RTC: only one thread can use the RTC (the device opens exclusively)");
	return 0;
}

int hg_parse_options(struct hg_config *cfg, int argc, char **argv)
{
	struct parser p = { .cfg = cfg, .argc = argc, .argv = argv, .sel = -1 };
	long v;
	int k;

	memset(cfg, 0, sizeof(*cfg));
	cfg->duration_ns = HG_DEFAULT_DURATION_NS;
	cfg->max_records = HG_DEFAULT_RECORDS;
	cfg->gap_override_ns = -1;
	cfg->rtc_hz = 1024;
	cfg->argc = argc;
	cfg->argv = argv;
	for (k = 0; k < HG_MAX_THREADS; k++)
		thread_defaults(&cfg->thread[k]);

	for (p.i = 1; p.i < argc; p.i++) {
		const char *o = argv[p.i];
		int r = 0;

		if (!strcmp(o, "-n")) {
			if (cfg->nthreads)
				return fail("-n given twice");
			if (arg_long(&p, o, "a number of threads", 1, HG_MAX_THREADS, &v))
				return -1;
			cfg->nthreads = (int)v;
		} else if (!strcmp(o, "-d")) {
			r = arg_time(&p, o, "a duration", &cfg->duration_ns);
			if (!r && !cfg->duration_ns)
				r = fail("-d: the run must last longer than zero");
		} else if (!strcmp(o, "-c")) {
			cfg->raw_cycles = true;
		} else if (!strcmp(o, "-e")) {
			r = arg_long(&p, o, "a number of records", 1, 1L << 32, &v);
			cfg->max_records = (uint64_t)v;
		} else if (!strcmp(o, "-t")) {
			if (!cfg->nthreads)
				return fail("-t: give -n <threads> before selecting a thread");
			if (arg_long(&p, o, "a thread number", LONG_MIN, LONG_MAX, &v))
				return -1;
			if (v < 0 || v >= cfg->nthreads)
				return fail("-t %ld: thread numbers are 0..%d (-n %d)", v,
					    cfg->nthreads - 1, cfg->nthreads);
			p.sel = (int)v;
			p.all_sel = false;
		} else if (!strcmp(o, "-a")) {
			if (!cfg->nthreads)
				return fail("-a: give -n <threads> before it");
			p.all_sel = true;
		} else if (!strcmp(o, "-p") || !strcmp(o, "-rh") || !strcmp(o, "-rs") ||
			   !strcmp(o, "-w") || !strcmp(o, "-i") || !strcmp(o, "-s") ||
			   !strcmp(o, "-f") || !strcmp(o, "--affinity") ||
			   !strcmp(o, "--policy") || !strcmp(o, "--prio")) {
			if (check_selection(&p, o))
				return -1;
			if (!strcmp(o, "-p"))
				r = opt_priority(&p, o);
			else if (!strcmp(o, "-rh") || !strcmp(o, "-rs"))
				r = opt_reservation(&p, o, o[2] == 's');
			else if (!strcmp(o, "-w"))
				r = opt_workload(&p, o);
			else if (!strcmp(o, "-i"))
				r = opt_timer(&p, o);
			else if (!strcmp(o, "-s") || !strcmp(o, "-f"))
				r = opt_start_finish(&p, o, o[1] == 'f');
			else if (!strcmp(o, "--affinity"))
				r = opt_affinity(&p, o);
			else if (!strcmp(o, "--policy"))
				r = opt_policy(&p, o);
			else
				r = opt_prio(&p, o);
		} else if (!strcmp(o, "--gap")) {
			uint64_t g;

			r = arg_time(&p, o, "a time", &g);
			if (!r && !g)
				r = fail("--gap: the threshold must be longer than zero");
			cfg->gap_override_ns = (int64_t)g;
		} else if (!strcmp(o, "-o") || !strcmp(o, "--output")) {
			r = (cfg->text_path = next_arg(&p, o, "a file")) ? 0 : -1;
		} else if (!strcmp(o, "--json")) {
			r = (cfg->json_path = next_arg(&p, o, "a file")) ? 0 : -1;
		} else if (!strcmp(o, "--trace")) {
			r = (cfg->trace_path = next_arg(&p, o, "a file")) ? 0 : -1;
		} else if (!strcmp(o, "--rtc-hz")) {
			r = arg_long(&p, o, "a frequency", 2, 8192, &v);
			if (!r && (v & (v - 1)))
				r = fail("--rtc-hz %ld: the RTC runs at powers of two (2..8192)", v);
			cfg->rtc_hz = (int)v;
		} else if (!strcmp(o, "--fallback")) {
			cfg->fallback = true;
		} else if (!strcmp(o, "--cpu-column")) {
			cfg->cpu_column = true;
		} else if (!strcmp(o, "--dry-run")) {
			cfg->dry_run = true;
		} else {
			return fail("unknown option '%s'", o);
		}
		if (r)
			return -1;
	}
	return validate(cfg);
}

void hg_usage(FILE *f)
{
	fprintf(f,
"usage: hourglass <options>               run the synthetic real-time workload\n"
"       hourglass record -o DIR <options>  the same, with the kernel's ground truth (hgtrace.ko)\n"
"       hourglass report DIR [--json FILE] explain every gap, score the inferences\n"
"       hourglass export DIR --kernelshark OUT.dat   a merged trace.dat for KernelShark\n"
"\n"
"Threads spin on the TSC and record every gap in their own execution; all\n"
"output comes after the run. Compatible with Hourglass 0.5 (Regehr, 2002).\n"
"\n"
"global options:\n"
"  -n <threads>        number of threads to create (required, 1..%d)\n"
"  -d <time>           duration of the run (default 10s)\n"
"  -c                  also print the raw trace in TSC cycles, not based at zero\n"
"  -t <n>              the following per-thread options affect thread n (0..threads-1)\n"
"  -a                  the following per-thread options affect all threads, until -t\n"
"  -e <records>        trace buffer size in records, shared by all threads (default %d)\n"
"\n"
"per-thread options (after -t or -a):\n"
"  -p <priority>       IDLE (SCHED_IDLE), LOW, NORMAL, HIGH, HIGHEST (nice 10, 0, -10, -20)\n"
"                      RTLOW, RTMED, RTHIGH (SCHED_FIFO 20, 40, 80); default NORMAL\n"
"  -rh <amount> <period>  hard CPU reservation (SCHED_DEADLINE runtime/period)\n"
"  -rs <amount> <period>  soft CPU reservation (SCHED_DEADLINE with reclaiming)\n"
"  -w <workload>       CPU (default) | CPU_SCAN <KB> | CPU_YIELD <amount>\n"
"                      | CPU_SCAN_YIELD <KB> <amount> | PERIODIC <amount> <period>\n"
"                      | CPU_PERIODIC <amount> <period> | LAT <period>\n"
"  -i <timer>          NATIVE (relative nanosleep, default) | HR (absolute, 1 ns slack)\n"
"                      | RTC (/dev/rtc periodic interrupt) | TIMERFD | POSIX (timer signal)\n"
"  -s <time>           start this thread <time> into the run\n"
"  -f <time>           stop this thread <time> into the run\n"
"  --affinity <cpus>   pin to CPUs, e.g. 0 or 0,2-3\n"
"  --policy <p>        other | batch | idle | fifo | rr (FIFO/RR default priority 50)\n"
"  --prio <n>          nice (-20..19) for other/batch, 1..99 for fifo/rr\n"
"\n"
"output and measurement:\n"
"  -o, --output <file> write the text output there instead of stdout\n"
"  --json <file>       write a JSON summary (provenance, per-thread figures)\n"
"  --trace <file>      write the binary trace for the merger (docs/hourglass-trace.md)\n"
"  --gap <time>        gap threshold instead of twice the calibrated loop time\n"
"  --cpu-column        add each interval's CPU as a sixth column\n"
"  --rtc-hz <hz>       RTC interrupt rate for -i RTC (power of two, default 1024)\n"
"  --fallback          run without what is not permitted (mlockall, real-time\n"
"                      policy, reservation) instead of stopping; the output says so\n"
"  --dry-run           print the parsed configuration as JSON and exit\n"
"  -h, --help          this text;  --version  the version\n"
"\n"
"Times carry their unit: 87.0us, 1020ms, 1.5s, 3m. Example (the paper's Fig. 3):\n"
"  hourglass -n 3 -d 5s -t 0 -p LOW -t 1 -p NORMAL -t 2 -p HIGH\n"
"\n"
"exit status: 0 ok, 1 bad command line, 2 missing privilege or device,\n"
"             3 the trace buffer filled (output incomplete), 4 output not written\n",
		HG_MAX_THREADS, HG_DEFAULT_RECORDS);
}

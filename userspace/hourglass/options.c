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
#include <strings.h>
#include <unistd.h>
#include "hg_cpulist.h"
#include "hourglass.h"
#include "timeunits.h"

#define HG_MIN_PERIOD_NS 1000	/* LAT, PERIODIC, CPU_PERIODIC */

/* hg_phys_bytes - the machine's memory, the ceiling of what a run can lock */
uint64_t hg_phys_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : UINT64_MAX;
}

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

/* looks_like_option - "-x" or "--xyz", not "-3ms" (a negative time), "-.5s" or "-" */
static bool looks_like_option(const char *s)
{
	return s[0] == '-' && s[1] && !isdigit((unsigned char)s[1]) && s[1] != '.';
}

/*
 * next_arg - the argument of option @opt, or NULL after an error message. An
 * argument that is itself an option ("-o --dry-run") is refused: taking it
 * would start a real run writing a file named "--dry-run".
 */
static const char *next_arg(struct parser *p, const char *opt, const char *what)
{
	const char *s;

	if (p->i + 1 >= p->argc) {
		fail("%s needs %s", opt, what);
		return NULL;
	}
	s = p->argv[p->i + 1];
	if (looks_like_option(s)) {
		fail("%s needs %s, but '%s' that follows it is an option%s", opt, what, s,
		     !strcmp(what, "a file") ? " (for a file of that name write ./ before it)" : "");
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

/*
 * arg_us - a threshold as cyclictest and rtla take it: a bare number is
 * microseconds (-b 100); a time with its unit is as written (-b 0.1ms).
 */
static int arg_us(struct parser *p, const char *opt, const char *what, uint64_t *ns)
{
	const char *s = next_arg(p, opt, what), *err;
	char buf[64];
	char *end;

	if (!s)
		return -1;
	strtod(s, &end);
	if (end != s && !*end && strlen(s) < sizeof(buf) - 3) {
		snprintf(buf, sizeof(buf), "%sus", s);
		err = hg_parse_time(buf, ns);
	} else {
		err = hg_parse_time(s, ns);
	}
	if (err)
		return fail("%s %s: %s (a bare number is microseconds)", opt, s, err);
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
		if (strcasecmp(s, levels[i].name))	/* rthigh is RTHIGH */
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
		if (!strcasecmp(s, workloads[i].name))
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
			char o[64];
			long kb;

			snprintf(o, sizeof(o), "%s %s", opt, s);
			if (arg_long(p, o, "<size KB>", 1, 1L << 30, &kb))
				return -1;
			/* more than the machine has: mlockall or the first pass would kill the run */
			if ((uint64_t)kb * 1024 > hg_phys_bytes())
				return fail("%s %s %ld: a working set of %.1f GiB, more than this machine's %.1f GiB of memory",
					    opt, s, kb, kb / 1048576.0, hg_phys_bytes() / 1073741824.0);
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
	/* no timer wakes a thread sooner than a microsecond; shorter is a typo */
	if (w.period_ns && w.period_ns < HG_MIN_PERIOD_NS)
		return fail("%s %s %s: a period under 1us: no Linux timer wakes a thread that often",
			    opt, s, p->argv[p->i]);
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
	if (!strcasecmp(s, "MM"))
		return fail("%s MM: multimedia timers exist on Windows only; on Linux use HR", opt);
	for (i = 0; i < sizeof(timers) / sizeof(timers[0]); i++) {
		if (strcasecmp(s, timers[i].name))
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
		if (strcasecmp(s, policies[i].name))
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
	tc->copy_of = -1;
}

/* fmt_time - @ns in the unit that reads best, for messages */
static const char *fmt_time(uint64_t ns, char *buf, size_t len)
{
	if (ns >= 1000000000ULL)
		snprintf(buf, len, "%gs", ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, len, "%gms", ns / 1e6);
	else
		snprintf(buf, len, "%gus", ns / 1e3);
	return buf;
}

/*
 * replicate - --smp / --cpus: the threads configured so far, once per CPU,
 * each copy pinned to its CPU (cyclictest -S, rtla -c). Copy c*n + k is
 * thread k of the command line on the c-th CPU of the set.
 */
static int replicate(struct hg_config *cfg)
{
	static struct hg_thread_cfg given[HG_MAX_THREADS];
	int n = cfg->nthreads, ncpu = CPU_COUNT(&cfg->smp_cpus), cpu, c = 0, k;

	if ((long)n * ncpu > HG_MAX_THREADS)
		return fail("--smp: %d threads on %d CPUs make %d, more than %d", n, ncpu, n * ncpu,
			    HG_MAX_THREADS);
	for (k = 0; k < n; k++) {
		if (cfg->thread[k].has_affinity)
			return fail("thread %d: --affinity and --smp/--cpus both pin it (--smp pins each copy to its CPU)",
				    k);
		if (cfg->thread[k].sched.policy == SCHED_DEADLINE)
			return fail("thread %d: a SCHED_DEADLINE reservation (-rh/-rs) cannot be pinned, and --smp/--cpus pins every copy",
				    k);
	}
	memcpy(given, cfg->thread, (size_t)n * sizeof(given[0]));
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &cfg->smp_cpus))
			continue;
		for (k = 0; k < n; k++) {
			struct hg_thread_cfg *tc = &cfg->thread[c * n + k];

			*tc = given[k];
			CPU_ZERO(&tc->affinity);
			CPU_SET(cpu, &tc->affinity);
			tc->has_affinity = true;
			tc->copy_of = k;
		}
		c++;
	}
	cfg->nthreads = n * ncpu;
	return 0;
}

/* validate - checks that need the whole command line. */
static int validate(struct hg_config *cfg)
{
	uint64_t need = cfg->max_records * 32;	/* struct hgl_rec */
	int rtc_users = 0, k;
	char a[32], b[32];

	if (!cfg->nthreads)
		return fail("-n <number of threads> is required");
	for (k = 0; k < cfg->nthreads; k++) {
		struct hg_thread_cfg *tc = &cfg->thread[k];

		if (tc->start_ns >= cfg->duration_ns)
			return fail("thread %d: -s %s is at or after the end of the run (-d %s)", k,
				    fmt_time(tc->start_ns, a, sizeof(a)), fmt_time(cfg->duration_ns, b, sizeof(b)));
		if (tc->finish_ns && tc->finish_ns <= tc->start_ns)
			return fail("thread %d: -f must come after -s", k);
		if (tc->finish_ns > cfg->duration_ns)
			return fail("thread %d: -f %s is after the end of the run (-d %s)",
				    k, fmt_time(tc->finish_ns, a, sizeof(a)), fmt_time(cfg->duration_ns, b, sizeof(b)));
		if (tc->sched.policy == SCHED_DEADLINE && tc->has_affinity)
			return fail("thread %d: a SCHED_DEADLINE reservation (-rh/-rs) cannot be pinned with --affinity: the kernel admits deadline tasks only on a whole root domain (use cpusets instead)",
				    k);
	}
	cfg->nthreads_given = cfg->nthreads;
	if (cfg->smp && replicate(cfg))
		return -1;
	for (k = 0; k < cfg->nthreads; k++) {
		struct hg_thread_cfg *tc = &cfg->thread[k];

		need += tc->scan_kb * 1024;
		if (tc->timer == HG_T_RTC && (tc->workload == HG_W_PERIODIC ||
					     tc->workload == HG_W_LAT))
			rtc_users++;
	}
	if (need > hg_phys_bytes())
		return fail("-e %llu%s: %.1f GiB to lock in memory, more than this machine's %.1f GiB",
			    (unsigned long long)cfg->max_records,
			    need > cfg->max_records * 32 ? " and the CPU_SCAN working sets" : " (32 bytes a record)",
			    need / 1073741824.0, hg_phys_bytes() / 1073741824.0);
	if (rtc_users > 1)
		return fail("-i RTC: only one thread can use the RTC (the device opens exclusively)%s",
			    cfg->smp ? "; --smp made a copy per CPU" : "");
	if (cfg->hist_max_ns && cfg->hist_max_ns / cfg->hist_bucket_ns > 1000000)
		return fail("--hist %s with --bucket %s: more than a million buckets",
			    fmt_time(cfg->hist_max_ns, a, sizeof(a)), fmt_time(cfg->hist_bucket_ns, b, sizeof(b)));
	return 0;
}

int hg_parse_options(struct hg_config *cfg, int argc, char **argv)
{
	struct parser p = { .cfg = cfg, .argc = argc, .argv = argv, .sel = -1 };
	bool bucket_given = false;
	long v;
	int k;

	memset(cfg, 0, sizeof(*cfg));
	cfg->duration_ns = HG_DEFAULT_DURATION_NS;
	cfg->max_records = HG_DEFAULT_RECORDS;
	cfg->gap_override_ns = -1;
	cfg->rtc_hz = 1024;
	cfg->hist_bucket_ns = 1000;
	cfg->dma_latency_us = 0;
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
		} else if (!strcmp(o, "-e") || !strcmp(o, "--records")) {
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
			if (!r && !strcmp(cfg->text_path, "-"))
				cfg->text_path = NULL;		/* standard output, as without -o */
		} else if (!strcmp(o, "-q") || !strcmp(o, "--quiet")) {
			cfg->quiet = true;
		} else if (!strcmp(o, "-b") || !strcmp(o, "--breaktrace")) {
			r = arg_us(&p, o, "a threshold in microseconds", &cfg->break_ns);
			if (!r && !cfg->break_ns)
				r = fail("%s: the threshold must be longer than zero", o);
		} else if (!strcmp(o, "--hist")) {
			r = arg_us(&p, o, "the largest lateness to count, in microseconds", &cfg->hist_max_ns);
			if (!r && !cfg->hist_max_ns)
				r = fail("--hist: the histogram must reach further than zero");
		} else if (!strcmp(o, "--bucket")) {
			r = arg_us(&p, o, "a bucket width in microseconds", &cfg->hist_bucket_ns);
			bucket_given = true;
			if (!r && !cfg->hist_bucket_ns)
				r = fail("--bucket: a bucket must be wider than zero");
		} else if (!strcmp(o, "--dma-latency")) {
			const char *a = next_arg(&p, o, "microseconds, or off");

			if (!a)
				return -1;
			cfg->dma_latency_given = true;
			if (!strcasecmp(a, "off")) {
				cfg->dma_latency_us = -1;
			} else {
				p.i--;
				r = arg_long(&p, o, "microseconds, or off", 0, 2000000000L, &v);
				cfg->dma_latency_us = (int)v;
			}
		} else if (!strcmp(o, "-S") || !strcmp(o, "--smp")) {
			if (sched_getaffinity(0, sizeof(cfg->smp_cpus), &cfg->smp_cpus))
				return fail("%s: cannot read the CPUs this process may use: %s", o, strerror(errno));
			cfg->smp = true;
		} else if (!strcmp(o, "--cpus")) {
			const char *a = next_arg(&p, o, "a CPU list like 0,2-3"), *why;

			if (!a)
				return -1;
			if (parse_cpulist(a, &cfg->smp_cpus, &why))
				return fail("--cpus: bad CPU list '%s': %s (write e.g. 0 or 0,2-3)", a, why);
			cfg->smp = true;
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
	if (bucket_given && !cfg->hist_max_ns)
		return fail("--bucket goes with --hist <largest lateness>");
	return validate(cfg);
}

void hg_usage(FILE *f)
{
	fprintf(f,
"usage: hourglass <options>                 run the synthetic real-time workload\n"
"       hourglass record --dir DIR <options>  the same, with the kernel's ground truth (hgtrace.ko)\n"
"       hourglass report DIR [--json FILE] [--profile PROFILE] [--explain [WHEN]]\n"
"                                             explain every gap, score the inferences\n"
"       hourglass export DIR --kernelshark OUT.dat | --perfetto OUT.perfetto-trace | --html OUT.html\n"
"       hourglass learn RUN... -o PROFILE    fit the inference to a machine (report --profile)\n"
"       hourglass results DIR... [-o FILE.parquet] [--query SQL]   many runs in one table\n"
"\n"
"Threads spin on the TSC and record every gap in their own execution; all\n"
"output comes after the run. Compatible with Hourglass 0.5 (Regehr, 2002).\n"
"Words are not case-sensitive: -p rthigh is -p RTHIGH.\n"
"\n"
"global options (the paper's):\n"
"  -n <threads>        number of threads to create (required, 1..%d)\n"
"  -d <time>           duration of the run (default 10s)\n"
"  -c                  also print the raw trace in TSC cycles, not based at zero\n"
"  -t <n>              the following per-thread options affect thread n (0..threads-1)\n"
"  -a                  the following per-thread options affect all threads, until -t\n"
"  -e, --records <n>   trace buffer size in records, shared by all threads (default %d)\n"
"                      (not hgtrace record's -e, which names event groups as trace-cmd's)\n"
"\n"
"per-thread options (after -t or -a):\n"
"  -p <priority>       IDLE (SCHED_IDLE), LOW, NORMAL, HIGH, HIGHEST (nice 10, 0, -10, -20)\n"
"                      RTLOW, RTMED, RTHIGH (SCHED_FIFO 20, 40, 80); default NORMAL\n"
"  -rh <amount> <period>  hard CPU reservation (SCHED_DEADLINE runtime/period)\n"
"  -rs <amount> <period>  soft CPU reservation (SCHED_DEADLINE with reclaiming)\n"
"  -w <workload>       CPU (default) | CPU_SCAN <KB> | CPU_YIELD <amount>\n"
"                      | CPU_SCAN_YIELD <KB> <amount> | PERIODIC <amount> <period>\n"
"                      | CPU_PERIODIC <amount> <period> | LAT <period>\n"
"  -i <timer>          NATIVE (relative nanosleep, timer slack: the default) | HR (absolute,\n"
"                      1 ns slack) | RTC (/dev/rtc periodic interrupt) | TIMERFD | POSIX\n"
"  -s <time>           start this thread <time> into the run\n"
"  -f <time>           stop this thread <time> into the run (at most -d)\n"
"  --affinity <cpus>   pin to CPUs, e.g. 0 or 0,2-3\n"
"  --policy <p>        other | batch | idle | fifo | rr (FIFO/RR default priority 50)\n"
"  --prio <n>          nice (-20..19) for other/batch, 1..99 for fifo/rr\n"
"\n"
"as cyclictest and rtla do:\n"
"  -S, --smp           the threads configured, once on every CPU, each copy pinned to it\n"
"                      (cyclictest -S): -n 1 -a -p RTHIGH -w LAT 1ms -i HR -S\n"
"  --cpus <list>       the same on these CPUs only (rtla -c), e.g. 0,2-3\n"
"  -q, --quiet         no interval or latlate lines, no live line: the summary only\n"
"  -b, --breaktrace <us>  stop the run when a gap or a wake-up's lateness passes it\n"
"                      (cyclictest -b, rtla -T): write a trace marker, name the sample;\n"
"                      under hourglass record the kernel's recording freezes there\n"
"  --hist <us>         lateness histograms per thread that wakes up, 1 us buckets to <us>\n"
"                      and an overflow row (cyclictest -h, rtla timerlat hist)\n"
"  --bucket <us>       with --hist: the bucket width (rtla --bucket-size)\n"
"  --dma-latency <us>|off  hold /dev/cpu_dma_latency at <us> during the run; a run with\n"
"                      LAT or PERIODIC threads holds it at 0 unless off (as cyclictest)\n"
"  (a bare number is microseconds there; any time with its unit also does: 0.1ms)\n"
"\n"
"output and measurement:\n"
"  -o, --output <file> write the text output there instead of stdout ('-': stdout)\n"
"  --json <file>       write a JSON summary (provenance, per-thread figures)\n"
"  --trace <file>      write the binary trace for the merger (docs/hourglass-trace.md)\n"
"  --gap <time>        gap threshold instead of twice the calibrated loop time\n"
"  --cpu-column        add each interval's CPU as a sixth column\n"
"  --rtc-hz <hz>       RTC interrupt rate for -i RTC (power of two, default 1024)\n"
"  --fallback          run without what is not permitted (mlockall, real-time\n"
"                      policy, reservation) instead of stopping; says so on stderr\n"
"  --dry-run           print the parsed configuration as JSON and exit\n"
"  -h, --help          this text;  --version  the version\n"
"\n"
"On a terminal a live line per thread (intervals, gaps, largest gap, wake-ups, largest\n"
"lateness) is refreshed on stderr every second; Ctrl-C stops the run and writes what\n"
"it measured, marked incomplete.\n"
"\n"
"Times carry their unit: 87.0us, 1020ms, 1.5s, 3m. Example (the paper's Fig. 3):\n"
"  hourglass -n 3 -d 5s -t 0 -p LOW -t 1 -p NORMAL -t 2 -p HIGH\n"
"\n"
"exit status (docs/exit-status.md): 0 done, 1 bad command line, 2 could not run\n"
"  (privilege, device, memory, an output that cannot be written), 4 ran but the trace\n"
"  buffer filled (output incomplete), 5 stopped at the -b threshold, 130 interrupted\n",
		HG_MAX_THREADS, HG_DEFAULT_RECORDS);
}

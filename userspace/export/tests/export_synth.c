// SPDX-License-Identifier: GPL-2.0
/*
 * export_synth.c - feed a small synthetic run through the exporters' hooks
 * as hgmerge would (export.h), for tests/unit/test_export.py to read back
 * with trace-cmd, libkshark and Perfetto's protobuf definitions.
 *
 *	export_synth [--no-gaps] [--gaps-from NS] [--gap-delay NS] [--bad-cpu] [--abort] [--many N]
 *		     [--hz HZ] [--early] [--lat] [--name F.dat] [--pf-name F.perfetto-trace] OUTDIR
 *
 * Writes OUTDIR/merged.dat (or F.dat), OUTDIR/session.json (and merged-hourglass.dat),
 * OUTDIR/trace.perfetto-trace (or F); prints one JSON object: what was fed (per event name,
 * counted here, not by the exporters) and both summaries. --bad-cpu feeds a
 * record of a CPU the run does not have and expects a refusal (exit 3);
 * --abort stops half-way with ks_abort/pf_abort; --many adds N softirqs on
 * CPU 2 (2N events: many pages); --gaps-from leaves out the gaps before NS
 * (from base_tsc); --gap-delay NS has every gap come NS after its end, with an
 * interval of thread 1 at NS/2 before them; --hz HZ says the TSC runs at HZ
 * (the stamps stay as they are); --early feeds first two CPU 0 records
 * stamped before base_tsc and at it; --lat adds a latency test's samples on CPU 1
 * (LAT wake-ups at 100, 200 and 300 us, 30, 80 and 20 us late, the worst one's
 * timer and switch recorded by the kernel). Exit 3 on any error.
 *
 * The run: TSC at 1 GHz (a cycle is a nanosecond), base_tsc 1000000, three
 * CPUs, hourglass threads 0 (tid 101, CPU 0) and 1 (tid 102, CPU 1, period
 * 10 us). CPU 0: a switch gap to stress:555, an irq+softirq gap inferred
 * as a timer (wrong), a tick gap with an hrtimer (tick_nohz_handler), a
 * sleep, a hidden gap, two NMIs (one handler unnamed), two records put out
 * of order. CPU 1: an IPI gap inferred switch_hg (wrong, the earliest
 * wrong one: the session's), a switch to kworker, a LOST of 42 events in
 * an unexplainable gap, a migration, a new task's wake-up and exit, two
 * jobs (one missed) written late. CPU 2: tasks with awkward names, ticks
 * 1 ms apart, one record 3 ms late (clamped), a tick 3.5 s later (a time
 * extend).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

#define BASE	1000000ULL

/* ---- the names a merger would know ---- */

static const char *comm(void *ctx, uint32_t pid)
{
	(void)ctx;
	switch (pid) {
	case 0: return "swapper";
	case 101: case 102: return "hourglass";
	case 555: return "stress";
	case 556: return "kworker/1:0";
	case 777: return "say \"hi\"\\";
	case 778: return "bad\xff\x01name";
	}
	return NULL;
}

static const char *irq(void *ctx, uint32_t n)
{
	(void)ctx;
	return n == 30 ? "virtio0-input.0" : NULL;
}

static const char *func(void *ctx, uint32_t id)
{
	(void)ctx;
	if (id == 0x675a4f97)
		return "tick_nohz_handler";
	if (id == 0x11111111)
		return "perf_event_nmi_handler";
	return NULL;
}

static void each_comm(void *ctx, void (*fn)(void *arg, uint32_t pid, const char *comm), void *arg)
{
	static const uint32_t pids[] = { 0, 101, 102, 555, 556, 777, 778 };

	for (unsigned i = 0; i < sizeof(pids) / sizeof(pids[0]); i++)
		fn(arg, pids[i], comm(ctx, pids[i]));
}

static const char *task(void *ctx, uint32_t pid, char *buf, unsigned len)
{
	if (pid == 101 || pid == 102)
		snprintf(buf, len, "hg-thread-%u", pid - 101);
	else
		snprintf(buf, len, "%s:%u", comm(ctx, pid) ? comm(ctx, pid) : "?", pid);
	return buf;
}

static const char *cause(void *ctx, const struct hgg_gap *g, char *buf, unsigned len)
{
	char t[64];

	switch (g->kind) {
	case HGG_KD_SWITCH_OTHER:
		snprintf(buf, len, "switched to %s", task(ctx, g->out_pid, t, sizeof(t)));
		break;
	case HGG_KD_IRQ:
		snprintf(buf, len, "irq %d %s", g->primary_id, irq(ctx, g->primary_id) ?: "");
		break;
	case HGG_KD_IPI:
		snprintf(buf, len, "%s", hgt_vec_name(g->primary_id));
		break;
	case HGG_KD_TIMER:
		snprintf(buf, len, "local_timer");
		break;
	case HGG_KD_HIDDEN:
		/* long enough that the gap event needs a length word (over 112 bytes) */
		snprintf(buf, len, "hidden: no kernel event at all on this CPU (hypervisor, emulator or SMI)");
		break;
	default:
		snprintf(buf, len, "%s", hgg_kind_name[g->kind]);
	}
	return buf;
}

/* ---- what is fed, counted per event name as trace-cmd will name it ---- */

struct fed {
	const char *name;
	int n;
};
static struct fed fed[64];

static void count(const char *name)
{
	int i;

	for (i = 0; fed[i].name && strcmp(fed[i].name, name); i++)
		;
	fed[i].name = name;
	fed[i].n++;
}

/* one item of the run, in the order the one pass meets it (@key) */
enum what { K, H, G };
struct item {
	uint64_t key;
	enum what what;
	uint32_t cpu;
	union {
		struct { struct hgt_rec h; uint8_t payload[32]; } k;
		struct hgl_rec h;
		struct hgg_gap g;
	};
};

static struct item *items;
static int nitems;

static struct item *add(uint64_t key, enum what what)
{
	struct item *it;

	if (!(nitems & (nitems + 1)) || !items) {
		items = realloc(items, 2 * (nitems + 1) * sizeof(*items));
		if (!items) {
			perror("export_synth");
			exit(1);
		}
	}
	it = &items[nitems++];

	memset(it, 0, sizeof(*it));
	it->key = BASE + key;
	it->what = what;
	return it;
}

/* a kernel record at @t, met at @late (0: at @t) */
static void krec(uint32_t cpu, uint64_t t, uint64_t late, int type, uint32_t arg, int flags, const void *pl,
		 unsigned plen)
{
	struct item *it = add(late ? late : t, K);

	it->cpu = cpu;
	it->k.h = (struct hgt_rec){ BASE + t, type, (uint8_t)(16 + ((plen + 7) & ~7u)), flags, 0, arg };
	if (plen)
		memcpy(it->k.payload, pl, plen);
	switch (type) {
	case HGT_REC_SWITCH: count("sched_switch"); break;
	case HGT_REC_WAKING: count("sched_waking"); break;
	case HGT_REC_WAKEUP_NEW: count("sched_wakeup_new"); break;
	case HGT_REC_MIGRATE: count("sched_migrate_task"); break;
	case HGT_REC_EXIT: count("sched_process_exit"); break;
	case HGT_REC_IRQ_ENTRY: count("irq_handler_entry"); break;
	case HGT_REC_IRQ_EXIT: count("irq_handler_exit"); break;
	case HGT_REC_SOFTIRQ_ENTRY: count("softirq_entry"); break;
	case HGT_REC_SOFTIRQ_EXIT: count("softirq_exit"); break;
	case HGT_REC_VEC_ENTRY: count(flags ? "reschedule_entry" : "local_timer_entry"); break;
	case HGT_REC_VEC_EXIT: count(flags ? "reschedule_exit" : "local_timer_exit"); break;
	case HGT_REC_HRTIMER_ENTRY: count("hrtimer_expire_entry"); break;
	case HGT_REC_HRTIMER_EXIT: count("hrtimer_expire_exit"); break;
	case HGT_REC_NMI: count("nmi_handler"); break;
	}
}

static void sw(uint32_t cpu, uint64_t t, uint32_t prev, uint32_t next, uint32_t state)
{
	struct hgt_switch s = { prev, state, 120, next == 101 || next == 102 ? 49 : 120, 0, 0 };

	krec(cpu, t, 0, HGT_REC_SWITCH, next, state ? 0 : HGT_SWITCH_PREEMPT, &s, sizeof(s));
}

static void simple(uint32_t cpu, uint64_t t, int type, uint32_t arg, int flags)
{
	krec(cpu, t, 0, type, arg, flags, NULL, 0);
}

static void hrtimer(uint32_t cpu, uint64_t t, uint32_t id, uint32_t fn)
{
	struct hgt_hrtimer h = { fn, 0 };

	krec(cpu, t, 0, HGT_REC_HRTIMER_ENTRY, id, 0, &h, sizeof(h));
}

static void nmi(uint32_t cpu, uint64_t t, uint32_t fn)
{
	struct hgt_nmi n = { 2000, 1 };

	krec(cpu, t, 0, HGT_REC_NMI, fn, 0, &n, sizeof(n));
}

static void iv(uint16_t thread, uint32_t cpu, uint64_t t0, uint64_t t1, int flags)
{
	struct item *it = add(t1, H);

	it->h = (struct hgl_rec){ BASE + t0, BASE + t1, 0, thread, HGL_REC_INTERVAL, flags, cpu };
	count("interval_start");
	count("interval_end");
}

static uint64_t gaps_from;	/* --gaps-from: only the gaps from this time on */
static uint64_t gap_delay;	/* --gap-delay: the gaps come this late (as the engine's do, judged) */

static void gap(uint16_t thread, uint32_t cpu, uint64_t g0, uint64_t g1, int inferred, int cls, int kind,
		int vol, int32_t primary, uint32_t out_pid)
{
	struct item *it;

	if (g0 < gaps_from)
		return;
	it = add(g1 + 1 + gap_delay, G);

	it->g = (struct hgg_gap){ .g0 = BASE + g0, .g1 = BASE + g1, .cpu = cpu, .thread = thread,
				  .next_thread = thread, .vol = vol, .inferred = inferred, .cls = cls,
				  .kind = kind, .primary_id = primary, .out_pid = out_pid };
	count("gap");
}

/* a LAT thread's sample: intended at @t0, awake @late ns later (thread 1, CPU 1) */
static void lat(uint64_t t0, uint64_t late)
{
	struct item *it = add(t0 + late, H);

	it->h = (struct hgl_rec){ BASE + t0, BASE + t0 + late, late, 1, HGL_REC_WAKE, HGL_WAKE_LAT | 2, 1 };
	count("wakeup");
}

static void build(int with_gaps, int many, int lats)
{
	struct hgt_comm c = { 555, 0, "stress" };
	struct hgt_name nm = { "virtio0-input.0" };
	struct hgt_migrate mg = { 0, 1, 0 };
	struct hgt_wake wk = { 0, 120, 0 };
	struct hgt_lost lost = { 42 };
	struct item *it;

	/* CPU 0: thread 0 */
	sw(0, 1000, 0, 101, 0);
	krec(0, 1100, 0, HGT_REC_COMM, 555, 0, &c, sizeof(c));
	krec(0, 1200, 0, HGT_REC_NAME, 30, HGT_NAME_IRQ, &nm, sizeof(nm));
	iv(0, 0, 2000, 11000, 0);
	sw(0, 11600, 101, 555, 0);
	sw(0, 19800, 555, 101, 0);
	iv(0, 0, 20000, 30000, 0);
	simple(0, 30100, HGT_REC_IRQ_ENTRY, 30, 0);
	simple(0, 30500, HGT_REC_IRQ_EXIT, 30, 1);
	simple(0, 30520, HGT_REC_SOFTIRQ_ENTRY, 3, 0);
	simple(0, 30700, HGT_REC_SOFTIRQ_EXIT, 3, 0);
	iv(0, 0, 30800, 40000, 0);
	simple(0, 40100, HGT_REC_VEC_ENTRY, 236, HGT_VEC_LOCAL_TIMER);
	hrtimer(0, 40150, 7, 0x675a4f97);
	simple(0, 44000, HGT_REC_HRTIMER_EXIT, 7, 0);
	simple(0, 44200, HGT_REC_VEC_EXIT, 236, HGT_VEC_LOCAL_TIMER);
	krec(0, 44300, 0, HGT_REC_WAKING, 555, 0, &wk, sizeof(wk));
	iv(0, 0, 45000, 50000, HGL_IV_SLEEP);
	sw(0, 50100, 101, 0, 1);
	sw(0, 59900, 0, 101, 0);
	iv(0, 0, 60000, 70000, 0);
	/* an irq's records that come after a later softirq entry */
	simple(0, 65300, HGT_REC_SOFTIRQ_ENTRY, 1, 0);
	krec(0, 65100, 65301, HGT_REC_IRQ_ENTRY, 31, 0, NULL, 0);
	krec(0, 65200, 65302, HGT_REC_IRQ_EXIT, 31, 1, NULL, 0);
	simple(0, 65400, HGT_REC_SOFTIRQ_EXIT, 1, 0);
	iv(0, 0, 70500, 80000, HGL_IV_LAST);
	nmi(0, 75000, 0x11111111);
	nmi(0, 76000, 0x22222222);
	if (with_gaps) {
		gap(0, 0, 11000, 20000, HGG_C_SWITCH_OTHER, HGG_C_SWITCH_OTHER, HGG_KD_SWITCH_OTHER, 0, 555, 555);
		gap(0, 0, 30000, 30800, HGG_C_TIMER, HGG_C_INTERRUPT, HGG_KD_IRQ, 0, 30, 0);
		gap(0, 0, 40000, 45000, HGG_C_TIMER, HGG_C_TIMER, HGG_KD_TIMER, 0, 0, 0);
		gap(0, 0, 50000, 60000, HGG_C_VOLUNTARY, HGG_C_SWITCH_OTHER, HGG_KD_IDLE, 2, 0, 0);
		gap(0, 0, 70000, 70500, HGG_C_HIDDEN, HGG_C_HIDDEN, HGG_KD_HIDDEN, 0, 0, 0);
	}

	/* CPU 1: thread 1, periodic */
	sw(1, 1500, 0, 102, 0);
	it = add(3000, H);
	it->h = (struct hgl_rec){ BASE + 2900, BASE + 3000, 100, 1, HGL_REC_WAKE, 1 + 1, 1 };
	count("wakeup");
	it = add(3001, H);
	it->h = (struct hgl_rec){ BASE + 2950, BASE + 3001, (uint64_t)-50, 1, HGL_REC_WAKE, 4 + 1, 1 };
	count("wakeup");
	iv(1, 1, 3000, 9000, 0);
	simple(1, 9100, HGT_REC_VEC_ENTRY, 253, HGT_VEC_RESCHEDULE);
	simple(1, 9300, HGT_REC_VEC_EXIT, 253, HGT_VEC_RESCHEDULE);
	iv(1, 1, 9900, 20000, 0);
	/* a job's record comes when it ends: release 3 us, done 8 us, deadline 13 us */
	it = add(20001, H);
	it->h = (struct hgl_rec){ BASE + 3000, BASE + 8000, BASE + 13000, 1, HGL_REC_JOB, 0, 1 };
	count("job_release");
	count("job_done");
	sw(1, 20100, 102, 556, 0);
	sw(1, 24800, 556, 102, 0);
	iv(1, 1, 25000, 40000, 0);
	/* the second job overran its deadline (23 us) and ended at 26 us */
	it = add(40001, H);
	it->h = (struct hgl_rec){ BASE + 13000, BASE + 26000, BASE + 23000, 1, HGL_REC_JOB, HGL_JOB_MISSED, 1 };
	count("job_release");
	count("deadline_miss");
	krec(1, 35000, 0, HGT_REC_MIGRATE, 555, 0, &mg, sizeof(mg));
	krec(1, 36000, 0, HGT_REC_WAKEUP_NEW, 778, 0, &wk, sizeof(wk));
	simple(1, 37000, HGT_REC_EXIT, 778, 0);
	krec(1, 40200, 0, HGT_REC_LOST, 0, 0, &lost, sizeof(lost));
	simple(1, 40300, HGT_REC_SOFTIRQ_ENTRY, 9, 0);
	simple(1, 40400, HGT_REC_SOFTIRQ_EXIT, 9, 0);
	iv(1, 1, 41000, 60000, HGL_IV_LAST);
	if (with_gaps) {
		gap(1, 1, 9000, 9900, HGG_C_SWITCH_HG, HGG_C_INTERRUPT, HGG_KD_IPI, 0, HGT_VEC_RESCHEDULE, 0);
		gap(1, 1, 20000, 25000, HGG_C_SWITCH_OTHER, HGG_C_SWITCH_OTHER, HGG_KD_SWITCH_OTHER, 0, 556, 556);
		gap(1, 1, 40000, 41000, HGG_C_HIDDEN, HGG_C_UNEXPLAINABLE, HGG_KD_UNEXPLAINABLE, 0, 0, 0);
	}

	if (lats) {
		lat(100000, 30000);
		lat(200000, 80000);
		simple(1, 200500, HGT_REC_VEC_ENTRY, 236, HGT_VEC_LOCAL_TIMER);
		simple(1, 201000, HGT_REC_VEC_EXIT, 236, HGT_VEC_LOCAL_TIMER);
		sw(1, 250000, 0, 102, 0);
		lat(300000, 20000);
	}

	/* CPU 2: other tasks, ticks, a record far too late */
	sw(2, 5000, 0, 777, 0);
	simple(2, 6000, HGT_REC_SOFTIRQ_ENTRY, 9, 0);
	simple(2, 6500, HGT_REC_SOFTIRQ_EXIT, 9, 0);
	sw(2, 8000, 777, 778, 0);
	sw(2, 12000, 778, 0, 0);
	for (uint64_t t = 1000000; t <= 3000000; t += 1000000) {
		simple(2, t, HGT_REC_VEC_ENTRY, 236, HGT_VEC_LOCAL_TIMER);
		simple(2, t + 500, HGT_REC_VEC_EXIT, 236, HGT_VEC_LOCAL_TIMER);
	}
	krec(2, 7000, 3000600, HGT_REC_SOFTIRQ_ENTRY, 9, 0, NULL, 0);
	/* 3.5 s later: a delta over 2^27 cycles needs a time extend */
	simple(2, 3500000000ULL, HGT_REC_VEC_ENTRY, 236, HGT_VEC_LOCAL_TIMER);
	simple(2, 3500000500ULL, HGT_REC_VEC_EXIT, 236, HGT_VEC_LOCAL_TIMER);
	/* --many: softirqs on CPU 2, 1 us apart, for many pages */
	for (int i = 0; i < many; i++) {
		simple(2, 4000000000ULL + 1000ULL * i, HGT_REC_SOFTIRQ_ENTRY, 7, 0);
		simple(2, 4000000000ULL + 1000ULL * i + 500, HGT_REC_SOFTIRQ_EXIT, 7, 0);
	}
}

static int by_key(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x < y ? -1 : 1;	/* stable: qsort is not, the table's order is */
}

int main(int argc, char **argv)
{
	static const uint32_t tids[] = { 101, 102 };
	static const char *const thread_names[] = { "hg-thread-0", "hg-thread-1" };
	static const char *const workloads[] = { "CPU", "PERIODIC" };
	static const uint64_t periods[] = { 0, 10000 };
	int with_gaps = 1, bad_cpu = 0, abort_half = 0, many = 0, early = 0, lats = 0, i, a;
	double hz = 1e9;
	const char *name = "merged.dat", *pf_name = "trace.perfetto-trace";
	char dat[4096], ses[4096], js[4096];
	struct ks_summary ks;
	struct pf_summary pf;
	struct hg_err err = { "", 0 };
	struct ks_export *kx;
	struct pf_export *px;
	const char *dir = NULL;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--no-gaps"))
			with_gaps = 0;
		else if (!strcmp(argv[a], "--bad-cpu"))
			bad_cpu = 1;
		else if (!strcmp(argv[a], "--abort"))
			abort_half = 1;
		else if (!strcmp(argv[a], "--many") && a + 1 < argc)
			many = atoi(argv[++a]);
		else if (!strcmp(argv[a], "--name") && a + 1 < argc)
			name = argv[++a];
		else if (!strcmp(argv[a], "--pf-name") && a + 1 < argc)
			pf_name = argv[++a];
		else if (!strcmp(argv[a], "--gaps-from") && a + 1 < argc)
			gaps_from = strtoull(argv[++a], NULL, 10);
		else if (!strcmp(argv[a], "--gap-delay") && a + 1 < argc)
			gap_delay = strtoull(argv[++a], NULL, 10);
		else if (!strcmp(argv[a], "--hz") && a + 1 < argc)
			hz = strtod(argv[++a], NULL);
		else if (!strcmp(argv[a], "--early"))
			early = 1;
		else if (!strcmp(argv[a], "--lat"))
			lats = 1;
		else
			dir = argv[a];
	}
	if (!dir) {
		fprintf(stderr, "usage: export_synth [--no-gaps] [--gaps-from NS] [--bad-cpu] [--abort] [--many N] "
			"[--gap-delay NS] [--hz HZ] [--early] [--lat] [--name F.dat] [--pf-name F.perfetto-trace] OUTDIR\n");
		return 2;
	}
	struct exp_run run = {
		.tsc_hz = hz, .base_tsc = BASE, .ncpus = 3, .uname = "6.1.0-synthetic #1 SMP",
		.nthreads = 2, .tids = tids, .thread_names = thread_names, .workloads = workloads,
		.names = { NULL, comm, irq, func, each_comm, cause, task },
		.command = "hourglass -n 2 -d 1 \"quoted\"", .periods = periods,
	};
	snprintf(dat, sizeof(dat), "%s/%s", dir, name);
	snprintf(ses, sizeof(ses), "%s/session.json", dir);
	snprintf(js, sizeof(js), "%s/%s", dir, pf_name);
	build(with_gaps, many, lats);
	if (early) {
		/* key 0: before every other item; stamped 100 cycles before the run and at its start,
		 * on CPU 0: KernelShark passes over a CPU whose next entry is at 0 for any later one */
		struct item *it = add(0, K);

		it->cpu = 0;
		it->k.h = (struct hgt_rec){ BASE - 100, HGT_REC_SOFTIRQ_ENTRY, 16, 0, 0, 1 };
		count("softirq_entry");
		it = add(0, K);
		it->cpu = 0;
		it->k.h = (struct hgt_rec){ BASE, HGT_REC_SOFTIRQ_EXIT, 16, 0, 0, 1 };
		count("softirq_exit");
	}
	/* hourglass's records go on while the gaps wait: an interval half-way */
	if (gap_delay)
		iv(1, 1, gap_delay / 2, gap_delay / 2 + 1000, HGL_IV_LAST);
	qsort(items, nitems, sizeof(items[0]), by_key);

	kx = ks_open(dat, ses, &run, &err);
	if (!kx)
		goto fail;
	px = pf_open(js, &run, &err);
	if (!px) {
		ks_abort(kx);
		goto fail;
	}
	for (i = 0; i < nitems; i++) {
		struct item *it = &items[i];
		int r = 0;

		if (abort_half && i == nitems / 2) {
			ks_abort(kx);
			pf_abort(px);
			printf("{\"aborted\": %d}\n", i);
			return 0;
		}
		if (bad_cpu && i >= nitems / 2 && it->what == K) {
			it->cpu = 99;
			bad_cpu = 0;
		}
		switch (it->what) {
		case K:
			r = ks_kernel(kx, it->cpu, &it->k.h, &err) || pf_kernel(px, it->cpu, &it->k.h, &err);
			break;
		case H:
			r = ks_hourglass(kx, &it->h, &err) || pf_hourglass(px, &it->h, &err);
			break;
		case G:
			r = ks_gap(kx, &it->g, &err) || pf_gap(px, &it->g, &err);
			break;
		}
		if (r) {
			ks_abort(kx);
			pf_abort(px);
			goto fail;
		}
	}
	if (exp_finish(kx, &ks, px, &pf, &err))
		goto fail;
	printf("{\"fed\": {");
	for (i = 0; fed[i].name; i++)
		printf("%s\"%s\": %d", i ? ", " : "", fed[i].name, fed[i].n);
	printf("}, \"ks\": {\"kernel_events\": %llu, \"hourglass_events\": %llu, \"gaps\": %llu, "
	       "\"reordered\": %llu, \"clamped\": %llu, \"hg_reordered\": %llu, \"hg_clamped\": %llu, "
	       "\"lost_events\": %llu, \"cpus\": %u, \"session_written\": %d, \"session_at_s\": %.9f, "
	       "\"session_focus\": \"%s\", \"session_plugin\": %d, \"companion\": \"%s\"}, ",
	       (unsigned long long)ks.kernel_events, (unsigned long long)ks.hourglass_events,
	       (unsigned long long)ks.gaps, (unsigned long long)ks.reordered, (unsigned long long)ks.clamped,
	       (unsigned long long)ks.hg_reordered, (unsigned long long)ks.hg_clamped,
	       (unsigned long long)ks.lost_events, ks.cpus, ks.session_written, ks.session_at_s,
	       ks.session_focus ? ks.session_focus : "", ks.session_plugin, ks.companion);
	printf("\"pf\": {\"events\": %llu, \"gaps\": %llu, \"reordered\": %llu, \"clamped\": %llu}}\n",
	       (unsigned long long)pf.events, (unsigned long long)pf.gaps, (unsigned long long)pf.reordered,
	       (unsigned long long)pf.clamped);
	return 0;
fail:
	fprintf(stderr, "export_synth: %s\n", err.msg);
	return hg_err_status(&err);
}

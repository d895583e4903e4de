// SPDX-License-Identifier: GPL-2.0
/*
 * hgtrace-import - turn a trace.dat recorded by trace-cmd into a .hgt file,
 * so that users who cannot load hgtrace.ko still get their gaps explained:
 *
 *   trace-cmd record -C x86-tsc -e sched -e irq -e irq_vectors -e timer -e nmi ...
 *   hgtrace-import trace.dat -o kernel.hgt
 *
 * The file is read through libtracecmd and libtraceevent (the libraries
 * trace-cmd and KernelShark use), one event at a time in time order, and
 * each event the merger needs becomes the record hgtrace.ko would have
 * written (kmod/uapi/hgtrace.h), in per-CPU chunks. Memory stays the same
 * whatever the file's length. Events the buffer dropped (trace-cmd's
 * "[N EVENTS DROPPED]") become HGT_REC_LOST records, so that gaps over them
 * are unexplainable, as with the module. Timestamps are taken as they are:
 * with -C x86-tsc they are the TSC that hourglass reads; the merger checks
 * that they cover hourglass's run.
 */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include <trace-cmd.h>
#include "hg_hgt.h"
#include "hg_hgt_write.h"
#include "hg_sched_switch.h"

#define MAX_PID		(1 << 22)	/* pid_max's ceiling on 64-bit */
#define MAX_IRQ		4096

enum ev {
	EV_SWITCH, EV_WAKING, EV_WAKEUP, EV_WAKEUP_NEW, EV_MIGRATE, EV_EXIT,
	EV_IRQ_ENTRY, EV_IRQ_EXIT, EV_SOFTIRQ_ENTRY, EV_SOFTIRQ_EXIT,
	EV_HRTIMER_ENTRY, EV_HRTIMER_EXIT, EV_NMI,
	EV_VEC_FIRST,				/* then entry, exit for each enum hgt_vec */
	EV_MAX = EV_VEC_FIRST + 2 * HGT_VEC_MAX
};

static const struct { const char *system, *name; } fixed_events[EV_VEC_FIRST] = {
	[EV_SWITCH] = { "sched", "sched_switch" },
	[EV_WAKING] = { "sched", "sched_waking" },
	[EV_WAKEUP] = { "sched", "sched_wakeup" },
	[EV_WAKEUP_NEW] = { "sched", "sched_wakeup_new" },
	[EV_MIGRATE] = { "sched", "sched_migrate_task" },
	[EV_EXIT] = { "sched", "sched_process_exit" },
	[EV_IRQ_ENTRY] = { "irq", "irq_handler_entry" },
	[EV_IRQ_EXIT] = { "irq", "irq_handler_exit" },
	[EV_SOFTIRQ_ENTRY] = { "irq", "softirq_entry" },
	[EV_SOFTIRQ_EXIT] = { "irq", "softirq_exit" },
	[EV_HRTIMER_ENTRY] = { "timer", "hrtimer_expire_entry" },
	[EV_HRTIMER_EXIT] = { "timer", "hrtimer_expire_exit" },
	[EV_NMI] = { "nmi", "nmi_handler" },
};

struct cpu_out {
	char *buf;		/* the records of the chunk being filled */
	size_t used;
	uint32_t records;
	uint64_t last_off;	/* where the CPU's last record was in the file, plus one */
};

/* an event id the merger needs and what it becomes; ids are whatever the
 * file's format text says (any int), so they are looked up, never indexed */
struct id_kind {
	int id;
	int kind;
};

struct importer {
	struct tep_handle *tep;
	struct tep_event *event[EV_MAX];
	struct id_kind ids[EV_MAX];	/* sorted by id */
	int nids;
	struct cpu_out *cpu;		/* ncpus of them: the file's CPU count */
	int ncpus;
	struct hgt_writer w;
	unsigned char *pid_seen;	/* a COMM record was written for this pid */
	unsigned char irq_seen[MAX_IRQ];
	uint64_t first_ts, last_ts, events, records, lost;
	uint64_t bad_cpu, unknown_id;	/* records no good trace.dat holds */
	uint64_t bad_cpu_ts, unknown_ts;
	uint64_t bad_ts, bad_ts_first;	/* stamps beyond 2^63, which no reader takes (HGT_MAX_TSC) */
	uint64_t bad_field, bad_field_off;	/* fields outside their record, the first's record */
	const char *bad_field_name;
	int bad_cpu_nr, unknown_nr;
	int ncpus_seen;
	const char *failed;		/* why the iteration stopped, if it did */
	char why[192];			/* ... when that needs figures */
};

static int flush_cpu(struct importer *im, int cpu)
{
	struct cpu_out *o = &im->cpu[cpu];

	if (!o->records)
		return 0;
	if (hgt_writer_records(&im->w, cpu, o->buf, o->used))
		return -1;
	o->used = 0;
	o->records = 0;
	return 0;
}

/* Append one record (header, then @plen bytes of payload) to @cpu's chunk; @aux: put_aux(). */
static int put_aux(struct importer *im, int cpu, uint64_t ts, int type, int flags, int aux, uint32_t arg,
		   const void *payload, size_t plen)
{
	struct cpu_out *o = &im->cpu[cpu];
	struct hgt_rec r = { .tsc = ts, .type = type, .flags = flags, .aux = aux, .arg = arg };

	r.len = sizeof(r) + plen;
	if (!o->buf) {
		o->buf = malloc(HGT_WRITE_CHUNK_BYTES);
		if (!o->buf) {
			im->failed = "out of memory";
			return -1;
		}
		o->used = 0;
		im->ncpus_seen++;
	}
	/* 64 KiB chunks, header included, as this importer always wrote them: one chunk a flush */
	if (o->used + r.len > HGT_WRITE_CHUNK_BYTES - sizeof(struct hgt_chunk) && flush_cpu(im, cpu)) {
		im->failed = "a write error";
		return -1;
	}
	memcpy(o->buf + o->used, &r, sizeof(r));
	if (plen)
		memcpy(o->buf + o->used + sizeof(r), payload, plen);
	o->used += r.len;
	o->records++;
	im->records++;
	return 0;
}

static int put(struct importer *im, int cpu, uint64_t ts, int type, int flags, uint32_t arg,
	       const void *payload, size_t plen)
{
	return put_aux(im, cpu, ts, type, flags, 0, arg, payload, plen);
}

/* bad_field - note a field that lies outside its record (refuse() says so); 0 */
static int bad_field(struct importer *im, struct tep_record *rec, const char *field)
{
	if (!im->bad_field++) {
		im->bad_field_off = rec->offset;
		im->bad_field_name = field;
	}
	return 0;
}

/*
 * in_record - whether @field's bytes, where the format text puts them, are in @rec.
 * libtraceevent reads a field where the format says without looking at the record's
 * size: a corrupt format or record would have it read beyond the record.
 */
static int in_record(struct tep_event *ev, struct tep_record *rec, const char *field)
{
	const struct tep_format_field *f = tep_find_field(ev, field);

	return !f || (f->offset >= 0 && f->size >= 0 && (long long)f->offset + f->size <= rec->size);
}

static unsigned long long num(struct importer *im, struct tep_event *ev, struct tep_record *rec,
			      const char *field)
{
	unsigned long long v = 0;

	if (!in_record(ev, rec, field))
		return bad_field(im, rec, field);
	/* a field this kernel's event lacks reads as 0, as in the module */
	tep_get_field_val(NULL, ev, field, rec, &v, 0);
	return v;
}

/* A string field, fixed (char comm[16]) or dynamic (__string(name)), into @out. */
static void str(struct importer *im, struct tep_event *ev, struct tep_record *rec, const char *field,
		char *out, size_t size)
{
	const char *data = rec->data, *p;
	int len = 0;

	memset(out, 0, size);
	if (!in_record(ev, rec, field)) {
		bad_field(im, rec, field);
		return;
	}
	/* a dynamic string's place and length are in the record itself: held to it too */
	p = tep_get_field_raw(NULL, ev, field, rec, &len, 0);
	if (p && len > 0 && (p < data || len > rec->size || p + len > data + rec->size)) {
		bad_field(im, rec, field);
		return;
	}
	if (p && len > 0)
		memcpy(out, p, (size_t)len < size - 1 ? (size_t)len : size - 1);
}

static int comm_once(struct importer *im, int cpu, uint64_t ts, uint32_t pid, struct tep_event *ev,
		     struct tep_record *rec, const char *field)
{
	struct hgt_comm c = { 0 };

	if (pid >= MAX_PID || im->pid_seen[pid])
		return 0;
	im->pid_seen[pid] = 1;
	str(im, ev, rec, field, c.comm, sizeof(c.comm));
	return put(im, cpu, ts, HGT_REC_COMM, 0, pid, &c, sizeof(c));
}

static int convert(struct importer *im, int kind, struct tep_event *ev, struct tep_record *rec, int cpu)
{
	uint64_t ts = rec->ts;

	switch (kind) {
	case EV_SWITCH: {
		struct hgt_switch s = { 0 };
		uint32_t next = num(im, ev, rec, "next_pid");
		struct hg_switch_state st;

		s.prev_pid = num(im, ev, rec, "prev_pid");
		s.prev_prio = num(im, ev, rec, "prev_prio");
		s.next_prio = num(im, ev, rec, "next_prio");
		st = hg_switch_from_ftrace(num(im, ev, rec, "prev_state"), s.next_prio);
		s.prev_state = st.prev_state;
		if (comm_once(im, cpu, ts, s.prev_pid, ev, rec, "prev_comm") ||
		    comm_once(im, cpu, ts, next, ev, rec, "next_comm"))
			return -1;
		return put_aux(im, cpu, ts, HGT_REC_SWITCH, st.flags, st.policy, next, &s, sizeof(s));
	}
	case EV_WAKING:
	case EV_WAKEUP:
	case EV_WAKEUP_NEW: {
		struct hgt_wake w = { 0 };
		uint32_t pid = num(im, ev, rec, "pid");

		w.target_cpu = num(im, ev, rec, "target_cpu");
		w.prio = num(im, ev, rec, "prio");
		if (comm_once(im, cpu, ts, pid, ev, rec, "comm"))
			return -1;
		return put(im, cpu, ts, kind == EV_WAKING ? HGT_REC_WAKING : kind == EV_WAKEUP ?
			   HGT_REC_WAKEUP : HGT_REC_WAKEUP_NEW, 0, pid, &w, sizeof(w));
	}
	case EV_MIGRATE: {
		struct hgt_migrate m = { 0 };

		m.orig_cpu = num(im, ev, rec, "orig_cpu");
		m.dest_cpu = num(im, ev, rec, "dest_cpu");
		return put(im, cpu, ts, HGT_REC_MIGRATE, 0, num(im, ev, rec, "pid"), &m, sizeof(m));
	}
	case EV_EXIT:
		return put(im, cpu, ts, HGT_REC_EXIT, 0, num(im, ev, rec, "pid"), NULL, 0);
	case EV_IRQ_ENTRY: {
		uint32_t irq = num(im, ev, rec, "irq");

		if (irq < MAX_IRQ && !im->irq_seen[irq]) {
			struct hgt_name n;

			im->irq_seen[irq] = 1;
			str(im, ev, rec, "name", n.name, sizeof(n.name));
			if (put(im, cpu, ts, HGT_REC_NAME, HGT_NAME_IRQ, irq, &n, sizeof(n)))
				return -1;
		}
		return put(im, cpu, ts, HGT_REC_IRQ_ENTRY, 0, irq, NULL, 0);
	}
	case EV_IRQ_EXIT:
		return put(im, cpu, ts, HGT_REC_IRQ_EXIT, num(im, ev, rec, "ret"), num(im, ev, rec, "irq"), NULL, 0);
	case EV_SOFTIRQ_ENTRY:
	case EV_SOFTIRQ_EXIT:
		return put(im, cpu, ts, kind == EV_SOFTIRQ_ENTRY ? HGT_REC_SOFTIRQ_ENTRY : HGT_REC_SOFTIRQ_EXIT,
			   0, num(im, ev, rec, "vec"), NULL, 0);
	case EV_HRTIMER_ENTRY: {
		/* the module's timer ids are keyed hashes; trace.dat has addresses,
		 * which are not passed on (no kernel pointer in our files) */
		struct hgt_hrtimer h = { 0 };

		return put(im, cpu, ts, HGT_REC_HRTIMER_ENTRY, 0, 0, &h, sizeof(h));
	}
	case EV_HRTIMER_EXIT:
		return put(im, cpu, ts, HGT_REC_HRTIMER_EXIT, 0, 0, NULL, 0);
	case EV_NMI: {
		struct hgt_nmi n = { 0 };
		unsigned long long d = num(im, ev, rec, "delta_ns");

		n.delta_ns = d > UINT32_MAX ? UINT32_MAX : d;
		n.handled = num(im, ev, rec, "handled");
		return put(im, cpu, ts, HGT_REC_NMI, 0, 0, &n, sizeof(n));
	}
	default: {
		int v = (kind - EV_VEC_FIRST) / 2, entry = !((kind - EV_VEC_FIRST) % 2);

		return put(im, cpu, ts, entry ? HGT_REC_VEC_ENTRY : HGT_REC_VEC_EXIT, v,
			   num(im, ev, rec, "vector"), NULL, 0);
	}
	}
}

static int by_id(const void *a, const void *b)
{
	const struct id_kind *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

static int on_record(struct tracecmd_input *handle, struct tep_record *rec, int cpu, void *data)
{
	struct importer *im = data;
	struct id_kind key, *hit;
	int id;

	(void)handle;
	if (cpu < 0 || cpu >= im->ncpus) {
		/* libtracecmd hands out CPUs of the file: anything else is a corrupt file */
		if (!im->bad_cpu++) {
			im->bad_cpu_ts = rec->ts;
			im->bad_cpu_nr = cpu;
		}
		return 0;
	}
	/* libtracecmd 3.1 walks a page's records by the lengths they claim: on a corrupt page a
	 * record of length 0 (size -4) leads back to itself, and it hands out the same records
	 * for ever. One CPU's records only move forward in the file: anything else stops here. */
	if (rec->size < 0) {
		snprintf(im->why, sizeof(im->why), "CPU %d's record at offset %llu claims %d bytes: "
			 "a corrupt page", cpu, (unsigned long long)rec->offset, rec->size);
		im->failed = im->why;
		return -1;
	}
	if (rec->offset + 1 <= im->cpu[cpu].last_off) {
		snprintf(im->why, sizeof(im->why), "CPU %d's record at offset %llu comes after its "
			 "record at offset %llu: a corrupt page, read in a loop", cpu,
			 (unsigned long long)rec->offset, (unsigned long long)im->cpu[cpu].last_off - 1);
		im->failed = im->why;
		return -1;
	}
	im->cpu[cpu].last_off = rec->offset + 1;
	if (rec->ts > HGT_MAX_TSC) {
		if (!im->bad_ts++)
			im->bad_ts_first = rec->ts;
		return 0;
	}
	im->events++;
	if (!im->first_ts || rec->ts < im->first_ts)
		im->first_ts = rec->ts;
	if (rec->ts > im->last_ts)
		im->last_ts = rec->ts;
	if (rec->missed_events) {
		/* negative: the buffer lost events but did not count them */
		struct hgt_lost l = { rec->missed_events > 0 ? (uint64_t)rec->missed_events : 0 };

		im->lost += l.count;
		if (put(im, cpu, rec->ts, HGT_REC_LOST, 0, 0, &l, sizeof(l)))
			return -1;
	}
	id = tep_data_type(im->tep, rec);
	key.id = id;
	hit = bsearch(&key, im->ids, im->nids, sizeof(key), by_id);
	if (!hit) {
		/* an event the merger does not need, or one no format of the file
		 * describes: the latter means the formats and the data disagree */
		if (!tep_find_event(im->tep, id) && !im->unknown_id++) {
			im->unknown_ts = rec->ts;
			im->unknown_nr = id;
		}
		return 0;
	}
	return convert(im, hit->kind, im->event[hit->kind], rec, cpu) ? -1 : 0;
}

static void find_events(struct importer *im)
{
	char name[64];
	int k;

	for (k = 0; k < EV_MAX; k++) {
		if (k < EV_VEC_FIRST) {
			im->event[k] = tep_find_event_by_name(im->tep, fixed_events[k].system, fixed_events[k].name);
		} else {
			snprintf(name, sizeof(name), "%s_%s", hgt_vec_name((k - EV_VEC_FIRST) / 2),
				 (k - EV_VEC_FIRST) % 2 ? "exit" : "entry");
			im->event[k] = tep_find_event_by_name(im->tep, "irq_vectors", name);
		}
		if (im->event[k])
			im->ids[im->nids++] = (struct id_kind){ im->event[k]->id, k };
	}
	qsort(im->ids, im->nids, sizeof(im->ids[0]), by_id);
}

/*
 * libtracecmd 3.1 trusts the sizes a trace.dat declares: a truncated file
 * makes it (and trace-cmd report) read past its mappings and crash. That is
 * a bad input, not a bug of ours, so it gets the same treatment as any bad
 * input: a message naming the file, no half-written output, exit 3. A crash
 * in our own code is not the file's fault: it is said as such and the
 * program dies of its signal, so that it is seen and reported.
 */
static const char *crash_in, *crash_out;

#ifdef HG_FUZZ
/* the fuzz target's: 1 when @pc is our code (ours is in a section of its own there) */
int hg_fuzz_ours(const void *pc);
#define FUZZ_VISIBLE
#else
#define FUZZ_VISIBLE static
#endif

static int object_is(const char *path, const char *name)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, name, strlen(name));
}

/*
 * hgi_crash_in_library - the crash at @pc is inside libtracecmd (or the
 * libraries it reads through): the first frame of the stack, from @pc up,
 * that is not libc's, the loader's or a decompressor's is theirs. Not
 * async-signal-safe (backtrace, dladdr), which a dying process can afford:
 * catch_crashes() loaded the unwinder beforehand.
 */
FUZZ_VISIBLE int hgi_crash_in_library(const void *pc)
{
	static const char *const theirs[] = { "libtracecmd.", "libtraceevent.", "libtracefs." };
	static const char *const below[] = { "libc.", "ld-linux", "libz.", "libzstd." };
	void *frames[64];
	int n = pc ? backtrace(frames, 64) : 0, from, i, k;

	for (from = 0; from < n && frames[from] != pc; from++)
		;
	if (from == n) {		/* the unwinder did not get through the signal frame */
		frames[0] = (void *)pc;
		from = 0;
		n = pc ? 1 : 0;
	}
	for (i = from; i < n; i++) {
		Dl_info d;
		const char *obj = dladdr(frames[i], &d) && d.dli_fname ? d.dli_fname : "";
		int skip = 0;

		for (k = 0; k < (int)(sizeof(theirs) / sizeof(theirs[0])); k++)
			if (object_is(obj, theirs[k]))
				return 1;
		for (k = 0; k < (int)(sizeof(below) / sizeof(below[0])); k++)
			skip |= object_is(obj, below[k]);
#ifdef HG_FUZZ
		skip |= !hg_fuzz_ours(frames[i]);	/* the sanitizers' runtime, in the same executable */
#endif
		if (!skip)
			return 0;
	}
	return 0;
}

static void say(const char *s)
{
	if (write(2, s, strlen(s)) < 0) {
		/* nothing more to say */
	}
}

static void __attribute__((unused)) on_crash(int sig, siginfo_t *si, void *uc)
{
	const void *pc = NULL;

	(void)si;
#if defined(__x86_64__)
	pc = (const void *)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
#else
	(void)uc;
#endif
	if (crash_out)
		unlink(crash_out);
	if (!pc || hgi_crash_in_library(pc)) {
		say("hgtrace-import: libtracecmd crashed reading ");
		say(crash_in);
		say(": the trace.dat is truncated or corrupt\n");
		_exit(3);
	}
	say("hgtrace-import: crashed in its own code reading ");
	say(crash_in);
	say(sig == SIGSEGV ? " (segmentation fault" : sig == SIGBUS ? " (bus error" : " (arithmetic fault");
	say("): a bug of hgtrace-import, please report it with the file\n");
	/* SA_RESETHAND: the fault happens again and the default action ends the process */
}

static void catch_crashes(const char *in, const char *out)
{
	struct sigaction sa;
	void *warm[4];

	crash_in = in;
	crash_out = out;
#ifndef HG_FUZZ			/* the fuzz target has its own handler, which calls hgi_crash_in_library() */
	backtrace(warm, 4);	/* loads the unwinder now, not in the handler */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_crash;
	sa.sa_flags = SA_RESETHAND | SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
#else
	(void)sa;
	(void)warm;
#endif
}

/*
 * libtracecmd 3.1 can also loop forever on a corrupt file: a trace.dat found
 * by fuzz_import (tests/unit/data/import-hangs.dat) keeps tracecmd_open()
 * reading two bytes at a time, and trace-cmd report hangs on it the same
 * way. Opening reads only the headers, which takes well under a second even
 * for a large recording, so a watchdog ends it as a bad input after
 * HGTRACE_IMPORT_OPEN_S seconds (default 60). Not in the fuzz target, whose
 * own per-input time limit is the watchdog there.
 */
#define OPEN_LIMIT_S 60

static void __attribute__((unused)) on_open_alarm(int sig)
{
	(void)sig;
	say("hgtrace-import: libtracecmd did not finish reading the headers of ");
	say(crash_in);
	say(" (it loops on this file, as trace-cmd report does): the trace.dat is corrupt\n");
	_exit(3);
}

static void open_watchdog(int on)
{
#ifndef HG_FUZZ
	const char *v = getenv("HGTRACE_IMPORT_OPEN_S");
	long s = v && *v ? strtol(v, NULL, 10) : OPEN_LIMIT_S;

	if (on) {
		signal(SIGALRM, on_open_alarm);
		alarm(s > 0 && s < 86400 ? (unsigned)s : OPEN_LIMIT_S);
	} else {
		alarm(0);
		signal(SIGALRM, SIG_DFL);
	}
#else
	(void)on;
#endif
}

static void free_importer(struct importer *im)
{
	int cpu;

	if (!im)
		return;
	for (cpu = 0; im->cpu && cpu < im->ncpus; cpu++)
		free(im->cpu[cpu].buf);
	free(im->cpu);
	free(im->pid_seen);
	free(im);
}

/* refuse - what a good trace.dat never holds: a wrong answer must not look like one */
static int refuse(const struct importer *im, const char *path)
{
	if (im->bad_ts)
		fprintf(stderr, "hgtrace-import: %s: %llu records stamped beyond 2^63 (the first: %llu): not a "
			"clock, a corrupt trace.dat\n", path, (unsigned long long)im->bad_ts,
			(unsigned long long)im->bad_ts_first);
	else if (!im->events)
		fprintf(stderr, "hgtrace-import: %s: no events in it (libtracecmd found no data: an empty or "
			"corrupt trace.dat)\n", path);
	else if (im->unknown_id)
		fprintf(stderr, "hgtrace-import: %s: %llu records of event ids that none of the file's formats "
			"describes (the first: id %d at timestamp %llu): the formats and the data disagree, "
			"a corrupt trace.dat\n", path, (unsigned long long)im->unknown_id, im->unknown_nr,
			(unsigned long long)im->unknown_ts);
	else if (im->bad_field)
		fprintf(stderr, "hgtrace-import: %s: %llu fields outside their record (the first: '%s' of the "
			"record at offset %llu): the formats and the data disagree, a corrupt trace.dat\n", path,
			(unsigned long long)im->bad_field, im->bad_field_name,
			(unsigned long long)im->bad_field_off);
	else if (im->bad_cpu)
		fprintf(stderr, "hgtrace-import: %s: %llu records on CPUs the file does not have (the first: "
			"CPU %d at timestamp %llu, the file has %d CPUs): a corrupt trace.dat\n", path,
			(unsigned long long)im->bad_cpu, im->bad_cpu_nr, (unsigned long long)im->bad_cpu_ts,
			im->ncpus);
	else
		return 0;
	return 1;
}

/* import - every event of @in into @out; the exit status */
static int import(struct importer *im, struct tracecmd_input *in, const char *path, const char *out,
		  int compress)
{
	struct hgt_file_window win;
	char meta[PATH_MAX + 512], *shown;
	int cpu, rc;

	im->tep = tracecmd_get_tep(in);
	find_events(im);
	shown = strdup(path);
	if (!shown) {
		fprintf(stderr, "hgtrace-import: out of memory\n");
		return 2;
	}
	hgt_meta_sanitize(shown);	/* the metadata is UTF-8 text: a path need not be */
	/* no clock: libtracecmd does not say which the trace.dat has (the merger checks that its
	 * events cover hourglass's run); a value that is not the TSC's name (this said "as
	 * recorded") makes every reader refuse the file (hgt_check_clock) */
	snprintf(meta, sizeof(meta), "format: hgtrace 1\nsource: trace-cmd\nimported_from: %s\n"
		 "nr_cpu_ids: %d\n", shown, im->ncpus);
	free(shown);
	if (hgt_writer_open(&im->w, out, HGT_FILE_VERSION, meta)) {
		fprintf(stderr, "hgtrace-import: %s\n", im->w.err.msg);
		hgt_writer_close(&im->w);
		return 2;	/* an output that cannot be written: could not run */
	}
	crash_out = out;
	im->w.compress = compress;
	rc = tracecmd_iterate_events(in, NULL, 0, on_record, im);
	for (cpu = 0; cpu < im->ncpus; cpu++)
		if (im->cpu[cpu].buf && flush_cpu(im, cpu))
			rc = -1;
	if (rc < 0 || im->w.error) {
		if (im->w.error)
			fprintf(stderr, "hgtrace-import: %s (after %llu events of %s)\n", im->w.err.msg,
				(unsigned long long)im->events, path);
		else
			fprintf(stderr, "hgtrace-import: %s: stopped after %llu events (%s)\n", path,
				(unsigned long long)im->events, im->failed ? im->failed : "unreadable data");
		rc = im->w.error ? 2 : im->failed && !strcmp(im->failed, "out of memory") ? 2 : 3;
		goto fail;
	}
	if (refuse(im, path)) {
		rc = 3;
		goto fail;
	}
	win.start_tsc = im->first_ts;
	win.stop_tsc = im->last_ts;
	if (hgt_writer_trailer(&im->w, &win, NULL, NULL, 0) || hgt_writer_end(&im->w) ||
	    hgt_writer_close(&im->w)) {
		fprintf(stderr, "hgtrace-import: %s\n", im->w.err.msg);
		unlink(out);
		return 2;	/* an output that cannot be written: could not run */
	}
	/* one line of key=value: for people, and for the merger, which needs
	 * the time span before it reads the records */
	printf("hgtrace-import: %s: events=%llu records=%llu cpus=%d dropped=%llu first_ts=%llu last_ts=%llu\n",
	       out, (unsigned long long)im->events, (unsigned long long)im->records, im->ncpus_seen,
	       (unsigned long long)im->lost, (unsigned long long)im->first_ts, (unsigned long long)im->last_ts);
	return 0;
fail:
	hgt_writer_close(&im->w);
	unlink(out);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hgtrace-import TRACE.dat -o OUT.hgt [-z]\n"
		"\n"
		"Convert a trace.dat recorded by trace-cmd (with -C x86-tsc, so that its\n"
		"timestamps are the TSC hourglass reads) into the .hgt records hgtrace.ko\n"
		"writes, for `hourglass report`: sched_switch, sched_waking/wakeup(_new),\n"
		"sched_migrate_task, sched_process_exit, irq_handler_entry/exit,\n"
		"softirq_entry/exit, the irq_vectors entry/exit events, hrtimer_expire_entry/exit\n"
		"and nmi_handler; other events are skipped. Dropped events become LOST records.\n"
		"\n"
		"  -o, --output FILE   the .hgt file to write (required)\n"
		"  -z, --compress      zlib-compress each chunk, as `hgtrace record -z`\n"
		"  -h, --help          this text\n"
		"\n"
		"Exit status (docs/exit-status.md): 0 done, 1 bad command line, 2 could not\n"
		"run (out of memory, an output that cannot be written), 3 a trace.dat that is\n"
		"truncated or corrupt (named, with what was wrong; no output is left).\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "compress", no_argument, NULL, 'z' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct importer *im;
	struct tracecmd_input *in;
	const char *out = NULL, *path;
	int c, compress = 0, rc, ncpus;

	while ((c = getopt_long(argc, argv, "o:zh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			/* "-o --compress": an option, not the file to write */
			if (optarg == argv[optind - 1] && optarg[0] == '-' && optarg[1]) {
				fprintf(stderr, "hgtrace-import: -o needs a file, but '%s' that follows it is an "
					"option (for a file of that name write ./ before it)\n", optarg);
				return 1;
			}
			out = optarg;
			break;
		case 'z': compress = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 1;
		}
	}
	if (optind != argc - 1 || !out) {
		fprintf(stderr, "hgtrace-import: %s\n", !out ? "say where to write: -o OUT.hgt" :
			"give exactly one trace.dat");
		usage(stderr);
		return 1;
	}
	path = argv[optind];
	catch_crashes(path, NULL);
	tracecmd_set_loglevel(TEP_LOG_CRITICAL);
	open_watchdog(1);
	in = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
	open_watchdog(0);
	if (!in) {
		fprintf(stderr, "hgtrace-import: %s: not a trace.dat that libtracecmd can open (%s)\n", path,
			errno ? strerror(errno) : "bad or truncated file");
		return 3;
	}
	ncpus = tracecmd_get_tep(in) ? tep_get_cpus(tracecmd_get_tep(in)) : 0;
	if (ncpus < 1 || ncpus > HGT_MAX_CPUS) {
		fprintf(stderr, "hgtrace-import: %s: the file says it has %d CPUs (1 to %d expected): "
			"a corrupt trace.dat\n", path, ncpus, HGT_MAX_CPUS);
		tracecmd_close(in);
		return 3;
	}
	im = calloc(1, sizeof(*im));
	if (!im || !(im->pid_seen = calloc(MAX_PID, 1)) || !(im->cpu = calloc(ncpus, sizeof(*im->cpu)))) {
		fprintf(stderr, "hgtrace-import: out of memory\n");
		rc = 2;
	} else {
		im->ncpus = ncpus;
		rc = import(im, in, path, out, compress);
	}
	free_importer(im);
	tracecmd_close(in);
	return rc;
}

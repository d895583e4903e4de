/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hgtrace.h - internal declarations shared by the module's files.
 *
 * main.c owns the global state; buffer.c the store and loss counters, ring.c
 * our own per-CPU ring (both modes);
 * tracepoints.c finds and attaches the tracepoints; probes.c turns each event
 * into a record; msa.c keeps microstates; ctl.c is /dev/hgtrace; proc.c is
 * /proc/hgtrace.
 */
#ifndef HGT_INTERNAL_H
#define HGT_INTERNAL_H

#include <linux/types.h>
#include <linux/mutex.h>
#include <linux/cpumask.h>
#include <linux/percpu.h>
#include <linux/mm.h>
#include <linux/string.h>
#include <asm/local64.h>
#include "uapi/hgtrace.h"

#define HGT_NAME "hgtrace"
#define HGT_NAME_LEN	sizeof(((struct hgt_name *)0)->name)

struct task_struct;

/* Per-CPU counters. Written from probes in any context, so local64_t. */
struct hgt_pcpu {
	local64_t produced;
	local64_t written;
	local64_t refused;	/* the ring said no: full (stop mode), or no room could be freed */
	local64_t pending_lost;	/* refused but not yet reported by a HGT_REC_LOST */
	u64 read;		/* records given to readers; under hgt.read_lock */
	u64 reader_fault;	/* consumed, but copy_to_user() failed */
	int hard_depth;		/* hard irq nesting on this CPU, for microstates */
};

struct hgt_state {
	struct mutex ctl_lock;		/* config, filter, start, stop, reset */
	struct mutex read_lock;		/* consumers of the ring buffer */
	unsigned long rb_bytes;		/* per CPU, as asked for */
	unsigned long buf_bytes;	/* per CPU, as allocated */
	bool buffer_ready;		/* a store of hgt.mode exists */
	u32 mode;
	u32 events;			/* what is recorded (HGT_EV_*) */
	u32 events_available;		/* what this kernel has */
	bool running;			/* recording: the flag every probe tests first */
	bool attached;			/* the probes of attached_events are registered */
	u32 attached_events;
	bool discard;			/* benchmarks: records counted, not stored */
	u64 stop_tsc;			/* when recording stopped: no record is later */
	struct cpumask cpus;		/* CPUs recorded */
	struct hgt_filter filter;	/* stable while running */
	unsigned long *pid_seen;	/* pids whose COMM record was written */
	unsigned long *irq_named;	/* irqs whose NAME record was written */
	int read_cpu;			/* round-robin start for the next read() */
	u32 msa_capacity;
	/*
	 * The module's owner (ABI 1.4): the open file that first changed the
	 * settings or started recording, until that file's STOP or close; NULL
	 * for none. owner_pid: its process, for STATS and /proc/hgtrace/status
	 * (a struct pid: shown in the reader's namespace). Both under owner_lock
	 * (ctl.c says why not ctl_lock).
	 */
	spinlock_t owner_lock;
	const void *owner;
	struct pid *owner_pid;
};

extern struct hgt_state hgt;

/*
 * hgt_mem_fits - may @bytes be taken now without pressing the machine?
 *
 * Half of what the kernel estimates available, as the kernel's ring buffer
 * does for its own pages: a CONFIG asking for a gigabyte per CPU on a small
 * machine is refused with ENOMEM before it drives the machine into reclaim
 * or the OOM killer.
 */
static inline bool hgt_mem_fits(u64 bytes)
{
	return bytes / PAGE_SIZE < (u64)si_mem_available() / 2;
}
DECLARE_PER_CPU(struct hgt_pcpu, hgt_pcpu);

/* buffer.c */
int hgt_buffer_alloc(unsigned long bytes, u32 mode);
void hgt_buffer_free(void);
void hgt_buffer_reset(void);
void hgt_emit(void *rec, unsigned int len);
ssize_t hgt_buffer_read(char __user *ubuf, size_t count);
void hgt_buffer_stats(int cpu, struct hgt_cpu_stats *s);

/* A LOST marker: aux 0 = refused at the producer, 1 = overwritten before read. */
struct hgt_lost_rec {
	struct hgt_rec h;
	struct hgt_lost l;
};

static inline void hgt_lost_fill(struct hgt_lost_rec *m, u64 tsc, u64 count, u8 overwritten)
{
	memset(m, 0, sizeof(*m));
	m->h.tsc = tsc;
	m->h.type = HGT_REC_LOST;
	m->h.len = sizeof(*m);
	m->h.aux = overwritten;
	m->l.count = count;
}

/* ring.c: the store of both modes */
unsigned long hgt_ring_bytes(unsigned long bytes);
int hgt_ring_alloc(unsigned long bytes);
void hgt_ring_free(void);
void hgt_ring_reset(void);
int hgt_ring_write(const void *rec, unsigned int len);
long hgt_ring_read_user(int cpu, char __user *dst, size_t room, u32 *nr, u64 *data);
bool hgt_ring_empty(int cpu);
u64 hgt_ring_freed(int cpu);
u64 hgt_ring_overtaken(void);

/* tracepoints.c */
int hgt_tracepoints_find(void);
int hgt_tracepoints_attach(u32 events);
void hgt_tracepoints_detach(void);
void hgt_tracepoints_sync(void);
u32 hgt_tracepoints_available(void);
void hgt_tracepoints_show(struct seq_file *m);

/* probes.c: the probe functions, handed to tracepoints.c */
struct hgt_probe_desc {
	const char *name;	/* tracepoint name */
	void *probe;
	void *data;		/* passed back as the probe's first argument */
	u32 event;		/* HGT_EV_* group */
};
extern const struct hgt_probe_desc hgt_probes[];
extern const unsigned int hgt_nr_probes;
int hgt_probes_init(void);
void hgt_probes_exit(void);
void hgt_probes_reset(void);
bool hgt_task_traced(struct task_struct *p);
void hgt_probes_quiesce(void);
void hgt_func_name(u32 id, char *name);
void hgt_funcs_resolve(void);
u64 hgt_funcs_unnamed(void);
void hgt_name_fill(struct hgt_rec *r);

/* msa.c */
int hgt_msa_alloc(u32 capacity);
void hgt_msa_free(void);
void hgt_msa_reset(void);
/* the TSC and the scheduler's clock, read together once per switch when needed (tsc 0: not yet) */
struct hgt_sched_clocks {
	u64 tsc, ns;
};
void hgt_sched_clocks_read(struct hgt_sched_clocks *c);
DECLARE_PER_CPU(u64, hgt_last_switch_ns);	/* written by the sched_switch probe */
u16 hgt_sched_lag(struct task_struct *p, u64 tsc, struct hgt_sched_clocks *now);
void hgt_msa_switch(u64 tsc, struct hgt_sched_clocks *now, struct task_struct *prev,
		    struct task_struct *next, unsigned int prev_state, bool preempt);
void hgt_msa_wake(u64 tsc, struct task_struct *p, bool new_task);
void hgt_msa_irq(u64 tsc, bool hard, bool entry);
void hgt_msa_syscall(u64 tsc, bool entry);
int hgt_msa_get(struct hgt_msa *out);
void hgt_msa_show(struct seq_file *m);
u64 hgt_msa_overflow(void);

/* ctl.c, proc.c */
int hgt_ctl_init(void);
pid_t hgt_owner_tgid(void);
void hgt_ctl_exit(void);
int hgt_proc_init(void);
void hgt_proc_exit(void);
int hgt_start(void);
void hgt_off(void);
void hgt_stop(void);

#endif /* HGT_INTERNAL_H */

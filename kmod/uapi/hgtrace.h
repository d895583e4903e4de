/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * hgtrace.h - the contract between hgtrace.ko and user space.
 *
 * This is the header shared by the module and the tools (hgtrace_vectors.h
 * beside it only names enum hgt_vec's values). Everything a reader sees
 * crosses it: the ioctl commands on /dev/hgtrace, the records returned by
 * read(), and the statistics. All structures are fixed size and
 * packed to 8 bytes; no kernel pointer or kernel-internal type appears here.
 *
 * Versioning: HGT_ABI_MAJOR changes when an existing layout or meaning
 * changes (old readers must refuse); HGT_ABI_MINOR changes when something is
 * added that old readers may ignore (a new record type, a new event bit, a
 * new ioctl, a control structure with more room). Every open file must say
 * HGT_IOC_HELLO with its version before anything else; the module refuses
 * another major with -EPROTONOSUPPORT. HELLO itself never changes.
 *
 * A module of minor N still answers the ioctls of every minor below it, with
 * their own layouts (the "ABI 1.0" section at the end), so that an old reader
 * keeps working; a reader learns the module's minor from HELLO and talks to
 * an older module in that module's terms.
 *
 * Control structures end in reserved fields: zero in both directions today,
 * refused with EINVAL when an input is not zero, so that a later minor can
 * give them a meaning without a new ioctl.
 *
 * docs/hgtrace-abi.md describes each record in prose.
 */
#ifndef _UAPI_HGTRACE_H
#define _UAPI_HGTRACE_H

#include <linux/types.h>
#include <linux/ioctl.h>

#ifndef HGT_ABI_MAJOR
#define HGT_ABI_MAJOR		1
#endif
#define HGT_ABI_MINOR		4

#define HGT_DEVICE		"/dev/hgtrace"
#define HGT_PROC_DIR		"/proc/hgtrace"

/*
 * Record types. Each record starts with struct hgt_rec; its total length is
 * hgt_rec.len bytes (a multiple of 8), so a reader can skip types it does
 * not know. The payload after the header depends on the type.
 */
enum hgt_type {
	HGT_REC_NONE = 0,
	HGT_REC_SWITCH,		/* arg = next pid;  struct hgt_switch */
	HGT_REC_WAKING,		/* arg = pid;       struct hgt_wake */
	HGT_REC_WAKEUP,		/* arg = pid;       struct hgt_wake */
	HGT_REC_WAKEUP_NEW,	/* arg = pid;       struct hgt_wake */
	HGT_REC_MIGRATE,	/* arg = pid;       struct hgt_migrate */
	HGT_REC_EXIT,		/* arg = pid;       no payload */
	HGT_REC_IRQ_ENTRY,	/* arg = irq;       no payload (name: HGT_REC_NAME) */
	HGT_REC_IRQ_EXIT,	/* arg = irq;       flags = handler's return value */
	HGT_REC_SOFTIRQ_ENTRY,	/* arg = vector;    no payload */
	HGT_REC_SOFTIRQ_EXIT,	/* arg = vector;    no payload */
	HGT_REC_VEC_ENTRY,	/* arg = vector;    flags = enum hgt_vec */
	HGT_REC_VEC_EXIT,	/* arg = vector;    flags = enum hgt_vec */
	HGT_REC_NMI,		/* arg = handler id; struct hgt_nmi (one record per handler run) */
	HGT_REC_HRTIMER_ENTRY,	/* arg = timer id;  struct hgt_hrtimer */
	HGT_REC_HRTIMER_EXIT,	/* arg = timer id;  no payload */
	HGT_REC_SYS_ENTER,	/* arg = syscall nr; no payload */
	HGT_REC_SYS_EXIT,	/* arg = low 32 bits of the return value */
	HGT_REC_COMM,		/* arg = pid;       struct hgt_comm (first sighting of a task) */
	HGT_REC_NAME,		/* arg = id;        flags = enum hgt_name_kind; struct hgt_name */
	HGT_REC_LOST,		/* arg = 0;         struct hgt_lost: events lost just before this point */
	HGT_REC_MAX
};

/* Which x86 vector a HGT_REC_VEC_* record is about (the irq_vectors tracepoints). */
enum hgt_vec {
	HGT_VEC_LOCAL_TIMER = 0,
	HGT_VEC_RESCHEDULE,
	HGT_VEC_CALL_FUNCTION,
	HGT_VEC_CALL_FUNCTION_SINGLE,
	HGT_VEC_IRQ_WORK,
	HGT_VEC_X86_PLATFORM_IPI,
	HGT_VEC_SPURIOUS_APIC,
	HGT_VEC_ERROR_APIC,
	HGT_VEC_THERMAL_APIC,
	HGT_VEC_MAX
};

/* What a HGT_REC_NAME record names. */
enum hgt_name_kind {
	HGT_NAME_IRQ = 0,	/* id = irq number, name = irqaction name */
	HGT_NAME_FUNC,		/* id = function id (hrtimer callback, NMI handler), name = symbol */
};

/* Events that can be enabled; HGT_EV_DEFAULT is what a plain "record" gets. */
#define HGT_EV_SCHED		(1u << 0)	/* switch, waking, wakeup, wakeup_new, migrate, exit */
#define HGT_EV_IRQ		(1u << 1)	/* irq_handler_entry/exit */
#define HGT_EV_SOFTIRQ		(1u << 2)	/* softirq_entry/exit */
#define HGT_EV_VECTORS		(1u << 3)	/* x86 irq_vectors entry/exit: timer, IPIs, irq_work */
#define HGT_EV_NMI		(1u << 4)	/* nmi_handler */
#define HGT_EV_HRTIMER		(1u << 5)	/* hrtimer_expire_entry/exit */
#define HGT_EV_SYSCALLS		(1u << 6)	/* sys_enter/sys_exit (off by default: costly) */
#define HGT_EV_ALL		0x7fu
#define HGT_EV_DEFAULT		(HGT_EV_ALL & ~HGT_EV_SYSCALLS)

/* Common header of every record: 16 bytes. */
struct hgt_rec {
	__u64 tsc;		/* rdtsc_ordered() when the tracepoint fired */
	__u8  type;		/* enum hgt_type */
	__u8  len;		/* total record length in bytes, multiple of 8 */
	__u8  flags;		/* per type, see enum hgt_type */
	__u8  aux;		/* per type, see enum hgt_type */
	__u32 arg;		/* main argument, per type */
};
/* The CPU is not in the record: every record comes inside a chunk (struct
 * hgt_chunk) whose header names the CPU it happened on. */

#define HGT_SWITCH_PREEMPT	0x01	/* hgt_rec.flags of HGT_REC_SWITCH: prev was preempted */

/*
 * HGT_REC_SWITCH: hgt_rec.aux = next's policy (SCHED_*)
 *
 * prev_lag and next_lag (1.2; 0 before, which reads as "at the tracepoint"):
 * how many TSC cycles before hgt_rec.tsc the scheduler stopped charging prev
 * and started charging next (se.exec_start, the instants that
 * /proc/<pid>/schedstat sums between). sched_switch fires after the pick,
 * tens of microseconds later under emulation, so on-CPU time summed between
 * tracepoints undercounts a thread that wakes often. Coded as a small float,
 * HGT_LAG_UNKNOWN when the kernel's field was stale (the idle task's, one set
 * before the CPU's previous switch) or the lag is beyond the code's range:
 * take the tracepoint then.
 */
struct hgt_switch {
	__u32 prev_pid;
	__u32 prev_state;	/* the prev_state argument of sched_switch (TASK_* bits) */
	__s16 prev_prio;	/* kernel prio: 0..98 real-time, 100..139 fair, -1 deadline */
	__s16 next_prio;
	__u16 prev_lag;		/* hgt_lag_code(); 1.0 and 1.1: the first half of a zero pad */
	__u16 next_lag;
};

/*
 * The lags' code: e << 12 | (v >> e), with e (0..15) the least that makes
 * v >> e fit 12 bits: exact below 4096 cycles, 12 significant bits above
 * (an error below 1/2048), up to 4094 << 15 cycles (50 ms at 2.7 GHz).
 */
#define HGT_LAG_UNKNOWN		0xffffu

static inline __u16 hgt_lag_code(__u64 v)
{
	unsigned int e = 0;

	while ((v >> e) > 0xfff && e < 15)
		e++;
	if ((v >> e) > 0xfff || (e == 15 && (v >> e) == 0xfff))
		return HGT_LAG_UNKNOWN;
	return (__u16)(e << 12 | (v >> e));
}

/* hgt_lag_cycles - the cycles of a code, rounded down; -1 for HGT_LAG_UNKNOWN */
static inline __s64 hgt_lag_cycles(__u16 code)
{
	if (code == HGT_LAG_UNKNOWN)
		return -1;
	return (__s64)((__u64)(code & 0xfff) << (code >> 12));
}

struct hgt_wake {
	__u16 target_cpu;	/* CPU the task will run on */
	__s16 prio;
	__u32 pad;
};

struct hgt_migrate {
	__u16 orig_cpu;
	__u16 dest_cpu;
	__u32 pad;
};

struct hgt_nmi {
	__u32 delta_ns;		/* handler duration measured by the kernel, saturated */
	__u32 handled;
};

struct hgt_hrtimer {
	__u32 func_id;		/* keyed hash of the callback; named by a HGT_REC_NAME */
	__u32 pad;
};

struct hgt_comm {
	__u32 tgid;
	__u32 pad;
	char  comm[16];
};

struct hgt_name {
	char  name[32];
};

struct hgt_lost {
	__u64 count;		/* events lost on this CPU just before this record */
};

/*
 * read() on /dev/hgtrace returns whole chunks: a chunk header, then nr_bytes
 * of records that all happened on chunk.cpu, oldest first. A read never splits
 * a record. The buffer passed to read() must hold at least HGT_READ_MIN bytes.
 * read() returns 0 when every CPU is empty (it never blocks: the recorder
 * drains on its own timer so that the module never has to wake anybody).
 */
struct hgt_chunk {
	__u32 magic;		/* HGT_CHUNK_MAGIC */
	__u32 cpu;
	__u32 nr_bytes;		/* bytes of records after this header */
	__u32 nr_records;
};
#define HGT_CHUNK_MAGIC		0x6b6e6863u	/* "chnk" */
#define HGT_READ_MIN		4096

/* Buffer modes. */
#define HGT_MODE_STOP		0	/* when a CPU's buffer is full, new events are dropped (counted) */
#define HGT_MODE_OVERWRITE	1	/* the oldest events are overwritten (counted) */

/* The handshake; the same layout in every version. */
struct hgt_hello {
	__u32 abi_major;	/* in: the caller's HGT_ABI_MAJOR; out: the module's */
	__u32 abi_minor;	/* in: the caller's HGT_ABI_MINOR; out: the module's */
	__u32 nr_cpu_ids;	/* out: highest possible CPU + 1 */
	__u32 tsc_khz;		/* out: the kernel's TSC frequency */
	__u32 events_available;	/* out: HGT_EV_* bits whose tracepoints all exist */
	__u32 pad;
};

/* The recording's settings (1.1). The CPUs recorded are set apart, with HGT_IOC_SET_CPUS. */
struct hgt_config {
	__u64 buffer_bytes;	/* per CPU; 0 keeps the current size */
	__u32 mode;		/* HGT_MODE_* */
	__u32 events;		/* HGT_EV_* */
	__u32 msa_threads;	/* capacity of the microstate table; 0 keeps the current one */
	__u32 flags;		/* none defined yet: 0 */
	__u64 reserved[6];	/* 0 */
};

/*
 * A set of CPUs of any size (1.1): CPU n is bit n % 64 of the __u64 word
 * n / 64 of the array at user address bits.
 * HGT_IOC_SET_CPUS: nbits bits are read (at most HGT_CPUS_MAX_BITS); a CPU
 * that is not possible (>= nr_cpu_ids, or a hole) is EINVAL; no bit set (or
 * nbits 0) means every CPU.
 * HGT_IOC_GET_CPUS: in, nbits is the room at bits; out, nr_cpu_ids, and the
 * words that hold nr_cpu_ids bits are written. Too little room: ENOSPC, with
 * nbits still set to what is needed.
 */
struct hgt_cpus {
	__u64 bits;		/* user pointer to the words */
	__u32 nbits;
	__u32 flags;		/* none defined yet: 0 */
	__u64 reserved[2];	/* 0 */
};
#define HGT_CPUS_MAX_BITS	8192	/* x86-64's largest NR_CPUS */

/*
 * The pid filter. With nr == 0 everything is recorded. Otherwise a task is
 * "traced" when its pid or its tgid is in the set; task events (switch, wake,
 * migrate, exit, syscalls) are kept when they involve a traced task, and CPU
 * events (irq, softirq, vectors, NMI, hrtimer) are kept on every recorded CPU,
 * because they explain what happened to a traced task that was switched out.
 * Microstates are kept for the tasks a filter selects, and only with a filter.
 * HGT_IOC_GET_FILTER (1.1) gives the filter in force back.
 *
 * flags is the structure's reserved room (an unchecked pad in the first 1.2
 * modules): a later minor may give it a meaning (another kind of id, a larger
 * set elsewhere), and a reader sets such a flag only on a module whose HELLO
 * says that minor. The module refuses flags it does not know with EINVAL
 * rather than filter on something else. No minor bump: no reader sets one.
 */
#define HGT_FILTER_MAX		64
struct hgt_filter {
	__u32 nr;
	__u32 flags;		/* none defined yet: 0 */
	__s32 pids[HGT_FILTER_MAX];	/* pids or tgids */
};

/*
 * Per CPU counters, LOST markers excluded. Once a stopped buffer is drained:
 *   produced = written + refused
 *   written  = read + overwritten + reader_fault
 */
struct hgt_cpu_stats {
	__u64 produced;		/* records the probes tried to write */
	__u64 written;		/* records that reached the buffer */
	__u64 refused;		/* the buffer said no: full (HGT_MODE_STOP) or nested too deep */
	__u64 overwritten;	/* overwritten before being read (HGT_MODE_OVERWRITE) */
	__u64 read;		/* records handed to readers */
	__u64 reader_fault;	/* consumed but not delivered: read() got a bad user buffer */
};

struct hgt_stats {
	__u32 cpu;		/* in: which CPU */
	__u32 state;		/* out: HGT_STATE_* */
	struct hgt_cpu_stats s;	/* out */
	__u64 msa_overflow;	/* out: tasks not accounted because the table was full */
	__u64 funcs_unnamed;	/* out (1.1): callbacks left unnamed, their part of the name table full */
	__u64 owner;		/* out (1.4): the pid (tgid) whose file owns the module, 0 for none */
	__u64 reserved[5];	/* out: 0 */
};

#define HGT_STATE_STOPPED	0
#define HGT_STATE_RUNNING	1

/* Microstates (seed 002). Times in TSC cycles. */
enum hgt_msa_state {
	HGT_MSA_ONCPU_USER = 0,	/* on CPU (user mode; all of it when syscalls are not traced) */
	HGT_MSA_ONCPU_SYS,	/* on CPU inside a system call (syscalls traced) */
	HGT_MSA_RUNNABLE,	/* runnable, waiting on a run queue */
	HGT_MSA_SLEEP,		/* interruptible sleep */
	HGT_MSA_DISK,		/* uninterruptible sleep */
	HGT_MSA_INTERRUPTED,	/* current, but a hard or soft irq ran */
	HGT_MSA_STOPPED,	/* stopped or traced */
	HGT_MSA_DEAD,		/* exited */
	HGT_MSA_NR
};

struct hgt_msa {
	__s32 pid;		/* in */
	__s32 tgid;		/* out */
	__u32 state;		/* out: current enum hgt_msa_state */
	__u32 nr_switches;	/* out */
	__u64 first_tsc;	/* out: when the task was first seen */
	__u64 now_tsc;		/* out: when this snapshot was taken (the open state runs to here) */
	__u64 cycles[HGT_MSA_NR];	/* out */
	__u64 reserved[8];	/* out: 0; a state added later takes the next word */
};

#define HGT_IOC_MAGIC		0xb7
#define HGT_IOC_HELLO		_IOWR(HGT_IOC_MAGIC, 0, struct hgt_hello)
#define HGT_IOC_CONFIG		_IOW(HGT_IOC_MAGIC, 1, struct hgt_config)
#define HGT_IOC_GET_CONFIG	_IOR(HGT_IOC_MAGIC, 2, struct hgt_config)
#define HGT_IOC_FILTER		_IOW(HGT_IOC_MAGIC, 3, struct hgt_filter)
#define HGT_IOC_START		_IO(HGT_IOC_MAGIC, 4)
#define HGT_IOC_STOP		_IO(HGT_IOC_MAGIC, 5)
#define HGT_IOC_RESET		_IO(HGT_IOC_MAGIC, 6)
#define HGT_IOC_STATS		_IOWR(HGT_IOC_MAGIC, 7, struct hgt_stats)
#define HGT_IOC_MSA		_IOWR(HGT_IOC_MAGIC, 8, struct hgt_msa)
/* 1.1 */
#define HGT_IOC_SET_CPUS	_IOW(HGT_IOC_MAGIC, 9, struct hgt_cpus)
#define HGT_IOC_GET_CPUS	_IOWR(HGT_IOC_MAGIC, 10, struct hgt_cpus)
#define HGT_IOC_GET_FILTER	_IOR(HGT_IOC_MAGIC, 11, struct hgt_filter)
/*
 * 1.3: recording off, the probes left attached (each tests a flag first). It
 * returns once no probe is writing, having waited only for each CPU's next
 * interrupt, never on a task: the buffer then holds everything, the counters
 * are final, and a recorder drains and ends its command before HGT_IOC_STOP
 * detaches the probes (until 1.4 STOP also waited for the tracepoints' grace
 * periods, and so on any task preempted inside an RCU read-side section; now
 * only the module's unload does). STOP alone still does both; START after OFF records again (attaching anew if the events
 * changed). HGT_IOC_STATS says stopped after either.
 */
#define HGT_IOC_OFF		_IO(HGT_IOC_MAGIC, 12)
/*
 * 1.4: the module belongs to the open file that first changed its settings
 * (CONFIG, SET_CPUS, FILTER, RESET) or started it, until that file's STOP or
 * its close. Meanwhile those commands, START, OFF, STOP and read() of every
 * other file fail with EBUSY: a second recorder can neither change, reset,
 * drain nor stop a first one's recording, not even between the first one's
 * OFF and its STOP (its drain). A recorder that dies closes its file: its
 * recording runs on, unowned, and any file may stop it. HGT_IOC_STATS's
 * owner names the owning process.
 */

/*
 * ABI 1.0's layouts. A 1.1 module answers their ioctls as a 1.0 module did;
 * a 1.1 reader uses them with a module that says minor 0 in HELLO. The
 * commands that did not change (HELLO, FILTER, START, STOP, RESET) have one
 * number for both.
 */
struct hgt_config_1_0 {
	__u64 buffer_bytes;
	__u32 mode;
	__u32 events;
	__u64 cpumask[4];	/* CPUs 0..255 to record; all zero = all CPUs */
	__u32 msa_threads;
	__u32 pad;
};

struct hgt_stats_1_0 {
	__u32 cpu;
	__u32 state;
	struct hgt_cpu_stats s;
	__u64 msa_overflow;
};

struct hgt_msa_1_0 {
	__s32 pid;
	__s32 tgid;
	__u32 state;
	__u32 nr_switches;
	__u64 first_tsc;
	__u64 now_tsc;
	__u64 cycles[8];
};

#define HGT_IOC_CONFIG_1_0	_IOW(HGT_IOC_MAGIC, 1, struct hgt_config_1_0)
#define HGT_IOC_GET_CONFIG_1_0	_IOR(HGT_IOC_MAGIC, 2, struct hgt_config_1_0)
#define HGT_IOC_STATS_1_0	_IOWR(HGT_IOC_MAGIC, 7, struct hgt_stats_1_0)
#define HGT_IOC_MSA_1_0		_IOWR(HGT_IOC_MAGIC, 8, struct hgt_msa_1_0)

#endif /* _UAPI_HGTRACE_H */

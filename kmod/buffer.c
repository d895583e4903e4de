// SPDX-License-Identifier: GPL-2.0
/*
 * buffer.c - per-CPU storage of records, loss accounting, and draining.
 *
 * Both modes store to hgtrace's own per-CPU ring (ring.c): stop when full
 * refuses a record that does not fit, overwrite frees the oldest records to
 * make room. Writers nest safely (task, softirq, hard irq, NMI). We add:
 *  - a producer-side count of every record attempted and refused, so that
 *    delivered + lost = produced can be checked exactly;
 *  - HGT_REC_LOST markers in the stream at the place where events went
 *    missing, from the producer (refused) and from the reader (overwritten),
 *    so an analysis knows which stretch of time is incomplete.
 */
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/msr.h>
#include "hgtrace.h"
#include "compat.h"

DEFINE_PER_CPU(struct hgt_pcpu, hgt_pcpu);

/*
 * hgt_buffer_alloc - (re)create the store for a mode; caller holds both locks, stopped
 *
 * On failure the old store is kept as it was.
 */
int hgt_buffer_alloc(unsigned long bytes, u32 mode)
{
	int ret = hgt_ring_alloc(bytes);

	if (ret)
		return ret;
	hgt.rb_bytes = bytes;
	hgt.buf_bytes = hgt_ring_bytes(bytes);
	hgt.mode = mode;
	hgt.buffer_ready = true;
	hgt_buffer_reset();
	return 0;
}

/* hgt_buffer_free - release the store; probes must be detached */
void hgt_buffer_free(void)
{
	hgt.buffer_ready = false;
	hgt_ring_free();
}

/* hgt_buffer_reset - empty every CPU and zero the counters; stopped only */
void hgt_buffer_reset(void)
{
	int cpu;

	hgt_ring_reset();
	for_each_possible_cpu(cpu) {
		struct hgt_pcpu *pc = per_cpu_ptr(&hgt_pcpu, cpu);

		local64_set(&pc->produced, 0);
		local64_set(&pc->written, 0);
		local64_set(&pc->refused, 0);
		local64_set(&pc->pending_lost, 0);
		pc->read = 0;
		pc->reader_fault = 0;
		pc->hard_depth = 0;
	}
}

/*
 * hgt_flush_lost - report refused records before the next one goes in
 *
 * The count is claimed with cmpxchg so that a nested writer (an irq that
 * interrupts us here) cannot report the same losses twice; if the marker
 * itself does not fit, the count is put back for the next writer. Out of
 * line: hgt_emit() asks whether there is anything to report itself, so
 * that the marker on the stack here (zeroed by the kernel's
 * INIT_STACK_ALL_ZERO, guarded by the stack protector) costs every record
 * nothing while none is lost (issue 54).
 */
static noinline void hgt_flush_lost(struct hgt_pcpu *pc, u64 tsc, s64 n)
{
	struct hgt_lost_rec m;

	if (local64_cmpxchg(&pc->pending_lost, n, 0) != n)
		return;
	hgt_lost_fill(&m, tsc, n, 0);
	if (hgt_ring_write(&m, sizeof(m)))
		local64_add(n, &pc->pending_lost);
}

/*
 * emit_store - the record into the ring, counted as written or refused. The
 * counters' address is taken again after the ring's call rather than kept
 * across it: kept, it cost every record three saved registers. The CPU is
 * the same (preemption is off in a probe).
 */
static __always_inline void emit_store(void *rec, unsigned int len)
{
	if (unlikely(hgt_ring_write(rec, len))) {
		struct hgt_pcpu *pc = this_cpu_ptr(&hgt_pcpu);

		local64_inc(&pc->refused);
		local64_inc(&pc->pending_lost);
		return;
	}
	local64_inc(this_cpu_ptr(&hgt_pcpu.written));
}

/* emit_after_loss - hgt_emit() with refused records to report first */
static noinline void emit_after_loss(void *rec, unsigned int len)
{
	struct hgt_pcpu *pc = this_cpu_ptr(&hgt_pcpu);
	s64 n = local64_read(&pc->pending_lost);

	if (n)
		hgt_flush_lost(pc, ((struct hgt_rec *)rec)->tsc, n);
	emit_store(rec, len);
}

/*
 * hgt_emit - write one record to this CPU's buffer, counting it
 *
 * Called from probes, so preemption is off and this CPU is stable.
 */
void hgt_emit(void *rec, unsigned int len)
{
	struct hgt_pcpu *pc = this_cpu_ptr(&hgt_pcpu);
	struct hgt_rec *h = rec;

	h->len = len;
	local64_inc(&pc->produced);
	if (unlikely(hgt.discard)) {
		local64_inc(&pc->refused);
		return;
	}
	if (unlikely(local64_read(&pc->pending_lost))) {
		emit_after_loss(rec, len);
		return;
	}
	emit_store(rec, len);
}

/*
 * final_lost - the marker for refused records that no later record reported
 *
 * Refused records are reported by the next record that fits; after the last
 * one there is none, so once stopped (no producer left) and the CPU's store
 * is empty, the reader writes the final marker itself. The count is cleared
 * by the caller once the marker is delivered.
 */
static bool final_lost(int cpu, struct hgt_lost_rec *m)
{
	struct hgt_pcpu *pc = per_cpu_ptr(&hgt_pcpu, cpu);
	u64 n = local64_read(&pc->pending_lost);

	if (READ_ONCE(hgt.running) || !n || !hgt_ring_empty(cpu))
		return false;
	hgt_lost_fill(m, hgt.stop_tsc, n, 0);
	return true;
}

/*
 * ring_chunk_to_user - one CPU's chunk straight from our ring
 *
 * The records are copied once, ring to user; the chunk header goes in front
 * of them afterwards, when they are counted. Returns the bytes written, 0
 * when the CPU had nothing, -EFAULT when the user buffer faulted (*data then
 * holds the records consumed but not delivered).
 */
static long ring_chunk_to_user(int cpu, char __user *ubuf, size_t room, u64 *data)
{
	struct hgt_chunk c = { .magic = HGT_CHUNK_MAGIC, .cpu = cpu };
	struct hgt_lost_rec m;
	size_t used = sizeof(c);
	long got;

	/* room is left for the final LOST marker */
	got = hgt_ring_read_user(cpu, ubuf + used, room - used - sizeof(m), &c.nr_records, data);
	if (got == -EIO) {
		pr_err_ratelimited(HGT_NAME ": CPU %d's ring held a record of impossible length; "
				   "its unread records were dropped\n", cpu);
		return 0;
	}
	if (got < 0)
		return got;
	used += got;
	if (final_lost(cpu, &m)) {
		if (copy_to_user(ubuf + used, &m, sizeof(m)))
			return -EFAULT;
		local64_set(&per_cpu_ptr(&hgt_pcpu, cpu)->pending_lost, 0);
		used += sizeof(m);
		c.nr_records++;
	}
	if (!c.nr_records)
		return 0;
	c.nr_bytes = used - sizeof(c);
	if (copy_to_user(ubuf, &c, sizeof(c)))
		return -EFAULT;
	return used;
}

/*
 * hgt_buffer_read - drain whole chunks into a user buffer
 *
 * Visits CPUs round-robin from where the last read stopped so that a busy CPU
 * cannot starve the others. Returns 0 when everything is empty; never sleeps
 * waiting for data.
 */
ssize_t hgt_buffer_read(char __user *ubuf, size_t count)
{
	size_t done = 0;
	int n, cpu;

	if (count < HGT_READ_MIN)
		return -EINVAL;
	mutex_lock(&hgt.read_lock);
	if (!hgt.buffer_ready) {
		mutex_unlock(&hgt.read_lock);
		return -ENODEV;
	}
	cpu = hgt.read_cpu;
	for (n = 0; n < nr_cpu_ids && count - done >= HGT_READ_MIN; n++, cpu = (cpu + 1) % nr_cpu_ids) {
		/* a chunk's nr_bytes is 32 bits; 16 MiB keeps it far from that */
		size_t room = min_t(size_t, count - done, 16 << 20);
		struct hgt_pcpu *pc;
		u64 data = 0;
		long used;

		if (!cpu_possible(cpu))
			continue;
		pc = per_cpu_ptr(&hgt_pcpu, cpu);
		used = ring_chunk_to_user(cpu, ubuf + done, room, &data);
		if (used < 0) {
			/* consumed but not delivered: count it, never hide it */
			pc->reader_fault += data;
			mutex_unlock(&hgt.read_lock);
			return done ? done : -EFAULT;
		}
		pc->read += data;
		done += used;
	}
	hgt.read_cpu = cpu;
	mutex_unlock(&hgt.read_lock);
	return done;
}

/* hgt_buffer_stats - counters of one CPU */
void hgt_buffer_stats(int cpu, struct hgt_cpu_stats *s)
{
	struct hgt_pcpu *pc = per_cpu_ptr(&hgt_pcpu, cpu);

	s->produced = local64_read(&pc->produced);
	s->written = local64_read(&pc->written);
	s->refused = local64_read(&pc->refused);
	s->reader_fault = pc->reader_fault;
	s->overwritten = hgt_ring_freed(cpu);
	s->read = pc->read;
}

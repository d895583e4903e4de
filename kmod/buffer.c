// SPDX-License-Identifier: GPL-2.0
/*
 * buffer.c - per-CPU storage of records, loss accounting, and draining.
 *
 * Two stores, chosen by the mode. Stop-when-full (the default) writes to our
 * own per-CPU ring (ring.c): a reservation, a copy and a commit, where the
 * kernel's ring buffer also reads a second clock and keeps time stamps we do
 * not use. Overwrite uses the kernel's own ring buffer, which already solves
 * a writer reclaiming space under a reader, and counts what it overwrote.
 * Both nest safely (task, softirq, hard irq, NMI). We add:
 *  - a producer-side count of every record attempted and refused, so that
 *    delivered + lost = produced can be checked exactly;
 *  - HGT_REC_LOST markers in the stream at the place where events went
 *    missing, from the producer (refused) and from the reader (overwritten),
 *    so an analysis knows which stretch of time is incomplete.
 * Records carry their own TSC stamp; the ring buffer's own clock is unused.
 */
#include <linux/ring_buffer.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/msr.h>
#include "hgtrace.h"
#include "compat.h"

DEFINE_PER_CPU(struct hgt_pcpu, hgt_pcpu);

/* In overwrite mode a read() chunk is built in this bounce buffer, under hgt.read_lock. */
#define HGT_BOUNCE	(64 * 1024)
static char *bounce;

/*
 * hgt_buffer_alloc - (re)create the store of a mode; caller holds both locks, stopped
 *
 * On failure the old store is kept as it was.
 */
int hgt_buffer_alloc(unsigned long bytes, u32 mode)
{
	static struct lock_class_key key;
	struct trace_buffer *rb = NULL;
	int ret;

	if (!bounce) {
		bounce = kvmalloc(HGT_BOUNCE, GFP_KERNEL);
		if (!bounce)
			return -ENOMEM;
	}
	if (mode == HGT_MODE_OVERWRITE) {
		rb = __ring_buffer_alloc(bytes, RB_FL_OVERWRITE, &key);
		if (!rb)
			return -ENOMEM;
		hgt_ring_free();
	} else {
		ret = hgt_ring_alloc(bytes);
		if (ret)
			return ret;
	}
	if (hgt.rb)
		ring_buffer_free(hgt.rb);
	hgt.rb = rb;
	hgt.rb_bytes = bytes;
	hgt.buf_bytes = rb ? ring_buffer_size(rb, 0) : hgt_ring_bytes(bytes);
	hgt.mode = mode;
	hgt.buffer_ready = true;
	hgt_buffer_reset();
	return 0;
}

/* hgt_buffer_free - release the store; probes must be detached */
void hgt_buffer_free(void)
{
	hgt.buffer_ready = false;
	if (hgt.rb)
		ring_buffer_free(hgt.rb);
	hgt.rb = NULL;
	hgt_ring_free();
	kvfree(bounce);
	bounce = NULL;
}

/* hgt_store - one record into this CPU's store; non-zero when it did not fit */
static inline int hgt_store(void *rec, unsigned int len)
{
	if (likely(hgt.mode == HGT_MODE_STOP))
		return hgt_ring_write(rec, len);
	return hgt_rb_write(hgt.rb, len, rec);
}

/* hgt_buffer_reset - empty every CPU and zero the counters; stopped only */
void hgt_buffer_reset(void)
{
	int cpu;

	if (hgt.rb)
		ring_buffer_reset(hgt.rb);
	else
		hgt_ring_reset();
	for_each_possible_cpu(cpu) {
		struct hgt_pcpu *pc = per_cpu_ptr(&hgt_pcpu, cpu);

		local64_set(&pc->produced, 0);
		local64_set(&pc->written, 0);
		local64_set(&pc->refused, 0);
		local64_set(&pc->pending_lost, 0);
		pc->read = 0;
		pc->overwritten = 0;
		pc->reader_fault = 0;
		pc->hard_depth = 0;
	}
}

/*
 * hgt_flush_lost - report refused records before the next one goes in
 *
 * The count is claimed with cmpxchg so that a nested writer (an irq that
 * interrupts us here) cannot report the same losses twice; if the marker
 * itself does not fit, the count is put back for the next writer.
 */
/* A LOST marker: aux 0 = refused at the producer, 1 = overwritten before read. */
struct hgt_lost_rec {
	struct hgt_rec h;
	struct hgt_lost l;
};

static void hgt_lost_fill(struct hgt_lost_rec *m, u64 tsc, u64 count, u8 overwritten)
{
	memset(m, 0, sizeof(*m));
	m->h.tsc = tsc;
	m->h.type = HGT_REC_LOST;
	m->h.len = sizeof(*m);
	m->h.aux = overwritten;
	m->l.count = count;
}

static void hgt_flush_lost(struct hgt_pcpu *pc, u64 tsc)
{
	struct hgt_lost_rec m;
	s64 n = local64_read(&pc->pending_lost);

	if (likely(!n))
		return;
	if (local64_cmpxchg(&pc->pending_lost, n, 0) != n)
		return;
	hgt_lost_fill(&m, tsc, n, 0);
	if (hgt_store(&m, sizeof(m)))
		local64_add(n, &pc->pending_lost);
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
	hgt_flush_lost(pc, h->tsc);
	if (unlikely(hgt_store(rec, len))) {
		local64_inc(&pc->refused);
		local64_inc(&pc->pending_lost);
		return;
	}
	local64_inc(&pc->written);
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

	if (READ_ONCE(hgt.running) || !n ||
	    !(hgt.rb ? ring_buffer_empty_cpu(hgt.rb, cpu) : hgt_ring_empty(cpu)))
		return false;
	hgt_lost_fill(m, hgt.stop_tsc, n, 0);
	return true;
}

/*
 * ring_chunk_to_user - one CPU's chunk straight from our ring (stop mode)
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
 * rb_chunk_fill - records of one CPU from the kernel's ring buffer into dst
 * (overwrite mode); returns bytes used, 0 when the CPU had nothing
 */
static size_t rb_chunk_fill(int cpu, char *dst, size_t room, u64 *data_records)
{
	struct hgt_pcpu *pc = per_cpu_ptr(&hgt_pcpu, cpu);
	struct hgt_chunk *c = (struct hgt_chunk *)dst;
	size_t used = sizeof(*c);
	/* the largest record plus the LOST marker that may precede it */
	const size_t worst = 64 + sizeof(struct hgt_lost_rec);

	c->magic = HGT_CHUNK_MAGIC;
	c->cpu = cpu;
	c->nr_bytes = 0;
	c->nr_records = 0;

	/* room is left for the final LOST marker below */
	while (room - used >= worst) {
		struct ring_buffer_event *ev;
		unsigned long lost = 0;
		struct hgt_rec *r;
		unsigned int evlen;
		u64 ts;

		ev = ring_buffer_consume(hgt.rb, cpu, &ts, &lost);
		if (!ev)
			break;
		r = ring_buffer_event_data(ev);
		evlen = ring_buffer_event_length(ev);
		if (lost) {
			/* overwritten before we could read them */
			hgt_lost_fill((struct hgt_lost_rec *)(dst + used),
				      evlen >= sizeof(*r) ? r->tsc : 0, lost, 1);
			used += sizeof(struct hgt_lost_rec);
			c->nr_records++;
			pc->overwritten += lost;
		}
		if (WARN_ON_ONCE(evlen < sizeof(*r) || r->len > evlen || r->len < sizeof(*r) ||
				 r->len % 8))
			continue;
		memcpy(dst + used, r, r->len);
		hgt_name_fill((struct hgt_rec *)(dst + used));
		used += r->len;
		c->nr_records++;
		if (r->type != HGT_REC_LOST)
			(*data_records)++;
	}
	if (room - used >= sizeof(struct hgt_lost_rec) &&
	    final_lost(cpu, (struct hgt_lost_rec *)(dst + used))) {
		local64_set(&pc->pending_lost, 0);
		used += sizeof(struct hgt_lost_rec);
		c->nr_records++;
	}
	c->nr_bytes = used - sizeof(*c);
	return c->nr_records ? used : 0;
}

/* rb_chunk_to_user - one CPU's chunk from the kernel's ring buffer, through the bounce buffer */
static long rb_chunk_to_user(int cpu, char __user *ubuf, size_t room, u64 *data)
{
	size_t used = rb_chunk_fill(cpu, bounce, min_t(size_t, room, HGT_BOUNCE), data);

	if (used && copy_to_user(ubuf, bounce, used))
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
		used = hgt.rb ? rb_chunk_to_user(cpu, ubuf + done, room, &data) :
				ring_chunk_to_user(cpu, ubuf + done, room, &data);
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
	s->overwritten = hgt.rb ? ring_buffer_overrun_cpu(hgt.rb, cpu) : 0;	/* our ring never overwrites */
	s->read = pc->read;
}

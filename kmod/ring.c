// SPDX-License-Identifier: GPL-2.0
/*
 * ring.c - the per-CPU byte ring behind the stop-when-full mode.
 *
 * Why our own and not the kernel's ring buffer here: a record already
 * carries its TSC stamp, yet ring_buffer_write() reads the ring buffer's
 * clock again (sched_clock; ring_buffer_set_clock() is not exported to
 * modules), checks recursion, keeps before/after stamps and commit pages.
 * bench/run.py split measured that write at a third of the module's cost.
 * Stopping when full needs none of that: one reservation by local_cmpxchg
 * on this CPU's head, a copy, and a commit published by the outermost
 * writer. The overwrite mode keeps the kernel's ring buffer (buffer.c),
 * where a writer must reclaim space a reader may be copying.
 *
 * Positions are free-running byte counts (unsigned long, never wrapped in
 * practice); the offset in data[] is the position modulo size, a power of
 * two. A record may straddle the end of data[] and is copied in two parts.
 *
 * Writers run with preemption disabled (tracepoint probes) and nest: task,
 * softirq, hard irq, NMI, each strictly inside the one it interrupted. So
 * when the outermost writer of a CPU finishes, every reservation made on
 * that CPU is complete, and only it publishes commit (the scheme of perf's
 * ring buffer, kernel/events/ring_buffer.c). A single reader (hgt.read_lock)
 * copies records below commit straight to user space and then releases tail,
 * which bounds writers.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/local.h>
#include "hgtrace.h"

struct hgt_ring {
	local_t head;		/* bytes reserved */
	local_t nest;		/* writers under way on this CPU */
	unsigned long commit;	/* bytes written: readable below this */
	unsigned long tail;	/* bytes consumed by the reader */
	unsigned long size;	/* power of two */
	char *data;
};

static DEFINE_PER_CPU(struct hgt_ring, hgt_ring);

/* hgt_ring_bytes - what a request becomes: the next power of two */
unsigned long hgt_ring_bytes(unsigned long bytes)
{
	return roundup_pow_of_two(bytes);
}

void hgt_ring_free(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct hgt_ring *r = per_cpu_ptr(&hgt_ring, cpu);

		kvfree(r->data);
		r->data = NULL;
		r->size = 0;
	}
}

/*
 * hgt_ring_alloc - a ring of hgt_ring_bytes(bytes) on each possible CPU; stopped only
 *
 * All new rings are allocated before the old ones are freed, so a failure
 * leaves the old rings (if any) as they were.
 */
int hgt_ring_alloc(unsigned long bytes)
{
	unsigned long size = hgt_ring_bytes(bytes);
	char **fresh;
	int cpu;

	if (!hgt_mem_fits((u64)size * num_possible_cpus()))
		return -ENOMEM;
	fresh = kcalloc(nr_cpu_ids, sizeof(*fresh), GFP_KERNEL);
	if (!fresh)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		/* RETRY_MAYFAIL: fail rather than wake the OOM killer */
		fresh[cpu] = kvmalloc_node(size, GFP_KERNEL | __GFP_NOWARN | __GFP_RETRY_MAYFAIL,
					   cpu_to_node(cpu));
		if (!fresh[cpu]) {
			for_each_possible_cpu(cpu)
				kvfree(fresh[cpu]);
			kfree(fresh);
			return -ENOMEM;
		}
	}
	hgt_ring_free();
	for_each_possible_cpu(cpu) {
		struct hgt_ring *r = per_cpu_ptr(&hgt_ring, cpu);

		r->data = fresh[cpu];
		r->size = size;
	}
	kfree(fresh);
	hgt_ring_reset();
	return 0;
}

/* hgt_ring_reset - empty every ring; no writer and no reader may be running */
void hgt_ring_reset(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct hgt_ring *r = per_cpu_ptr(&hgt_ring, cpu);

		local_set(&r->head, 0);
		local_set(&r->nest, 0);
		r->commit = 0;
		r->tail = 0;
	}
}

/*
 * ring_publish - end a write: the outermost writer makes everything reserved
 * so far readable. A writer that interrupts us after we read head but before
 * nest drops sees nest > 1 and leaves publishing to us, so we look at head
 * again once nest is 0 and publish once more if it moved.
 */
static void ring_publish(struct hgt_ring *r)
{
	unsigned long head;

again:
	if (local_read(&r->nest) > 1) {
		local_dec(&r->nest);
		return;
	}
	head = local_read(&r->head);
	smp_store_release(&r->commit, head);	/* the records' bytes before commit */
	barrier();
	local_dec(&r->nest);
	barrier();
	if (unlikely(head != local_read(&r->head))) {
		local_inc(&r->nest);
		goto again;
	}
}

/*
 * ring_word - the 8-byte word at position pos
 *
 * Records are multiples of 8 bytes and every position is a sum of record
 * lengths, so a word never straddles the end of data[]: copying word by word
 * wraps for free, where memcpy() would need two calls.
 */
static inline u64 *ring_word(struct hgt_ring *r, unsigned long pos)
{
	return (u64 *)(r->data + (pos & (r->size - 1)));
}

/*
 * hgt_ring_write - copy one record into this CPU's ring; -ENOBUFS when full
 *
 * Word by word rather than memcpy(): a record is 2 to 8 words, and the
 * kernel's memcpy() is a `rep movsb` on CPUs with ERMS, whose start-up costs
 * more than the whole copy at this size.
 */
int hgt_ring_write(const void *rec, unsigned int len)
{
	struct hgt_ring *r = this_cpu_ptr(&hgt_ring);
	const u64 *src = rec;
	unsigned long head;
	unsigned int i;

	local_inc(&r->nest);
	barrier();
	do {
		head = local_read(&r->head);
		/* the reader releases tail after copying out what lies below it */
		if (unlikely(head + len - smp_load_acquire(&r->tail) > r->size)) {
			ring_publish(r);
			return -ENOBUFS;
		}
	} while (local_cmpxchg(&r->head, head, head + len) != head);

	for (i = 0; i < len / 8; i++)
		*ring_word(r, head + 8 * i) = src[i];
	ring_publish(r);
	return 0;
}

/* hgt_ring_empty - has the reader taken everything written? reader side */
bool hgt_ring_empty(int cpu)
{
	struct hgt_ring *r = per_cpu_ptr(&hgt_ring, cpu);

	return r->tail == smp_load_acquire(&r->commit);
}

/*
 * hgt_ring_read_user - copy whole records of one CPU straight to user space
 *
 * Reader side, under hgt.read_lock. The records below commit are walked by
 * their headers to find how many fit in room (and callbacks' NAME records
 * are named on the way: the reader owns what lies below commit), then copied in one or two
 * copy_to_user() calls (two when they wrap): one copy from the ring to the
 * reader, no bounce buffer. Returns the bytes copied and sets *nr to the
 * records and *data to those that are not LOST markers. tail is released
 * only after the copy, so writers cannot reuse the space before it is read.
 *
 * -EFAULT: the user buffer faulted; the records were consumed all the same
 * (*nr and *data say how many) and the caller counts them as lost.
 * -EIO: a length that is not a record's (impossible unless memory is
 * corrupted); the ring is emptied and nothing is misread.
 */
long hgt_ring_read_user(int cpu, char __user *dst, size_t room, u32 *nr, u64 *data)
{
	struct hgt_ring *r = per_cpu_ptr(&hgt_ring, cpu);
	unsigned long start = r->tail, pos = start, end = smp_load_acquire(&r->commit);
	unsigned long off, bytes, first;
	int fault;

	BUILD_BUG_ON(sizeof(struct hgt_rec) != 16);
	*nr = 0;
	*data = 0;
	if (!r->data)
		return 0;
	while (pos != end) {
		struct hgt_rec h;
		u64 *hw = (u64 *)&h;

		hw[0] = *ring_word(r, pos);
		hw[1] = *ring_word(r, pos + 8);
		if (h.len < sizeof(h) || h.len % 8 || h.len > end - pos) {
			smp_store_release(&r->tail, end);
			return -EIO;
		}
		if (h.len > room - (pos - start))
			break;
		/* a callback's NAME leaves the probe empty: named here, in place */
		if (h.type == HGT_REC_NAME && h.flags == HGT_NAME_FUNC &&
		    h.len >= sizeof(h) + HGT_NAME_LEN) {
			u64 name[HGT_NAME_LEN / 8];
			unsigned int i;

			hgt_func_name(h.arg, (char *)name);
			for (i = 0; i < ARRAY_SIZE(name); i++)
				*ring_word(r, pos + sizeof(h) + 8 * i) = name[i];
		}
		pos += h.len;
		(*nr)++;
		if (h.type != HGT_REC_LOST)
			(*data)++;
	}
	bytes = pos - start;
	off = start & (r->size - 1);
	first = min(bytes, r->size - off);
	fault = bytes && copy_to_user(dst, r->data + off, first);
	if (!fault && first < bytes)
		fault = copy_to_user(dst + first, r->data, bytes - first) != 0;
	smp_store_release(&r->tail, pos);
	return fault ? -EFAULT : bytes;
}

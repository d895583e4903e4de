// SPDX-License-Identifier: GPL-2.0
/*
 * ring.c - the per-CPU byte ring behind both modes, stop when full and overwrite.
 *
 * Why our own and not the kernel's ring buffer: a record already carries
 * its TSC stamp, yet ring_buffer_write() reads the ring buffer's clock again
 * (sched_clock; ring_buffer_set_clock() is not exported to modules), checks
 * recursion, keeps before/after stamps and commit pages, and its reader
 * consumes event by event into a bounce page. bench/run.py measured it at
 * three times our ring's cost. A write here is one reservation by
 * local_cmpxchg on this CPU's head, a copy, and a commit published by the
 * outermost writer.
 *
 * Overwrite mode: a writer that finds no room frees the oldest records
 * itself, whole records up to what it needs, by moving tail forward with
 * cmpxchg, and counts each one as overwritten. The reader claims what it
 * copied the same way, cmpxchg of tail from where it began to where it
 * ended, so every record is either delivered or counted as overwritten,
 * never both: the accounting stays exact. A claim that fails means a writer
 * freed part of what the reader was copying (and may have written over it):
 * the reader then copies into a bounce buffer and keeps what lies at or above
 * the tail it finds after that copy, which no writer can have touched, since
 * a writer frees before it writes. While the ring is not full the writer
 * does exactly what it does in stop mode.
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
	unsigned long tail;	/* bytes consumed by the reader, or freed by writers */
	unsigned long size;	/* power of two */
	char *data;
	local_t freed;		/* overwrite mode: records writers freed unread */
	local_t freed_lost;	/* those, and the counts of LOST markers freed unread */
	unsigned long freed_told;	/* of freed_lost, put in LOST markers; reader side */
};

static DEFINE_PER_CPU(struct hgt_ring, hgt_ring);

/* Overwrite mode's reader, when a writer overtook it: under hgt.read_lock. */
#define HGT_BOUNCE	(64 * 1024)
static char *bounce;
static u64 overtaken;		/* such reads since load (never reset: a diagnostic) */

/* hgt_ring_bytes - what a request becomes: the next power of two */
unsigned long hgt_ring_bytes(unsigned long bytes)
{
	return roundup_pow_of_two(bytes);
}

static void ring_free_data(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct hgt_ring *r = per_cpu_ptr(&hgt_ring, cpu);

		kvfree(r->data);
		r->data = NULL;
		r->size = 0;
	}
}

/* hgt_ring_free - every ring and the bounce buffer; stopped, no reader */
void hgt_ring_free(void)
{
	ring_free_data();
	kvfree(bounce);
	bounce = NULL;
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
	if (!bounce) {
		bounce = kvmalloc(HGT_BOUNCE, GFP_KERNEL);
		if (!bounce)
			return -ENOMEM;
	}
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
	ring_free_data();
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
		local_set(&r->freed, 0);
		local_set(&r->freed_lost, 0);
		r->freed_told = 0;
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
 * ring_free_oldest - overwrite mode: give up the oldest records until tail
 * reaches @need, each counted as overwritten
 *
 * Only records below commit can go: what lies above belongs to writers this
 * one interrupted, and then nothing is freed (-ENOBUFS: the record that
 * needed the room is refused, and counted so). The records are taken with
 * cmpxchg on tail, against the reader's claim and against a writer that
 * interrupts this one; a lost race walks again from the new tail. Records
 * at or above tail are intact (nobody writes there before freeing them), so
 * their lengths can be trusted; a length that is not a record's is refused
 * all the same rather than followed. A LOST marker freed this way (refused
 * records, reported by the writer that followed them) is not a record lost
 * but a report lost: its count goes to the reader's next marker, with the
 * overwritten ones, so that the stream still accounts for everything.
 */
static noinline int ring_free_oldest(struct hgt_ring *r, unsigned long need)
{
	unsigned long tail, pos, commit, n, counts;

	do {
		tail = READ_ONCE(r->tail);
		if ((long)(tail - need) >= 0)
			return 0;
		commit = smp_load_acquire(&r->commit);
		for (pos = tail, n = 0, counts = 0; (long)(need - pos) > 0;) {
			u64 w1 = *ring_word(r, pos + 8);
			unsigned int len = (w1 >> 8) & 0xff;

			if (len < sizeof(struct hgt_rec) || len % 8 || len > commit - pos)
				return -ENOBUFS;
			if ((w1 & 0xff) == HGT_REC_LOST)
				counts += *ring_word(r, pos + 16);
			else
				n++;
			pos += len;
		}
	} while (cmpxchg(&r->tail, tail, pos) != tail);
	local_add(n, &r->freed);
	local_add(n + counts, &r->freed_lost);
	return 0;
}

/* ring_copy_in - a record's words into the room reserved at @head */
static __always_inline void ring_copy_in(struct hgt_ring *r, unsigned long head, const u64 *src,
					 unsigned int len)
{
	/* the ring's mask and data in locals: each store could alias them, and they were reloaded a word */
	unsigned long mask = r->size - 1;
	char *data = r->data;
	unsigned int i;

	for (i = 0; i < len / 8; i++)
		*(u64 *)(data + ((head + 8 * i) & mask)) = src[i];
}

/*
 * ring_write_slow - hgt_ring_write() once its first try found no room or lost
 * the reservation to a nested writer: the loop, with overwrite mode's freeing
 * of the oldest records; nest is counted already
 */
static noinline int ring_write_slow(struct hgt_ring *r, const void *rec, unsigned int len)
{
	unsigned long head;

	for (;;) {
		head = local_read(&r->head);
		/* the reader releases tail after copying out what lies below it */
		if (unlikely(head + len - smp_load_acquire(&r->tail) > r->size) &&
		    (hgt.mode != HGT_MODE_OVERWRITE || ring_free_oldest(r, head + len - r->size))) {
			ring_publish(r);
			return -ENOBUFS;
		}
		if (local_cmpxchg(&r->head, head, head + len) == head)
			break;
	}
	ring_copy_in(r, head, rec, len);
	ring_publish(r);
	return 0;
}

/*
 * hgt_ring_write - copy one record into this CPU's ring; -ENOBUFS when full
 * (stop mode) or when overwriting cannot make room (overwrite mode)
 *
 * Word by word rather than memcpy(): a record is 2 to 8 words, and the
 * kernel's memcpy() is a `rep movsb` on CPUs with ERMS, whose start-up costs
 * more than the whole copy at this size.
 *
 * One try here, the loop in ring_write_slow(): with no call on the common
 * path (room, no nested writer), it keeps its values in the registers a call
 * may clobber and saves none (issue 54: six saved and restored a record).
 */
int hgt_ring_write(const void *rec, unsigned int len)
{
	struct hgt_ring *r = this_cpu_ptr(&hgt_ring);
	unsigned long head;

	local_inc(&r->nest);
	barrier();
	head = local_read(&r->head);
	if (unlikely(head + len - smp_load_acquire(&r->tail) > r->size) ||
	    unlikely(local_cmpxchg(&r->head, head, head + len) != head))
		return ring_write_slow(r, rec, len);
	ring_copy_in(r, head, rec, len);
	ring_publish(r);
	return 0;
}

/* hgt_ring_overtaken - overwrite mode: reads that a writer overtook since load */
u64 hgt_ring_overtaken(void)
{
	return READ_ONCE(overtaken);
}

/* hgt_ring_freed - records of @cpu (markers aside) that writers freed unread (overwrite mode) */
u64 hgt_ring_freed(int cpu)
{
	return local_read(&per_cpu_ptr(&hgt_ring, cpu)->freed);
}

/* hgt_ring_empty - has the reader taken everything written? reader side */
bool hgt_ring_empty(int cpu)
{
	struct hgt_ring *r = per_cpu_ptr(&hgt_ring, cpu);

	return r->tail == smp_load_acquire(&r->commit);
}

/*
 * ring_copy_out - copy [pos, pos + bytes) of the ring to @dst in user space
 * (two copies when it wraps); 0, or non-zero when the user buffer faulted
 */
static int ring_copy_out(struct hgt_ring *r, char __user *dst, unsigned long pos,
			 unsigned long bytes)
{
	unsigned long off = pos & (r->size - 1), first = min(bytes, r->size - off);

	if (bytes && copy_to_user(dst, r->data + off, first))
		return -EFAULT;
	if (first < bytes && copy_to_user(dst + first, r->data, bytes - first))
		return -EFAULT;
	return 0;
}

/* What a walk over records found: where it stopped and what it passed. */
struct ovw_walk {
	unsigned long end;	/* position after the last whole record taken */
	u32 nr;			/* records */
	u64 data;		/* records that are not LOST markers */
	u64 first_tsc;
	bool names;		/* a callback's NAME, to be named before it goes out */
};

/*
 * ovw_walk - the records from @pos below @end that fit in @room, read through
 * @word (the ring, or the bounce buffer). Lengths are checked only so as
 * never to run past @end: in the ring a writer may be overwriting what is
 * read here, and only the claim that follows says whether it was.
 */
static void ovw_walk(u64 (*word)(void *src, unsigned long pos), void *src, unsigned long pos,
		     unsigned long end, size_t room, struct ovw_walk *w)
{
	unsigned long start = pos;

	memset(w, 0, sizeof(*w));
	while (pos != end) {
		u64 w1 = word(src, pos + 8);
		unsigned int type = w1 & 0xff, len = (w1 >> 8) & 0xff, flags = (w1 >> 16) & 0xff;

		if (len < sizeof(struct hgt_rec) || len % 8 || len > end - pos || len > room - (pos - start))
			break;
		if (pos == start)
			w->first_tsc = word(src, pos);
		if (type == HGT_REC_NAME && flags == HGT_NAME_FUNC)
			w->names = true;
		pos += len;
		w->nr++;
		if (type != HGT_REC_LOST)
			w->data++;
	}
	w->end = pos;
}

static u64 ring_src_word(void *src, unsigned long pos)
{
	return *ring_word(src, pos);
}

/* The bounce buffer holds the ring from position bounce_start on. */
static unsigned long bounce_start;

static u64 bounce_src_word(void *src, unsigned long pos)
{
	return *(u64 *)((char *)src + (pos - bounce_start));
}

/*
 * ring_read_ovw - the reader in overwrite mode (ring.c's header says why it
 * claims what it copied). A LOST marker (aux 1) goes in front of the records
 * with the count of those writers freed unread since the last marker, read
 * before the tail, so that they lie before these records; a free that a
 * writer makes while this runs is reported by the next read. Once recording
 * has stopped and the ring is empty, the last count gets a marker of its own.
 * A fault before the claim consumes nothing; after it, as in stop mode, the
 * records are gone and *data says how many.
 */
static long ring_read_ovw(struct hgt_ring *r, char __user *dst, size_t room, u32 *nr, u64 *data)
{
	const size_t msz = sizeof(struct hgt_lost_rec);
	unsigned long start, end, t, first, off;
	struct hgt_lost_rec m;
	struct ovw_walk w;
	size_t front, span;
	u64 lost;

	lost = local_read(&r->freed_lost) - r->freed_told;
	smp_rmb();		/* the frees counted lie below the tail read next */
	start = READ_ONCE(r->tail);
	end = smp_load_acquire(&r->commit);
	front = lost ? msz : 0;
	if (room < front + 64)
		return 0;
	ovw_walk(ring_src_word, r, start, end, room - front, &w);
	if (w.end == start) {
		if (!lost || READ_ONCE(hgt.running) || start != end)
			return 0;
		hgt_lost_fill(&m, hgt.stop_tsc, lost, 1);
		if (copy_to_user(dst, &m, msz))
			return -EFAULT;
		r->freed_told += lost;
		*nr = 1;
		return msz;
	}
	if (!w.names) {
		if (ring_copy_out(r, dst + front, start, w.end - start))
			return -EFAULT;
		if (cmpxchg(&r->tail, start, w.end) == start)
			goto claimed;
	}

	/* a writer overtook the copy, or a NAME is to be filled in: through the bounce buffer */
	if (!w.names)
		overtaken++;
	start = READ_ONCE(r->tail);
	end = smp_load_acquire(&r->commit);
	span = min3((size_t)(end - start), room - front, (size_t)HGT_BOUNCE);
	off = start & (r->size - 1);
	first = min_t(unsigned long, span, r->size - off);
	memcpy(bounce, r->data + off, first);
	memcpy(bounce + first, r->data, span - first);
	bounce_start = start;
	smp_rmb();		/* the tail is read after the copy */
	for (;;) {
		t = READ_ONCE(r->tail);
		/* at or above t nothing was freed, so nothing overwritten, during the copy */
		if (t - start >= span)
			return 0;
		ovw_walk(bounce_src_word, bounce, t, start + span, span, &w);
		if (w.end == t)
			return 0;
		if (cmpxchg(&r->tail, t, w.end) == t)
			break;
	}
	for (off = t; off != w.end; off += (u8)bounce[off - start + 9]) {
		struct hgt_rec *h = (struct hgt_rec *)(bounce + (off - start));

		hgt_name_fill(h);
	}
	*data = w.data;
	if (copy_to_user(dst + front, bounce + (t - start), w.end - t))
		return -EFAULT;
	start = t;
claimed:
	*data = w.data;
	*nr = w.nr;
	if (lost) {
		hgt_lost_fill(&m, w.first_tsc, lost, 1);
		if (copy_to_user(dst, &m, msz))
			return -EFAULT;
		r->freed_told += lost;
		(*nr)++;
	}
	return front + (w.end - start);
}

/*
 * hgt_ring_read_user - copy whole records of one CPU straight to user space
 *
 * Reader side, under hgt.read_lock. The records below commit are walked by
 * their headers to find how many fit in room (and callbacks' NAME records
 * are named on the way: the reader owns what lies below commit), then copied
 * in one or two copy_to_user() calls (two when they wrap): one copy from the
 * ring to the reader, no bounce buffer. Returns the bytes copied and sets *nr
 * to the records and *data to those that are not LOST markers. tail is
 * released only after the copy, so writers cannot reuse the space before it
 * is read. Overwrite mode has its own reader, ring_read_ovw().
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
	int fault;

	BUILD_BUG_ON(sizeof(struct hgt_rec) != 16);
	*nr = 0;
	*data = 0;
	if (!r->data)
		return 0;
	if (hgt.mode == HGT_MODE_OVERWRITE)
		return ring_read_ovw(r, dst, room, nr, data);
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
	fault = ring_copy_out(r, dst, start, pos - start);
	smp_store_release(&r->tail, pos);
	return fault ? -EFAULT : pos - start;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * evmap.h - the kernel's trace events turned into hgtrace.ko's records.
 *
 * One table says which tracepoint (system:event) feeds which record and
 * which event group (HGT_EV_*) it belongs to, and one function turns an
 * event as the ring buffer holds it (its raw bytes, laid out by the event's
 * format file) into the records the module writes for the same tracepoint
 * call (kmod/probes.c, docs/hgtrace-abi.md): COMM the first time a pid
 * appears, NAME the first time an irq does, then the event's own record.
 *
 * It needs nothing but a tep_handle that knows the events' formats, so a
 * trace.dat importer can use it as well as the live recorder. Field offsets
 * are looked up once; converting an event reads fixed offsets.
 *
 * Where ftrace carries less than the module sees, the record says what
 * ftrace knows (docs/hgtrace-ftrace.md, "Records"): a switch's prev_state is
 * the tracepoint's reported state, a preempted switch is flagged as such with
 * state 0, the next task's policy is inferred from its priority.
 */
#ifndef HG_EVMAP_H
#define HG_EVMAP_H

#include <stddef.h>
#include <stdint.h>
#include "hgtrace.h"
#include "ptrid.h"

struct tep_handle;
struct hgev_map;

/* One tracepoint the module hooks, as ftrace names it. */
struct hgev_desc {
	const char *system;
	const char *name;
	uint32_t group;		/* HGT_EV_* */
};

/* the most bytes hgev_convert() writes for one event: two COMMs and a switch, or NAME and an irq */
#define HGEV_MAX_OUT	(2 * (sizeof(struct hgt_rec) + sizeof(struct hgt_comm)) + \
			 sizeof(struct hgt_rec) + sizeof(struct hgt_switch))

/* hgev_nr_descs, hgev_desc - the table: every tracepoint of every group, in a fixed order */
unsigned int hgev_nr_descs(void);
const struct hgev_desc *hgev_desc(unsigned int i);

/*
 * hgev_map_alloc - look up the events of @groups in @tep and cache their fields
 *
 * Events @tep does not know are left out; hgev_map_has() says which are in.
 * @key keys the ids that stand for kernel pointers. NULL only when out of memory.
 */
struct hgev_map *hgev_map_alloc(struct tep_handle *tep, uint32_t groups, const struct ptrid_key *key);
void hgev_map_free(struct hgev_map *m);
/* hgev_map_has - is table entry @i known to the map's tep (and in its groups)? */
int hgev_map_has(const struct hgev_map *m, unsigned int i);
/* hgev_map_drop - leave table entry @i out, as if the kernel lacked it */
void hgev_map_drop(struct hgev_map *m, unsigned int i);
/* hgev_map_groups - the groups with at least one event known */
uint32_t hgev_map_groups(const struct hgev_map *m);

/*
 * hgev_set_tgid_fn - how COMM records learn a pid's thread group (default: 0, unknown).
 * ftrace's events do not carry it; a live recorder can ask /proc.
 */
void hgev_set_tgid_fn(struct hgev_map *m, uint32_t (*fn)(uint32_t pid, void *ctx), void *ctx);

/*
 * hgev_convert - one event's records into @out (at least HGEV_MAX_OUT bytes)
 *
 * @data/@size: the event's bytes (tep_record.data/size), @ts its time stamp.
 * Returns the bytes written (0: not an event of the map, or its fields do not
 * fit @size) and the records in *nrec.
 */
size_t hgev_convert(struct hgev_map *m, const void *data, int size, uint64_t ts, int cpu, char *out,
		    unsigned int *nrec);

/*
 * A callback the map has seen (hrtimer function), for naming after the run:
 * the module names it with a NAME record when first seen, which ftrace cannot
 * do (it carries the address, not the symbol).
 */
struct hgev_func {
	uint64_t addr;
	uint32_t id;
	int cpu;		/* where it was first seen */
};

/* hgev_funcs - the callbacks seen so far (at most 1024, as the module's table) */
const struct hgev_func *hgev_funcs(const struct hgev_map *m, unsigned int *n);

/* hgev_name_rec - a NAME record (48 bytes) into @out */
size_t hgev_name_rec(char *out, uint64_t ts, unsigned int kind, uint32_t id, const char *name);

#endif

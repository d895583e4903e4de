// SPDX-License-Identifier: GPL-2.0
/*
 * evmap.c - trace events to hgtrace records (see evmap.h).
 *
 * Each table entry names its tracepoint and what becomes of it; the fields
 * each kind reads are found by name once (tep_find_field) and then read at
 * their offsets. A field a kernel's event lacks reads as 0, as in the
 * importer; an event too short for its fields is not converted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>
#include "evmap.h"
#include "hg_sched_switch.h"
#include "hgtrace_vectors.h"

#define PID_LIMIT	(1u << 22)	/* the kernel's PID_MAX_LIMIT on 64-bit */
#define IRQ_NAMED_MAX	8192		/* as the module: higher irqs are recorded, not named */
#define FUNC_SLOTS	1024		/* as the module's table of named callbacks */

enum kind {
	K_SWITCH, K_WAKING, K_WAKEUP, K_WAKEUP_NEW, K_MIGRATE, K_EXIT,
	K_IRQ_ENTRY, K_IRQ_EXIT, K_SOFTIRQ_ENTRY, K_SOFTIRQ_EXIT,
	K_VEC_ENTRY, K_VEC_EXIT, K_NMI, K_HRT_ENTRY, K_HRT_EXIT, K_SYS_ENTER, K_SYS_EXIT,
};

/* the fields a kind reads, at most five, by index */
static const char *const kind_fields[][5] = {
	[K_SWITCH] = { "prev_pid", "prev_state", "prev_prio", "next_pid", "next_prio" },
	[K_WAKING] = { "pid", "target_cpu", "prio" },
	[K_WAKEUP] = { "pid", "target_cpu", "prio" },
	[K_WAKEUP_NEW] = { "pid", "target_cpu", "prio" },
	[K_MIGRATE] = { "pid", "orig_cpu", "dest_cpu" },
	[K_EXIT] = { "pid" },
	[K_IRQ_ENTRY] = { "irq" },
	[K_IRQ_EXIT] = { "irq", "ret" },
	[K_SOFTIRQ_ENTRY] = { "vec" },
	[K_SOFTIRQ_EXIT] = { "vec" },
	[K_VEC_ENTRY] = { "vector" },
	[K_VEC_EXIT] = { "vector" },
	[K_NMI] = { "handler", "delta_ns", "handled" },
	[K_HRT_ENTRY] = { "hrtimer", "function" },
	[K_HRT_EXIT] = { "hrtimer" },
	[K_SYS_ENTER] = { "id" },
	[K_SYS_EXIT] = { "ret" },
};

/* the comm a kind names its task(s) by, for COMM records */
static const char *const kind_comm[][2] = {
	[K_SWITCH] = { "prev_comm", "next_comm" },
	[K_WAKING] = { "comm" }, [K_WAKEUP] = { "comm" }, [K_WAKEUP_NEW] = { "comm" },
	[K_MIGRATE] = { "comm" }, [K_EXIT] = { "comm" },
};

struct entry {
	struct hgev_desc d;
	enum kind kind;
	uint8_t vec;		/* enum hgt_vec, for K_VEC_* */
};

/* the x86 vectors (hgtrace_vectors.h): an entry and an exit event each */
#define VEC(n, v) \
	{ { "irq_vectors", #n "_entry", HGT_EV_VECTORS }, K_VEC_ENTRY, v }, \
	{ { "irq_vectors", #n "_exit", HGT_EV_VECTORS }, K_VEC_EXIT, v },

/* the module's probes (kmod/probes.c hgt_probes[]), in its order */
static const struct entry table[] = {
	{ { "sched", "sched_switch", HGT_EV_SCHED }, K_SWITCH, 0 },
	{ { "sched", "sched_waking", HGT_EV_SCHED }, K_WAKING, 0 },
	{ { "sched", "sched_wakeup", HGT_EV_SCHED }, K_WAKEUP, 0 },
	{ { "sched", "sched_wakeup_new", HGT_EV_SCHED }, K_WAKEUP_NEW, 0 },
	{ { "sched", "sched_migrate_task", HGT_EV_SCHED }, K_MIGRATE, 0 },
	{ { "sched", "sched_process_exit", HGT_EV_SCHED }, K_EXIT, 0 },
	{ { "irq", "irq_handler_entry", HGT_EV_IRQ }, K_IRQ_ENTRY, 0 },
	{ { "irq", "irq_handler_exit", HGT_EV_IRQ }, K_IRQ_EXIT, 0 },
	{ { "irq", "softirq_entry", HGT_EV_SOFTIRQ }, K_SOFTIRQ_ENTRY, 0 },
	{ { "irq", "softirq_exit", HGT_EV_SOFTIRQ }, K_SOFTIRQ_EXIT, 0 },
	HGT_VECTORS(VEC)
	{ { "nmi", "nmi_handler", HGT_EV_NMI }, K_NMI, 0 },
	{ { "timer", "hrtimer_expire_entry", HGT_EV_HRTIMER }, K_HRT_ENTRY, 0 },
	{ { "timer", "hrtimer_expire_exit", HGT_EV_HRTIMER }, K_HRT_EXIT, 0 },
	{ { "raw_syscalls", "sys_enter", HGT_EV_SYSCALLS }, K_SYS_ENTER, 0 },
	{ { "raw_syscalls", "sys_exit", HGT_EV_SYSCALLS }, K_SYS_EXIT, 0 },
};
#define NR_TABLE	(sizeof(table) / sizeof(table[0]))

struct field {
	uint16_t off;
	uint8_t size;		/* 0: this kernel's event lacks the field */
	uint8_t is_signed;
};

struct conv {
	const struct entry *e;
	struct field f[5];
	struct field comm[2];
	int min_size;		/* the event must hold every field read */
};

struct hgev_map {
	struct conv *by_id;	/* indexed by event id; entries with e == NULL are not ours */
	int max_id;
	uint32_t groups;
	unsigned char has[NR_TABLE];
	struct ptrid_key key;
	unsigned char *pid_seen;	/* bitmap: a COMM was written */
	unsigned char irq_named[IRQ_NAMED_MAX / 8];
	struct hgev_func funcs[FUNC_SLOTS];
	unsigned int nr_funcs;
	uint32_t func_slot[FUNC_SLOTS];	/* open addressing on the id, 0 = empty */
	uint32_t (*tgid_fn)(uint32_t pid, void *ctx);
	void *tgid_ctx;
	struct tep_handle *tep;
};

unsigned int hgev_nr_descs(void)
{
	return NR_TABLE;
}

const struct hgev_desc *hgev_desc(unsigned int i)
{
	return i < NR_TABLE ? &table[i].d : NULL;
}

static void find_field(struct tep_event *ev, const char *name, struct field *f, int *min_size)
{
	struct tep_format_field *tf = name ? tep_find_field(ev, name) : NULL;

	memset(f, 0, sizeof(*f));
	/* only plain numbers and fixed arrays; anything else reads as "missing" (a comm that
	 * is a __string is read on its own, comm_read) */
	if (!tf || (tf->flags & TEP_FIELD_IS_DYNAMIC) || tf->size <= 0 || tf->offset < 0 ||
	    tf->offset + tf->size > 0xffff)
		return;
	f->off = tf->offset;
	f->size = tf->size > 255 ? 255 : tf->size;
	f->is_signed = !!(tf->flags & TEP_FIELD_IS_SIGNED);
	if (tf->offset + tf->size > *min_size)
		*min_size = tf->offset + tf->size;
}

struct hgev_map *hgev_map_alloc(struct tep_handle *tep, uint32_t groups, const struct ptrid_key *key)
{
	struct tep_event *evs[NR_TABLE];
	struct hgev_map *m = calloc(1, sizeof(*m));
	unsigned int i;
	int k;

	if (!m || !(m->pid_seen = calloc(PID_LIMIT / 8, 1)))
		goto fail;
	m->tep = tep;
	m->key = *key;
	m->max_id = -1;
	for (i = 0; i < NR_TABLE; i++) {
		evs[i] = NULL;
		if (!(table[i].d.group & groups))
			continue;
		evs[i] = tep_find_event_by_name(tep, table[i].d.system, table[i].d.name);
		if (evs[i] && evs[i]->id > m->max_id)
			m->max_id = evs[i]->id;
	}
	m->by_id = calloc(m->max_id + 1, sizeof(*m->by_id));
	if (!m->by_id)
		goto fail;
	for (i = 0; i < NR_TABLE; i++) {
		struct conv *c;

		if (!evs[i])
			continue;
		c = &m->by_id[evs[i]->id];
		c->e = &table[i];
		c->min_size = 0;
		for (k = 0; k < 5; k++)
			find_field(evs[i], kind_fields[table[i].kind][k], &c->f[k], &c->min_size);
		if (table[i].kind <= K_EXIT)
			for (k = 0; k < 2; k++)
				find_field(evs[i], kind_comm[table[i].kind][k], &c->comm[k], &c->min_size);
		m->has[i] = 1;
		m->groups |= table[i].d.group;
	}
	return m;
fail:
	hgev_map_free(m);
	return NULL;
}

void hgev_map_free(struct hgev_map *m)
{
	if (!m)
		return;
	free(m->by_id);
	free(m->pid_seen);
	free(m);
}

int hgev_map_has(const struct hgev_map *m, unsigned int i)
{
	return i < NR_TABLE && m->has[i];
}

void hgev_map_drop(struct hgev_map *m, unsigned int i)
{
	int id;

	if (i >= NR_TABLE || !m->has[i])
		return;
	m->has[i] = 0;
	m->groups = 0;
	for (id = 0; id <= m->max_id; id++) {
		if (m->by_id[id].e == &table[i])
			m->by_id[id].e = NULL;
		else if (m->by_id[id].e)
			m->groups |= m->by_id[id].e->d.group;
	}
}

uint32_t hgev_map_groups(const struct hgev_map *m)
{
	return m->groups;
}

void hgev_set_tgid_fn(struct hgev_map *m, uint32_t (*fn)(uint32_t pid, void *ctx), void *ctx)
{
	m->tgid_fn = fn;
	m->tgid_ctx = ctx;
}

const struct hgev_func *hgev_funcs(const struct hgev_map *m, unsigned int *n)
{
	*n = m->nr_funcs;
	return m->funcs;
}

/* val - a field as a 64-bit value, sign-extended where the field is signed */
static inline uint64_t val(const struct field *f, const unsigned char *d)
{
	switch (f->size) {
	case 1:
		return f->is_signed ? (uint64_t)(int64_t)(int8_t)d[f->off] : d[f->off];
	case 2: {
		uint16_t v;

		memcpy(&v, d + f->off, 2);
		return f->is_signed ? (uint64_t)(int64_t)(int16_t)v : v;
	}
	case 4: {
		uint32_t v;

		memcpy(&v, d + f->off, 4);
		return f->is_signed ? (uint64_t)(int64_t)(int32_t)v : v;
	}
	case 8: {
		uint64_t v;

		memcpy(&v, d + f->off, 8);
		return v;
	}
	default:
		return 0;
	}
}

static inline char *put_hdr(char *out, uint64_t ts, uint8_t type, uint8_t len, uint8_t flags,
			    uint8_t aux, uint32_t arg)
{
	struct hgt_rec r = { .tsc = ts, .type = type, .len = len, .flags = flags, .aux = aux, .arg = arg };

	memcpy(out, &r, sizeof(r));
	return out + sizeof(r);
}

/*
 * comm_read - field @k of @c's comms (prev and next for a switch) into @comm. A fixed
 * array is copied; a __string (sched_waking, sched_wakeup and sched_migrate_task carry
 * comm as one after 6.12; 7.3 does) goes through libtraceevent,
 * which knows both __data_loc and __rel_loc; this runs on a pid's first sighting only.
 */
static void comm_read(struct hgev_map *m, const struct conv *c, int k, const void *data, int size,
		      char *comm, size_t n)
{
	const struct field *f = &c->comm[k];
	const char *name = kind_comm[c->e->kind][k];
	struct tep_event *ev;
	struct tep_record rec;
	const char *p;
	int len = 0;

	memset(comm, 0, n);
	if (f->size) {
		memcpy(comm, (const unsigned char *)data + f->off, f->size < n ? f->size : n);
	} else if (name && (ev = tep_find_event_by_name(m->tep, c->e->d.system, c->e->d.name))) {
		memset(&rec, 0, sizeof(rec));
		rec.data = (void *)data;
		rec.size = size;
		p = tep_get_field_raw(NULL, ev, name, &rec, &len, 0);
		if (p && len > 0)
			memcpy(comm, p, (size_t)len < n ? (size_t)len : n);
	}
	comm[n - 1] = 0;
}

/* comm_once - a COMM record the first time @pid appears, as the module writes */
static char *comm_once(struct hgev_map *m, char *out, unsigned int *nrec, uint64_t ts, uint64_t pid,
		       const struct conv *c, int k, const void *data, int size)
{
	struct hgt_comm cm;

	if (pid >= PID_LIMIT || (m->pid_seen[pid / 8] & (1u << (pid % 8))))
		return out;
	m->pid_seen[pid / 8] |= 1u << (pid % 8);
	memset(&cm, 0, sizeof(cm));
	cm.tgid = m->tgid_fn ? m->tgid_fn(pid, m->tgid_ctx) : 0;
	comm_read(m, c, k, data, size, cm.comm, sizeof(cm.comm));
	out = put_hdr(out, ts, HGT_REC_COMM, sizeof(struct hgt_rec) + sizeof(cm), 0, 0, pid);
	memcpy(out, &cm, sizeof(cm));
	(*nrec)++;
	return out + sizeof(cm);
}

size_t hgev_name_rec(char *out, uint64_t ts, unsigned int kind, uint32_t id, const char *name)
{
	struct hgt_name n;
	char *p;

	memset(&n, 0, sizeof(n));
	snprintf(n.name, sizeof(n.name), "%s", name);
	p = put_hdr(out, ts, HGT_REC_NAME, sizeof(struct hgt_rec) + sizeof(n), kind, 0, id);
	memcpy(p, &n, sizeof(n));
	return sizeof(struct hgt_rec) + sizeof(n);
}

/* irq_name_once - a NAME record the first time an irq appears; the name is a __string */
static char *irq_name_once(struct hgev_map *m, char *out, unsigned int *nrec, uint64_t ts, int64_t irq,
			   const struct conv *c, const void *data, int size)
{
	struct tep_event *ev;
	struct tep_record rec;
	char name[32] = "?";
	const char *p;
	int len = 0;

	if (irq < 0 || irq >= IRQ_NAMED_MAX || (m->irq_named[irq / 8] & (1u << (irq % 8))))
		return out;
	m->irq_named[irq / 8] |= 1u << (irq % 8);
	/* first sighting only: the dynamic field goes through libtraceevent */
	ev = tep_find_event_by_name(m->tep, c->e->d.system, c->e->d.name);
	memset(&rec, 0, sizeof(rec));
	rec.data = (void *)data;
	rec.size = size;
	p = ev ? tep_get_field_raw(NULL, ev, "name", &rec, &len, 0) : NULL;
	if (p && len > 0) {
		memcpy(name, p, (size_t)len < sizeof(name) - 1 ? (size_t)len : sizeof(name) - 1);
		name[(size_t)len < sizeof(name) - 1 ? (size_t)len : sizeof(name) - 1] = 0;
	}
	(*nrec)++;
	return out + hgev_name_rec(out, ts, HGT_NAME_IRQ, (uint32_t)irq, name);
}

/* func_seen - remember a callback for naming after the run (the module's table size) */
static void func_seen(struct hgev_map *m, uint32_t id, uint64_t addr, int cpu)
{
	uint32_t i, slot = id % FUNC_SLOTS;

	for (i = 0; i < FUNC_SLOTS; i++, slot = (slot + 1) % FUNC_SLOTS) {
		if (m->func_slot[slot] == id)
			return;
		if (!m->func_slot[slot])
			break;
	}
	if (i == FUNC_SLOTS)
		return;
	m->func_slot[slot] = id;
	m->funcs[m->nr_funcs++] = (struct hgev_func){ .addr = addr, .id = id, .cpu = cpu };
}

size_t hgev_convert(struct hgev_map *m, const void *data, int size, uint64_t ts, int cpu, char *out,
		    unsigned int *nrec)
{
	const unsigned char *d = data;
	const struct conv *c;
	char *p = out;
	uint16_t id;

	*nrec = 0;
	if (size < 2)
		return 0;
	memcpy(&id, d, 2);		/* common_type, at offset 0 in every event */
	if (id > m->max_id || !(c = &m->by_id[id])->e || size < c->min_size)
		return 0;
	switch (c->e->kind) {
	case K_SWITCH: {
		struct hgt_switch s;
		uint64_t prev = val(&c->f[0], d), next = val(&c->f[3], d);
		int64_t nprio = (int64_t)val(&c->f[4], d);
		struct hg_switch_state st = hg_switch_from_ftrace(val(&c->f[1], d), nprio);

		p = comm_once(m, p, nrec, ts, prev, c, 0, data, size);
		p = comm_once(m, p, nrec, ts, next, c, 1, data, size);
		memset(&s, 0, sizeof(s));
		s.prev_pid = prev;
		s.prev_state = st.prev_state;
		s.prev_prio = (int16_t)val(&c->f[2], d);
		s.next_prio = (int16_t)nprio;
		p = put_hdr(p, ts, HGT_REC_SWITCH, sizeof(struct hgt_rec) + sizeof(s), st.flags, st.policy, next);
		memcpy(p, &s, sizeof(s));
		p += sizeof(s);
		break;
	}
	case K_WAKING:
	case K_WAKEUP:
	case K_WAKEUP_NEW: {
		static const uint8_t type[] = { HGT_REC_WAKING, HGT_REC_WAKEUP, HGT_REC_WAKEUP_NEW };
		struct hgt_wake w;
		uint64_t pid = val(&c->f[0], d);

		p = comm_once(m, p, nrec, ts, pid, c, 0, data, size);
		memset(&w, 0, sizeof(w));
		w.target_cpu = val(&c->f[1], d);
		w.prio = (int16_t)val(&c->f[2], d);
		p = put_hdr(p, ts, type[c->e->kind - K_WAKING], sizeof(struct hgt_rec) + sizeof(w), 0, 0, pid);
		memcpy(p, &w, sizeof(w));
		p += sizeof(w);
		break;
	}
	case K_MIGRATE: {
		struct hgt_migrate mg;
		uint64_t pid = val(&c->f[0], d);

		p = comm_once(m, p, nrec, ts, pid, c, 0, data, size);
		memset(&mg, 0, sizeof(mg));
		mg.orig_cpu = val(&c->f[1], d);
		mg.dest_cpu = val(&c->f[2], d);
		p = put_hdr(p, ts, HGT_REC_MIGRATE, sizeof(struct hgt_rec) + sizeof(mg), 0, 0, pid);
		memcpy(p, &mg, sizeof(mg));
		p += sizeof(mg);
		break;
	}
	case K_EXIT: {
		uint64_t pid = val(&c->f[0], d);

		p = comm_once(m, p, nrec, ts, pid, c, 0, data, size);
		p = put_hdr(p, ts, HGT_REC_EXIT, sizeof(struct hgt_rec), 0, 0, pid);
		break;
	}
	case K_IRQ_ENTRY: {
		int64_t irq = (int64_t)val(&c->f[0], d);

		p = irq_name_once(m, p, nrec, ts, irq, c, data, size);
		p = put_hdr(p, ts, HGT_REC_IRQ_ENTRY, sizeof(struct hgt_rec), 0, 0, irq);
		break;
	}
	case K_IRQ_EXIT:
		p = put_hdr(p, ts, HGT_REC_IRQ_EXIT, sizeof(struct hgt_rec), val(&c->f[1], d), 0,
			    val(&c->f[0], d));
		break;
	case K_SOFTIRQ_ENTRY:
	case K_SOFTIRQ_EXIT:
		p = put_hdr(p, ts, c->e->kind == K_SOFTIRQ_ENTRY ? HGT_REC_SOFTIRQ_ENTRY : HGT_REC_SOFTIRQ_EXIT,
			    sizeof(struct hgt_rec), 0, 0, val(&c->f[0], d));
		break;
	case K_VEC_ENTRY:
	case K_VEC_EXIT:
		p = put_hdr(p, ts, c->e->kind == K_VEC_ENTRY ? HGT_REC_VEC_ENTRY : HGT_REC_VEC_EXIT,
			    sizeof(struct hgt_rec), c->e->vec, 0, val(&c->f[0], d));
		break;
	case K_NMI: {
		struct hgt_nmi n;
		int64_t delta = (int64_t)val(&c->f[1], d);

		n.delta_ns = delta < 0 ? 0 : delta > UINT32_MAX ? UINT32_MAX : (uint32_t)delta;
		n.handled = val(&c->f[2], d);
		p = put_hdr(p, ts, HGT_REC_NMI, sizeof(struct hgt_rec) + sizeof(n), 0, 0,
			    ptrid(&m->key, val(&c->f[0], d)));
		memcpy(p, &n, sizeof(n));
		p += sizeof(n);
		break;
	}
	case K_HRT_ENTRY: {
		struct hgt_hrtimer h;
		uint64_t fn = val(&c->f[1], d);

		memset(&h, 0, sizeof(h));
		h.func_id = ptrid(&m->key, fn);
		func_seen(m, h.func_id, fn, cpu);
		p = put_hdr(p, ts, HGT_REC_HRTIMER_ENTRY, sizeof(struct hgt_rec) + sizeof(h), 0, 0,
			    ptrid(&m->key, val(&c->f[0], d)));
		memcpy(p, &h, sizeof(h));
		p += sizeof(h);
		break;
	}
	case K_HRT_EXIT:
		p = put_hdr(p, ts, HGT_REC_HRTIMER_EXIT, sizeof(struct hgt_rec), 0, 0,
			    ptrid(&m->key, val(&c->f[0], d)));
		break;
	case K_SYS_ENTER:
		p = put_hdr(p, ts, HGT_REC_SYS_ENTER, sizeof(struct hgt_rec), 0, 0, val(&c->f[0], d));
		break;
	case K_SYS_EXIT:
		p = put_hdr(p, ts, HGT_REC_SYS_EXIT, sizeof(struct hgt_rec), 0, 0, val(&c->f[0], d));
		break;
	}
	(*nrec)++;
	return p - out;
}

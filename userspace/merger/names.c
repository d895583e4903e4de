// SPDX-License-Identifier: GPL-2.0
/*
 * names.c - what every output calls a task, an interrupt, a cause.
 *
 * The recording names tasks (COMM records, at first sight), irqs and
 * functions (NAME records); hourglass's threads are hg-thread-K in every
 * output, whatever their comm. One function per kind of name, so that the
 * report, the trace.dat and the Perfetto trace agree.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "export.h"

/* hgg_class_name, hgg_kind_name: export_names.c; vector and softirq names: the library (hg_hgt.h) */
const char *const why_text[HGG_W_N] = {
	"", "outside the recording window", "the recorder lost events on this CPU during the gap",
	"no kernel event at all: hypervisor, emulator, SMI", "kernel events but no handler or other task",
	"switched out", "no kernel recording",
	"nothing recorded on its CPU for most of it: hypervisor, emulator, SMI or another vCPU's turn",
};

/* a map from a 32-bit id to a short name, open addressing */
struct nmap {
	uint32_t *id;
	char (*s)[33];
	unsigned char *used;
	size_t cap, n;
};

/*
 * The names the recording gave, as of some point in it. The merge pass keeps
 * one table; each exporter's thread keeps its own, fed by the same records in
 * the same order, so that each sees the names as they were at its point of
 * the stream and neither waits for the other.
 */
struct names {
	struct nmap comm, irq, func;
	unsigned gen;			/* changes with every name given: the causes cached are stale */
	struct cause_slot *causes;	/* names_cause's answers, CAUSE_SLOTS of them (or NULL) */
};

/*
 * A gap's cause is one of a few names, millions of times over (the same irq, the same
 * task): the exporters ask for it once per gap each, and formatting it anew was about 5% of
 * a merge's instructions with both exports (callgrind, bench/merge_speed.py's run). Each
 * table keeps its answers, keyed by what the name is made of, until a name changes.
 */
#define CAUSE_SLOTS	256
#define CAUSE_MAX	96		/* longer names are not kept */

struct cause_slot {
	uint64_t key;			/* 0: empty */
	unsigned gen;
	char s[CAUSE_MAX];
};

static struct names main_tab;
static __thread struct names *cur = &main_tab;	/* the table names_*() read in this thread */
static struct run *run;

static size_t slot(const struct nmap *m, uint32_t id)
{
	size_t i = (size_t)(id * 0x9e3779b1u) & (m->cap - 1);

	while (m->used[i] && m->id[i] != id)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static void nmap_put(struct nmap *m, uint32_t id, const char *s, size_t n)
{
	size_t i;

	if (2 * (m->n + 1) > m->cap) {
		struct nmap o = *m;

		m->cap = m->cap ? 2 * m->cap : 256;
		m->id = xcalloc(m->cap, sizeof(*m->id));
		m->s = xcalloc(m->cap, sizeof(*m->s));
		m->used = xcalloc(m->cap, 1);
		m->n = 0;
		for (i = 0; i < o.cap; i++)
			if (o.used[i])
				nmap_put(m, o.id[i], o.s[i], strlen(o.s[i]));
		free(o.id);
		free(o.s);
		free(o.used);
	}
	i = slot(m, id);
	if (!m->used[i])
		m->n++;
	m->used[i] = 1;
	m->id[i] = id;
	if (n > 32)
		n = 32;
	memcpy(m->s[i], s, n);
	m->s[i][n] = 0;
	/* names end at their first NUL; control bytes would garble every output */
	for (n = 0; m->s[i][n]; n++)
		if ((unsigned char)m->s[i][n] < 0x20)
			m->s[i][n] = '?';
}

static const char *nmap_get(const struct nmap *m, uint32_t id)
{
	size_t i;

	if (!m->cap)
		return NULL;
	i = slot(m, id);
	return m->used[i] ? m->s[i] : NULL;
}

static void nmap_free(struct nmap *m)
{
	free(m->id);
	free(m->s);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

/* names_init - the names of run @r, none yet (a process may merge more than one run: the fuzz target) */
void names_init(struct run *r)
{
	run = r;
	nmap_free(&main_tab.comm);
	nmap_free(&main_tab.irq);
	nmap_free(&main_tab.func);
	free(main_tab.causes);
	main_tab.causes = NULL;
	main_tab.gen++;
}

struct names *names_new(void)
{
	return xcalloc(1, sizeof(struct names));
}

void names_use(struct names *n)
{
	cur = n ? n : &main_tab;
}

void names_record_in(struct names *t, const struct hgt_rec *rec)
{
	const char *pay = (const char *)(rec + 1);

	t->gen++;
	if (rec->type == HGT_REC_COMM && rec->len >= sizeof(*rec) + sizeof(struct hgt_comm)) {
		const struct hgt_comm *c = (const void *)pay;

		nmap_put(&t->comm, rec->arg, c->comm, strnlen(c->comm, sizeof(c->comm)));
	} else if (rec->type == HGT_REC_NAME && rec->len >= sizeof(*rec) + sizeof(struct hgt_name)) {
		const struct hgt_name *n = (const void *)pay;

		nmap_put(rec->flags == HGT_NAME_IRQ ? &t->irq : &t->func, rec->arg, n->name,
			 strnlen(n->name, sizeof(n->name)));
	}
}

void names_record(const struct hgt_rec *rec)
{
	names_record_in(&main_tab, rec);
}

const char *names_comm(uint32_t pid)
{
	int k = thread_of_tid(run, pid);

	return k >= 0 ? run->th[k].name : nmap_get(&cur->comm, pid);
}

const char *names_irq(uint32_t irq)
{
	return nmap_get(&cur->irq, irq);
}

const char *names_func(uint32_t id)
{
	return nmap_get(&cur->func, id);
}

void names_each_comm(void (*fn)(void *arg, uint32_t pid, const char *comm), void *arg)
{
	size_t i;
	int k;

	for (i = 0; i < cur->comm.cap; i++)
		if (cur->comm.used[i] && thread_of_tid(run, cur->comm.id[i]) < 0)
			fn(arg, cur->comm.id[i], cur->comm.s[i]);
	for (k = 0; k < run->nthreads; k++)
		if (run->th[k].tid)
			fn(arg, run->th[k].tid, run->th[k].name);
}

const char *names_task(int64_t pid, char *buf, size_t len)
{
	const char *c;
	int l;

	if (pid < 0)
		snprintf(buf, len, "unknown task");
	else if (pid == 0)
		snprintf(buf, len, "idle");
	else if (thread_of_tid(run, (uint32_t)pid) >= 0)
		snprintf(buf, len, "%s", names_comm((uint32_t)pid));
	else if ((l = labels_task((uint32_t)pid)) >= 0)
		snprintf(buf, len, "%s:%lld [%s]", (c = nmap_get(&cur->comm, (uint32_t)pid)) ? c : "?", (long long)pid,
			 labels_name(l));
	else
		snprintf(buf, len, "%s:%lld", (c = nmap_get(&cur->comm, (uint32_t)pid)) ? c : "?", (long long)pid);
	return buf;
}

const char *vector_name(unsigned v)
{
	return v < HGT_VEC_MAX ? hgt_vec_name(v) : "vector";
}

const char *softirq_text(unsigned v)
{
	return hgt_softirq_name(v);
}

const char *names_comp(uint8_t kind, int64_t id, char *buf, size_t len)
{
	char t[64];
	const char *n;

	switch (kind) {
	case HGG_K_SELF:
		snprintf(buf, len, "self");
		break;
	case HGG_K_TURN:
		if (id >= 0)
			snprintf(buf, len, "cpu %lld's turn", (long long)id);
		else
			snprintf(buf, len, "other cpus' turns");
		break;
	case HGG_K_TASK:
		if (id == 0 || id < 0)
			names_task(id, buf, len);
		else
			snprintf(buf, len, "task %s", names_task(id, t, sizeof(t)));
		break;
	case HGG_K_IRQ: {
		int l = id >= 0 ? labels_irq((uint32_t)id) : -1;

		n = names_irq((uint32_t)id);
		snprintf(buf, len, n && *n ? "irq %lld %s" : "irq %lld", (long long)id, n);
		if (l >= 0 && strlen(buf) + 4 < len)
			snprintf(buf + strlen(buf), len - strlen(buf), " [%s]", labels_name(l));
		break;
	}
	case HGG_K_VEC:
		if (id >= 0 && id < HGT_VEC_MAX)
			snprintf(buf, len, "%s", hgt_vec_name(id));
		else
			snprintf(buf, len, "vector kind %lld", (long long)id);
		break;
	case HGG_K_SOFTIRQ:
		if ((n = id >= 0 ? softirq_text((unsigned)id) : NULL))
			snprintf(buf, len, "softirq %s", n);
		else
			snprintf(buf, len, "softirq %lld", (long long)id);
		break;
	default:
		snprintf(buf, len, "nmi");
	}
	return buf;
}

/* is_softirq_thread - PREEMPT_RT's ktimers/N: it runs the timer softirq that other kernels run on
 * the interrupt's way out (kernel/softirq.c names it so) */
static int is_softirq_thread(int64_t pid)
{
	const char *c = pid > 0 ? names_comm((uint32_t)pid) : NULL;

	return c && !strncmp(c, "ktimers/", 8);
}

/*
 * names_switch_task - the task a switch gap is named after: the first one switched to, unless
 * that was PREEMPT_RT's ktimers/N and another task ran in the gap too: then the one of those that
 * ran longest (comp[] is largest first). ktimers often runs a few microseconds at the tick before
 * the task the gap went to (6.12-rt, lab fifo-periodic: 9 of 429 preemptions by the load went to
 * ktimers/0 first, for 27 of 650 us), where a kernel without PREEMPT_RT runs the same softirq
 * as part of the interrupt and the gap is named after the task. -1 when the gap is not a switch.
 */
int64_t names_switch_task(const struct hgg_gap *g)
{
	int i;

	if ((g->cls != HGG_C_SWITCH_HG && g->cls != HGG_C_SWITCH_OTHER) || !(g->flags & HGG_F_OUT))
		return -1;
	if (!is_softirq_thread(g->out_pid))
		return g->out_pid;
	for (i = 0; i < g->ncomp && i < HGG_COMPS; i++)
		if (g->comp[i].kind == HGG_K_TASK && g->comp[i].id > 0 && g->comp[i].cycles &&
		    !is_softirq_thread(g->comp[i].id))
			return g->comp[i].id;
	return g->out_pid;
}

/*
 * names_hidden_key - a hidden gap's cause as one number (never 0): whose turn it mostly was, if
 * anyone's, and the kernel's largest part in it, if any. Hidden gaps that held kernel events are
 * named after both ("hidden, with local_timer"): never after the kernel's part alone, which
 * filled less than half of them (docs/merge.md, "The ground truth of a gap").
 */
uint64_t names_hidden_key(const struct hgg_gap *g)
{
	uint64_t k = 1;

	if (g->kind == HGG_KD_TURN)
		k |= 2 | (uint64_t)((uint32_t)(g->turn_cpu + 1) & 0xfffff) << 2;
	if (g->flags & HGG_F_PRIMARY)
		k |= (uint64_t)(g->primary_kind + 1) << 22 | (uint64_t)(uint32_t)g->primary_id << 30;
	return k;
}

/* what the cause's name is made of, as one key (never 0) */
static uint64_t cause_key(const struct hgg_gap *g)
{
	int64_t pid = names_switch_task(g);

	if (pid >= 0)
		return 1ULL << 62 | (uint32_t)pid;
	if (g->cls == HGG_C_HIDDEN)
		return 3ULL << 62 | 1ULL << 61 | names_hidden_key(g);
	if (g->flags & HGG_F_PRIMARY)
		return 2ULL << 62 | (uint64_t)g->primary_kind << 48 | ((uint64_t)g->primary_id & 0xffffffffffffULL);
	return 3ULL << 62 | g->kind;
}

static void cause_format(const struct hgg_gap *g, char *buf, size_t len)
{
	int64_t pid = names_switch_task(g);
	char t[64], base[48];

	if (pid >= 0) {
		snprintf(buf, len, "switched to %s", names_task(pid, t, sizeof(t)));
	} else if (g->cls == HGG_C_HIDDEN) {
		if (g->kind == HGG_KD_TURN)
			names_comp(HGG_K_TURN, g->turn_cpu, base, sizeof(base));
		else
			snprintf(base, sizeof(base), "hidden");
		if (g->flags & HGG_F_PRIMARY)
			snprintf(buf, len, "%s, with %s", base, names_comp(g->primary_kind, g->primary_id, t, sizeof(t)));
		else
			snprintf(buf, len, "%s", base);
	} else if (g->flags & HGG_F_PRIMARY) {
		names_comp(g->primary_kind, g->primary_id, buf, len);
	} else {
		snprintf(buf, len, "%s", hgg_kind_name[g->kind]);
	}
}

const char *names_cause(const struct hgg_gap *g, char *buf, size_t len)
{
	uint64_t key = cause_key(g);
	int64_t id = g->primary_id;
	struct cause_slot *c;
	size_t n;

	/* a key that does not hold the whole id (a task id past 48 bits) is not kept */
	if (!HG_FAST || !len || ((g->flags & HGG_F_PRIMARY) && (id < -(1LL << 47) || id >= 1LL << 47))) {
		cause_format(g, buf, len);
		return buf;
	}
	if (!cur->causes)
		cur->causes = xcalloc(CAUSE_SLOTS, sizeof(*cur->causes));
	c = &cur->causes[(key * 0x9e3779b97f4a7c15ULL) >> 56];
	if (c->key != key || c->gen != cur->gen) {
		cause_format(g, c->s, sizeof(c->s));
		c->key = key;
		c->gen = cur->gen;
	}
	n = strnlen(c->s, sizeof(c->s));
	if (n + 1 >= sizeof(c->s) || n >= len) {	/* perhaps cut short: said afresh, at the caller's length */
		cause_format(g, buf, len);
		return buf;
	}
	memcpy(buf, c->s, n + 1);
	return buf;
}

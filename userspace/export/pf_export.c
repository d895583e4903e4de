// SPDX-License-Identifier: GPL-2.0
/*
 * pf_export.c - the merged timeline as Chrome trace-event JSON, which
 * ui.perfetto.dev and chrome://tracing open (export.h, pf_*): one process
 * per side; a track per CPU for the kernel (the task running between
 * switches, hard irqs, x86 vectors and softirqs as slices nested inside),
 * and a track per hourglass thread (its intervals, its gaps named by their
 * actual cause with the inference and whether it was right, deadline
 * misses, wake-ups). Lost events are instants on their CPU.
 *
 * Times are microseconds from base_tsc ("ts", "dur"), by trace-cmd's
 * TSC2NSEC arithmetic, so they match the trace.dat to the nanosecond. The
 * file is streamed through a buffer and written under a temporary name;
 * names are escaped once and cached, numbers formatted without printf.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "json_out.h"
#include "kitem.h"
#include "out_tmp.h"
#include "reorder.h"
#include "tracedat_writer.h"

#define KERNEL_PID		1
#define HOURGLASS_PID		2
#define KERNEL_HORIZON_S	2e-3	/* as the trace.dat's window (ks_export.c) */
#define KERNEL_WINDOW_MAX	65536
#define OBUF			(1 << 20)
#define STACK_MAX		32	/* handlers nested on a CPU */
#define TASK_SLOTS		4096
#define NAME_SRC_MAX		80	/* bytes of a name kept (escaped, six times that at most) */
#define IRQ_SLOTS		256

enum frame_kind { F_IRQ, F_VEC, F_SOFTIRQ };

struct frame {
	uint8_t kind;
	uint32_t id;
	uint64_t t;
};

struct pf_cpu {
	struct ro_lane win;
	int has_cur, seen;
	uint32_t cur;
	uint64_t since, last;
	uint64_t newest;	/* the latest record of the CPU, whatever its type */
	struct frame stack[STACK_MAX];
	unsigned depth;
	char prefix[64];	/* ",\n{"ph":"X","pid":1,"tid":CPU,"name":"" */
	unsigned prefix_len;
};

struct name_slot {
	uint32_t key;
	uint8_t valid;
	uint16_t len;
	char name[6 * NAME_SRC_MAX];
};

struct pf_export {
	int fd;
	char *path, *tmp;
	char *buf;
	size_t len;
	int err_no;
	struct exp_run run;
	uint32_t *tids;
	uint32_t mult, shift;
	struct ro_window win;
	struct pf_cpu *cpu;
	uint64_t early;
	uint64_t events, gaps;
	uint64_t confusion[HGG_C_N][HGG_C_N];
	struct name_slot task[TASK_SLOTS];
	struct name_slot irq[IRQ_SLOTS];
	struct name_slot vec_names[HGT_VEC_MAX];
	struct name_slot softirq_names[10];
};

static void ob_flush(struct pf_export *x)
{
	if (x->len && !x->err_no && out_write_all(x->fd, x->buf, x->len))
		x->err_no = errno ? errno : EIO;
	x->len = 0;
}

/* room for @n bytes at the end of the buffer */
static inline char *ob_room(struct pf_export *x, size_t n)
{
	if (x->len + n > OBUF)
		ob_flush(x);
	return x->buf + x->len;
}

static inline void ob_done(struct pf_export *x, char *p)
{
	x->len = p - x->buf;
}

#define PUT(p, lit) (memcpy(p, lit, sizeof(lit) - 1), (p) += sizeof(lit) - 1)

static inline char *put_str(char *p, const char *s, size_t n)
{
	*p++ = '"';
	p += json_escape(p, s, n);
	*p++ = '"';
	return p;
}

/* a name of ours, plain ASCII: nothing to escape */
static inline char *put_plain(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

static int failed(struct pf_export *x, struct hg_err *err)
{
	if (!x->err_no)
		return 0;
	return hg_err_set(err, "%s: cannot write %s: %s", x->path, x->tmp, strerror(x->err_no));
}

static uint64_t rebase(struct pf_export *x, uint64_t tsc)
{
	if (tsc >= x->run.base_tsc)
		return tsc - x->run.base_tsc;
	x->early++;
	return 0;
}

static inline uint64_t ns_of(const struct pf_export *x, uint64_t ts)
{
	return td_to_ns(ts, x->mult, x->shift);
}

/* ph "M": a process's or a thread's name */
static void meta(struct pf_export *x, int first, int pid, uint32_t tid, const char *what, const char *name)
{
	size_t n = strlen(name);
	char *p = ob_room(x, 6 * n + 128);

	if (!first)
		PUT(p, ",\n");
	PUT(p, "{\"ph\":\"M\",\"pid\":");
	p += put_u64(p, pid);
	PUT(p, ",\"tid\":");
	p += put_u64(p, tid);
	PUT(p, ",\"name\":\"");
	memcpy(p, what, strlen(what));
	p += strlen(what);
	PUT(p, "\",\"args\":{\"name\":");
	p = put_str(p, name, n);
	PUT(p, "}}");
	ob_done(x, p);
	x->events++;
}

/* the escaped name of a task slice: "idle", "hg-thread-1", "comm:pid" */
static const struct name_slot *task_name(struct pf_export *x, uint32_t pid)
{
	static struct name_slot tmp;
	struct name_slot *s = &x->task[pid & (TASK_SLOTS - 1)];
	const struct exp_names *nm = &x->run.names;
	char buf[128];
	const char *name;
	int known = 0, k;

	if (s->valid && s->key == pid)
		return s;
	if (!pid) {
		name = "idle";
		known = 1;
	} else {
		for (k = 0; k < x->run.nthreads; k++)
			known |= x->tids[k] == pid;
		known |= nm->comm && nm->comm(nm->ctx, pid) != NULL;
		name = nm->task ? nm->task(nm->ctx, pid, buf, sizeof(buf)) : NULL;
		if (!name) {
			const char *comm = nm->comm ? nm->comm(nm->ctx, pid) : NULL;

			snprintf(buf, sizeof(buf), "%s:%u", comm ? comm : "?", pid);
			name = buf;
		}
	}
	/* a name not known yet is asked for again next time */
	if (!known)
		s = &tmp;
	s->key = pid;
	s->len = json_escape(s->name, name, strnlen(name, NAME_SRC_MAX));
	s->valid = s != &tmp;
	return s;
}

static const struct name_slot *irq_name(struct pf_export *x, uint32_t irq)
{
	static struct name_slot tmp;
	struct name_slot *s = &x->irq[irq & (IRQ_SLOTS - 1)];
	const char *name;
	char buf[NAME_SRC_MAX];
	int n;

	if (s->valid && s->key == irq)
		return s;
	name = x->run.names.irq ? x->run.names.irq(x->run.names.ctx, irq) : NULL;
	if (name && *name)
		n = snprintf(buf, sizeof(buf), "irq %u %s", irq, name);
	else
		n = snprintf(buf, sizeof(buf), "irq %u", irq);
	if (!name)
		s = &tmp;	/* its NAME record may come later */
	s->key = irq;
	s->len = json_escape(s->name, buf, n < (int)sizeof(buf) ? n : (int)sizeof(buf) - 1);
	s->valid = s != &tmp;
	return s;
}

/* a name from a table made at open (vectors, softirqs), or of a number beyond it */
static const struct name_slot *fixed_name(const struct name_slot *table, unsigned n, unsigned id, const char *fmt)
{
	static struct name_slot other;
	char buf[48];

	if (id < n)
		return &table[id];
	other.len = json_escape(other.name, buf, snprintf(buf, sizeof(buf), fmt, id));
	return &other;
}

/* a slice on a CPU's track: the prefix, the name, the category, the times */
static void kslice(struct pf_export *x, struct pf_cpu *c, const char *name, unsigned nlen, const char *cat,
		   unsigned clen, uint64_t t0, uint64_t t1)
{
	char *p = ob_room(x, c->prefix_len + nlen + clen + 96);
	uint64_t n0 = ns_of(x, t0), n1 = ns_of(x, t1);

	memcpy(p, c->prefix, c->prefix_len);
	p += c->prefix_len;
	memcpy(p, name, nlen);
	p += nlen;
	memcpy(p, cat, clen);
	p += clen;
	p += put_us(p, n0);
	PUT(p, ",\"dur\":");
	p += put_us(p, n1 - n0);
	*p++ = '}';
	ob_done(x, p);
	x->events++;
}

#define CAT(s) "\",\"cat\":\"" s "\",\"ts\":"

static void handler_slice(struct pf_export *x, struct pf_cpu *c, const struct frame *f, uint64_t t1)
{
	static const char cat_irq[] = CAT("irq"), cat_vec[] = CAT("vec"), cat_si[] = CAT("softirq");
	const struct name_slot *s;

	switch (f->kind) {
	case F_IRQ:
		s = irq_name(x, f->id);
		kslice(x, c, s->name, s->len, cat_irq, sizeof(cat_irq) - 1, f->t, t1);
		break;
	case F_VEC:
		s = fixed_name(x->vec_names, HGT_VEC_MAX, f->id, "vector kind %u");
		kslice(x, c, s->name, s->len, cat_vec, sizeof(cat_vec) - 1, f->t, t1);
		break;
	case F_SOFTIRQ:
		s = fixed_name(x->softirq_names, 10, f->id, "softirq %u");
		kslice(x, c, s->name, s->len, cat_si, sizeof(cat_si) - 1, f->t, t1);
		break;
	}
}

static void task_slice(struct pf_export *x, struct pf_cpu *c, uint64_t t1)
{
	static const char cat[] = CAT("task");
	const struct name_slot *s = task_name(x, c->cur);

	kslice(x, c, s->name, s->len, cat, sizeof(cat) - 1, c->since, t1);
}

static void exit_frame(struct pf_export *x, struct pf_cpu *c, uint8_t kind, uint32_t id, uint64_t t)
{
	unsigned i = c->depth;

	/* an exit whose entry came before what we know is ignored */
	while (i && (c->stack[i - 1].kind != kind || c->stack[i - 1].id != id))
		i--;
	if (!i)
		return;
	handler_slice(x, c, &c->stack[i - 1], t);
	c->depth = i - 1;
}

/* one kernel record, in its CPU's time order */
static void process(struct pf_export *x, unsigned cpu, const struct kitem *it)
{
	struct pf_cpu *c = &x->cpu[cpu];

	c->seen = 1;
	c->last = it->ts;
	switch (it->type) {
	case HGT_REC_SWITCH:
		if (c->has_cur)
			task_slice(x, c, it->ts);
		c->cur = it->arg;
		c->since = it->ts;
		c->has_cur = 1;
		c->depth = 0;
		break;
	case HGT_REC_IRQ_ENTRY:
	case HGT_REC_VEC_ENTRY:
	case HGT_REC_SOFTIRQ_ENTRY:
		if (c->depth < STACK_MAX)
			c->stack[c->depth++] = (struct frame){
				it->type == HGT_REC_IRQ_ENTRY ? F_IRQ : it->type == HGT_REC_VEC_ENTRY ? F_VEC : F_SOFTIRQ,
				it->type == HGT_REC_VEC_ENTRY ? it->flags : it->arg, it->ts };
		break;
	case HGT_REC_IRQ_EXIT:
		exit_frame(x, c, F_IRQ, it->arg, it->ts);
		break;
	case HGT_REC_VEC_EXIT:
		exit_frame(x, c, F_VEC, it->flags, it->ts);
		break;
	case HGT_REC_SOFTIRQ_EXIT:
		exit_frame(x, c, F_SOFTIRQ, it->arg, it->ts);
		break;
	case HGT_REC_EXIT:
		x->task[it->arg & (TASK_SLOTS - 1)].valid = 0;
		break;
	case HGT_REC_LOST: {
		uint64_t count;
		char *p = ob_room(x, 160);

		memcpy(&count, it->p, 8);
		PUT(p, ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":");
		p += put_u64(p, cpu);
		PUT(p, ",\"name\":\"events lost\",\"ts\":");
		p += put_us(p, ns_of(x, it->ts));
		PUT(p, ",\"args\":{\"count\":");
		p += put_u64(p, count);
		PUT(p, "}}");
		ob_done(x, p);
		x->events++;
		break;
	}
	}
}

int pf_kernel(struct pf_export *x, uint32_t cpu, const struct hgt_rec *r, struct hg_err *err)
{
	unsigned need = kitem_payload(r->type);
	struct pf_cpu *c;
	struct kitem *it;

	if (cpu >= x->run.ncpus)
		return hg_err_set(err, "kernel record of type %u at TSC %llu on CPU %u, but the run has %u CPUs",
				  r->type, (unsigned long long)r->tsc, cpu, x->run.ncpus);
	if (r->len < sizeof(*r) + need)
		return hg_err_set(err, "kernel record of type %u at TSC %llu on CPU %u: %u bytes, %zu expected",
				  r->type, (unsigned long long)r->tsc, cpu, r->len, sizeof(*r) + need);
	if (r->tsc > x->run.base_tsc && r->tsc - x->run.base_tsc > x->cpu[cpu].newest)
		x->cpu[cpu].newest = r->tsc - x->run.base_tsc;
	switch (r->type) {
	case HGT_REC_COMM:
		x->task[r->arg & (TASK_SLOTS - 1)].valid = 0;
		return 0;
	case HGT_REC_NAME:
		if (r->flags == HGT_NAME_IRQ)
			x->irq[r->arg & (IRQ_SLOTS - 1)].valid = 0;
		return 0;
	case HGT_REC_SWITCH: case HGT_REC_IRQ_ENTRY: case HGT_REC_IRQ_EXIT: case HGT_REC_VEC_ENTRY:
	case HGT_REC_VEC_EXIT: case HGT_REC_SOFTIRQ_ENTRY: case HGT_REC_SOFTIRQ_EXIT: case HGT_REC_EXIT:
	case HGT_REC_LOST:
		break;
	default:
		return 0;	/* nothing on the tracks */
	}
	c = &x->cpu[cpu];
	it = ro_push(&x->win, &c->win, rebase(x, r->tsc), 0);
	if (!it)
		return hg_err_set(err, "%s: out of memory for CPU %u's reorder window", x->path, cpu);
	kitem_fill(it, r, need);
	while ((it = ro_due(&x->win, &c->win, c->win.newest))) {
		process(x, cpu, it);
		ro_pop(&c->win);
	}
	return failed(x, err);
}

/* the start of an event on a hourglass thread's track: ",{"ph":PH_NAME,"pid":2,"tid":K" */
static char *hg_head(struct pf_export *x, const char *ph_name, size_t n, uint16_t thread)
{
	char *p = ob_room(x, n + 160);

	PUT(p, ",\n{\"ph\":");
	memcpy(p, ph_name, n);
	p += n;
	PUT(p, ",\"pid\":2,\"tid\":");
	p += put_u64(p, thread);
	return p;
}

#define HEAD(x, lit, thread) hg_head(x, lit, sizeof(lit) - 1, thread)

int pf_hourglass(struct pf_export *x, const struct hgl_rec *r, struct hg_err *err)
{
	char *p;

	if (r->thread >= x->run.nthreads)
		return hg_err_set(err, "hourglass record of thread %u, but the run has %d threads", r->thread,
				  x->run.nthreads);
	switch (r->type) {
	case HGL_REC_INTERVAL: {
		uint64_t n0 = ns_of(x, rebase(x, r->t0)), n1 = ns_of(x, rebase(x, r->t1));

		p = HEAD(x, "\"X\",\"name\":\"running\",\"cat\":\"interval\"", r->thread);
		PUT(p, ",\"ts\":");
		p += put_us(p, n0);
		PUT(p, ",\"dur\":");
		p += put_us(p, n1 > n0 ? n1 - n0 : 0);
		PUT(p, ",\"args\":{\"cpu\":");
		p += put_u64(p, r->cpu);
		PUT(p, "}}");
		break;
	}
	case HGL_REC_JOB:
		if (!(r->flags & HGL_JOB_MISSED))
			return 0;
		p = HEAD(x, "\"i\",\"s\":\"t\",\"name\":\"deadline missed\"", r->thread);
		PUT(p, ",\"ts\":");
		p += put_us(p, ns_of(x, rebase(x, r->t2)));
		*p++ = '}';
		break;
	case HGL_REC_WAKE:
		p = HEAD(x, "\"i\",\"s\":\"t\",\"name\":\"wake-up\"", r->thread);
		PUT(p, ",\"ts\":");
		p += put_us(p, ns_of(x, rebase(x, r->t1)));
		PUT(p, ",\"args\":{\"lateness_us\":");
		p += put_sus(p, (int64_t)r->t2);
		PUT(p, "}}");
		break;
	default:
		return 0;
	}
	ob_done(x, p);
	x->events++;
	return failed(x, err);
}

static const char *class_name(unsigned c)
{
	return c < HGG_C_N ? hgg_class_name[c] : "unknown";
}

int pf_gap(struct pf_export *x, const struct hgg_gap *g, struct hg_err *err)
{
	const char *actual = class_name(g->cls), *inferred = g->vol ? "voluntary" : class_name(g->inferred);
	int right = !g->vol && g->inferred == g->cls;
	char buf[256];
	const char *cause;
	size_t clen;
	uint64_t n0, n1;
	char *p;

	if (g->thread >= x->run.nthreads)
		return hg_err_set(err, "gap at TSC %llu of thread %u, but the run has %d threads",
				  (unsigned long long)g->g0, g->thread, x->run.nthreads);
	cause = x->run.names.cause ? x->run.names.cause(x->run.names.ctx, g, buf, sizeof(buf)) : NULL;
	clen = cause ? strnlen(cause, 1024) : 0;
	n0 = ns_of(x, rebase(x, g->g0));
	n1 = ns_of(x, rebase(x, g->g1));
	p = ob_room(x, 6 * clen + 512);
	PUT(p, ",\n{\"ph\":\"X\",\"pid\":2,\"tid\":");
	p += put_u64(p, g->thread);
	/* the name carries the colour (Perfetto colours by name): one per cause, right or wrong */
	PUT(p, ",\"cat\":\"gap\",\"name\":\"gap: ");
	p = put_plain(p, actual);
	if (!right && !g->vol) {
		PUT(p, " (inferred ");
		p = put_plain(p, inferred);
		*p++ = ')';
	}
	PUT(p, "\",\"ts\":");
	p += put_us(p, n0);
	PUT(p, ",\"dur\":");
	p += put_us(p, n1 > n0 ? n1 - n0 : 0);
	PUT(p, ",\"args\":{\"cpu\":");
	p += put_u64(p, g->cpu);
	PUT(p, ",\"next_thread\":");
	p += put_u64(p, g->next_thread);
	PUT(p, ",\"inferred\":\"");
	p = put_plain(p, inferred);
	PUT(p, "\",\"actual\":\"");
	p = put_plain(p, actual);
	*p++ = '"';
	PUT(p, ",\"cause\":");
	p = put_str(p, cause ? cause : "", clen);
	if (right)
		PUT(p, ",\"agree\":true}}");
	else
		PUT(p, ",\"agree\":false}}");
	ob_done(x, p);
	x->events++;
	x->gaps++;
	if (!g->vol && g->cls < HGG_C_UNEXPLAINABLE && g->inferred < HGG_C_OTHER)
		x->confusion[g->cls][g->inferred]++;
	return failed(x, err);
}

static void free_export(struct pf_export *x)
{
	unsigned c;

	if (!x)
		return;
	if (x->fd >= 0)
		close(x->fd);
	out_discard(x->tmp);
	for (c = 0; x->cpu && c < x->run.ncpus; c++)
		ro_lane_free(&x->cpu[c].win);
	free(x->cpu);
	free(x->tids);
	free(x->buf);
	free(x->path);
	free(x);
}

void pf_abort(struct pf_export *x)
{
	free_export(x);
}

struct pf_export *pf_open(const char *path, const struct exp_run *run, struct hg_err *err)
{
	struct pf_export *x;
	unsigned c;
	int k;

	if (!run->ncpus || !(run->tsc_hz > 0) || run->nthreads < 0) {
		hg_err_set(err, "%s: a run of %u CPUs, %d threads at %g Hz cannot be exported", path, run->ncpus,
			   run->nthreads, run->tsc_hz);
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		hg_err_set(err, "%s: out of memory", path);
		return NULL;
	}
	x->fd = -1;
	x->run = *run;
	x->path = strdup(path);
	x->buf = malloc(OBUF);
	x->cpu = calloc(run->ncpus, sizeof(*x->cpu));
	x->tids = calloc(run->nthreads + 1, sizeof(*x->tids));
	if (!x->path || !x->buf || !x->cpu || !x->tids) {
		hg_err_set(err, "%s: out of memory", path);
		free_export(x);
		return NULL;
	}
	for (k = 0; k < run->nthreads; k++)
		x->tids[k] = run->tids ? run->tids[k] : 0;
	x->run.tids = NULL;
	td_tsc2nsec(run->tsc_hz, &x->mult, &x->shift);
	ro_init(&x->win, KERNEL_WINDOW_MAX, (uint64_t)(KERNEL_HORIZON_S * run->tsc_hz));
	for (c = 0; c < run->ncpus; c++) {
		struct pf_cpu *pc = &x->cpu[c];
		char *p = pc->prefix;

		PUT(p, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":");
		p += put_u64(p, c);
		PUT(p, ",\"name\":\"");
		pc->prefix_len = p - pc->prefix;
	}
	for (k = 0; k < HGT_VEC_MAX; k++)
		x->vec_names[k].len = json_escape(x->vec_names[k].name, hgt_vector_name[k], strlen(hgt_vector_name[k]));
	for (k = 0; k < 10; k++) {
		char buf[32];

		x->softirq_names[k].len = json_escape(x->softirq_names[k].name, buf,
						      snprintf(buf, sizeof(buf), "softirq %s", softirq_name[k]));
	}
	x->fd = out_create(path, &x->tmp, err);
	if (x->fd < 0) {
		free_export(x);
		return NULL;
	}
	{
		char *p = ob_room(x, 32);

		PUT(p, "{\"traceEvents\":[\n");
		ob_done(x, p);
	}
	meta(x, 1, KERNEL_PID, 0, "process_name", "kernel (ground truth)");
	meta(x, 0, HOURGLASS_PID, 0, "process_name", "hourglass");
	for (k = 0; k < run->nthreads; k++) {
		char name[256];

		snprintf(name, sizeof(name), "%s (tid %u, %s)",
			 run->thread_names && run->thread_names[k] ? run->thread_names[k] : "hg-thread-?",
			 x->tids[k], run->workloads && run->workloads[k] ? run->workloads[k] : "?");
		meta(x, 0, HOURGLASS_PID, k, "thread_name", name);
	}
	return x;
}

/* the metadata object: provenance and the confusion matrix of the gaps seen */
static void put_metadata(struct pf_export *x)
{
	const char *cmd = x->run.command ? x->run.command : "";
	size_t n = strnlen(cmd, 65536);	/* the buffer takes six times that, escaped */
	char *p = ob_room(x, 6 * n + 4096), num[64];
	int a, i;

	PUT(p, "\n],\"displayTimeUnit\":\"ns\",\"metadata\":{\"source\":\"hourglass export\",\"run\":");
	p = put_str(p, cmd, n);
	snprintf(num, sizeof(num), "%.17g", x->run.tsc_hz);
	PUT(p, ",\"tsc_hz\":");
	memcpy(p, num, strlen(num));
	p += strlen(num);
	PUT(p, ",\"base_tsc\":");
	p += put_u64(p, x->run.base_tsc);
	PUT(p, ",\"reordered\":");
	p += put_u64(p, x->win.reordered);
	PUT(p, ",\"clamped\":");
	p += put_u64(p, x->win.clamped + x->early);
	/* matrix[actual][inferred], as the report's: explained classes by inferable ones */
	PUT(p, ",\"confusion\":{");
	for (a = 0; a < HGG_C_UNEXPLAINABLE; a++) {
		if (a)
			*p++ = ',';
		p = put_str(p, hgg_class_name[a], strlen(hgg_class_name[a]));
		PUT(p, ":{");
		for (i = 0; i < HGG_C_OTHER; i++) {
			if (i)
				*p++ = ',';
			p = put_str(p, hgg_class_name[i], strlen(hgg_class_name[i]));
			*p++ = ':';
			p += put_u64(p, x->confusion[a][i]);
		}
		*p++ = '}';
	}
	PUT(p, "}}}\n");
	ob_done(x, p);
}

int pf_finish(struct pf_export *x, struct pf_summary *sum, struct hg_err *err)
{
	unsigned cpu;
	struct kitem *it;
	int ret = -1;

	memset(sum, 0, sizeof(*sum));
	for (cpu = 0; cpu < x->run.ncpus; cpu++) {
		struct pf_cpu *c = &x->cpu[cpu];

		while ((it = ro_first(&c->win))) {
			process(x, cpu, it);
			ro_pop(&c->win);
		}
		/* the task on the CPU ran at least until the CPU's last record */
		if (c->has_cur && c->newest > c->since)
			task_slice(x, c, c->newest);
	}
	for (cpu = 0; cpu < x->run.ncpus; cpu++)
		if (x->cpu[cpu].seen) {
			char name[32];

			snprintf(name, sizeof(name), "CPU %u", cpu);
			meta(x, 0, KERNEL_PID, cpu, "thread_name", name);
		}
	put_metadata(x);
	ob_flush(x);
	if (failed(x, err))
		goto out;
	if (close(x->fd)) {
		x->fd = -1;
		hg_err_set(err, "%s: cannot write %s: %s", x->path, x->tmp, strerror(errno));
		goto out;
	}
	x->fd = -1;
	if (out_commit(x->tmp, x->path, err))
		goto out;
	free(x->tmp);
	x->tmp = NULL;
	sum->events = x->events;
	sum->gaps = x->gaps;
	sum->reordered = x->win.reordered;
	sum->clamped = x->win.clamped + x->early;
	ret = 0;
out:
	free_export(x);
	return ret;
}

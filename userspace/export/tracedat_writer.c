// SPDX-License-Identifier: GPL-2.0
/*
 * tracedat_writer.c - trace.dat version 6, streamed through a page file
 * and assembled at the end (tracedat_writer.h says what and why).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hg_io.h"
#include "out_tmp.h"
#include "tracedat_writer.h"

#define MISSING_EVENTS	(1ULL << 31)	/* commit flags: events were lost before the page ... */
#define MISSING_STORED	(1ULL << 30)	/* ... and their count follows the data */
#define TYPE_EXTEND	30

enum { OPT_BUFFER = 3, OPT_TRACECLOCK = 4, OPT_UNAME = 5, OPT_VERSION = 9, OPT_TSC2NSEC = 14 };

static const char HEADER_PAGE[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
static const char HEADER_EVENT[] =
	"# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n"
	"\tarray       :   32 bits\n\n\tpadding     : type == 29\n\ttime_extend : type == 30\n"
	"\ttime_stamp : type == 31\n\tdata max type_len  == 28\n";
static const char CLOCK[] = "[x86-tsc]";

/* a growing byte string: the file's header, built in memory (it is small) */
struct sbuf {
	char *p;
	size_t n, cap;
	int oom;
};

static void sb_add(struct sbuf *s, const void *d, size_t n)
{
	if (s->oom || !n)
		return;
	if (s->n + n > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		char *p;

		while (cap < s->n + n)
			cap *= 2;
		p = realloc(s->p, cap);
		if (!p) {
			s->oom = 1;
			return;
		}
		s->p = p;
		s->cap = cap;
	}
	memcpy(s->p + s->n, d, n);
	s->n += n;
}

static void sb_str(struct sbuf *s, const char *str) { sb_add(s, str, strlen(str)); }
static void sb_strz(struct sbuf *s, const char *str) { sb_add(s, str, strlen(str) + 1); }
static void sb_u16(struct sbuf *s, uint16_t v) { sb_add(s, &v, 2); }
static void sb_u32(struct sbuf *s, uint32_t v) { sb_add(s, &v, 4); }
static void sb_u64(struct sbuf *s, uint64_t v) { sb_add(s, &v, 8); }

static void sb_printf(struct sbuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *s, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(buf))
		n = sizeof(buf) - 1;
	if (n > 0)
		sb_add(s, buf, n);
}

struct td_evtext {
	char *system;
	struct sbuf text;	/* the tracefs-style format */
};

struct td_cmd {
	uint32_t pid;
	uint32_t seq;		/* call order: the last name given for a pid wins */
	char *comm;
};

struct td_sym {
	uint64_t addr;
	char *name;
};

struct td_writer {
	char *path;		/* the trace.dat, for messages */
	char *dir;		/* its folder: the temporary page files' */
	unsigned ncpus;
	double tsc_hz;
	char *uname, *version;
	struct td_evtext *events;
	unsigned nevents;
	char *bufname[TD_MAX_BUFFERS];
	struct td_lane *lanes[TD_MAX_BUFFERS];
	unsigned nbuffers;
	struct td_cmd *cmds;
	size_t ncmds, capcmds;
	struct td_sym *syms;
	size_t nsyms, capsyms;
	unsigned chunk_pages;	/* pages per lane between writes: fewer when there are many lanes */
	int pages_fd[TD_MAX_BUFFERS];	/* per buffer, its lanes' pages as they came; -1 until the first */
	uint64_t pages_bytes[TD_MAX_BUFFERS];
	int err_no;		/* the first failed write's errno; sticky */
	const char *err_what;
	int err_in_dir;		/* err_what happened in the output's folder: the message names it */
	uint8_t scratch[TD_PAGE];	/* where an entry goes that cannot be written */
};

/* lane_fail - the writer's first failure: @what went wrong (@in_dir: in the output's folder) */
static void lane_fail(struct td_lane *l, const char *what, int in_dir)
{
	if (!l->w->err_no) {
		l->w->err_no = errno ? errno : EIO;
		l->w->err_what = what;
		l->w->err_in_dir = in_dir;
	}
}

struct td_writer *td_create(const char *path, unsigned ncpus, double tsc_hz, struct hg_err *err)
{
	struct td_writer *w = calloc(1, sizeof(*w));

	if (!w || !(w->path = strdup(path)) || !(w->dir = out_dir(path)) ||
	    !(w->version = strdup("hourglass export"))) {
		if (w) {
			free(w->path);
			free(w->dir);
		}
		free(w);
		hg_err_env(err, "%s: out of memory", path);
		return NULL;
	}
	if (!ncpus || !(tsc_hz > 0)) {
		hg_err_set(err, "trace.dat writer: %u CPUs at %g Hz: need at least one CPU and a TSC frequency",
			   ncpus, tsc_hz);
		td_destroy(w);
		return NULL;
	}
	w->ncpus = ncpus;
	w->tsc_hz = tsc_hz;
	for (unsigned b = 0; b < TD_MAX_BUFFERS; b++)
		w->pages_fd[b] = -1;
	if (td_buffer(w, "", err) < 0) {
		td_destroy(w);
		return NULL;
	}
	return w;
}

void td_destroy(struct td_writer *w)
{
	unsigned b, c;
	size_t i;

	if (!w)
		return;
	for (b = 0; b < w->nbuffers; b++) {
		for (c = 0; c < w->ncpus; c++) {
			struct td_lane *l = &w->lanes[b][c];

			free(l->ext);
			free(l->chunk);
		}
		free(w->lanes[b]);
		free(w->bufname[b]);
	}
	for (b = 0; b < TD_MAX_BUFFERS; b++)
		if (w->pages_fd[b] >= 0)
			close(w->pages_fd[b]);
	for (i = 0; i < w->nevents; i++) {
		free(w->events[i].system);
		free(w->events[i].text.p);
	}
	for (i = 0; i < w->ncmds; i++)
		free(w->cmds[i].comm);
	for (i = 0; i < w->nsyms; i++)
		free(w->syms[i].name);
	free(w->events);
	free(w->cmds);
	free(w->syms);
	free(w->uname);
	free(w->version);
	free(w->path);
	free(w->dir);
	free(w);
}

int td_buffer(struct td_writer *w, const char *name, struct hg_err *err)
{
	unsigned c;

	if (w->nbuffers == TD_MAX_BUFFERS)
		return hg_err_set(err, "trace.dat writer: more than %d buffers", TD_MAX_BUFFERS);
	w->lanes[w->nbuffers] = calloc(w->ncpus, sizeof(struct td_lane));
	w->bufname[w->nbuffers] = strdup(name);
	if (!w->lanes[w->nbuffers] || !w->bufname[w->nbuffers]) {
		free(w->lanes[w->nbuffers]);
		free(w->bufname[w->nbuffers]);
		return hg_err_env(err, "trace.dat writer: out of memory");
	}
	for (c = 0; c < w->ncpus; c++) {
		w->lanes[w->nbuffers][c].w = w;
		w->lanes[w->nbuffers][c].buffer = w->nbuffers;
	}
	return w->nbuffers++;
}

struct td_lane *td_lane(struct td_writer *w, int buffer, unsigned cpu)
{
	return &w->lanes[buffer][cpu];
}

/* which fields are signed: Python's rule, so that the formats read the same */
static int field_signed(const char *type)
{
	return !(strncmp(type, "unsigned", 8) == 0 || !strcmp(type, "char") || !strcmp(type, "u64") ||
		 !strcmp(type, "u32"));
}

int td_event(struct td_writer *w, const char *system, const char *name, const struct td_field *fields,
	     unsigned nfields, const char *print_fmt, struct td_event *ev, struct hg_err *err)
{
	static const char *const common =
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n";
	struct td_evtext *t, *grown;
	unsigned off = 8, i;

	if (nfields > TD_MAX_FIELDS)
		return hg_err_set(err, "event %s:%s: more than %d fields", system, name, TD_MAX_FIELDS);
	if (TD_FIRST_ID + w->nevents > 32767)
		return hg_err_set(err, "event %s:%s: too many events for int16 ids", system, name);
	grown = realloc(w->events, (w->nevents + 1) * sizeof(*w->events));
	if (!grown)
		return hg_err_env(err, "event %s:%s: out of memory", system, name);
	w->events = grown;
	t = &w->events[w->nevents];
	memset(t, 0, sizeof(*t));
	memset(ev, 0, sizeof(*ev));
	ev->id = TD_FIRST_ID + w->nevents;
	ev->nfields = nfields;
	sb_printf(&t->text, "name: %s\nID: %u\nformat:\n", name, ev->id);
	sb_str(&t->text, common);
	sb_str(&t->text, "\n");
	for (i = 0; i < nfields; i++) {
		const struct td_field *f = &fields[i];
		int kind = !strcmp(f->type, "char") ? TD_STR :
			   !strcmp(f->type, "__data_loc char[]") ? TD_LOC : TD_INT;
		unsigned align = kind != TD_INT ? 4 : f->size < 8 ? f->size : 8;

		if (kind == TD_INT && f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8)
			return hg_err_set(err, "event %s:%s: field %s of %u bytes", system, name, f->name, f->size);
		off = (off + align - 1) / align * align;
		if (kind == TD_STR)
			sb_printf(&t->text, "\tfield:char %s[%u];", f->name, f->size);
		else if (kind == TD_LOC)
			sb_printf(&t->text, "\tfield:__data_loc char[] %s;", f->name);
		else
			sb_printf(&t->text, "\tfield:%s %s;", f->type, f->name);
		sb_printf(&t->text, "\toffset:%u;\tsize:%u;\tsigned:%d;\n", off, f->size, field_signed(f->type));
		ev->off[i] = off;
		ev->kind[i] = kind;
		off += f->size;
	}
	ev->fixed = (off + 3) & ~3u;
	sb_printf(&t->text, "\nprint fmt: %s\n", print_fmt);
	t->system = strdup(system);
	if (t->text.oom || !t->system) {
		free(t->text.p);
		free(t->system);
		return hg_err_env(err, "event %s:%s: out of memory", system, name);
	}
	w->nevents++;
	return 0;
}

static int set_str(char **dst, const char *s)
{
	char *n = strdup(s ? s : "");

	if (!n)
		return -1;
	free(*dst);
	*dst = n;
	return 0;
}

void td_set_uname(struct td_writer *w, const char *uname) { set_str(&w->uname, uname); }
void td_set_version(struct td_writer *w, const char *version) { set_str(&w->version, version); }

int td_cmdline(struct td_writer *w, uint32_t pid, const char *comm, struct hg_err *err)
{
	char *c;

	if (w->ncmds == w->capcmds) {
		size_t cap = w->capcmds ? 2 * w->capcmds : 256;
		struct td_cmd *p = realloc(w->cmds, cap * sizeof(*p));

		if (!p)
			return hg_err_env(err, "trace.dat cmdlines: out of memory");
		w->cmds = p;
		w->capcmds = cap;
	}
	c = strdup(comm);
	if (!c)
		return hg_err_env(err, "trace.dat cmdlines: out of memory");
	/* one line per task: a newline would end it early */
	for (char *p = c; *p; p++)
		if (*p == '\n')
			*p = ' ';
	w->cmds[w->ncmds] = (struct td_cmd){ pid, (uint32_t)w->ncmds, c };
	w->ncmds++;
	return 0;
}

int td_kallsyms(struct td_writer *w, uint64_t addr, const char *name, struct hg_err *err)
{
	char *n;

	if (w->nsyms == w->capsyms) {
		size_t cap = w->capsyms ? 2 * w->capsyms : 64;
		struct td_sym *p = realloc(w->syms, cap * sizeof(*p));

		if (!p)
			return hg_err_env(err, "trace.dat kallsyms: out of memory");
		w->syms = p;
		w->capsyms = cap;
	}
	n = strdup(name && *name ? name : "?");
	if (!n)
		return hg_err_env(err, "trace.dat kallsyms: out of memory");
	/* libtraceevent reads a symbol as one word */
	for (char *p = n; *p; p++)
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '[')
			*p = '_';
	w->syms[w->nsyms++] = (struct td_sym){ addr, n };
	return 0;
}

/* a buffer's page file: unnamed and temporary, in the output's folder so that it can be copied cheaply */
static int pages_open(struct td_writer *w)
{
	char *tmp;
	int fd;

	fd = open(w->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	/* no O_TMPFILE on this file system: a named file, removed at once */
	tmp = malloc(strlen(w->dir) + 32);
	if (!tmp)
		return -1;
	sprintf(tmp, "%s/.hgexport-pages.XXXXXX", w->dir);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd >= 0)
		unlink(tmp);
	free(tmp);
	return fd;
}

/* lane_extend - the lane's @n bytes just written at @at of the page file: its next stretch */
static int lane_extend(struct td_lane *l, uint64_t at, uint64_t n)
{
	if (l->next && l->ext[l->next - 1].at + l->ext[l->next - 1].n == at) {
		l->ext[l->next - 1].n += n;
		return 0;
	}
	if (l->next == l->capext) {
		size_t cap = l->capext ? 2 * l->capext : 16;
		struct td_extent *e = realloc(l->ext, cap * sizeof(*e));

		if (!e) {
			errno = ENOMEM;
			return -1;
		}
		l->ext = e;
		l->capext = cap;
	}
	l->ext[l->next++] = (struct td_extent){ at, n };
	return 0;
}

static void lane_write_chunk(struct td_lane *l)
{
	struct td_writer *w = l->w;
	size_t n = (size_t)l->npages * TD_PAGE;
	int *fd = &w->pages_fd[l->buffer];

	if (!n)
		return;
	if (!w->err_no) {
		if (*fd < 0 && (*fd = pages_open(w)) < 0)
			lane_fail(l, "cannot create its temporary page file", 1);
		else if (hg_write_all(*fd, l->chunk, n))
			lane_fail(l, "cannot write its temporary page file", 1);
		else if (lane_extend(l, w->pages_bytes[l->buffer], n))
			lane_fail(l, "out of memory for the index of its temporary page file", 0);
		else
			l->file_bytes += n;
		w->pages_bytes[l->buffer] += n;
	}
	memset(l->chunk, 0, n);
	l->npages = 0;
}

static void lane_seal(struct td_lane *l)
{
	uint64_t commit = l->used;

	if (l->page_lost) {
		/* the count goes after the data when there is room for it */
		if (l->used + 8 <= TD_DATA) {
			memcpy(l->page + TD_PAGE_HDR + l->used, &l->page_lost, 8);
			commit |= MISSING_EVENTS | MISSING_STORED;
		} else {
			commit |= MISSING_EVENTS;
		}
	}
	memcpy(l->page, &l->page_ts, 8);
	memcpy(l->page + 8, &commit, 8);
	l->page = NULL;
}

static void lane_new_page(struct td_lane *l, uint64_t ts)
{
	if (l->page)
		lane_seal(l);
	if (!l->chunk) {
		struct td_writer *w = l->w;

		if (!w->chunk_pages) {
			/* the buffers are all declared by the first entry */
			w->chunk_pages = TD_CHUNKS_BYTES / TD_PAGE / (w->nbuffers * w->ncpus);
			if (w->chunk_pages > TD_CHUNK_PAGES)
				w->chunk_pages = TD_CHUNK_PAGES;
			if (w->chunk_pages < 2)
				w->chunk_pages = 2;
		}
		l->chunk = calloc(w->chunk_pages, TD_PAGE);
		if (!l->chunk) {
			errno = ENOMEM;
			lane_fail(l, "out of memory for its pages", 0);
			l->page = l->w->scratch;
			return;
		}
	}
	if (l->npages == l->w->chunk_pages)
		lane_write_chunk(l);
	l->page = l->chunk + (size_t)l->npages++ * TD_PAGE;
	l->used = 0;
	l->page_ts = ts;
	l->last = ts;
	l->page_lost = l->lost;
	l->lost = 0;
	l->reserve = l->page_lost ? 8 : 0;
	l->marks += !!l->page_lost;
}

uint8_t *td_reserve_slow(struct td_lane *l, uint64_t ts, unsigned n)
{
	unsigned head = n > TD_SMALL_MAX ? 8 : 4, ext;
	uint64_t delta;
	uint8_t *p;

	if (head + n + 8 > TD_DATA) {
		errno = EMSGSIZE;
		lane_fail(l, "an event larger than a page", 0);
		memset(l->w->scratch, 0, sizeof(l->w->scratch));
		return l->w->scratch;
	}
	if (ts < l->last)
		ts = l->last;		/* callers keep each lane in order; never go back */
	if (!l->page || l->lost)
		lane_new_page(l, ts);
	if (l->page == l->w->scratch) {
		memset(l->w->scratch, 0, sizeof(l->w->scratch));
		return l->w->scratch;
	}
	delta = ts - l->last;
	ext = delta >= (1u << TD_TS_BITS) ? 8 : 0;
	if (l->used + ext + head + n + l->reserve > TD_DATA) {
		lane_new_page(l, ts);
		delta = 0;
		ext = 0;
	}
	p = l->page + TD_PAGE_HDR + l->used;
	if (ext) {
		/* a time extend: the delta's high bits in the next word */
		td_put32(p, TYPE_EXTEND | (uint32_t)(delta & ((1u << TD_TS_BITS) - 1)) << 5);
		td_put32(p + 4, (uint32_t)(delta >> TD_TS_BITS));
		p += 8;
		delta = 0;
	}
	if (head == 4) {
		td_put32(p, (n >> 2) | (uint32_t)delta << 5);
	} else {
		/* type_len 0: the length (with its own word) in the next word */
		td_put32(p, (uint32_t)delta << 5);
		td_put32(p + 4, n + 4);
	}
	p += head;
	l->used = (unsigned)(p + n - (l->page + TD_PAGE_HDR));
	l->last = ts;
	l->entries++;
	return p;
}

int td_failed(struct td_writer *w, struct hg_err *err)
{
	if (!w->err_no)
		return 0;
	if (w->err_in_dir)
		return hg_err_env(err, "%s: %s in %s: %s", w->path, w->err_what, w->dir, strerror(w->err_no));
	return hg_err_env(err, "%s: %s: %s", w->path, w->err_what, strerror(w->err_no));
}

int td_flush(struct td_writer *w, struct hg_err *err)
{
	unsigned b, c;

	for (b = 0; b < w->nbuffers; b++)
		for (c = 0; c < w->ncpus; c++) {
			struct td_lane *l = &w->lanes[b][c];

			if (l->page && l->page != w->scratch)
				lane_seal(l);
			l->page = NULL;
			if (l->chunk)
				lane_write_chunk(l);
		}
	return td_failed(w, err);
}

void td_tsc2nsec(double tsc_hz, uint32_t *mult, uint32_t *shift)
{
	/* trace-cmd keeps mult in an int: below 2^31, with the largest shift that allows */
	int s = 32;
	double m = 1e9 / tsc_hz * 4294967296.0;

	while (s > 0 && m + 0.5 >= 2147483648.0) {
		s--;
		m /= 2;
	}
	*shift = s;
	*mult = (uint32_t)(m + 0.5);
}

static int by_pid(const void *a, const void *b)
{
	const struct td_cmd *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void add_option(struct sbuf *s, uint16_t id, const void *data, uint32_t n)
{
	sb_u16(s, id);
	sb_u32(s, n);
	sb_add(s, data, n);
}

/* the header: everything before the flyrecord data; @table[b] is where buffer b's table is */
static void build_header(struct td_writer *w, struct sbuf *s, int top, const int *extra, unsigned nextra,
			 size_t *table)
{
	static const uint8_t magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g', '6', 0, 0, 8 };
	size_t opt_at[TD_MAX_BUFFERS];
	unsigned i, j, nsys = 0;
	uint32_t mult, shift;
	struct sbuf text = { 0 };
	char **systems = calloc(w->nevents + 1, sizeof(char *));

	if (!systems) {
		s->oom = 1;
		return;
	}
	sb_add(s, magic, sizeof(magic));
	sb_u32(s, TD_PAGE);
	sb_strz(s, "header_page");
	sb_u64(s, sizeof(HEADER_PAGE) - 1);
	sb_str(s, HEADER_PAGE);
	sb_strz(s, "header_event");
	sb_u64(s, sizeof(HEADER_EVENT) - 1);
	sb_str(s, HEADER_EVENT);
	sb_u32(s, 0);			/* no ftrace formats */
	/* systems in the order of their first event */
	for (i = 0; i < w->nevents; i++) {
		for (j = 0; j < nsys && strcmp(systems[j], w->events[i].system); j++)
			;
		if (j == nsys)
			systems[nsys++] = w->events[i].system;
	}
	sb_u32(s, nsys);
	for (j = 0; j < nsys; j++) {
		uint32_t n = 0;

		for (i = 0; i < w->nevents; i++)
			n += !strcmp(w->events[i].system, systems[j]);
		sb_strz(s, systems[j]);
		sb_u32(s, n);
		for (i = 0; i < w->nevents; i++)
			if (!strcmp(w->events[i].system, systems[j])) {
				sb_u64(s, w->events[i].text.n);
				sb_add(s, w->events[i].text.p, w->events[i].text.n);
			}
	}
	free(systems);
	for (i = 0; i < w->nsyms; i++)
		sb_printf(&text, "%016llx T %s\n", (unsigned long long)w->syms[i].addr, w->syms[i].name);
	sb_u32(s, text.n);
	sb_add(s, text.p, text.n);
	sb_u32(s, 0);			/* no printk formats */
	text.n = 0;
	if (w->ncmds)
		qsort(w->cmds, w->ncmds, sizeof(*w->cmds), by_pid);
	for (i = 0; i < w->ncmds; i++)
		if (i + 1 == w->ncmds || w->cmds[i + 1].pid != w->cmds[i].pid)
			sb_printf(&text, "%u %s\n", w->cmds[i].pid, w->cmds[i].comm);
	sb_u64(s, text.n);
	sb_add(s, text.p, text.n);
	s->oom |= text.oom;
	free(text.p);
	sb_u32(s, w->ncpus);
	sb_add(s, "options  ", 10);
	add_option(s, OPT_TRACECLOCK, "[x86-tsc]", sizeof(CLOCK));
	td_tsc2nsec(w->tsc_hz, &mult, &shift);
	{
		uint8_t d[16] = { 0 };

		memcpy(d, &mult, 4);
		memcpy(d + 4, &shift, 4);
		add_option(s, OPT_TSC2NSEC, d, 16);
	}
	if (w->uname && *w->uname)
		add_option(s, OPT_UNAME, w->uname, strlen(w->uname) + 1);
	add_option(s, OPT_VERSION, w->version, strlen(w->version) + 1);
	for (i = 0; i < nextra; i++) {
		const char *name = w->bufname[extra[i]];
		uint64_t zero = 0;

		sb_u16(s, OPT_BUFFER);
		sb_u32(s, 8 + strlen(name) + 1);
		opt_at[i] = s->n;	/* the offset of its flyrecord table, known below */
		sb_u64(s, zero);
		sb_strz(s, name);
	}
	sb_u16(s, 0);
	sb_strz(s, "flyrecord");
	table[top] = s->n;
	for (i = 0; i < 2 * w->ncpus; i++)
		sb_u64(s, 0);
	sb_u64(s, sizeof(CLOCK) - 1);
	sb_str(s, CLOCK);
	for (i = 0; i < nextra; i++) {
		uint64_t at = s->n;

		if (!s->oom)
			memcpy(s->p + opt_at[i], &at, 8);
		sb_strz(s, "flyrecord");
		table[extra[i]] = s->n;
		for (j = 0; j < 2 * w->ncpus; j++)
			sb_u64(s, 0);
	}
}

/* copy @n bytes of @in from @from to @out at *off: in the kernel when it can, else through memory */
static int copy_out(int in, uint64_t from, int out, uint64_t *off, uint64_t n)
{
	loff_t ioff = (loff_t)from, ooff = (loff_t)*off;
	uint64_t left = n;

	while (left) {
		ssize_t c = copy_file_range(in, &ioff, out, &ooff, left, 0);

		if (c <= 0)
			break;
		left -= c;
	}
	while (left) {
		char buf[1 << 16];
		size_t want = left < sizeof(buf) ? left : sizeof(buf);
		ssize_t r = pread(in, buf, want, ioff);

		if (r <= 0 || pwrite(out, buf, r, ooff) != r)
			return -1;
		ioff += r;
		ooff += r;
		left -= r;
	}
	*off += n;
	return 0;
}

int td_write(struct td_writer *w, const char *path, int top, const int *extra, unsigned nextra,
	     char **tmp_out, struct hg_err *err)
{
	size_t table[TD_MAX_BUFFERS] = { 0 };
	struct sbuf s = { 0 };
	char *tmp = NULL;
	uint64_t off;
	unsigned i, c;
	int fd = -1, order[TD_MAX_BUFFERS + 1];

	*tmp_out = NULL;
	if (td_failed(w, err))
		return -1;
	build_header(w, &s, top, extra, nextra, table);
	if (s.oom) {
		free(s.p);
		return hg_err_env(err, "%s: out of memory for the header", path);
	}
	/* every CPU's data page-aligned and whole pages, the tables saying where */
	order[0] = top;
	for (i = 0; i < nextra; i++)
		order[i + 1] = extra[i];
	off = (s.n + TD_PAGE - 1) / TD_PAGE * TD_PAGE;
	for (i = 0; i <= nextra; i++)
		for (c = 0; c < w->ncpus; c++) {
			struct td_lane *l = &w->lanes[order[i]][c];
			uint64_t at = l->file_bytes ? off : 0;

			memcpy(s.p + table[order[i]] + 16 * c, &at, 8);
			memcpy(s.p + table[order[i]] + 16 * c + 8, &l->file_bytes, 8);
			off += l->file_bytes;
		}
	fd = out_create(path, &tmp, err);
	if (fd < 0) {
		free(s.p);
		return -1;
	}
	if (hg_write_all(fd, s.p, s.n))
		goto fail_errno;
	off = (s.n + TD_PAGE - 1) / TD_PAGE * TD_PAGE;
	if (off > s.n) {
		static const char zeros[TD_PAGE];

		if (hg_write_all(fd, zeros, off - s.n))
			goto fail_errno;
	}
	for (i = 0; i <= nextra; i++)
		for (c = 0; c < w->ncpus; c++) {
			struct td_lane *l = &w->lanes[order[i]][c];
			size_t e;

			for (e = 0; e < l->next; e++)
				if (copy_out(w->pages_fd[order[i]], l->ext[e].at, fd, &off, l->ext[e].n))
					goto fail_errno;
		}
	if (close(fd)) {
		fd = -1;
		goto fail_errno;
	}
	free(s.p);
	*tmp_out = tmp;
	return 0;
fail_errno:
	hg_err_env(err, "%s: cannot write %s: %s", path, tmp, strerror(errno));
	if (fd >= 0)
		close(fd);
	out_discard(tmp);
	free(s.p);
	return -1;
}

/*
 * A lane's written pages read back entry by entry: its page file's stretches a few pages at
 * a time, each page's entries decoded (time extends added in, lost counts on a page's first
 * entry). Used to scan a lane (td_scan) and to merge two (td_write_merged).
 */
enum { CURSOR_PAGES = 64 };

struct td_cursor {
	struct td_writer *w;
	struct td_lane *l;
	int fd;
	uint8_t *buf;		/* CURSOR_PAGES pages of the page file */
	size_t nbuf;		/* bytes of @buf read */
	size_t pg;		/* where the current page is in @buf; nbuf: none */
	size_t ext;		/* the next stretch to read from, and how far into it */
	uint64_t ext_off;
	unsigned at, size;	/* the current page: the next entry's offset in its data, the data's end */
	uint64_t ts;		/* the last entry's timestamp */
	uint64_t missed;	/* the current page's lost count, for its first entry */
};

/* one entry as a cursor reads it: its payload stays valid until the cursor moves on */
struct td_entry {
	uint64_t ts;
	uint64_t missed;	/* on a page's first entry: the events lost before it (~0: not said) */
	const uint8_t *payload;
	unsigned len;
};

static int cursor_init(struct td_cursor *c, struct td_writer *w, int buffer, unsigned cpu, struct hg_err *err)
{
	memset(c, 0, sizeof(*c));
	c->w = w;
	c->l = &w->lanes[buffer][cpu];
	c->fd = w->pages_fd[buffer];
	if (!c->l->file_bytes)
		return 0;
	c->buf = malloc(CURSOR_PAGES * TD_PAGE);
	if (!c->buf)
		return hg_err_env(err, "%s: out of memory to read pages back", w->path);
	return 0;
}

static void cursor_free(struct td_cursor *c)
{
	free(c->buf);
	c->buf = NULL;
}

/* cursor_page - the next page of the lane: 1, 0 at its end, -1 on a failed read */
static int cursor_page(struct td_cursor *c, struct hg_err *err)
{
	uint64_t commit;

	c->pg += TD_PAGE;
	if (c->pg >= c->nbuf) {
		size_t want;
		ssize_t got;

		while (c->ext < c->l->next && c->ext_off == c->l->ext[c->ext].n) {
			c->ext++;
			c->ext_off = 0;
		}
		if (!c->buf || c->ext == c->l->next)
			return 0;
		want = c->l->ext[c->ext].n - c->ext_off;
		if (want > CURSOR_PAGES * TD_PAGE)
			want = CURSOR_PAGES * TD_PAGE;
		got = pread(c->fd, c->buf, want, (off_t)(c->l->ext[c->ext].at + c->ext_off));
		if (got != (ssize_t)want)
			return hg_err_env(err, "%s: cannot read its temporary page file back: %s", c->w->path,
					  got < 0 ? strerror(errno) : "short read");
		c->ext_off += want;
		c->nbuf = want;
		c->pg = 0;
	}
	memcpy(&c->ts, c->buf + c->pg, 8);
	memcpy(&commit, c->buf + c->pg + 8, 8);
	c->size = commit & 0xfffff;
	if (c->size > TD_DATA)
		c->size = TD_DATA;
	c->at = 0;
	c->missed = 0;
	if (commit & MISSING_EVENTS) {
		c->missed = ~0ULL;
		if (commit & MISSING_STORED && c->size + 8 <= TD_DATA)
			memcpy(&c->missed, c->buf + c->pg + TD_PAGE_HDR + c->size, 8);
	}
	return 1;
}

/* cursor_next - the lane's next entry in @e: 1, 0 at the lane's end, -1 on a failed read */
static int cursor_next(struct td_cursor *c, struct td_entry *e, struct hg_err *err)
{
	for (;;) {
		const uint8_t *d;
		uint32_t h;
		unsigned tl, len;
		int r;

		if (!c->buf || c->pg >= c->nbuf || c->at + 4 > c->size) {
			if (!c->nbuf)
				c->pg = (size_t)0 - TD_PAGE;	/* the first page: at 0 once read */
			r = cursor_page(c, err);
			if (r <= 0)
				return r;
			continue;
		}
		d = c->buf + c->pg + TD_PAGE_HDR;
		memcpy(&h, d + c->at, 4);
		tl = h & 31;
		c->ts += h >> 5;
		if (tl == TYPE_EXTEND) {
			uint32_t hi;

			memcpy(&hi, d + c->at + 4, 4);
			c->ts += (uint64_t)hi << TD_TS_BITS;
			c->at += 8;
			continue;
		}
		if (tl == 0) {
			memcpy(&len, d + c->at + 4, 4);
			if (len < 4 || c->at + 4 + len > c->size) {
				c->at = c->size;	/* not written by this writer: the page ends here */
				continue;
			}
			e->payload = d + c->at + 8;
			e->len = len - 4;
			c->at += 4 + len;
		} else if (tl <= 28) {
			e->payload = d + c->at + 4;
			e->len = tl * 4;
			c->at += 4 + tl * 4;
		} else {
			c->at = c->size;	/* not written by this writer */
			continue;
		}
		e->ts = c->ts;
		e->missed = c->missed;
		c->missed = 0;
		return 1;
	}
}

int td_scan(struct td_writer *w, int buffer, unsigned cpu,
	    int (*fn)(void *arg, uint64_t ts, uint64_t missed), void *arg, struct hg_err *err)
{
	struct td_cursor c;
	struct td_entry e;
	int r;

	if (cursor_init(&c, w, buffer, cpu, err))
		return -1;
	while ((r = cursor_next(&c, &e, err)) > 0)
		if (fn(arg, e.ts, e.missed))
			break;
	cursor_free(&c);
	return r < 0 ? -1 : 0;
}

/* merge_lane - lanes @a and @b of one CPU into @m, by time; @b's first at equal times */
static int merge_lane(struct td_writer *w, struct td_lane *m, int a, int b, unsigned cpu, struct hg_err *err)
{
	struct td_cursor ca, cb;
	struct td_entry ea, eb;
	int ra, rb, ret = -1;

	if (cursor_init(&ca, w, a, cpu, err))
		return -1;
	if (cursor_init(&cb, w, b, cpu, err)) {
		cursor_free(&ca);
		return -1;
	}
	ra = cursor_next(&ca, &ea, err);
	rb = ra < 0 ? 0 : cursor_next(&cb, &eb, err);
	while (ra > 0 || rb > 0) {
		int from_b = rb > 0 && (ra <= 0 || eb.ts <= ea.ts);
		const struct td_entry *e = from_b ? &eb : &ea;
		uint8_t *p;

		if (e->missed)
			td_lost(m, e->missed == ~0ULL ? 0 : e->missed);
		p = td_reserve(m, e->ts, e->len);
		memcpy(p, e->payload, e->len);
		if (from_b)
			rb = cursor_next(&cb, &eb, err);
		else
			ra = cursor_next(&ca, &ea, err);
		if (ra < 0 || rb < 0)
			goto out;
	}
	ret = ra < 0 || rb < 0 ? -1 : 0;
out:
	cursor_free(&ca);
	cursor_free(&cb);
	return ret;
}

int td_write_merged(struct td_writer *w, const char *path, int a, int b, int *merged, char **tmp_out,
		    struct hg_err *err)
{
	size_t table[TD_MAX_BUFFERS] = { 0 };
	struct sbuf s = { 0 };
	char *tmp = NULL;
	uint64_t off;
	unsigned c;
	int m, fd = -1;

	*tmp_out = NULL;
	if (td_flush(w, err))
		return -1;
	/* what @a and @b held in memory is in their page files now: room for the merge's pages */
	for (c = 0; c < w->ncpus; c++) {
		free(w->lanes[a][c].chunk);
		free(w->lanes[b][c].chunk);
		w->lanes[a][c].chunk = w->lanes[b][c].chunk = NULL;
	}
	m = td_buffer(w, "merged", err);
	if (m < 0)
		return -1;
	build_header(w, &s, m, NULL, 0, table);
	if (s.oom) {
		free(s.p);
		return hg_err_env(err, "%s: out of memory for the header", path);
	}
	fd = out_create(path, &tmp, err);
	if (fd < 0) {
		free(s.p);
		return -1;
	}
	off = (s.n + TD_PAGE - 1) / TD_PAGE * TD_PAGE;
	if (ftruncate(fd, (off_t)off) || lseek(fd, (off_t)off, SEEK_SET) != (off_t)off)
		goto fail_errno;
	/* the merged pages straight into the file after the header, a CPU at a time: each CPU's
	 * whole pages in one stretch, which the lane's extents say */
	w->pages_fd[m] = fd;
	w->pages_bytes[m] = off;
	for (c = 0; c < w->ncpus; c++) {
		struct td_lane *l = &w->lanes[m][c];

		if (merge_lane(w, l, a, b, c, err))
			goto fail;
		if (l->page && l->page != w->scratch)
			lane_seal(l);
		l->page = NULL;
		if (l->chunk)
			lane_write_chunk(l);
		free(l->chunk);
		l->chunk = NULL;
		if (td_failed(w, err))
			goto fail;
		off = l->file_bytes ? l->ext[0].at : 0;
		memcpy(s.p + table[m] + 16 * c, &off, 8);
		memcpy(s.p + table[m] + 16 * c + 8, &l->file_bytes, 8);
	}
	if (pwrite(fd, s.p, s.n, 0) != (ssize_t)s.n)
		goto fail_errno;
	w->pages_fd[m] = -1;
	if (close(fd)) {
		fd = -1;
		goto fail_errno;
	}
	/* read back from the file itself (td_scan: the session's rows) */
	w->pages_fd[m] = open(tmp, O_RDONLY | O_CLOEXEC);
	if (w->pages_fd[m] < 0) {
		fd = -1;
		goto fail_errno;
	}
	free(s.p);
	*merged = m;
	*tmp_out = tmp;
	return 0;
fail_errno:
	hg_err_env(err, "%s: cannot write %s: %s", path, tmp, strerror(errno));
fail:
	w->pages_fd[m] = -1;
	if (fd >= 0)
		close(fd);
	out_discard(tmp);
	free(s.p);
	return -1;
}

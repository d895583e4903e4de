// SPDX-License-Identifier: GPL-2.0
/*
 * hgl_read.c - the one reader of hourglass's binary trace (hg_hgl.h).
 *
 * hgl_open() walks every section header (sizes against the file, padding
 * zeros, one info section, END last and nothing after it), parses the info
 * section with the strict JSON parser and takes what the library hands out
 * (struct hgl_info) with the type of every key checked, then reads every
 * record once to check it, so that a cursor never meets a surprise in a
 * file that did not change. docs/hourglass-trace.md, "What a reader
 * checks", is the list in prose. Records are read in blocks with pread():
 * memory does not grow with the trace.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "hg_io.h"
#include "hg_hgl.h"
#include "hg_json.h"

#define BLOCK_RECS	2048	/* records a cursor reads at once: 64 KiB */

struct span {
	uint64_t off;		/* of the first record */
	uint64_t n;
};

struct hgl_file {
	char *path;
	int fd;
	uint64_t size;
	unsigned major, minor;
	struct hgl_info info;
	struct jv *doc;
	char *json;
	uint64_t info_off;	/* of the info section's payload */
	struct span *spans;	/* the recs sections */
	size_t nspans;
	uint64_t nr_records;
	int complete;
	uint64_t end_off;
	struct hgl_end end;
	struct block **blocks;	/* read for the cursors of one thread each, shared */
	int nblocks;
	uint64_t clock;		/* counts the blocks' uses */
};

/*
 * block - BLOCK_RECS records of a span, read and checked once for the cursors of every
 * thread. hourglass takes its records from a shared pool in chunks of up to 256 a thread,
 * so each block holds several threads' records and every thread's cursor comes to it at
 * about the same time: read by each cursor, a run of N threads had its trace read N times.
 * A cursor holds one block (as it held its own buffer before), walks its thread's records
 * of it through next[], and lets it go for the next; a block no cursor holds keeps its
 * records until another block needs the memory, for a cursor that comes late.
 */
struct block {
	size_t span;
	uint64_t first;		/* the block's first record, counted in its span; UINT64_MAX: none */
	size_t n;
	size_t bad;		/* the first record check_rec() refuses, n if none */
	int holders;		/* cursors on it */
	uint64_t used;		/* the file's clock when last let go */
	struct hgl_rec *recs;
	uint32_t *next;		/* the next record of the same thread in the block, n if none */
	uint32_t *first_of;	/* per thread: its first record in the block, n if none */
};

static void blocks_free(struct hgl_file *f);

struct hgl_cursor {
	struct hgl_file *f;
	int thread;
	int fd;
	struct hgl_rec *buf;	/* thread -1: its own reads */
	size_t nbuf, at;	/* records in buf (thread: in the block), the next one to look at */
	size_t span;
	uint64_t done;		/* records of the span already read into buf (thread: in blocks) */
	struct block *blk;	/* thread: the block of records done - nbuf .. done, held */
};

/* bad_at - a bad input at offset @off of @f's file (hg_err_at) */
#define bad_at(f, err, off, ...)	hg_err_at(err, (f)->path, off, __VA_ARGS__)

/* check_rec - what every reader may take for granted about a record */
static int check_rec(const struct hgl_file *f, const struct hgl_rec *r, uint64_t off, struct hg_err *err)
{
	if (r->type < HGL_REC_INTERVAL || r->type > HGL_REC_WAKE)
		return bad_at(f, err, off, "unknown record type %u", r->type);
	if (r->thread >= f->info.nthreads)
		return bad_at(f, err, off, "record of thread %u, but the run had %d threads", r->thread,
			      f->info.nthreads);
	if (r->cpu >= HGL_MAX_CPUS)
		return bad_at(f, err, off, "record on CPU %u, beyond the format's limit of %u CPUs", r->cpu,
			      HGL_MAX_CPUS);
	/* a WAKE's t2 is a signed lateness, not a stamp; a JOB's is its deadline */
	if (r->t0 > HGL_MAX_TSC || r->t1 > HGL_MAX_TSC || (r->type == HGL_REC_JOB && r->t2 > HGL_MAX_TSC))
		return bad_at(f, err, off, "record stamped beyond 2^63 (t0 %llu, t1 %llu, t2 %llu): not a TSC",
			      (unsigned long long)r->t0, (unsigned long long)r->t1, (unsigned long long)r->t2);
	if (r->type == HGL_REC_INTERVAL && r->t1 < r->t0)
		return bad_at(f, err, off, "an interval that ends (TSC %llu) before it starts (TSC %llu)",
			      (unsigned long long)r->t1, (unsigned long long)r->t0);
	return 0;
}

/* plain_interval - a well-formed interval, the common record: what check_rec() would pass,
 * in a few comparisons (anything else goes through check_rec()) */
static inline int plain_interval(const struct hgl_file *f, const struct hgl_rec *r)
{
	return r->type == HGL_REC_INTERVAL && r->thread < f->info.nthreads && r->cpu < HGL_MAX_CPUS &&
	       r->t1 <= HGL_MAX_TSC && r->t0 <= r->t1;
}

/*
 * check_sequence - what a record must agree with, of its thread's records before it and of
 * the run's rate, on hgl_open's pass over every record (in file order, each thread's records
 * are in its own order): an interval starts no earlier than its thread's previous one ended;
 * a wake-up was due as long before its first read as its lateness says (hourglass makes the
 * due stamp from the lateness at the run's rate, rounding down: a cycle or two, and 1e-6 of
 * it for a trace written before hourglass had one rate); a job's deadline is no earlier than
 * its release, nor its completion when it has one. @last_t1: per thread, the last interval's
 * end (0: none yet).
 */
static int check_sequence(const struct hgl_file *f, const struct hgl_rec *r, uint64_t off, uint64_t *last_t1,
			  struct hg_err *err)
{
	if (r->type == HGL_REC_INTERVAL) {
		if (last_t1[r->thread] && r->t0 < last_t1[r->thread])
			return bad_at(f, err, off, "thread %u: an interval that starts (TSC %llu) before its previous "
				      "one ended (TSC %llu)", r->thread, (unsigned long long)r->t0,
				      (unsigned long long)last_t1[r->thread]);
		last_t1[r->thread] = r->t1;
	} else if (r->type == HGL_REC_WAKE) {
		double late = (double)(int64_t)r->t2 * f->info.tsc_hz / 1e9;
		double off_by = (double)(int64_t)(r->t1 - r->t0) - late;

		if (fabs(off_by) > 2 + 1e-6 * fabs(late))
			return bad_at(f, err, off, "thread %u: a wake-up due at TSC %llu and first read at TSC %llu, "
				      "but %lld ns late", r->thread, (unsigned long long)r->t0,
				      (unsigned long long)r->t1, (long long)(int64_t)r->t2);
	} else if (r->t2 < r->t0 || (r->t1 && r->t1 < r->t0)) {
		return bad_at(f, err, off, "thread %u: a job released at TSC %llu with its deadline at TSC %llu "
			      "and its completion at TSC %llu", r->thread, (unsigned long long)r->t0,
			      (unsigned long long)r->t2, (unsigned long long)r->t1);
	}
	return 0;
}

/* The info section: each key this library hands out, with its type checked. */
struct ictx {
	const struct hgl_file *f;
	struct hg_err *err;
};

static const char *type_name(enum jv_type t)
{
	static const char *const n[] = { "null", "a boolean", "a number", "a string", "an array", "an object" };

	return (unsigned)t < sizeof(n) / sizeof(n[0]) ? n[t] : "something else";
}

static int info_bad(struct ictx *c, const char *where, const char *key, const char *what)
{
	return bad_at(c->f, c->err, c->f->info_off, "the info section's %s%s%s %s", where, *where ? "." : "",
		      key, what);
}

static int wrong_type(struct ictx *c, const char *where, const char *key, const struct jv *v,
		      const char *want)
{
	char what[96];

	snprintf(what, sizeof(what), "is %s, not %s", type_name(jv_type(v)), want);
	return info_bad(c, where, key, what);
}

/* get - @key of @obj: 1 present, 0 absent (an error if @required) */
static int get(struct ictx *c, const struct jv *obj, const char *where, const char *key, int required,
	       const struct jv **v)
{
	*v = jv_get(obj, key);
	if (*v)
		return 1;
	if (required)
		return info_bad(c, where, key, "is missing");
	return 0;
}

static int get_int(struct ictx *c, const struct jv *obj, const char *where, const char *key, int required,
		   int64_t min, int64_t max, int64_t *out)
{
	const struct jv *v;
	int r = get(c, obj, where, key, required, &v);
	char what[96];

	if (r <= 0)
		return r;
	if (jv_type(v) != JV_NUM || !jv_is_int(v))
		return wrong_type(c, where, key, v, "a whole number");
	*out = jv_int(v);
	if (*out < min || *out > max) {
		snprintf(what, sizeof(what), "is %lld, outside %lld..%lld", (long long)*out, (long long)min,
			 (long long)max);
		return info_bad(c, where, key, what);
	}
	return 1;
}

static int get_num(struct ictx *c, const struct jv *obj, const char *where, const char *key, int required,
		   double min, double max, double *out)
{
	const struct jv *v;
	int r = get(c, obj, where, key, required, &v);
	char what[96];

	if (r <= 0)
		return r;
	if (jv_type(v) != JV_NUM)
		return wrong_type(c, where, key, v, "a number");
	*out = jv_num(v);
	if (!(*out >= min && *out <= max)) {
		snprintf(what, sizeof(what), "is %.6g, outside %.6g..%.6g", *out, min, max);
		return info_bad(c, where, key, what);
	}
	return 1;
}

/* get_str - into @buf; longer is an error, unless @cut (then it ends in "...") */
static int get_str(struct ictx *c, const struct jv *obj, const char *where, const char *key, int null_ok,
		   int cut, char *buf, size_t len)
{
	const struct jv *v;
	int r = get(c, obj, where, key, 0, &v);
	const char *s;
	size_t n;
	char what[64];

	buf[0] = 0;
	if (r <= 0)
		return r;
	if (null_ok && jv_type(v) == JV_NULL)
		return 0;
	if (jv_type(v) != JV_STR)
		return wrong_type(c, where, key, v, null_ok ? "a string or null" : "a string");
	s = jv_str(v);
	n = strlen(s);
	if (n < len) {
		memcpy(buf, s, n + 1);
	} else if (cut) {
		memcpy(buf, s, len - 4);
		memcpy(buf + len - 4, "...", 4);
	} else {
		snprintf(what, sizeof(what), "is longer than %zu bytes", len - 1);
		return info_bad(c, where, key, what);
	}
	return 1;
}

static int get_bool(struct ictx *c, const struct jv *obj, const char *where, const char *key, int *out)
{
	const struct jv *v;
	int r = get(c, obj, where, key, 0, &v);

	if (r <= 0)
		return r;
	if (jv_type(v) != JV_BOOL)
		return wrong_type(c, where, key, v, "true or false");
	*out = jv_bool(v);
	return 1;
}

static int get_thread(struct ictx *c, const struct jv *o, int k, struct hgl_thread *t)
{
	char where[32];
	const struct jv *acct;
	int64_t v;

	snprintf(where, sizeof(where), "threads[%d]", k);
	if (jv_type(o) != JV_OBJ)
		return info_bad(c, "", where, "is not an object");
	if (get_int(c, o, where, "thread", 1, 0, HGL_MAX_THREADS, &v) < 0)
		return -1;
	if (v != k) {
		char what[64];

		snprintf(what, sizeof(what), "is %lld: threads are numbered 0..n-1 in order", (long long)v);
		return info_bad(c, where, "thread", what);
	}
	t->thread = k;
	v = 0;
	if (get_int(c, o, where, "tid", 0, 0, UINT32_MAX, &v) < 0)
		return -1;
	t->tid = (uint32_t)v;
	v = 0;
	if (get_int(c, o, where, "priority", 0, INT_MIN, INT_MAX, &v) < 0)
		return -1;
	t->priority = (int)v;
	if (get_str(c, o, where, "workload", 0, 0, t->workload, sizeof(t->workload)) < 0 ||
	    get_str(c, o, where, "policy", 0, 0, t->policy, sizeof(t->policy)) < 0 ||
	    get_str(c, o, where, "timer", 0, 0, t->timer, sizeof(t->timer)) < 0 ||
	    get_str(c, o, where, "affinity", 1, 1, t->affinity, sizeof(t->affinity)) < 0 ||
	    get_int(c, o, where, "period_ns", 0, 0, INT64_MAX, &t->period_ns) < 0 ||
	    get_int(c, o, where, "amount_ns", 0, 0, INT64_MAX, &t->amount_ns) < 0 ||
	    get_num(c, o, where, "cpu_time_ns", 0, 0, HUGE_VAL, &t->cpu_time_ns) < 0)
		return -1;
	if (get(c, o, where, "accounting", 0, &acct) <= 0)
		return 0;
	if (jv_type(acct) != JV_OBJ)
		return wrong_type(c, where, "accounting", acct, "an object");
	strncat(where, ".accounting", sizeof(where) - strlen(where) - 1);
	t->has_accounting = 1;
	if (get_int(c, acct, where, "tsc0", 0, 0, INT64_MAX, &t->acct_tsc0) < 0 ||
	    get_int(c, acct, where, "tsc1", 0, 0, INT64_MAX, &t->acct_tsc1) < 0 ||
	    get_num(c, acct, where, "schedstat_on_cpu_ns", 0, 0, HUGE_VAL, &t->schedstat_on_cpu_ns) < 0 ||
	    get_num(c, acct, where, "schedstat_slices", 0, 0, HUGE_VAL, &t->schedstat_slices) < 0 ||
	    get_num(c, acct, where, "rusage_user_ns", 0, 0, HUGE_VAL, &t->rusage_user_ns) < 0 ||
	    get_num(c, acct, where, "rusage_system_ns", 0, 0, HUGE_VAL, &t->rusage_system_ns) < 0 ||
	    get_num(c, acct, where, "thread_cputime_ns", 0, 0, HUGE_VAL, &t->thread_cputime_ns) < 0)
		return -1;
	return 0;
}

/* parse_info - the info section into f->info: tsc.hz and threads[] required */
static int parse_info(struct hgl_file *f, struct hg_err *err)
{
	struct ictx c = { f, err };
	struct hgl_info *in = &f->info;
	const struct jv *root, *tsc, *threads;
	struct hg_err jerr;
	int64_t n;
	size_t k;

	f->doc = jv_parse(f->json, in->json_len, &jerr);
	if (!f->doc)
		return bad_at(f, err, f->info_off, "the info section is not valid JSON: %s", jerr.msg);
	root = f->doc;
	if (jv_type(root) != JV_OBJ)
		return bad_at(f, err, f->info_off, "the info section is %s, not an object",
			      jv_type(root) == JV_NULL ? "JSON null" : type_name(jv_type(root)));
	if (get(&c, root, "", "tsc", 1, &tsc) < 0)
		return -1;
	if (jv_type(tsc) != JV_OBJ)
		return wrong_type(&c, "", "tsc", tsc, "an object");
	if (get_num(&c, tsc, "tsc", "hz", 1, 1, HGL_MAX_TSC_HZ, &in->tsc_hz) < 0)
		return -1;
	in->complete = 1;
	if (get_int(&c, root, "", "t0_tsc", 0, 0, INT64_MAX, &in->t0_tsc) < 0 ||
	    get_int(&c, root, "", "duration_ns", 0, 0, INT64_MAX, &in->duration_ns) < 0 ||
	    get_bool(&c, root, "", "complete", &in->complete) < 0)
		return -1;
	if (get(&c, root, "", "threads", 1, &threads) < 0)
		return -1;
	if (jv_type(threads) != JV_ARR)
		return wrong_type(&c, "", "threads", threads, "an array");
	if (jv_len(threads) > HGL_MAX_THREADS)
		return bad_at(f, err, f->info_off, "the info section lists %zu threads, beyond the format's %d",
			      jv_len(threads), HGL_MAX_THREADS);
	in->nthreads = (int)jv_len(threads);
	if (get_int(&c, root, "", "threads_n", 0, 0, HGL_MAX_THREADS, &n) > 0 && n != in->nthreads)
		return bad_at(f, err, f->info_off, "the info section says threads_n %lld but lists %d threads",
			      (long long)n, in->nthreads);
	in->threads = calloc(in->nthreads ? in->nthreads : 1, sizeof(*in->threads));
	if (!in->threads)
		return hg_err_env(err, "%s: out of memory", f->path);
	for (k = 0; k < (size_t)in->nthreads; k++)
		if (get_thread(&c, jv_at(threads, k), (int)k, &in->threads[k]))
			return -1;
	return 0;
}

/* walk - every section header; the info section read, the record sections noted */
static int walk(struct hgl_file *f, struct hg_err *err)
{
	uint64_t off = sizeof(struct hgl_prelude);

	while (off < f->size) {
		struct hgl_section s;
		uint64_t left = f->size - off - sizeof(s), pad;
		char tag[32], zero[8];
		size_t i;

		if (f->size - off < sizeof(s))
			return bad_at(f, err, off, "truncated section header (%llu bytes left, 16 needed)",
				      (unsigned long long)(f->size - off));
		if (hg_pread_all(f->fd, &s, sizeof(s), off))
			return bad_at(f, err, off, "truncated section header");
		hg_quote(tag, sizeof(tag), s.tag, 4);
		pad = -s.size & 7;
		if (s.size > left || pad > left - s.size)
			return bad_at(f, err, off, "section %s of %llu bytes runs past the end of the file "
				      "(%llu bytes left)", tag, (unsigned long long)s.size, (unsigned long long)left);
		if (pad && hg_pread_all(f->fd, zero, pad, off + sizeof(s) + s.size))
			return bad_at(f, err, off, "truncated section padding");
		for (i = 0; i < pad; i++)
			if (zero[i])
				return bad_at(f, err, off + sizeof(s) + s.size, "padding after section %s that is "
					      "not zeros", tag);
		if (!memcmp(s.tag, "info", 4)) {
			if (f->json)
				return bad_at(f, err, off, "a second info section (the first at offset %llu)",
					      (unsigned long long)(f->info_off - sizeof(s)));
			if (s.size > HGL_MAX_INFO_BYTES)
				return bad_at(f, err, off, "an info section of %llu bytes, beyond the format's 16 MiB",
					      (unsigned long long)s.size);
			f->json = malloc(s.size + 1);
			if (!f->json)
				return hg_err_env(err, "%s: out of memory", f->path);
			if (hg_pread_all(f->fd, f->json, s.size, off + sizeof(s)))
				return bad_at(f, err, off, "truncated info section");
			f->json[s.size] = 0;
			f->info.json = f->json;
			f->info.json_len = s.size;
			f->info_off = off + sizeof(s);
		} else if (!memcmp(s.tag, "recs", 4)) {
			struct span *sp;

			if (s.size % sizeof(struct hgl_rec))
				return bad_at(f, err, off, "record section of %llu bytes is not a whole number of "
					      "records (32 bytes each)", (unsigned long long)s.size);
			sp = realloc(f->spans, (f->nspans + 1) * sizeof(*sp));
			if (!sp)
				return hg_err_env(err, "%s: out of memory", f->path);
			f->spans = sp;
			sp[f->nspans++] = (struct span){ off + sizeof(s), s.size / sizeof(struct hgl_rec) };
			f->nr_records += s.size / sizeof(struct hgl_rec);
		} else if (!memcmp(s.tag, "end!", 4)) {
			if (s.size != sizeof(f->end))
				return bad_at(f, err, off, "bad END section: %llu bytes, 16 expected",
					      (unsigned long long)s.size);
			if (hg_pread_all(f->fd, &f->end, sizeof(f->end), off + sizeof(s)))
				return bad_at(f, err, off, "truncated END section");
			f->complete = 1;
			f->end_off = off;
			off += sizeof(s) + s.size;
			if (off < f->size)
				return bad_at(f, err, off, "%llu bytes after the END section",
					      (unsigned long long)(f->size - off));
			return 0;
		}
		/* a section this reader does not know: a later minor version's, skipped */
		off += sizeof(s) + s.size + pad;
	}
	return 0;
}

static int check_prelude(struct hgl_file *f, struct hg_err *err)
{
	struct hgl_prelude p;

	if (hg_read_prelude(f->fd, f->size, f->path, &p, sizeof(p), HGL_MAGIC, "an hourglass trace", err))
		return -1;
	if (p.major != HGL_FORMAT_MAJOR)
		return hg_err_set(err, "%s: offset 8: format version %u.%u, this reader knows %d.x", f->path,
				  p.major, p.minor, HGL_FORMAT_MAJOR);
	f->major = p.major;
	f->minor = p.minor;
	return 0;
}

int hgl_open(struct hgl_file **out, const char *path, unsigned flags, struct hg_err *err)
{
	struct hgl_file *f = calloc(1, sizeof(*f));
	struct hgl_cursor *c = NULL;
	const struct hgl_rec *recs;
	struct stat st;
	uint64_t *last_t1;
	size_t n, i;
	int rc = 0;

	*out = NULL;
	if (!f || !(f->path = strdup(path))) {
		free(f);
		return hg_err_env(err, "%s: out of memory", path);
	}
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0) {
		hg_err_set(err, "%s: cannot open it: %s", path, strerror(errno));
		goto fail;
	}
	if (fstat(f->fd, &st) || !S_ISREG(st.st_mode)) {
		hg_err_set(err, "%s: not a regular file", path);
		goto fail;
	}
	f->size = (uint64_t)st.st_size;
	if (check_prelude(f, err) || walk(f, err))
		goto fail;
	if (!f->json) {
		hg_err_set(err, "%s: offset %llu: no info section", path, (unsigned long long)f->size);
		goto fail;
	}
	if (!f->complete && !(flags & HGL_OPEN_ALLOW_INCOMPLETE)) {
		hg_err_set(err, "%s: offset %llu: no END section: the run or its writer stopped before finishing",
			   path, (unsigned long long)f->size);
		goto fail;
	}
	if (f->complete && f->end.nr_records != f->nr_records) {
		bad_at(f, err, f->end_off, "END says %llu records, the file holds %llu",
		       (unsigned long long)f->end.nr_records, (unsigned long long)f->nr_records);
		goto fail;
	}
	if (parse_info(f, err))
		goto fail;
	/* every record once, so that cursors hand out only checked ones */
	c = hgl_cursor_open(f, -1, err);
	last_t1 = calloc((size_t)f->info.nthreads + 1, sizeof(*last_t1));
	if (!c || !last_t1) {
		if (c && !last_t1)
			hg_err_env(err, "%s: out of memory", path);
		hgl_cursor_close(c);
		goto fail;
	}
	while (rc >= 0 && (rc = hgl_cursor_next_block(c, &recs, &n, err)) > 0)
		for (i = 0; i < n; i++)
			if (check_sequence(f, &recs[i], f->spans[c->span].off +
					   (c->done - c->nbuf + c->at - n + i) * sizeof(*recs), last_t1, err)) {
				rc = -1;
				break;
			}
	free(last_t1);
	hgl_cursor_close(c);
	if (rc < 0)
		goto fail;
	*out = f;
	return 0;
fail:
	hgl_close(f);
	return -1;
}

void hgl_close(struct hgl_file *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	jv_free(f->doc);
	free(f->json);
	free(f->info.threads);
	free(f->spans);
	free(f->path);
	blocks_free(f);
	free(f);
}

const char *hgl_path(const struct hgl_file *f)
{
	return f->path;
}

const struct hgl_info *hgl_info(const struct hgl_file *f)
{
	return &f->info;
}

uint64_t hgl_nr_records(const struct hgl_file *f)
{
	return f->nr_records;
}

uint64_t hgl_dropped(const struct hgl_file *f)
{
	return f->complete ? f->end.dropped : 0;
}

int hgl_complete(const struct hgl_file *f)
{
	return f->complete;
}

void hgl_version(const struct hgl_file *f, unsigned *major, unsigned *minor)
{
	*major = f->major;
	*minor = f->minor;
}

static void blocks_free(struct hgl_file *f)
{
	int i;

	for (i = 0; i < f->nblocks; i++) {
		free(f->blocks[i]->recs);
		free(f->blocks[i]->next);
		free(f->blocks[i]->first_of);
		free(f->blocks[i]);
	}
	free(f->blocks);
	f->blocks = NULL;
	f->nblocks = 0;
}

/* spare - a block no cursor holds, the longest let go; a new one if all are held */
static struct block *spare(struct hgl_file *f)
{
	struct block *b = NULL, **v;
	int i;

	for (i = 0; i < f->nblocks; i++)
		if (!f->blocks[i]->holders && (!b || f->blocks[i]->used < b->used))
			b = f->blocks[i];
	if (b)
		return b;
	v = realloc(f->blocks, (f->nblocks + 1) * sizeof(*v));
	if (!v)
		return NULL;
	f->blocks = v;
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->recs = malloc(BLOCK_RECS * sizeof(*b->recs));
	b->next = malloc(BLOCK_RECS * sizeof(*b->next));
	b->first_of = malloc((size_t)(f->info.nthreads ? f->info.nthreads : 1) * sizeof(*b->first_of));
	if (!b->recs || !b->next || !b->first_of) {
		free(b->recs);
		free(b->next);
		free(b->first_of);
		free(b);
		return NULL;
	}
	b->first = UINT64_MAX;
	f->blocks[f->nblocks++] = b;
	return b;
}

/* hold - the block of @span from record @first, read now unless a block has it */
static struct block *hold(struct hgl_file *f, size_t span, uint64_t first, struct hg_err *err)
{
	struct hg_err scratch;
	struct block *b;
	uint64_t off = f->spans[span].off + first * sizeof(struct hgl_rec);
	size_t i;
	int k;

	for (k = 0; k < f->nblocks; k++)
		if (f->blocks[k]->first == first && f->blocks[k]->span == span) {
			f->blocks[k]->holders++;
			return f->blocks[k];
		}
	b = spare(f);
	if (!b) {
		hg_err_env(err, "%s: out of memory", f->path);
		return NULL;
	}
	b->first = UINT64_MAX;		/* none until read whole */
	b->n = f->spans[span].n - first;
	if (b->n > BLOCK_RECS)
		b->n = BLOCK_RECS;
	if (hg_pread_all(f->fd, b->recs, b->n * sizeof(*b->recs), off)) {
		bad_at(f, err, off, "truncated record section (the file is shorter than when it was opened)");
		return NULL;
	}
	b->span = span;
	b->first = first;
	b->bad = b->n;
	for (i = 0; i < b->n; i++)
		if (!plain_interval(f, &b->recs[i]) &&
		    check_rec(f, &b->recs[i], off + i * sizeof(*b->recs), &scratch)) {
			b->bad = i;
			break;
		}
	for (k = 0; k < f->info.nthreads; k++)
		b->first_of[k] = (uint32_t)b->n;
	for (i = b->bad; i-- > 0;) {	/* checked: thread < nthreads */
		unsigned t = b->recs[i].thread;

		b->next[i] = b->first_of[t];
		b->first_of[t] = (uint32_t)i;
	}
	b->holders = 1;
	return b;
}

static void let_go(struct hgl_cursor *c)
{
	if (c->blk) {
		c->blk->holders--;
		c->blk->used = ++c->f->clock;
		c->blk = NULL;
	}
}

/* the records of one thread, from the blocks its file's cursors share */
static int thread_next(struct hgl_cursor *c, struct hgl_rec *rec, struct hg_err *err)
{
	struct hgl_file *f = c->f;

	for (;;) {
		struct block *b = c->blk;

		if (!b) {
			while (c->span < f->nspans && c->done == f->spans[c->span].n) {
				c->span++;
				c->done = 0;
			}
			if (c->span >= f->nspans)
				return 0;
			if (!(b = c->blk = hold(f, c->span, c->done, err)))
				return -1;
			c->nbuf = b->n;
			c->done += b->n;
			c->at = c->thread < f->info.nthreads ? b->first_of[c->thread] : b->n;
		}
		/* as a cursor that looked at every record: a bad one before its next fails it */
		if (b->bad < b->n && b->bad <= c->at)
			return check_rec(f, &b->recs[b->bad],
					 f->spans[b->span].off + (b->first + b->bad) * sizeof(*b->recs), err);
		if (c->at < b->n) {
			*rec = b->recs[c->at];
			c->at = b->next[c->at];
			return 1;
		}
		let_go(c);
	}
}

struct hgl_cursor *hgl_cursor_open(struct hgl_file *f, int thread, struct hg_err *err)
{
	struct hgl_cursor *c = calloc(1, sizeof(*c));

	if (!c || (thread < 0 && !(c->buf = malloc(BLOCK_RECS * sizeof(*c->buf))))) {
		free(c);
		hg_err_env(err, "%s: out of memory", f->path);
		return NULL;
	}
	c->f = f;
	c->thread = thread;
	c->fd = f->fd;
	return c;
}

/*
 * cursor_refill - the cursor's next block of records, from its span or the next one with
 * records left: 1 when it holds some, 0 at the end of the file's records, -1 (err set)
 * when the file got shorter since it was opened
 */
static int cursor_refill(struct hgl_cursor *c, struct hg_err *err)
{
	const struct hgl_file *f = c->f;

	while (c->span < f->nspans && c->done == f->spans[c->span].n) {
		c->span++;
		c->done = 0;
	}
	if (c->span >= f->nspans)
		return 0;
	c->nbuf = f->spans[c->span].n - c->done;
	if (c->nbuf > BLOCK_RECS)
		c->nbuf = BLOCK_RECS;
	if (hg_pread_all(c->fd, c->buf, c->nbuf * sizeof(*c->buf),
		      f->spans[c->span].off + c->done * sizeof(*c->buf)))
		return bad_at(f, err, f->spans[c->span].off + c->done * sizeof(*c->buf),
			      "truncated record section (the file is shorter than when it was opened)");
	c->done += c->nbuf;
	c->at = 0;
	return 1;
}

int hgl_cursor_next(struct hgl_cursor *c, struct hgl_rec *rec, struct hg_err *err)
{
	const struct hgl_file *f = c->f;
	int ret;

	if (c->thread >= 0)
		return thread_next(c, rec, err);
	for (;;) {
		while (c->at < c->nbuf) {
			const struct hgl_rec *r = &c->buf[c->at];

			c->at++;
			if (!plain_interval(f, r) &&
			    check_rec(f, r, f->spans[c->span].off + (c->done - c->nbuf + c->at - 1) * sizeof(*r), err))
				return -1;
			if (c->thread < 0 || r->thread == c->thread) {
				*rec = *r;
				return 1;
			}
		}
		if ((ret = cursor_refill(c, err)) <= 0)
			return ret;
	}
}

int hgl_cursor_next_block(struct hgl_cursor *c, const struct hgl_rec **recs, size_t *n, struct hg_err *err)
{
	const struct hgl_file *f = c->f;
	size_t from, i;
	int ret;

	if (c->thread >= 0)
		return hg_err_set(err, "%s: a block of records is read by a cursor of every thread", f->path);
	for (;;) {
		if (c->at < c->nbuf) {
			from = c->at;
			for (i = from; i < c->nbuf; i++)
				if (!plain_interval(f, &c->buf[i]) &&
				    check_rec(f, &c->buf[i], f->spans[c->span].off + (c->done - c->nbuf + i) *
					      sizeof(*c->buf), err))
					break;
			c->at = i;
			if (i == from)		/* the bad record itself, and err says it */
				return -1;
			*recs = c->buf + from;
			*n = i - from;
			return 1;
		}
		if ((ret = cursor_refill(c, err)) <= 0)
			return ret;
	}
}

void hgl_cursor_rewind(struct hgl_cursor *c)
{
	c->span = 0;
	c->done = 0;
	c->nbuf = 0;
	c->at = 0;
	let_go(c);
}

void hgl_cursor_close(struct hgl_cursor *c)
{
	if (!c)
		return;
	let_go(c);
	free(c->buf);
	free(c);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * hgt_read.c - the one reader of .hgt recordings (hg_hgt.h).
 *
 * hgt_open() checks the whole file's shape before any record is handed out:
 * the prelude, the metadata (UTF-8 "key: value" lines; format, abi,
 * tsc_khz and nr_cpu_ids must say something this reader knows), then every
 * chunk header, seeking over payloads: sizes against the file and the
 * format's limits, CPUs against nr_cpu_ids, record counts against bytes,
 * the trailer (at most one time chunk, at most one stats chunk per CPU,
 * nothing but the trailer after it, END last and nothing after END) and
 * the stats against the chunks' record counts. docs/hgtrace-file.md,
 * "What a reader checks", is the list in prose. The records themselves are
 * checked when a chunk is decoded (hgt_decode.c), and a cursor that reaches
 * the end of a CPU checks its records and LOST markers against the stats.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "hg_io.h"
#include "hg_utf8.h"
#include "hgt_decode.h"
#include "hgtrace_vectors.h"

struct cpu_tally {
	uint64_t nr_records;		/* from the chunk headers */
	uint64_t first_offset;		/* of its first records chunk */
	size_t first_chunk;		/* ... its index (nchunks: none) */
	uint64_t stats_offset;		/* of its stats chunk, if has_stats */
	int has_stats;
	int read_all;			/* a cursor has read its records to the end (hgt_records_span) */
	struct hgt_cpu_stats st;
};

struct hgt_file {
	char *path;
	int fd;
	uint64_t size;
	uint32_t version;
	char *meta;			/* the metadata text, NUL-terminated */
	char *kv;			/* a copy, cut into keys and values */
	const char **keys, **vals;
	size_t nkeys;
	uint32_t nr_cpu_ids;		/* from the metadata, 0 if absent */
	uint32_t cpu_limit;		/* nr_cpu_ids, else HGT_MAX_CPUS */
	uint32_t tsc_khz;
	int complete;
	int allow_cut;			/* HGT_OPEN_ALLOW_INCOMPLETE: a last chunk cut short ends the file */
	uint64_t cut_offset;		/* where such a chunk starts, 0 if none */
	int has_window;
	uint64_t window_offset;
	struct hgt_file_window win;
	struct hgt_chunk_info *chunks;
	size_t nchunks, capchunks;
	size_t *next_same;		/* per chunk of records: the CPU's next one (nchunks: none) */
	struct cpu_tally *cpu;		/* 0 .. ncpu - 1: the highest CPU of any chunk */
	uint32_t ncpu;
	uint64_t nr_records;
	int has_span;
	uint64_t span_lo, span_hi;	/* the least and greatest stamp of the cursors read to the end */
	struct hgt_decoder dec;		/* hgt_read_chunk()'s */
};

/*
 * A cursor reads through the file's descriptor (pread): one per CPU made a
 * run of more than about a thousand CPUs fail at the usual limit of 1024
 * open files. A cursor of one CPU follows that CPU's chunks (next_same), and
 * counts for that CPU alone: walking every chunk and counting for every CPU
 * in each cursor made the merge of 4096 CPUs quadratic.
 */
struct hgt_cursor {
	struct hgt_file *f;
	uint32_t cpu;			/* or HGT_ALL_CPUS */
	struct hgt_decoder dec;
	size_t next;			/* the next chunk to look at */
	size_t cur;			/* the chunk being read */
	const char *recs;
	size_t len, pos;
	uint32_t rec_cpu;
	uint64_t *delivered, *lost;	/* per CPU (one CPU's cursor: that CPU's only), for the check
					 * against the stats */
	uint64_t *last;			/* ... the last stamp handed out, whose successor the decoder
					 * checks it against (has_last: there is one) */
	char *has_last;
	uint64_t lo, hi;		/* the least and greatest stamp of the chunks decoded */
	int checked;
};

static const unsigned char min_len[HGT_REC_MAX] = {
	[HGT_REC_SWITCH] = 16 + sizeof(struct hgt_switch),
	[HGT_REC_WAKING] = 16 + sizeof(struct hgt_wake),
	[HGT_REC_WAKEUP] = 16 + sizeof(struct hgt_wake),
	[HGT_REC_WAKEUP_NEW] = 16 + sizeof(struct hgt_wake),
	[HGT_REC_MIGRATE] = 16 + sizeof(struct hgt_migrate),
	[HGT_REC_NMI] = 16 + sizeof(struct hgt_nmi),
	[HGT_REC_HRTIMER_ENTRY] = 16 + sizeof(struct hgt_hrtimer),
	[HGT_REC_COMM] = 16 + sizeof(struct hgt_comm),
	[HGT_REC_NAME] = 16 + sizeof(struct hgt_name),
	[HGT_REC_LOST] = 16 + sizeof(struct hgt_lost),
};

unsigned hgt_type_min_len(unsigned type)
{
	return type < HGT_REC_MAX && min_len[type] ? min_len[type] : 16;
}

static const char *const type_names[HGT_REC_MAX] = {
	[HGT_REC_NONE] = "none", [HGT_REC_SWITCH] = "switch", [HGT_REC_WAKING] = "waking",
	[HGT_REC_WAKEUP] = "wakeup", [HGT_REC_WAKEUP_NEW] = "wakeup_new",
	[HGT_REC_MIGRATE] = "migrate", [HGT_REC_EXIT] = "exit",
	[HGT_REC_IRQ_ENTRY] = "irq_entry", [HGT_REC_IRQ_EXIT] = "irq_exit",
	[HGT_REC_SOFTIRQ_ENTRY] = "softirq_entry", [HGT_REC_SOFTIRQ_EXIT] = "softirq_exit",
	[HGT_REC_VEC_ENTRY] = "vec_entry", [HGT_REC_VEC_EXIT] = "vec_exit",
	[HGT_REC_NMI] = "nmi", [HGT_REC_HRTIMER_ENTRY] = "hrtimer_entry",
	[HGT_REC_HRTIMER_EXIT] = "hrtimer_exit", [HGT_REC_SYS_ENTER] = "sys_enter",
	[HGT_REC_SYS_EXIT] = "sys_exit", [HGT_REC_COMM] = "comm", [HGT_REC_NAME] = "name",
	[HGT_REC_LOST] = "lost",
};

const char *hgt_type_name(unsigned type)
{
	return type < HGT_REC_MAX && type_names[type] ? type_names[type] : "unknown";
}

/* what the records' vector and softirq numbers mean: the dumps, the importer and the exports name them so */
#define VEC_NAME(name, vec)	[vec] = #name,
static const char *const vec_names[HGT_VEC_MAX] = { HGT_VECTORS(VEC_NAME) };	/* hgtrace_vectors.h */

static const char *const softirq_names[] = {
	"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
};

const char *hgt_vec_name(unsigned vec)
{
	return vec < HGT_VEC_MAX ? vec_names[vec] : NULL;
}

const char *hgt_softirq_name(unsigned vec)
{
	return vec < sizeof(softirq_names) / sizeof(softirq_names[0]) ? softirq_names[vec] : NULL;
}

/* magic_str - a chunk magic for a message: hex, and its letters when they are printable */
static const char *magic_str(char *buf, size_t len, uint32_t magic)
{
	char q[32];
	unsigned char b[4];
	int i, printable = 1;

	memcpy(b, &magic, 4);
	for (i = 0; i < 4; i++)
		if (b[i] < 0x21 || b[i] > 0x7e)
			printable = 0;
	if (printable)
		snprintf(buf, len, "0x%08x %s", magic, hg_quote(q, sizeof(q), b, 4));
	else
		snprintf(buf, len, "0x%08x", magic);
	return buf;
}

/* digits - a decimal number of digits only, from @min to @max; -1 otherwise */
static int digits(const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	if (x < min || x > max)
		return -1;
	*v = x;
	return 0;
}

static int meta_bad(struct hgt_file *f, struct hg_err *err, const char *line, size_t lineno,
		    const char *what)
{
	return hg_err_set(err, "%s: offset %llu: metadata line %zu: %s", f->path,
			  (unsigned long long)(sizeof(struct hgt_file_prelude) + (size_t)(line - f->kv)), lineno,
			  what);
}

/* check_known - the keys whose values change how the file is read */
static int check_known(struct hgt_file *f, struct hg_err *err, const char *line, size_t lineno,
		       const char *key, const char *val)
{
	char q[80], msg[200];
	uint64_t v;

	if (!strcmp(key, "format")) {
		char want[32];

		snprintf(want, sizeof(want), "hgtrace %u", f->version);
		if (strcmp(val, want)) {
			snprintf(msg, sizeof(msg), "format %s: this reader knows \"hgtrace 1\" and \"hgtrace 3\", "
				 "and the prelude says version %u", hg_quote(q, sizeof(q), val, strlen(val)),
				 f->version);
			return meta_bad(f, err, line, lineno, msg);
		}
	} else if (!strcmp(key, "abi")) {
		const char *dot = strchr(val, '.');
		char major[16];
		uint64_t mi;

		if (!dot || (size_t)(dot - val) >= sizeof(major)) {
			snprintf(msg, sizeof(msg), "abi %s is not MAJOR.MINOR", hg_quote(q, sizeof(q), val, strlen(val)));
			return meta_bad(f, err, line, lineno, msg);
		}
		memcpy(major, val, (size_t)(dot - val));
		major[dot - val] = 0;
		if (digits(major, 0, UINT32_MAX, &v) || digits(dot + 1, 0, UINT32_MAX, &mi)) {
			snprintf(msg, sizeof(msg), "abi %s is not MAJOR.MINOR", hg_quote(q, sizeof(q), val, strlen(val)));
			return meta_bad(f, err, line, lineno, msg);
		}
		if (v != HGT_ABI_MAJOR) {
			snprintf(msg, sizeof(msg), "records of ABI %s, this reader knows ABI %d.x",
				 hg_quote(q, sizeof(q), val, strlen(val)), HGT_ABI_MAJOR);
			return meta_bad(f, err, line, lineno, msg);
		}
	} else if (!strcmp(key, "tsc_khz")) {
		if (digits(val, 1, UINT32_MAX, &v)) {
			snprintf(msg, sizeof(msg), "tsc_khz %s is not a whole number of kHz from 1 to 4294967295",
				 hg_quote(q, sizeof(q), val, strlen(val)));
			return meta_bad(f, err, line, lineno, msg);
		}
		f->tsc_khz = (uint32_t)v;
	} else if (!strcmp(key, "nr_cpu_ids")) {
		if (digits(val, 1, HGT_MAX_CPUS, &v)) {
			snprintf(msg, sizeof(msg), "nr_cpu_ids %s is not a number of CPUs from 1 to %u",
				 hg_quote(q, sizeof(q), val, strlen(val)), HGT_MAX_CPUS);
			return meta_bad(f, err, line, lineno, msg);
		}
		f->nr_cpu_ids = (uint32_t)v;
	}
	return 0;
}

/*
 * parse_meta - the text up to the first NUL (the rest is padding, zeros):
 * UTF-8, no control characters but tabs, lines "key: value" or "key:",
 * each key once
 */
static int parse_meta(struct hgt_file *f, const char *raw, size_t n, struct hg_err *err)
{
	size_t len = strnlen(raw, n), lineno = 0, i, bad, cap = 16;
	char *line, *next;

	for (i = len; i < n; i++)
		if (raw[i])
			return hg_err_set(err, "%s: offset %llu: metadata padding that is not zeros", f->path,
					  (unsigned long long)(sizeof(struct hgt_file_prelude) + i));
	bad = hg_utf8_valid(raw, len);
	if (bad < len)
		return hg_err_set(err, "%s: offset %llu: the metadata is not UTF-8 text", f->path,
				  (unsigned long long)(sizeof(struct hgt_file_prelude) + bad));
	for (i = 0; i < len; i++)
		if ((unsigned char)raw[i] < 0x20 && raw[i] != '\n' && raw[i] != '\t')
			return hg_err_set(err, "%s: offset %llu: a control character (0x%02x) in the metadata",
					  f->path, (unsigned long long)(sizeof(struct hgt_file_prelude) + i),
					  (unsigned char)raw[i]);
	f->meta = malloc(len + 1);
	f->kv = malloc(len + 1);
	f->keys = malloc(cap * sizeof(*f->keys));
	f->vals = malloc(cap * sizeof(*f->vals));
	if (!f->meta || !f->kv || !f->keys || !f->vals)
		return hg_err_env(err, "%s: out of memory reading the metadata", f->path);
	memcpy(f->meta, raw, len);
	f->meta[len] = 0;
	memcpy(f->kv, raw, len);
	f->kv[len] = 0;
	for (line = f->kv; *line; line = next) {
		char *colon, *val;
		size_t k;

		lineno++;
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		else
			next = line + strlen(line);
		if (!*line)
			continue;
		colon = strchr(line, ':');
		if (!colon || colon == line || (colon[1] && colon[1] != ' '))
			return meta_bad(f, err, line, lineno, "not \"key: value\"");
		for (val = line; val < colon; val++)
			if (*val == ' ' || *val == '\t')
				return meta_bad(f, err, line, lineno, "a key with a space in it");
		*colon = 0;
		val = colon[1] ? colon + 2 : colon + 1;
		for (k = 0; k < f->nkeys; k++)
			if (!strcmp(f->keys[k], line))
				return meta_bad(f, err, line, lineno, "a key that an earlier line has already given");
		if (check_known(f, err, line, lineno, line, val))
			return -1;
		if (f->nkeys == cap) {
			const char **nk, **nv;

			cap *= 2;
			nk = realloc(f->keys, cap * sizeof(*nk));
			if (nk)
				f->keys = nk;
			nv = realloc(f->vals, cap * sizeof(*nv));
			if (nv)
				f->vals = nv;
			if (!nk || !nv)
				return hg_err_env(err, "%s: out of memory reading the metadata", f->path);
		}
		f->keys[f->nkeys] = line;
		f->vals[f->nkeys++] = val;
	}
	return 0;
}

/* bad_at - a bad input at offset @off of @f's file (hg_err_at) */
#define bad_at(f, err, off, ...)	hg_err_at(err, (f)->path, off, __VA_ARGS__)

static struct cpu_tally *tally(struct hgt_file *f, uint32_t cpu)
{
	if (cpu >= f->ncpu) {
		struct cpu_tally *t = realloc(f->cpu, ((size_t)cpu + 1) * sizeof(*t));

		if (!t)
			return NULL;
		memset(t + f->ncpu, 0, ((size_t)cpu + 1 - f->ncpu) * sizeof(*t));
		f->cpu = t;
		f->ncpu = cpu + 1;
	}
	return &f->cpu[cpu];
}

static int add_chunk(struct hgt_file *f, const struct hgt_chunk_info *ci, struct hg_err *err)
{
	if (f->nchunks == f->capchunks) {
		size_t cap = f->capchunks ? 2 * f->capchunks : 64;
		struct hgt_chunk_info *c = realloc(f->chunks, cap * sizeof(*c));

		if (!c)
			return hg_err_env(err, "%s: out of memory for the index of %zu chunks", f->path, f->nchunks);
		f->chunks = c;
		f->capchunks = cap;
	}
	f->chunks[f->nchunks++] = *ci;
	return 0;
}

static int check_cpu(struct hgt_file *f, struct hg_err *err, uint64_t off, uint32_t cpu, const char *what)
{
	if (cpu < f->cpu_limit)
		return 0;
	if (f->nr_cpu_ids)
		return bad_at(f, err, off, "%s of CPU %u, but the recording has %u CPUs (nr_cpu_ids)", what, cpu,
			      f->nr_cpu_ids);
	return bad_at(f, err, off, "%s of CPU %u, beyond the format's limit of %u CPUs", what, cpu, HGT_MAX_CPUS);
}

/* walk_chunk - one chunk header at @off, checked and indexed; *next is where the next one starts */
static int walk_chunk(struct hgt_file *f, uint64_t off, int *trailer, uint64_t *next, struct hg_err *err)
{
	struct hgt_chunk c = { 0 };
	struct hgt_chunk_info ci;
	uint64_t left = f->size - off;
	char m[48];
	const char *why;

	if (left < sizeof(c)) {
		if (f->allow_cut)
			goto cut;
		return bad_at(f, err, off, "truncated chunk header (%llu bytes left, 16 needed)",
			      (unsigned long long)left);
	}
	if (hg_pread_all(f->fd, &c, sizeof(c), off))
		return bad_at(f, err, off, "truncated chunk header (cannot read it)");
	ci = (struct hgt_chunk_info){ off, c.magic, c.cpu, c.nr_bytes, c.nr_records };
	left -= sizeof(c);
	if (c.magic == HGT_END_MAGIC) {
		if (c.cpu || c.nr_bytes || c.nr_records)
			return bad_at(f, err, off, "an END marker whose cpu, bytes and records are not 0");
		if (left)
			return bad_at(f, err, off + sizeof(c), "%llu bytes after the END marker",
				      (unsigned long long)left);
		f->complete = 1;
		*next = f->size;
		return add_chunk(f, &ci, err);
	}
	if (c.magic != HGT_CHUNK_MAGIC && c.magic != HGT_ZCHUNK_MAGIC && c.magic != HGT_PCHUNK_MAGIC &&
	    c.magic != HGT_TIME_MAGIC && c.magic != HGT_STATS_MAGIC)
		return bad_at(f, err, off, "corrupt chunk: unknown magic %s", magic_str(m, sizeof(m), c.magic));
	if (c.magic == HGT_PCHUNK_MAGIC && f->version < HGT_FILE_VERSION_PACKED)
		return bad_at(f, err, off, "corrupt chunk: a packed chunk (pchk) in a version %u file "
			      "(only version 3 files hold them)", f->version);
	if (c.nr_bytes % 8)
		return bad_at(f, err, off, "corrupt chunk: %u bytes, not a multiple of 8", c.nr_bytes);
	if (c.nr_bytes > HGT_MAX_CHUNK_BYTES)
		return bad_at(f, err, off, "corrupt chunk: %u bytes, beyond the format's 64 MiB", c.nr_bytes);
	if (c.nr_bytes > left) {
		if (f->allow_cut)
			goto cut;
		return bad_at(f, err, off, "truncated chunk: %u bytes claimed, %llu left in the file", c.nr_bytes,
			      (unsigned long long)left);
	}
	*next = off + sizeof(c) + c.nr_bytes;

	if (c.magic == HGT_TIME_MAGIC) {
		*trailer = 1;
		if (c.nr_bytes != sizeof(f->win) || c.cpu || c.nr_records != 1)
			return bad_at(f, err, off, "a time chunk of %u bytes, CPU %u, %u records "
				      "(16 bytes, CPU 0 and 1 record expected)", c.nr_bytes, c.cpu, c.nr_records);
		if (f->has_window)
			return bad_at(f, err, off, "a second time chunk (the first is at offset %llu)",
				      (unsigned long long)f->window_offset);
		if (hg_pread_all(f->fd, &f->win, sizeof(f->win), off + sizeof(c)))
			return bad_at(f, err, off, "truncated time chunk");
		if (f->win.stop_tsc > HGT_MAX_TSC)
			return bad_at(f, err, off, "a window stamped beyond 2^63 (stop_tsc %llu): not a TSC",
				      (unsigned long long)f->win.stop_tsc);
		if (f->win.start_tsc > f->win.stop_tsc)
			return bad_at(f, err, off, "a window that starts after it stops (start_tsc %llu, stop_tsc %llu)",
				      (unsigned long long)f->win.start_tsc, (unsigned long long)f->win.stop_tsc);
		f->has_window = 1;
		f->window_offset = off;
		return add_chunk(f, &ci, err);
	}
	if (c.magic == HGT_STATS_MAGIC) {
		struct cpu_tally *t;

		*trailer = 1;
		if (c.nr_bytes != sizeof(struct hgt_cpu_stats) || c.nr_records != 1)
			return bad_at(f, err, off, "a stats chunk of %u bytes and %u records (48 bytes and 1 record "
				      "expected)", c.nr_bytes, c.nr_records);
		if (check_cpu(f, err, off, c.cpu, "a stats chunk"))
			return -1;
		t = tally(f, c.cpu);
		if (!t)
			return hg_err_env(err, "%s: out of memory", f->path);
		if (t->has_stats)
			return bad_at(f, err, off, "a second stats chunk for CPU %u (the first is at offset %llu)",
				      c.cpu, (unsigned long long)t->stats_offset);
		if (hg_pread_all(f->fd, &t->st, sizeof(t->st), off + sizeof(c)))
			return bad_at(f, err, off, "truncated stats chunk");
		t->has_stats = 1;
		t->stats_offset = off;
		return add_chunk(f, &ci, err);
	}

	/* a records chunk, of any coding */
	if (*trailer)
		return bad_at(f, err, off, "a records chunk after the trailer (time and stats chunks come last)");
	if (check_cpu(f, err, off, c.cpu, "a records chunk"))
		return -1;
	if (c.magic == HGT_CHUNK_MAGIC) {
		if (c.nr_bytes < 16ull * c.nr_records || c.nr_bytes > 248ull * c.nr_records)
			return bad_at(f, err, off, "the chunk header says %u records, which cannot fill its %u bytes",
				      c.nr_records, c.nr_bytes);
	} else if (c.magic == HGT_ZCHUNK_MAGIC) {
		struct hgt_zchunk zh = { 0 };

		if (c.nr_bytes >= sizeof(zh) && hg_pread_all(f->fd, &zh, sizeof(zh), off + sizeof(c)))
			return bad_at(f, err, off, "truncated compressed chunk");
		why = hgt_zchunk_bad(&zh, &ci);
		if (why)
			return bad_at(f, err, off, "corrupt compressed chunk: %s", why);
	} else {
		struct hgt_pchunk ph = { 0 };

		if (c.nr_bytes >= sizeof(ph) && hg_pread_all(f->fd, &ph, sizeof(ph), off + sizeof(c)))
			return bad_at(f, err, off, "truncated packed chunk");
		why = hgt_pchunk_bad(&ph, &ci);
		if (why)
			return bad_at(f, err, off, "corrupt packed chunk: %s", why);
	}
	if (!tally(f, c.cpu))
		return hg_err_env(err, "%s: out of memory", f->path);
	if (!f->cpu[c.cpu].nr_records)
		f->cpu[c.cpu].first_offset = off;
	f->cpu[c.cpu].nr_records += c.nr_records;
	f->nr_records += c.nr_records;
	return add_chunk(f, &ci, err);
cut:
	/* a recorder that died while writing: the file ends before this chunk */
	f->cut_offset = off;
	*next = f->size;
	return 0;
}

/*
 * check_stats - the counters after the final drain (docs/hgtrace-abi.md):
 * produced = written + refused, written = read + overwritten + reader_fault;
 * the chunks hold the records read plus one LOST marker for some of those
 * refused or overwritten, so read <= records <= read + refused + overwritten.
 * Stats are all or nothing: in a complete file, a CPU with records has its
 * own when any has.
 */
static int check_stats(struct hgt_file *f, struct hg_err *err)
{
	uint32_t cpu;
	int any = 0;

	for (cpu = 0; cpu < f->ncpu; cpu++)
		any |= f->cpu[cpu].has_stats;
	if (!any)
		return 0;
	for (cpu = 0; cpu < f->ncpu; cpu++) {
		const struct cpu_tally *t = &f->cpu[cpu];
		const struct hgt_cpu_stats *s = &t->st;
		unsigned long long n = t->nr_records;

		if (!t->has_stats) {
			/* an unfinished file may have stopped in the middle of its trailer */
			if (!t->nr_records || !f->complete)
				continue;
			return bad_at(f, err, t->first_offset, "CPU %u has %llu records but no stats chunk, "
				      "while other CPUs have theirs", cpu, n);
		}
		if (s->produced != s->written + s->refused ||
		    s->written != s->read + s->overwritten + s->reader_fault)
			return bad_at(f, err, t->stats_offset, "the stats of CPU %u do not add up: produced %llu, "
				      "written %llu, refused %llu, overwritten %llu, read %llu, reader_fault %llu",
				      cpu, (unsigned long long)s->produced, (unsigned long long)s->written,
				      (unsigned long long)s->refused, (unsigned long long)s->overwritten,
				      (unsigned long long)s->read, (unsigned long long)s->reader_fault);
		if (n < s->read || n - s->read > s->refused + s->overwritten)
			return bad_at(f, err, t->stats_offset, "the stats of CPU %u do not match its chunks: they "
				      "say %llu records read (and %llu lost), the chunks hold %llu records",
				      cpu, (unsigned long long)s->read,
				      (unsigned long long)(s->refused + s->overwritten), n);
	}
	return 0;
}

static int check_prelude(struct hgt_file *f, uint32_t *meta_bytes, struct hg_err *err)
{
	struct hgt_file_prelude p;

	if (hg_read_prelude(f->fd, f->size, f->path, &p, sizeof(p), HGT_FILE_MAGIC, "an hgtrace recording", err))
		return -1;
	if (p.version == HGT_FILE_VERSION_PACKED_OLD)
		return hg_err_set(err, "%s: offset 8: packed by an hgtrace before 2026-11-22 (format version %u), "
				  "whose coding this program does not read; pack the plain recording again",
				  f->path, p.version);
	if (p.version != HGT_FILE_VERSION && p.version != HGT_FILE_VERSION_PACKED)
		return hg_err_set(err, "%s: offset 8: format version %u; this program reads versions %u and %u",
				  f->path, p.version, HGT_FILE_VERSION, HGT_FILE_VERSION_PACKED);
	if (p.meta_bytes % 8 || p.meta_bytes > HGT_MAX_META_BYTES)
		return hg_err_set(err, "%s: offset 12: corrupt metadata length %u (a multiple of 8, at most 1 MiB)",
				  f->path, p.meta_bytes);
	if (p.meta_bytes > f->size - sizeof(p))
		return hg_err_set(err, "%s: offset 16: truncated in the metadata (%u bytes claimed, %llu there)",
				  f->path, p.meta_bytes, (unsigned long long)(f->size - sizeof(p)));
	f->version = p.version;
	*meta_bytes = p.meta_bytes;
	return 0;
}

static int is_records(uint32_t magic)
{
	return magic == HGT_CHUNK_MAGIC || magic == HGT_ZCHUNK_MAGIC || magic == HGT_PCHUNK_MAGIC;
}

/* link_cpus - each CPU's chunks of records, in file order: its first, and each one's next */
static int link_cpus(struct hgt_file *f, struct hg_err *err)
{
	size_t i;
	uint32_t cpu;

	f->next_same = malloc((f->nchunks + 1) * sizeof(*f->next_same));
	if (!f->next_same)
		return hg_err_env(err, "%s: out of memory for the index of %zu chunks", f->path, f->nchunks);
	for (cpu = 0; cpu < f->ncpu; cpu++)
		f->cpu[cpu].first_chunk = f->nchunks;
	for (i = f->nchunks; i-- > 0;) {
		const struct hgt_chunk_info *ci = &f->chunks[i];

		f->next_same[i] = f->nchunks;
		if (!is_records(ci->magic) || ci->cpu >= f->ncpu)
			continue;
		f->next_same[i] = f->cpu[ci->cpu].first_chunk;
		f->cpu[ci->cpu].first_chunk = i;
	}
	return 0;
}

int hgt_open(struct hgt_file **out, const char *path, unsigned flags, struct hg_err *err)
{
	struct hgt_file *f = calloc(1, sizeof(*f));
	struct stat st;
	uint32_t meta_bytes = 0;
	uint64_t off, next = 0;
	char *raw = NULL;
	int trailer = 0;

	*out = NULL;
	if (!f || !(f->path = strdup(path))) {
		free(f);
		return hg_err_env(err, "%s: out of memory", path);
	}
	hgt_decoder_init(&f->dec, -1, f->path);
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0) {
		hg_err_set(err, "%s: cannot open it: %s", path, strerror(errno));
		goto fail;
	}
	f->dec.fd = f->fd;
	if (fstat(f->fd, &st) || !S_ISREG(st.st_mode)) {
		hg_err_set(err, "%s: not a regular file", path);
		goto fail;
	}
	f->size = (uint64_t)st.st_size;
	if (check_prelude(f, &meta_bytes, err))
		goto fail;
	raw = malloc((size_t)meta_bytes + 1);
	if (!raw) {
		hg_err_env(err, "%s: out of memory", path);
		goto fail;
	}
	if (hg_pread_all(f->fd, raw, meta_bytes, sizeof(struct hgt_file_prelude))) {
		hg_err_set(err, "%s: offset 16: truncated in the metadata", path);
		goto fail;
	}
	if (parse_meta(f, raw, meta_bytes, err))
		goto fail;
	free(raw);
	raw = NULL;
	f->cpu_limit = f->nr_cpu_ids ? f->nr_cpu_ids : HGT_MAX_CPUS;
	f->allow_cut = !!(flags & HGT_OPEN_ALLOW_INCOMPLETE);
	for (off = sizeof(struct hgt_file_prelude) + meta_bytes; off < f->size; off = next)
		if (walk_chunk(f, off, &trailer, &next, err))
			goto fail;
	if (!f->complete && !(flags & HGT_OPEN_ALLOW_INCOMPLETE)) {
		hg_err_set(err, "%s: offset %llu: the recording did not finish (no END marker): it may be missing "
			   "its last events", path, (unsigned long long)f->size);
		goto fail;
	}
	if (check_stats(f, err) || link_cpus(f, err))
		goto fail;
	hgt_decoder_bounds(&f->dec, f);
	*out = f;
	return 0;
fail:
	free(raw);
	hgt_close(f);
	return -1;
}

void hgt_close(struct hgt_file *f)
{
	if (!f)
		return;
	hgt_decoder_free(&f->dec);
	if (f->fd >= 0)
		close(f->fd);
	free(f->meta);
	free(f->kv);
	free(f->keys);
	free(f->vals);
	free(f->chunks);
	free(f->next_same);
	free(f->cpu);
	free(f->path);
	free(f);
}

const char *hgt_path(const struct hgt_file *f)
{
	return f->path;
}

uint32_t hgt_version(const struct hgt_file *f)
{
	return f->version;
}

const char *hgt_meta(const struct hgt_file *f, const char *key)
{
	size_t i;

	for (i = 0; i < f->nkeys; i++)
		if (!strcmp(f->keys[i], key))
			return f->vals[i];
	return NULL;
}

int hgt_meta_at(const struct hgt_file *f, size_t i, const char **key, const char **value)
{
	if (i >= f->nkeys)
		return 0;
	*key = f->keys[i];
	*value = f->vals[i];
	return 1;
}

const char *hgt_meta_text(const struct hgt_file *f)
{
	return f->meta;
}

uint32_t hgt_nr_cpus(const struct hgt_file *f)
{
	return f->nr_cpu_ids ? f->nr_cpu_ids : f->ncpu;
}

uint32_t hgt_tsc_khz(const struct hgt_file *f)
{
	return f->tsc_khz;
}

int hgt_complete(const struct hgt_file *f)
{
	return f->complete;
}

uint64_t hgt_cut_offset(const struct hgt_file *f)
{
	return f->cut_offset;
}

int hgt_window(const struct hgt_file *f, uint64_t *start, uint64_t *stop)
{
	if (!f->has_window)
		return 0;
	*start = f->win.start_tsc;
	*stop = f->win.stop_tsc;
	return 1;
}

int hgt_records_span(const struct hgt_file *f, uint64_t *first, uint64_t *last)
{
	uint32_t cpu;

	for (cpu = 0; cpu < f->ncpu; cpu++)
		if (f->cpu[cpu].nr_records && !f->cpu[cpu].read_all)
			return 0;
	if (!f->has_span)
		return 0;
	*first = f->span_lo;
	*last = f->span_hi;
	return 1;
}

/* the stamps' clock: the module's and hgtrace-ftrace's (x86-tsc, ftrace's name of it) */
static const char *const tsc_clocks[] = { "tsc", "rdtsc", "x86-tsc" };

int hgt_check_clock(const struct hgt_file *f, const char *name, struct hg_err *err)
{
	const char *clock = hgt_meta(f, "clock");
	size_t i, k;

	if (!clock)
		return 0;
	for (i = 0; i < sizeof(tsc_clocks) / sizeof(tsc_clocks[0]); i++)
		if (!strcmp(clock, tsc_clocks[i]))
			return 0;
	for (k = 0; strcmp(f->keys[k], "clock"); k++)
		;
	return hg_err_set(err, "%s: offset %llu: stamped with clock '%s', not the TSC", name ? name : f->path,
			  (unsigned long long)(sizeof(struct hgt_file_prelude) + (size_t)(f->keys[k] - f->kv)), clock);
}

const struct hgt_cpu_stats *hgt_cpu_stats(const struct hgt_file *f, uint32_t cpu)
{
	return cpu < f->ncpu && f->cpu[cpu].has_stats ? &f->cpu[cpu].st : NULL;
}

uint64_t hgt_cpu_nr_records(const struct hgt_file *f, uint32_t cpu)
{
	return cpu < f->ncpu ? f->cpu[cpu].nr_records : 0;
}

uint64_t hgt_nr_records(const struct hgt_file *f)
{
	return f->nr_records;
}

size_t hgt_nr_chunks(const struct hgt_file *f)
{
	return f->nchunks;
}

const struct hgt_chunk_info *hgt_chunk(const struct hgt_file *f, size_t i)
{
	return i < f->nchunks ? &f->chunks[i] : NULL;
}

int hgt_read_chunk(struct hgt_file *f, size_t i, const char **records, size_t *len, struct hg_err *err)
{
	if (i >= f->nchunks)
		return hg_err_set(err, "%s: no chunk %zu (the file has %zu)", f->path, i, f->nchunks);
	return hgt_decode(&f->dec, &f->chunks[i], records, len, err);
}

struct hgt_cursor *hgt_cursor_open(struct hgt_file *f, uint32_t cpu, struct hg_err *err)
{
	struct hgt_cursor *c = calloc(1, sizeof(*c));
	size_t ncount = cpu == HGT_ALL_CPUS ? f->ncpu + 1 : 1;

	if (!c || !(c->delivered = calloc(ncount, sizeof(uint64_t))) || !(c->lost = calloc(ncount, sizeof(uint64_t))) ||
	    !(c->last = calloc(ncount, sizeof(uint64_t))) || !(c->has_last = calloc(ncount, 1))) {
		hg_err_env(err, "%s: out of memory", f->path);
		hgt_cursor_close(c);
		return NULL;
	}
	c->f = f;
	c->cpu = cpu;
	hgt_decoder_init(&c->dec, f->fd, f->path);
	hgt_decoder_bounds(&c->dec, f);
	c->cur = SIZE_MAX;
	c->lo = UINT64_MAX;
	if (cpu != HGT_ALL_CPUS)
		c->next = cpu < f->ncpu ? f->cpu[cpu].first_chunk : f->nchunks;
	return c;
}

/*
 * check_counts - at the end of the cursor: each CPU's records and LOST
 * markers against its stats. The records are exactly those read; the LOST
 * markers count at most what was refused or overwritten (exactly, but for
 * the module's discard parameter, which refuses without markers).
 */
static int check_counts(struct hgt_cursor *c, struct hg_err *err)
{
	struct hgt_file *f = c->f;
	uint32_t cpu;

	for (cpu = 0; cpu < f->ncpu; cpu++) {
		const struct cpu_tally *t = &f->cpu[cpu];

		uint32_t k = c->cpu == HGT_ALL_CPUS ? cpu : 0;

		if ((c->cpu != HGT_ALL_CPUS && c->cpu != cpu) || !t->has_stats)
			continue;
		if (c->delivered[k] != t->st.read || c->lost[k] > t->st.refused + t->st.overwritten)
			return bad_at(f, err, t->stats_offset, "the records of CPU %u do not match its stats: %llu "
				      "records and %llu events lost in LOST markers, the stats say %llu read and "
				      "%llu lost (refused %llu, overwritten %llu)", cpu,
				      (unsigned long long)c->delivered[k], (unsigned long long)c->lost[k],
				      (unsigned long long)t->st.read,
				      (unsigned long long)(t->st.refused + t->st.overwritten),
				      (unsigned long long)t->st.refused, (unsigned long long)t->st.overwritten);
	}
	return 0;
}

/* read_to_the_end - a cursor's CPUs are read: their stamps join the file's span */
static void read_to_the_end(struct hgt_cursor *c)
{
	struct hgt_file *f = c->f;
	uint32_t cpu;

	if (c->lo <= c->hi) {		/* it handed out records */
		if (!f->has_span || c->lo < f->span_lo)
			f->span_lo = c->lo;
		if (!f->has_span || c->hi > f->span_hi)
			f->span_hi = c->hi;
		f->has_span = 1;
	}
	if (c->cpu != HGT_ALL_CPUS) {	/* one CPU's: not a walk over all of them (4096 cursors) */
		if (c->cpu < f->ncpu)
			f->cpu[c->cpu].read_all = 1;
		return;
	}
	for (cpu = 0; cpu < f->ncpu; cpu++)
		f->cpu[cpu].read_all = 1;
}

/*
 * next_chunk - the cursor's next chunk decoded, its records counted for the check at the end
 * and their stamps for the span (a chunk at a time: what a reader is handed by the end is
 * every record either way); 1, 0 at the end (checked), -1 on a bad file
 */
static int next_chunk(struct hgt_cursor *c, struct hg_err *err)
{
	struct hgt_file *f = c->f;
	const struct hgt_chunk_info *ci;
	uint32_t k;

	while (c->cpu == HGT_ALL_CPUS && c->next < f->nchunks && !is_records(f->chunks[c->next].magic))
		c->next++;
	if (c->next >= f->nchunks) {
		if (!c->checked) {
			c->checked = 1;
			if (check_counts(c, err))
				return -1;
			read_to_the_end(c);
		}
		return 0;
	}
	c->cur = c->next;
	c->next = c->cpu == HGT_ALL_CPUS ? c->cur + 1 : f->next_same[c->cur];
	ci = &f->chunks[c->cur];
	k = c->cpu == HGT_ALL_CPUS ? ci->cpu : 0;
	c->dec.has_prev = c->has_last[k];	/* the CPU's stamps go on from its chunk before */
	c->dec.prev = c->last[k];
	if (hgt_decode(&c->dec, ci, &c->recs, &c->len, err))
		return -1;
	if (ci->nr_records) {
		c->last[k] = c->dec.last;
		c->has_last[k] = 1;
	}
	c->pos = 0;
	c->rec_cpu = ci->cpu;
	if (c->dec.lo < c->lo)
		c->lo = c->dec.lo;
	if (ci->nr_records && c->dec.hi > c->hi)
		c->hi = c->dec.hi;
	c->lost[k] += c->dec.lost;
	c->delivered[k] += ci->nr_records - c->dec.nlost;
	return 1;
}

int hgt_cursor_next(struct hgt_cursor *c, const struct hgt_rec **rec, struct hg_err *err)
{
	const struct hgt_rec *r;

	while (c->pos >= c->len) {
		int rc = next_chunk(c, err);

		if (rc <= 0)
			return rc;
	}
	r = (const struct hgt_rec *)(c->recs + c->pos);
	c->pos += r->len;
	*rec = r;
	return 1;
}

int hgt_cursor_next_chunk(struct hgt_cursor *c, const char **recs, size_t *len, struct hg_err *err)
{
	while (c->pos >= c->len) {
		int rc = next_chunk(c, err);

		if (rc <= 0)
			return rc;
	}
	*recs = c->recs + c->pos;
	*len = c->len - c->pos;
	c->pos = c->len;
	return 1;
}

uint32_t hgt_cursor_cpu(const struct hgt_cursor *c)
{
	return c->rec_cpu;
}

uint64_t hgt_cursor_chunk_offset(const struct hgt_cursor *c)
{
	return c->cur < c->f->nchunks ? c->f->chunks[c->cur].offset : 0;
}

void hgt_cursor_close(struct hgt_cursor *c)
{
	if (!c)
		return;
	hgt_decoder_free(&c->dec);
	free(c->delivered);
	free(c->lost);
	free(c->last);
	free(c->has_last);
	free(c);
}

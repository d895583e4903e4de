/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hg_hgt.h - the one reader of .hgt recordings (docs/hgtrace-file.md).
 *
 * hgt_open() reads the prelude and the metadata and walks every chunk header
 * once (seeking over payloads), so that the whole file is checked for shape
 * before any record is handed out: every size against what is there and
 * against the format's limits, every CPU against the recording's nr_cpu_ids,
 * the trailer (one time chunk, at most one stats chunk per CPU, END last and
 * nothing after it). What it finds wrong is an error naming the file, the
 * offset and the problem. A cursor then decodes one CPU's chunks in file
 * order (plain, deflated or packed), checking each record's length against
 * its type's payload, and decompression against the chunk's declared size.
 *
 * Memory: the chunk index (24 bytes a chunk, a chunk holding up to 64K
 * records) and one decoded chunk per open cursor.
 */
#ifndef HG_HGT_H
#define HG_HGT_H

#include <stddef.h>
#include <stdint.h>
#include "hg_err.h"
#include "hgtrace.h"		/* kmod/uapi: struct hgt_rec, hgt_chunk, hgt_cpu_stats */
#include "hg_hgt_format.h"	/* the magics, struct hgt_file_window */

/* the format's limits: anything beyond is a corrupt file, never an allocation */
#define HGT_MAX_META_BYTES	(1u << 20)
#define HGT_MAX_CHUNK_BYTES	(64u << 20)	/* a chunk's payload, compressed or not */
#define HGT_MAX_RAW_BYTES	(64u << 20)	/* a chunk's records once inflated or unpacked */
#define HGT_MAX_CPUS		8192		/* x86_64's NR_CPUS ceiling */
#define HGT_MAX_TSC		INT64_MAX	/* a record's or the window's stamp: readers hold it as int64_t */

/*
 * Where a record's stamp may lie: inside the recording's window, and not before the record
 * before it on its CPU, each give or take this slack. The recorders stamp the window just
 * after their probes start and just before they stop (17 ms apart at most, seen in the
 * emulated guests), and an NMI inside a probe commits its record before the probe's earlier
 * one (microseconds): a second is far beyond both, and far below what a damaged stamp is
 * off by. Without tsc_khz in the metadata the slack is a second at HGT_SLACK_TSC_HZ, faster
 * than any TSC, so that no real recording is refused for want of its rate.
 */
#define HGT_STAMP_SLACK_S	1.0
#define HGT_SLACK_TSC_HZ	1e10

#define HGT_OPEN_ALLOW_INCOMPLETE 1	/* no END marker: read what is there (hgtrace dump), up to a
					 * last chunk cut short */

struct hgt_file;
struct hgt_cursor;

struct hgt_chunk_info {
	uint64_t offset;	/* of the chunk header */
	uint32_t magic, cpu, nr_bytes, nr_records;
};

int hgt_open(struct hgt_file **out, const char *path, unsigned flags, struct hg_err *err);
void hgt_close(struct hgt_file *f);

const char *hgt_path(const struct hgt_file *f);
uint32_t hgt_version(const struct hgt_file *f);
/* hgt_meta - the value of "key: value" in the metadata, NULL if absent */
const char *hgt_meta(const struct hgt_file *f, const char *key);
/* hgt_meta_text - the whole metadata text */
const char *hgt_meta_text(const struct hgt_file *f);
/* hgt_nr_cpus - nr_cpu_ids from the metadata, else 1 + the highest CPU of any chunk */
uint32_t hgt_nr_cpus(const struct hgt_file *f);
int hgt_complete(const struct hgt_file *f);		/* an END marker was found */
/* hgt_window - the recording window (time chunk): 1 and the stamps, or 0 if none */
int hgt_window(const struct hgt_file *f, uint64_t *start, uint64_t *stop);
/* hgt_cpu_stats - the stats chunk of @cpu, NULL if none */
const struct hgt_cpu_stats *hgt_cpu_stats(const struct hgt_file *f, uint32_t cpu);
uint64_t hgt_nr_records(const struct hgt_file *f);	/* over every record chunk */
size_t hgt_nr_chunks(const struct hgt_file *f);		/* every chunk, trailer included */
const struct hgt_chunk_info *hgt_chunk(const struct hgt_file *f, size_t i);

/*
 * hgt_read_chunk - the records of chunk @i (a records chunk of any coding),
 * decoded and checked; *records stays valid until the next call on @f.
 */
int hgt_read_chunk(struct hgt_file *f, size_t i, const char **records, size_t *len, struct hg_err *err);

/* hgt_cursor_open - the records of @cpu in file order; its own file handle and buffers */
struct hgt_cursor *hgt_cursor_open(struct hgt_file *f, uint32_t cpu, struct hg_err *err);
/*
 * hgt_cursor_next - 1 and *rec (valid until the next call: rec->len bytes,
 * at least the payload its type needs), 0 at the end, -1 on a bad file
 */
int hgt_cursor_next(struct hgt_cursor *c, const struct hgt_rec **rec, struct hg_err *err);
/*
 * hgt_cursor_next_chunk - the records hgt_cursor_next() would hand out up to the end of the
 * current chunk (the next chunk's when it is used up), at once: 1 with *len bytes of whole
 * records at *recs (valid until the next call), 0 at the end, -1 on a bad file. A reader
 * that walks them itself spares a call a record.
 */
int hgt_cursor_next_chunk(struct hgt_cursor *c, const char **recs, size_t *len, struct hg_err *err);
uint64_t hgt_cursor_chunk_offset(const struct hgt_cursor *c);	/* of the current chunk, for messages */
void hgt_cursor_close(struct hgt_cursor *c);

/* hgt_type_min_len - the least len a record of @type may have (16 for unknown types) */
unsigned hgt_type_min_len(unsigned type);

/* Added by the library's implementation (not in the first contract): */

/* hgt_cursor_open(f, HGT_ALL_CPUS, ...): every CPU's records, in file order */
#define HGT_ALL_CPUS		UINT32_MAX
/* hgt_cursor_cpu - the CPU of the record hgt_cursor_next() returned last */
uint32_t hgt_cursor_cpu(const struct hgt_cursor *c);
/* hgt_tsc_khz - metadata tsc_khz (checked: 1..2^32-1), 0 if absent */
uint32_t hgt_tsc_khz(const struct hgt_file *f);
/* hgt_meta_at - the @i-th metadata line, in file order: 1 and key, value; 0 past the last */
int hgt_meta_at(const struct hgt_file *f, size_t i, const char **key, const char **value);
/* hgt_cpu_nr_records - what the chunk headers of @cpu say they hold (LOST markers included) */
uint64_t hgt_cpu_nr_records(const struct hgt_file *f, uint32_t cpu);
/*
 * hgt_cut_offset - with HGT_OPEN_ALLOW_INCOMPLETE, where a last chunk cut
 * short starts (a recorder that died while writing it; the file is read up
 * to there and is not complete), else 0
 */
uint64_t hgt_cut_offset(const struct hgt_file *f);
/* hgt_type_name - "switch", "irq_entry"...; "unknown" for a type this ABI does not have */
const char *hgt_type_name(unsigned type);
/*
 * hgt_vec_name - a vector record's kind (enum hgt_vec) as the kernel's
 * irq_vectors tracepoints name it without _entry/_exit: "local_timer"...;
 * NULL for a kind this ABI does not have
 */
const char *hgt_vec_name(unsigned vec);
/* hgt_softirq_name - a softirq vector as include/linux/interrupt.h names it: "HI"... "RCU"; NULL beyond */
const char *hgt_softirq_name(unsigned vec);

/*
 * hgt_check_clock - the records are stamped with the TSC: 0 when the
 * metadata names no clock (older recorders, hgtrace-import) or the TSC
 * ("tsc", "rdtsc", "x86-tsc"); else -1 and @err ("NAME: offset N: stamped
 * with clock 'jiffies', not the TSC", the offset of the metadata line,
 * bad input). @name names the file in the message, NULL for its path.
 * The file is readable either way: the merger refuses it (nothing can be
 * matched with hourglass's TSC stamps), hgtrace dump prints it and then
 * says so (docs/hgtrace-file.md, "What a reader checks").
 */
int hgt_check_clock(const struct hgt_file *f, const char *name, struct hg_err *err);
/*
 * hgt_check - what makes a readable recording unfit to be the ground truth, beyond its
 * records (which a cursor checks as it reads them): the clock (hgt_check_clock), and the
 * trailer of a finished recording of hgtrace record or hgtrace-ftrace (they say their
 * `mode`, and end every recording with its time chunk and the stats of every CPU with
 * records; imported and generated files need neither). Every problem, at most @max, goes
 * into @errs ("NAME: offset N: ...", bad input), @name naming the file (NULL: its path);
 * returns how many were found. The merger refuses the file on the first; hgtrace dump and
 * stat print what they can read, then each (docs/hgtrace-file.md, "What a reader checks").
 */
int hgt_check(const struct hgt_file *f, const char *name, struct hg_err *errs, int max);
#define HGT_CHECK_MAX		4	/* more than hgt_check() can find */

/*
 * hgt_records_span - the least and the greatest stamp of the records (LOST
 * markers included) once cursors have read every CPU that has records to
 * its end (one of HGT_ALL_CPUS, or one of each CPU): 1 and the stamps, else
 * 0 (not yet read, or no records). Free while reading: with hgt_window(),
 * what tells a window that its records contradict (docs/hgtrace-file.md,
 * "Rules for readers": records lie in the window but for the moments
 * between the module's start and stop and the recorder's stamps).
 */
int hgt_records_span(const struct hgt_file *f, uint64_t *first, uint64_t *last);

#endif

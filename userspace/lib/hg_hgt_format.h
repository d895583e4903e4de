/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hg_hgt_format.h - the .hgt file on disk: what hgtrace record, hgtrace pack
 * and hgtrace-import write and hg_hgt.h reads. Layout and rules:
 * docs/hgtrace-file.md. The records themselves are kmod/uapi/hgtrace.h's.
 */
#ifndef HG_HGT_FORMAT_H
#define HG_HGT_FORMAT_H

#include <stdint.h>
#include "hgtrace.h"		/* kmod/uapi: HGT_CHUNK_MAGIC, struct hgt_chunk */

#define HGT_FILE_MAGIC		"HGTRACE\n"
#define HGT_FILE_VERSION	1
/* Version 2 (2026-11-21) packed with a coding that version 3 replaced; it is
 * refused by name (HGT_FILE_VERSION_PACKED_OLD), never misread. */
#define HGT_FILE_VERSION_PACKED	3
#define HGT_FILE_VERSION_PACKED_OLD	2

#define HGT_STATS_MAGIC		0x74617473u	/* "stat": one per CPU, payload struct hgt_cpu_stats */
#define HGT_TIME_MAGIC		0x656d6974u	/* "time": struct hgt_file_window, once */
#define HGT_ZCHUNK_MAGIC	0x6b68637au	/* "zchk": a records chunk compressed with zlib */
#define HGT_PCHUNK_MAGIC	0x6b686370u	/* "pchk": a records chunk packed as columns */
#define HGT_END_MAGIC		0x21646e65u	/* "end!": the recording finished cleanly */

/* The fixed prelude: magic, version, length of the text metadata that follows. */
struct hgt_file_prelude {
	char magic[8];
	uint32_t version;
	uint32_t meta_bytes;	/* "key: value\n" lines, NUL padded to a multiple of 8 */
};

/*
 * A compressed chunk: the chunk header (nr_bytes counts what follows it, padded
 * to 8), then this, then the zlib stream of the records.
 */
struct hgt_zchunk {
	uint32_t raw_bytes;	/* records when inflated */
	uint32_t z_bytes;	/* zlib stream that follows */
};

/*
 * A packed chunk (file version 3, `hgtrace pack`, `record -z`): the records
 * of one CPU turned into columns, each deflated on its own. The chunk
 * header's nr_records says how many (n); struct hgt_pchunk follows it, then
 * the HGT_PACK_SEGS zlib streams back to back, then zero padding to 8.
 * Segments, in order (docs/hgtrace-file.md):
 *   0 len[n], each XOR the previous length of its type (so mostly 0),
 *   1 type[n], 2 flags[n], 3 aux[n]               one byte a record
 *   4-7 the TSC delta from the previous record (the first from base_tsc),
 *     zigzag coded: its low 32 bits, byte 0 of every record, then byte 1...
 *   8 varints: the deltas' high 32 bits
 *   9 varints: each arg as a zigzag delta from the previous arg of its type,
 *     or for an exit (and a wakeup) from the previous arg of its entry (waking):
 *     an irq's exit names the irq its entry named
 *   10 varints: the payload's 32-bit words, a switch's prev_pid as a zigzag
 *     delta from the previous switch's next pid
 * Neighbouring values look alike within a column, and each column gets its
 * own deflate tables: about a quarter of trace-cmd's compressed trace.dat
 * (recorder-figures.md).
 */
/* records per packed chunk: deflate's tables amortised over more records
 * (65536 against 16384 saves 2%), at most 4 MB a CPU while packing */
#define HGT_PACK_BLOCK		65536
#define HGT_PACK_SEGS		11

struct hgt_pchunk {
	uint64_t base_tsc;
	uint32_t raw_bytes;			/* records when unpacked */
	uint32_t nr_segs;			/* HGT_PACK_SEGS */
	uint32_t seg_bytes[HGT_PACK_SEGS];	/* each segment inflated */
	uint32_t z_bytes[HGT_PACK_SEGS];	/* each zlib stream */
};							/* 104 bytes */

/*
 * The TSC just after every probe was attached and just before the first one
 * was detached: every event between the two was either recorded or counted
 * as lost. Events outside may be partial (probes attach one by one).
 */
struct hgt_file_window {
	uint64_t start_tsc;
	uint64_t stop_tsc;
};

#endif

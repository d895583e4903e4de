/* SPDX-License-Identifier: GPL-2.0 */
/* dump.h - hgtrace dump's parts: .hgt as JSON lines (dump_json.c), hourglass traces (dump_hgl.c);
 * hgtrace stat of a file (dump_stat.c) */
#ifndef DUMP_H
#include <stdint.h>

#define DUMP_H

#include "hg_hgt.h"
#include "hg_jsonw.h"

struct dump_opts {
	int meta, stats, json, raw;
	int time;		/* -t: stamps as seconds from time_base at time_hz */
	double time_hz;
	uint64_t time_base;
};

/* dump_json_header - the first line: the file's facts */
void dump_json_header(struct jsonw *w, const struct hgt_file *f);
/* dump_json_record - one record a line; with @raw its bytes in hex too */
void dump_json_record(struct jsonw *w, uint32_t cpu, const struct hgt_rec *r, int raw);
/*
 * dump_say_problems - once @f's records are read (@read_err: the reading stopped at a bad
 * one, else NULL), one line on stderr for each reason a merger would refuse it: the bad
 * record, a recording that did not finish, the library's other checks (hgt_check). -1 when
 * there was any (exit 3), else 0. dump's and stat's one way of saying them.
 */
int dump_say_problems(const struct hgt_file *f, const struct hg_err *read_err);
/* dump_is_hgl - @path starts with hourglass's magic (an hourglass trace, not a recording) */
int dump_is_hgl(const char *path);
/* dump_hgl - an hourglass trace, as text or JSON lines; returns the exit status */
int dump_hgl(const char *path, const struct dump_opts *o);

#endif

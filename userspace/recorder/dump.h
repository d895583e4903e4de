/* SPDX-License-Identifier: GPL-2.0 */
/* dump.h - hgtrace dump's parts: .hgt as JSON lines (dump_json.c), hourglass traces (dump_hgl.c) */
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
/* dump_hgl - an hourglass trace, as text or JSON lines; returns the exit status */
int dump_hgl(const char *path, const struct dump_opts *o);

#endif

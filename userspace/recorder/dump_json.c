// SPDX-License-Identifier: GPL-2.0
/*
 * dump_json.c - hgtrace dump --json of a .hgt file: one JSON object a line.
 *
 * The first line holds the file's facts: {"format": "hgtrace", "version",
 * "meta" (the metadata as an object), "window" ([start, stop] or null),
 * "stats" ({"CPU": {produced, ...}}), "complete", "nr_cpus", "nr_records",
 * "tsc_khz"}. Then one line per record, in file order: {"cpu", "tsc",
 * "type", "kind", "len", "flags", "aux", "arg", "fields": {the type's
 * fields, named as the text dump names them}} and, with --raw, "raw": the
 * record's bytes in hex. This is how programs in other languages read our
 * files (tests/helpers/recordings.py): one reader, this one.
 */
#include <stdio.h>
#include <string.h>
#include "dump.h"

void dump_json_header(struct jsonw *w, const struct hgt_file *f)
{
	const char *key, *val;
	uint64_t start, stop;
	uint32_t cpu, ncpu = hgt_nr_cpus(f);
	size_t i;
	char name[16];

	jw_obj(w, NULL);
	jw_str(w, "format", "hgtrace");
	jw_uint(w, "version", hgt_version(f));
	jw_str(w, "path", hgt_path(f));
	jw_obj(w, "meta");
	for (i = 0; hgt_meta_at(f, i, &key, &val); i++)
		jw_str(w, key, val);
	jw_end_obj(w);
	if (hgt_window(f, &start, &stop)) {
		jw_arr(w, "window");
		jw_uint(w, NULL, start);
		jw_uint(w, NULL, stop);
		jw_end_arr(w);
	} else {
		jw_null(w, "window");
	}
	jw_obj(w, "stats");
	for (cpu = 0; cpu < ncpu; cpu++) {
		const struct hgt_cpu_stats *s = hgt_cpu_stats(f, cpu);

		if (!s)
			continue;
		snprintf(name, sizeof(name), "%u", cpu);
		jw_obj(w, name);
		jw_uint(w, "produced", s->produced);
		jw_uint(w, "written", s->written);
		jw_uint(w, "refused", s->refused);
		jw_uint(w, "overwritten", s->overwritten);
		jw_uint(w, "read", s->read);
		jw_uint(w, "reader_fault", s->reader_fault);
		jw_end_obj(w);
	}
	jw_end_obj(w);
	jw_bool(w, "complete", hgt_complete(f));
	jw_uint(w, "nr_cpus", ncpu);
	jw_uint(w, "nr_records", hgt_nr_records(f));
	if (hgt_tsc_khz(f))
		jw_uint(w, "tsc_khz", hgt_tsc_khz(f));
	else
		jw_null(w, "tsc_khz");
	jw_end_obj(w);
}

/* fields - the type's own values (the reader has checked each record holds its payload) */
static void fields(struct jsonw *w, const struct hgt_rec *r)
{
	const void *p = r + 1;

	switch (r->type) {
	case HGT_REC_SWITCH: {
		const struct hgt_switch *s = p;

		jw_uint(w, "prev_pid", s->prev_pid);
		jw_uint(w, "prev_state", s->prev_state);
		jw_int(w, "prev_prio", s->prev_prio);
		jw_uint(w, "next_pid", r->arg);
		jw_int(w, "next_prio", s->next_prio);
		jw_uint(w, "next_policy", r->aux);
		jw_uint(w, "preempt", r->flags & HGT_SWITCH_PREEMPT ? 1 : 0);
		break;
	}
	case HGT_REC_WAKING: case HGT_REC_WAKEUP: case HGT_REC_WAKEUP_NEW: {
		const struct hgt_wake *k = p;

		jw_uint(w, "pid", r->arg);
		jw_uint(w, "target_cpu", k->target_cpu);
		jw_int(w, "prio", k->prio);
		break;
	}
	case HGT_REC_MIGRATE: {
		const struct hgt_migrate *m = p;

		jw_uint(w, "pid", r->arg);
		jw_uint(w, "orig_cpu", m->orig_cpu);
		jw_uint(w, "dest_cpu", m->dest_cpu);
		break;
	}
	case HGT_REC_EXIT:
		jw_uint(w, "pid", r->arg);
		break;
	case HGT_REC_IRQ_ENTRY:
		jw_uint(w, "irq", r->arg);
		break;
	case HGT_REC_IRQ_EXIT:
		jw_uint(w, "irq", r->arg);
		jw_uint(w, "ret", r->flags);
		break;
	case HGT_REC_SOFTIRQ_ENTRY: case HGT_REC_SOFTIRQ_EXIT:
		jw_uint(w, "vec", r->arg);
		break;
	case HGT_REC_VEC_ENTRY: case HGT_REC_VEC_EXIT:
		jw_uint(w, "vector", r->arg);
		jw_str(w, "vec_kind", r->flags < HGT_VEC_MAX ? hgt_vec_name(r->flags) : "unknown");
		break;
	case HGT_REC_NMI: {
		const struct hgt_nmi *n = p;

		jw_uint(w, "handler", r->arg);
		jw_uint(w, "delta_ns", n->delta_ns);
		jw_uint(w, "handled", n->handled);
		break;
	}
	case HGT_REC_HRTIMER_ENTRY: {
		const struct hgt_hrtimer *t = p;

		jw_uint(w, "timer", r->arg);
		jw_uint(w, "func", t->func_id);
		break;
	}
	case HGT_REC_HRTIMER_EXIT:
		jw_uint(w, "timer", r->arg);
		break;
	case HGT_REC_SYS_ENTER:
		jw_uint(w, "nr", r->arg);
		break;
	case HGT_REC_SYS_EXIT:
		jw_int(w, "ret", (int32_t)r->arg);
		break;
	case HGT_REC_COMM: {
		const struct hgt_comm *c = p;

		jw_uint(w, "pid", r->arg);
		jw_uint(w, "tgid", c->tgid);
		jw_strn(w, "comm", c->comm, strnlen(c->comm, sizeof(c->comm)));
		break;
	}
	case HGT_REC_NAME: {
		const struct hgt_name *n = p;

		jw_uint(w, "id", r->arg);
		jw_str(w, "name_kind", r->flags == HGT_NAME_IRQ ? "irq" : "func");
		jw_strn(w, "name", n->name, strnlen(n->name, sizeof(n->name)));
		break;
	}
	case HGT_REC_LOST: {
		const struct hgt_lost *l = p;

		jw_uint(w, "count", l->count);
		jw_str(w, "by", r->aux ? "overwrite" : "refused");
		break;
	}
	default:
		break;
	}
}

void dump_json_record(struct jsonw *w, uint32_t cpu, const struct hgt_rec *r, int raw)
{
	jw_obj(w, NULL);
	jw_uint(w, "cpu", cpu);
	jw_uint(w, "tsc", r->tsc);
	jw_uint(w, "type", r->type);
	jw_str(w, "kind", hgt_type_name(r->type));
	jw_uint(w, "len", r->len);
	jw_uint(w, "flags", r->flags);
	jw_uint(w, "aux", r->aux);
	jw_uint(w, "arg", r->arg);
	jw_obj(w, "fields");
	fields(w, r);
	jw_end_obj(w);
	if (raw) {
		static const char hex[] = "0123456789abcdef";
		const unsigned char *b = (const unsigned char *)r;
		char s[2 * 256 + 1];
		unsigned i;

		for (i = 0; i < r->len; i++) {
			s[2 * i] = hex[b[i] >> 4];
			s[2 * i + 1] = hex[b[i] & 15];
		}
		s[2 * i] = 0;
		jw_str(w, "raw", s);
	}
	jw_end_obj(w);
}

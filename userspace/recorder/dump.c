// SPDX-License-Identifier: GPL-2.0
/*
 * dump.c - hgtrace dump: a recording as text, one record per line.
 *
 *   CPU TSC TYPE key=value ...
 *
 * Records are printed in file order: per CPU in the order the ring buffer
 * committed them, which can differ from TSC order by a nested event (an irq
 * that interrupted a probe between its rdtsc and its write). The header
 * metadata is printed as '# key: value' lines, the final counters as
 * '# stats' lines. A truncated or corrupt file is an error (exit 3) after
 * printing what could be read.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hgt_dev.h"
#include "hgt_file.h"
#include "hgtrace_cmds.h"

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

static const char *const vec_names[HGT_VEC_MAX] = {
	"local_timer", "reschedule", "call_function", "call_function_single", "irq_work",
	"x86_platform_ipi", "spurious_apic", "error_apic", "thermal_apic",
};

const char *hgt_type_name(unsigned int type)
{
	return type < HGT_REC_MAX && type_names[type] ? type_names[type] : "unknown";
}

/* print_payload - the type-specific key=value part; -1 if the record is too short */
static int print_payload(const struct hgt_rec *r)
{
	const void *p = r + 1;
	size_t plen = r->len - sizeof(*r);

#define NEED(T) do { if (plen < sizeof(T)) return -1; } while (0)
	switch (r->type) {
	case HGT_REC_SWITCH: {
		const struct hgt_switch *s = p;

		NEED(*s);
		printf(" prev_pid=%u prev_prio=%d prev_state=%u next_pid=%u next_prio=%d "
		       "next_policy=%u preempt=%u", s->prev_pid, s->prev_prio, s->prev_state,
		       r->arg, s->next_prio, r->aux, r->flags & HGT_SWITCH_PREEMPT ? 1 : 0);
		break;
	}
	case HGT_REC_WAKING: case HGT_REC_WAKEUP: case HGT_REC_WAKEUP_NEW: {
		const struct hgt_wake *w = p;

		NEED(*w);
		printf(" pid=%u target_cpu=%u prio=%d", r->arg, w->target_cpu, w->prio);
		break;
	}
	case HGT_REC_MIGRATE: {
		const struct hgt_migrate *m = p;

		NEED(*m);
		printf(" pid=%u orig_cpu=%u dest_cpu=%u", r->arg, m->orig_cpu, m->dest_cpu);
		break;
	}
	case HGT_REC_EXIT:
		printf(" pid=%u", r->arg);
		break;
	case HGT_REC_IRQ_ENTRY:
		printf(" irq=%u", r->arg);
		break;
	case HGT_REC_IRQ_EXIT:
		printf(" irq=%u ret=%u", r->arg, r->flags);
		break;
	case HGT_REC_SOFTIRQ_ENTRY: case HGT_REC_SOFTIRQ_EXIT:
		printf(" vec=%u", r->arg);
		break;
	case HGT_REC_VEC_ENTRY: case HGT_REC_VEC_EXIT:
		printf(" vector=%u kind=%s", r->arg,
		       r->flags < HGT_VEC_MAX ? vec_names[r->flags] : "unknown");
		break;
	case HGT_REC_NMI: {
		const struct hgt_nmi *n = p;

		NEED(*n);
		printf(" handler=%08x delta_ns=%u handled=%u", r->arg, n->delta_ns, n->handled);
		break;
	}
	case HGT_REC_HRTIMER_ENTRY: {
		const struct hgt_hrtimer *t = p;

		NEED(*t);
		printf(" timer=%08x func=%08x", r->arg, t->func_id);
		break;
	}
	case HGT_REC_HRTIMER_EXIT:
		printf(" timer=%08x", r->arg);
		break;
	case HGT_REC_SYS_ENTER:
		printf(" nr=%u", r->arg);
		break;
	case HGT_REC_SYS_EXIT:
		printf(" ret=%d", (int32_t)r->arg);
		break;
	case HGT_REC_COMM: {
		const struct hgt_comm *c = p;

		NEED(*c);
		printf(" pid=%u tgid=%u comm=%.16s", r->arg, c->tgid, c->comm);
		break;
	}
	case HGT_REC_NAME: {
		const struct hgt_name *n = p;

		NEED(*n);
		printf(" kind=%s id=%u name=%.32s", r->flags == HGT_NAME_IRQ ? "irq" : "func",
		       r->arg, n->name);
		break;
	}
	case HGT_REC_LOST: {
		const struct hgt_lost *l = p;

		NEED(*l);
		printf(" count=%llu by=%s", (unsigned long long)l->count,
		       r->aux ? "overwrite" : "refused");
		break;
	}
	default:
		printf(" len=%u", r->len);
		break;
	}
#undef NEED
	return 0;
}

static void dump_usage(FILE *f)
{
	fprintf(f, "usage: hgtrace dump [-m] [-s] FILE\n\n"
		"Print a recording, one record per line: CPU TSC TYPE key=value...\n"
		"  -m, --meta    print the header metadata as '# key: value' lines\n"
		"  -s, --stats   print the module's final counters as '# stats' lines\n"
		"Exit status: 0 complete file, 3 truncated, corrupt or unfinished recording.\n");
}

int hgt_cmd_dump(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "meta", no_argument, 0, 'm' }, { "stats", no_argument, 0, 's' },
		{ "help", no_argument, 0, 'h' }, { 0 }
	};
	struct hgt_reader r;
	struct hgt_chunk c;
	const char *data;
	int opt, meta = 0, stats = 0, ret;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "msh", lo, NULL)) != -1) {
		switch (opt) {
		case 'm': meta = 1; break;
		case 's': stats = 1; break;
		case 'h': dump_usage(stdout); return HGT_EXIT_OK;
		default: dump_usage(stderr); return HGT_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		dump_usage(stderr);
		return HGT_EXIT_USAGE;
	}
	if (hgt_reader_open(&r, argv[optind]))
		return HGT_EXIT_DATA;
	if (meta) {
		char *line, *save = NULL;

		for (line = strtok_r(r.meta, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			printf("# %s\n", line);
	}
	while ((ret = hgt_reader_next(&r, &c, &data)) == 1) {
		uint32_t off = 0;

		if (c.magic == HGT_TIME_MAGIC) {
			const struct hgt_file_window *win = (const void *)data;

			if (c.nr_bytes < sizeof(*win)) {
				fprintf(stderr, "hgtrace: %s: short time chunk\n", r.path);
				ret = -1;
				break;
			}
			if (stats)
				printf("# window start_tsc=%llu stop_tsc=%llu\n",
				       (unsigned long long)win->start_tsc, (unsigned long long)win->stop_tsc);
			continue;
		}
		if (c.magic == HGT_STATS_MAGIC) {
			const struct hgt_cpu_stats *s = (const void *)data;

			if (c.nr_bytes < sizeof(*s)) {
				fprintf(stderr, "hgtrace: %s: short stats chunk\n", r.path);
				ret = -1;
				break;
			}
			if (stats)
				printf("# stats cpu=%u produced=%llu written=%llu refused=%llu "
				       "overwritten=%llu read=%llu reader_fault=%llu\n", c.cpu,
				       (unsigned long long)s->produced, (unsigned long long)s->written,
				       (unsigned long long)s->refused, (unsigned long long)s->overwritten,
				       (unsigned long long)s->read, (unsigned long long)s->reader_fault);
			continue;
		}
		while (off < c.nr_bytes) {
			const struct hgt_rec *rec = (const void *)(data + off);

			if (c.nr_bytes - off < sizeof(*rec) || rec->len < sizeof(*rec) ||
			    rec->len % 8 || rec->len > c.nr_bytes - off) {
				fprintf(stderr, "hgtrace: %s: corrupt record in chunk ending at offset %llu\n",
					r.path, (unsigned long long)r.offset);
				ret = -1;
				break;
			}
			printf("%u %llu %s", c.cpu, (unsigned long long)rec->tsc, hgt_type_name(rec->type));
			if (print_payload(rec)) {
				printf("\n");
				fprintf(stderr, "hgtrace: %s: record too short for its type at offset %llu\n",
					r.path, (unsigned long long)r.offset);
				ret = -1;
				break;
			}
			printf("\n");
			off += rec->len;
		}
		if (ret < 0)
			break;
	}
	if (ret == 0 && !r.complete) {
		fprintf(stderr, "hgtrace: %s: the recording did not finish (no END marker): "
			"it may be missing its last events\n", r.path);
		ret = -1;
	}
	hgt_reader_close(&r);
	return ret < 0 ? HGT_EXIT_DATA : HGT_EXIT_OK;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * dump.c - hgtrace dump: a recording as text, one record per line.
 *
 *   CPU TSC TYPE key=value ...
 *
 * or as JSON lines (--json, dump_json.c); an hourglass trace, told by its
 * magic, is dump_hgl.c's.
 *
 * Records are printed in file order: per CPU in the order the ring buffer
 * committed them, which can differ from TSC order by a nested event (an irq
 * that interrupted a probe between its rdtsc and its write). The header
 * metadata is printed as '# key: value' lines, the final counters as
 * '# stats' lines. A file whose shape is wrong is refused before anything is
 * printed. A file that can be read but is not whole or not what it claims
 * (a record found wrong while reading, a stamp its window or its neighbours
 * contradict, a recording that did not finish, stamps of another clock than
 * the TSC, a finished recording without its trailer: the library's checks,
 * the cursor's and hgt_check()'s, that the merger applies too) is printed as
 * far as it can be read, then
 * each problem is one line on stderr naming the file, the offset and what is
 * wrong, and the status is 3, as the merger's refusal of the same file
 * (docs/exit-status.md).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include "dump.h"
#include "hg_hgl.h"
#include "hgt_dev.h"
#include "hgtrace_cmds.h"

/* print_payload - the type-specific key=value part (the reader has checked the length) */
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
		       r->flags < HGT_VEC_MAX ? hgt_vec_name(r->flags) : "unknown");
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
	fprintf(f, "usage: hgtrace dump [-m] [-s] [-t [--hz HZ] | -j [-r]] FILE\n\n"
		"Print a recording (.hgt) or an hourglass trace (.hgl, told by its magic), one record\n"
		"per line: CPU TSC TYPE key=value... (THREAD TYPE key=value... for a trace).\n"
		"  -m, --meta    print the header metadata as '# key: value' lines\n"
		"                (a trace: its info section as '# info {...}')\n"
		"  -s, --stats   print the module's final counters as '# stats' lines\n"
		"                (a trace: its END section as '# end ...')\n"
		"  -j, --json    one JSON object a line: the file's facts first, then each record\n"
		"  -r, --raw     with --json, each record's bytes in hex too\n"
		"  -t, --time    stamps as seconds from the start of the recording (its window), the\n"
		"                clock of hourglass report and of the exported traces, at the kernel's\n"
		"                tsc_khz; --hz HZ converts at another rate (the report's run.tsc_hz,\n"
		"                to match it to the nanosecond)\n"
		"Exit status (docs/exit-status.md): 0 a complete, consistent file; 1 bad usage; 2 the\n"
		"dump cannot be written; 3 a bad file: refused before anything is printed, or read but\n"
		"incomplete or inconsistent (unfinished, cut short, a bad record or a stamp out of\n"
		"place, another clock than the TSC, a trailer lost): what could be read is printed,\n"
		"then one line a problem on stderr.\n");
}

static unsigned long long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (unsigned long long)st.st_size;
}

/* dump_is_hgl - the file starts with hourglass's magic */
int dump_is_hgl(const char *path)
{
	char magic[8];
	int fd = open(path, O_RDONLY | O_CLOEXEC), yes;

	if (fd < 0)
		return 0;
	yes = read(fd, magic, 8) == 8 && !memcmp(magic, HGL_MAGIC, 8);
	close(fd);
	return yes;
}

/* put_u64 - @v in decimal at @p; returns the end */
static char *put_u64(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/*
 * print_head - "CPU TSC TYPE" of one record: the part every line has,
 * formatted by hand (printf's parsing was a fifth of a dump's time)
 */
static void print_head(uint32_t cpu, const struct hgt_rec *r, const struct dump_opts *o)
{
	char line[64], *p = line;
	const char *name = hgt_type_name(r->type);
	size_t n = strlen(name);

	p = put_u64(p, cpu);
	*p++ = ' ';
	if (o->time_hz > 0)
		p += snprintf(p, 24, "%.9f", ((double)r->tsc - (double)o->time_base) / o->time_hz);
	else
		p = put_u64(p, r->tsc);
	*p++ = ' ';
	memcpy(p, name, n);
	fwrite(line, 1, (size_t)(p - line) + n, stdout);
}

int dump_say_problems(const struct hgt_file *f, const struct hg_err *read_err)
{
	struct hg_err unfit[HGT_CHECK_MAX];
	int i, n = hgt_check(f, NULL, unfit, HGT_CHECK_MAX);

	fflush(stdout);		/* what was read comes first */
	if (read_err)
		fprintf(stderr, "hgtrace: %s\n", read_err->msg);
	else if (!hgt_complete(f) && hgt_cut_offset(f))
		fprintf(stderr, "hgtrace: %s: offset %llu: the recording did not finish (no END marker) and its "
			"last chunk is cut short: it may be missing its last events\n", hgt_path(f),
			(unsigned long long)hgt_cut_offset(f));
	else if (!hgt_complete(f))
		fprintf(stderr, "hgtrace: %s: offset %llu: the recording did not finish (no END marker): it may be "
			"missing its last events\n", hgt_path(f), file_size(hgt_path(f)));
	/* readable, but no merger would take it (the library's rules): said too */
	for (i = 0; i < n; i++)
		fprintf(stderr, "hgtrace: %s\n", unfit[i].msg);
	return read_err || !hgt_complete(f) || n ? -1 : 0;
}

/* first_tsc - the first record's stamp (a recording without a window's time base) */
static uint64_t first_tsc(struct hgt_file *f)
{
	struct hg_err err;
	struct hgt_cursor *c = hgt_cursor_open(f, HGT_ALL_CPUS, &err);
	const struct hgt_rec *r;
	uint64_t t = 0;

	if (c && hgt_cursor_next(c, &r, &err) > 0)
		t = r->tsc;
	hgt_cursor_close(c);
	return t;
}

/* print_trailer - the window and the final counters, as '#' lines */
static void print_trailer(const struct hgt_file *f)
{
	uint64_t start, stop;
	uint32_t cpu, ncpu = hgt_nr_cpus(f);

	if (hgt_window(f, &start, &stop))
		printf("# window start_tsc=%llu stop_tsc=%llu\n", (unsigned long long)start,
		       (unsigned long long)stop);
	for (cpu = 0; cpu < ncpu; cpu++) {
		const struct hgt_cpu_stats *s = hgt_cpu_stats(f, cpu);

		if (s)
			printf("# stats cpu=%u produced=%llu written=%llu refused=%llu "
			       "overwritten=%llu read=%llu reader_fault=%llu\n", cpu,
			       (unsigned long long)s->produced, (unsigned long long)s->written,
			       (unsigned long long)s->refused, (unsigned long long)s->overwritten,
			       (unsigned long long)s->read, (unsigned long long)s->reader_fault);
	}
}

int hgt_cmd_dump(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "meta", no_argument, 0, 'm' }, { "stats", no_argument, 0, 's' },
		{ "json", no_argument, 0, 'j' }, { "raw", no_argument, 0, 'r' },
		{ "time", no_argument, 0, 't' }, { "hz", required_argument, 0, 'z' },
		{ "help", no_argument, 0, 'h' }, { 0 }
	};
	struct dump_opts o = { 0 };
	struct hgt_file *f;
	struct hgt_cursor *c;
	const struct hgt_rec *rec;
	struct hg_err err;
	struct jsonw w;
	double hz = 0;
	char *end;
	int opt, ret;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "msjrth", lo, NULL)) != -1) {
		switch (opt) {
		case 'm': o.meta = 1; break;
		case 's': o.stats = 1; break;
		case 'j': o.json = 1; break;
		case 'r': o.raw = 1; break;
		case 't': o.time = 1; break;
		case 'z':
			hz = strtod(optarg, &end);
			if (*end || !(hz >= 1 && hz <= 1e12)) {
				fprintf(stderr, "hgtrace dump: --hz %s: not a TSC rate in Hz\n", optarg);
				return HGT_EXIT_USAGE;
			}
			o.time = 1;
			break;
		case 'h': dump_usage(stdout); return HGT_EXIT_OK;
		default: dump_usage(stderr); return HGT_EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || (o.raw && !o.json) || (o.time && o.json)) {
		dump_usage(stderr);
		return HGT_EXIT_USAGE;
	}
	if (dump_is_hgl(argv[optind]))
		return dump_hgl(argv[optind], &o);
	if (hgt_open(&f, argv[optind], HGT_OPEN_ALLOW_INCOMPLETE, &err)) {
		fprintf(stderr, "hgtrace: %s\n", err.msg);
		return HGT_EXIT_DATA;
	}
	if (o.time) {
		uint64_t start, stop;

		o.time_hz = hz ? hz : hgt_tsc_khz(f) * 1e3;
		if (!(o.time_hz > 0)) {
			fprintf(stderr, "hgtrace dump: %s: no tsc_khz in the metadata: give --hz\n", hgt_path(f));
			hgt_close(f);
			return HGT_EXIT_DATA;
		}
		o.time_base = hgt_window(f, &start, &stop) ? start : first_tsc(f);
	}
	jw_begin(&w, stdout);
	if (o.json) {
		dump_json_header(&w, f);
	} else if (o.meta) {
		char *text = strdup(hgt_meta_text(f)), *line, *save = NULL;

		for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			printf("# %s\n", line);
		free(text);
	}
	c = hgt_cursor_open(f, HGT_ALL_CPUS, &err);
	ret = c ? 0 : -1;
	while (c && (ret = hgt_cursor_next(c, &rec, &err)) > 0) {
		if (o.json) {
			dump_json_record(&w, hgt_cursor_cpu(c), rec, o.raw);
			continue;
		}
		print_head(hgt_cursor_cpu(c), rec, &o);
		print_payload(rec);
		putchar('\n');
	}
	hgt_cursor_close(c);
	if (ret >= 0 && o.stats && !o.json)
		print_trailer(f);
	if (dump_say_problems(f, ret < 0 ? &err : NULL))
		ret = -1;
	hgt_close(f);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "hgtrace: writing the dump failed\n");
		return HGT_EXIT_ENV;
	}
	return ret < 0 ? HGT_EXIT_DATA : HGT_EXIT_OK;
}

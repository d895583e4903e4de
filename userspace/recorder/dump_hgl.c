// SPDX-License-Identifier: GPL-2.0
/*
 * dump_hgl.c - hgtrace dump of hourglass's trace (docs/hourglass-trace.md).
 *
 * Text, one record a line, THREAD TYPE key=value:
 *   0 interval t0=... t1=... cpu=0 flags=0x04 last
 *   1 job release=... completion=... deadline=... cpu=1 flags=0x01 missed
 *   1 wake due=... first=... lateness_ns=-120 cpu=1 timer=HR lat
 * -m prints the info section as one '# info {...}' line, -s the END section
 * as '# end nr_records=N dropped=N'. With --json: a first line {"format":
 * "hourglass trace", "major", "minor", "complete", "dropped", "nr_records",
 * "info": {the info section}}, then {"t0", "t1", "t2", "thread", "type",
 * "kind", "flags", "cpu"} a record.
 */
#include <stdio.h>
#include <sys/stat.h>
#include "dump.h"
#include "hg_hgl.h"
#include "hgt_dev.h"

static const char *const kinds[] = { "unknown", "interval", "job", "wake" };
static const char *const timers[] = { "none", "NATIVE", "HR", "RTC", "TIMERFD", "POSIX" };

static void text_record(const struct hgl_rec *r)
{
	printf("%u %s", r->thread, kinds[r->type]);
	switch (r->type) {
	case HGL_REC_INTERVAL:
		printf(" t0=%llu t1=%llu cpu=%u flags=0x%02x%s%s%s", (unsigned long long)r->t0,
		       (unsigned long long)r->t1, r->cpu, r->flags, r->flags & HGL_IV_YIELD ? " yield" : "",
		       r->flags & HGL_IV_SLEEP ? " sleep" : "", r->flags & HGL_IV_LAST ? " last" : "");
		break;
	case HGL_REC_JOB:
		printf(" release=%llu completion=%llu deadline=%llu cpu=%u flags=0x%02x%s%s",
		       (unsigned long long)r->t0, (unsigned long long)r->t1, (unsigned long long)r->t2, r->cpu,
		       r->flags, r->flags & HGL_JOB_MISSED ? " missed" : "", r->flags & HGL_JOB_CUT ? " cut" : "");
		break;
	default:
		printf(" due=%llu first=%llu lateness_ns=%lld cpu=%u timer=%s%s", (unsigned long long)r->t0,
		       (unsigned long long)r->t1, (long long)r->t2, r->cpu,
		       (r->flags & 15) < sizeof(timers) / sizeof(timers[0]) ? timers[r->flags & 15] : "unknown",
		       r->flags & HGL_WAKE_LAT ? " lat" : "");
	}
	putchar('\n');
}

static void json_record(struct jsonw *w, const struct hgl_rec *r)
{
	jw_obj(w, NULL);
	jw_uint(w, "t0", r->t0);
	jw_uint(w, "t1", r->t1);
	jw_uint(w, "t2", r->t2);
	jw_uint(w, "thread", r->thread);
	jw_uint(w, "type", r->type);
	jw_str(w, "kind", kinds[r->type]);
	jw_uint(w, "flags", r->flags);
	jw_uint(w, "cpu", r->cpu);
	/* the flags by name, as the text says them, so that no reader copies the bits */
	switch (r->type) {
	case HGL_REC_INTERVAL:
		jw_bool(w, "yield", r->flags & HGL_IV_YIELD);
		jw_bool(w, "sleep", r->flags & HGL_IV_SLEEP);
		jw_bool(w, "last", r->flags & HGL_IV_LAST);
		break;
	case HGL_REC_JOB:
		jw_bool(w, "missed", r->flags & HGL_JOB_MISSED);
		jw_bool(w, "cut", r->flags & HGL_JOB_CUT);
		break;
	case HGL_REC_WAKE:
		jw_int(w, "lateness_ns", (int64_t)r->t2);
		jw_str(w, "timer", (r->flags & 15) < sizeof(timers) / sizeof(timers[0]) ? timers[r->flags & 15] :
			   "unknown");
		jw_bool(w, "lat", r->flags & HGL_WAKE_LAT);
		break;
	}
	jw_end_obj(w);
}

int dump_hgl(const char *path, const struct dump_opts *o)
{
	struct hgl_file *f;
	struct hgl_cursor *c;
	const struct hgl_info *in;
	struct hgl_rec r;
	struct hg_err err;
	struct jsonw w;
	unsigned major, minor;
	int rc;

	if (hgl_open(&f, path, HGL_OPEN_ALLOW_INCOMPLETE, &err)) {
		fprintf(stderr, "hgtrace: %s\n", err.msg);
		return HGT_EXIT_DATA;
	}
	in = hgl_info(f);
	hgl_version(f, &major, &minor);
	jw_begin(&w, stdout);
	if (o->json) {
		jw_obj(&w, NULL);
		jw_str(&w, "format", "hourglass trace");
		jw_uint(&w, "major", major);
		jw_uint(&w, "minor", minor);
		jw_str(&w, "path", path);
		jw_bool(&w, "complete", hgl_complete(f));
		jw_uint(&w, "dropped", hgl_dropped(f));
		jw_uint(&w, "nr_records", hgl_nr_records(f));
		jw_raw(&w, "info", in->json, in->json_len);
		jw_end_obj(&w);
	} else {
		printf("# hourglass trace %u.%u\n", major, minor);
		if (o->meta) {
			printf("# info ");
			jw_raw(&w, NULL, in->json, in->json_len);
		}
	}
	c = hgl_cursor_open(f, -1, &err);
	rc = c ? 0 : -1;
	while (c && (rc = hgl_cursor_next(c, &r, &err)) > 0) {
		if (o->json)
			json_record(&w, &r);
		else
			text_record(&r);
	}
	hgl_cursor_close(c);
	fflush(stdout);
	if (rc < 0) {
		fprintf(stderr, "hgtrace: %s\n", err.msg);
	} else {
		if (o->stats && !o->json)
			printf("# end nr_records=%llu dropped=%llu\n", (unsigned long long)hgl_nr_records(f),
			       (unsigned long long)hgl_dropped(f));
		fflush(stdout);
		if (!hgl_complete(f)) {
			struct stat st;

			fprintf(stderr, "hgtrace: %s: offset %llu: no END section: the run or its writer stopped "
				"before finishing\n", path, stat(path, &st) ? 0ull : (unsigned long long)st.st_size);
			rc = -1;
		}
	}
	hgl_close(f);
	return rc < 0 ? HGT_EXIT_DATA : HGT_EXIT_OK;
}

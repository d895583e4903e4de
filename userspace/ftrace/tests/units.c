// SPDX-License-Identifier: GPL-2.0
/*
 * units.c - hgtrace-ftrace's pure parts, without a kernel: `make -C userspace/ftrace check`.
 *
 *   ptrid     SipHash-2-4 against the reference vector of its authors
 *   evmap     events (laid out by real format files) to the module's records
 *   convert   hand-made ring-buffer pages: LOST records where the kernel flags
 *             overwritten events (with and without a count), where the
 *             counters say a full buffer dropped some, and the file's counters
 *   look      when the drainer looks next: -i for a default buffer, longer in
 *             proportion to a bigger one's room, sooner at a fast pace; up to
 *             10 s when the kernel wakes it at --drain-at
 *   ksyms     callbacks named from a kallsyms text: exact, inside a function, in a
 *             module (at the end), text symbols only, lines split across reads
 *
 * Prints one line per check that failed and exits 1 if any did.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <event-parse.h>
#include <kbuffer.h>
#include "hg_hgt.h"
#include "hg_hgt_write.h"
#include "evmap.h"
#include "spool.h"
#include "convert.h"
#include "ptrid.h"
#include "look.h"
#include "ksyms.h"

static int failed, checks;

#define CHECK(cond, ...) do {						\
		checks++;						\
		if (!(cond)) {						\
			failed++;					\
			printf("FAIL %s:%d: ", __FILE__, __LINE__);	\
			printf(__VA_ARGS__);				\
			printf("\n");					\
		}							\
	} while (0)

/* the formats as 6.1 to 6.18 print them (events/header_page, events/.../format) */
static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

#define COMMON \
	"format:\n" \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

static const char fmt_switch[] = "name: sched_switch\nID: 372\n" COMMON
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"prev_pid=%d next_pid=%d\", REC->prev_pid, REC->next_pid\n";
static const char fmt_irq_entry[] = "name: irq_handler_entry\nID: 225\n" COMMON
	"\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"irq=%d name=%s\", REC->irq, __get_str(name)\n";
static const char fmt_irq_exit[] = "name: irq_handler_exit\nID: 224\n" COMMON
	"\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:int ret;\toffset:12;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"irq=%d ret=%d\", REC->irq, REC->ret\n";
static const char fmt_hrtimer[] = "name: hrtimer_expire_entry\nID: 459\n" COMMON
	"\tfield:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:s64 now;\toffset:16;\tsize:8;\tsigned:1;\n"
	"\tfield:void * function;\toffset:24;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"hrtimer=%p\", REC->hrtimer\n";

/* 7.3's sched_waking: comm became a __string (a __data_loc word: offset, then length) */
static const char fmt_waking_73[] = "name: sched_waking\nID: 380\n" COMMON
	"\tfield:__data_loc char[] comm;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:int prio;\toffset:16;\tsize:4;\tsigned:1;\n"
	"\tfield:int target_cpu;\toffset:20;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"comm=%s pid=%d\", __get_str(comm), REC->pid\n";

static struct tep_handle *make_tep(void)
{
	struct tep_handle *tep = tep_alloc();

	if (!tep || tep_parse_header_page(tep, (char *)header_page, sizeof(header_page) - 1, 8) ||
	    tep_parse_event(tep, fmt_switch, sizeof(fmt_switch) - 1, "sched") ||
	    tep_parse_event(tep, fmt_irq_entry, sizeof(fmt_irq_entry) - 1, "irq") ||
	    tep_parse_event(tep, fmt_irq_exit, sizeof(fmt_irq_exit) - 1, "irq") ||
	    tep_parse_event(tep, fmt_hrtimer, sizeof(fmt_hrtimer) - 1, "timer") ||
	    tep_parse_event(tep, fmt_waking_73, sizeof(fmt_waking_73) - 1, "sched")) {
		printf("FAIL: libtraceevent did not parse the test formats\n");
		exit(1);
	}
	return tep;
}

static void test_ptrid(void)
{
	struct ptrid_key k = { 0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull };

	/* SipHash-2-4, key 00..0f, message 00..07: 0x93f5f5799a932462 (the paper's vectors) */
	CHECK(ptrid(&k, 0x0706050403020100ull) == 0x9a932462u, "siphash: %08x", ptrid(&k, 0x0706050403020100ull));
}

/* a sched_switch's bytes */
static int ev_switch(unsigned char *d, int prev, long state, int next, int next_prio)
{
	uint16_t id = 372;

	memset(d, 0, 64);
	memcpy(d, &id, 2);
	memcpy(d + 8, "prev", 5);
	memcpy(d + 24, &prev, 4);
	memcpy(d + 28, &(int){ 120 }, 4);
	memcpy(d + 32, &state, 8);
	memcpy(d + 40, "next", 5);
	memcpy(d + 56, &next, 4);
	memcpy(d + 60, &next_prio, 4);
	return 64;
}

static int ev_irq_exit(unsigned char *d, int irq, int ret)
{
	uint16_t id = 224;

	memset(d, 0, 16);
	memcpy(d, &id, 2);
	memcpy(d + 8, &irq, 4);
	memcpy(d + 12, &ret, 4);
	return 16;
}

static const struct hgt_rec *rec_at(const char *out, size_t len, unsigned int n)
{
	size_t off = 0;

	while (off < len) {
		const struct hgt_rec *r = (const void *)(out + off);

		if (!n--)
			return r;
		off += r->len;
	}
	return NULL;
}

static void test_evmap(struct tep_handle *tep)
{
	struct ptrid_key key = { 1, 2 };
	struct hgev_map *m = hgev_map_alloc(tep, HGT_EV_ALL, &key);
	unsigned char d[128];
	char out[HGEV_MAX_OUT];
	const struct hgt_rec *r;
	const struct hgt_switch *s;
	unsigned int nrec;
	size_t n;
	uint32_t loc = 16 | (4 << 16), irq = 7;
	uint64_t p;

	CHECK(m && hgev_map_groups(m) == (HGT_EV_SCHED | HGT_EV_IRQ | HGT_EV_HRTIMER), "groups %x",
	      m ? hgev_map_groups(m) : 0);
	/* preempted: TASK_REPORT_MAX; first sightings of both pids give COMM records first */
	n = hgev_convert(m, d, ev_switch(d, 10, 0x100, 11, 50), 1000, 0, out, &nrec);
	r = rec_at(out, n, 2);
	s = (const void *)(r + 1);
	CHECK(nrec == 3 && rec_at(out, n, 0)->type == HGT_REC_COMM && rec_at(out, n, 1)->type == HGT_REC_COMM,
	      "switch: %u records", nrec);
	CHECK(r->type == HGT_REC_SWITCH && r->arg == 11 && r->flags == HGT_SWITCH_PREEMPT && s->prev_state == 0 &&
	      s->prev_pid == 10 && s->next_prio == 50 && r->aux == 1 && r->tsc == 1000,
	      "preempted switch: flags %u state %u aux %u", r->flags, s->prev_state, r->aux);
	/* TASK_REPORT_IDLE is TASK_IDLE; an exiting task's EXIT_ZOMBIE is TASK_DEAD; no COMM again */
	n = hgev_convert(m, d, ev_switch(d, 10, 0x80, 11, 120), 1001, 0, out, &nrec);
	s = (const void *)(out + sizeof(struct hgt_rec));
	CHECK(nrec == 1 && s->prev_state == 0x402 && out[8 + 2] == 0, "idle switch: %u records, state %x",
	      nrec, s->prev_state);
	n = hgev_convert(m, d, ev_switch(d, 11, 0x20, 10, -1), 1002, 0, out, &nrec);
	r = (const void *)out;
	CHECK(((const struct hgt_switch *)(r + 1))->prev_state == 0x80 && r->aux == 6, "dying switch");
	/* a short event is not converted */
	CHECK(hgev_convert(m, d, 40, 1003, 0, out, &nrec) == 0, "a sched_switch of 40 bytes was converted");
	/* 7.3's sched_waking: the COMM of a first sighting named from its __string comm */
	memset(d, 0, sizeof(d));
	memcpy(d, &(uint16_t){ 380 }, 2);
	memcpy(d + 8, &(uint32_t){ 24 | (6 << 16) }, 4);
	memcpy(d + 12, &(int){ 12 }, 4);
	memcpy(d + 16, &(int){ 100 }, 4);
	memcpy(d + 20, &(int){ 1 }, 4);
	memcpy(d + 24, "stress", 6);
	n = hgev_convert(m, d, 30, 1003, 0, out, &nrec);
	r = (const void *)out;
	CHECK(nrec == 2 && r->type == HGT_REC_COMM && r->arg == 12 &&
	      !strcmp(((const struct hgt_comm *)(r + 1))->comm, "stress") && rec_at(out, n, 1)->type == HGT_REC_WAKING &&
	      ((const struct hgt_wake *)(rec_at(out, n, 1) + 1))->target_cpu == 1,
	      "7.3 waking: %u records, comm '%s'", nrec, nrec ? ((const struct hgt_comm *)(r + 1))->comm : "");
	/* irq entry: NAME from the __data_loc string, once */
	memset(d, 0, sizeof(d));
	memcpy(d, &(uint16_t){ 225 }, 2);
	memcpy(d + 8, &irq, 4);
	memcpy(d + 12, &loc, 4);
	memcpy(d + 16, "eth0", 4);
	n = hgev_convert(m, d, 20, 1004, 1, out, &nrec);
	r = (const void *)out;
	CHECK(nrec == 2 && r->type == HGT_REC_NAME && r->arg == 7 && !strcmp((const char *)(r + 1), "eth0") &&
	      rec_at(out, n, 1)->type == HGT_REC_IRQ_ENTRY, "irq entry: %u records, name '%s'", nrec,
	      (const char *)(r + 1));
	n = hgev_convert(m, d, 20, 1005, 1, out, &nrec);
	CHECK(nrec == 1 && ((const struct hgt_rec *)out)->type == HGT_REC_IRQ_ENTRY, "irq named twice");
	n = hgev_convert(m, d, ev_irq_exit(d, 7, 1), 1006, 1, out, &nrec);
	r = (const void *)out;
	CHECK(r->type == HGT_REC_IRQ_EXIT && r->arg == 7 && r->flags == 1 && r->len == 16, "irq exit");
	/* hrtimer: the ids are the keyed hashes; the callback is kept for naming */
	memset(d, 0, sizeof(d));
	memcpy(d, &(uint16_t){ 459 }, 2);
	p = 0xffffffff81234560ull;
	memcpy(d + 8, &p, 8);
	p = 0xffffffff81000100ull;
	memcpy(d + 24, &p, 8);
	n = hgev_convert(m, d, 32, 1007, 1, out, &nrec);
	r = (const void *)out;
	{
		unsigned int nf;
		const struct hgev_func *f = hgev_funcs(m, &nf);

		CHECK(r->type == HGT_REC_HRTIMER_ENTRY && r->arg == ptrid(&key, 0xffffffff81234560ull) &&
		      ((const struct hgt_hrtimer *)(r + 1))->func_id == ptrid(&key, p) && nf == 1 &&
		      f[0].addr == p && f[0].cpu == 1, "hrtimer entry");
	}
	hgev_map_drop(m, 0);
	CHECK(hgev_convert(m, d, ev_switch(d, 1, 0, 2, 120), 1008, 0, out, &nrec) == 0, "a dropped event converted");
	hgev_map_free(m);
}

/* ---- hand-made ring-buffer pages ---- */

struct pg {
	unsigned char *b;
	size_t used;
};

static void pg_start(struct pg *pg, struct spool *sp, int cpu, uint64_t ts)
{
	pg->b = (unsigned char *)spool_slot(sp, cpu);
	memset(pg->b, 0, sp->psize);
	memcpy(pg->b, &ts, 8);
	pg->used = 16;
}

/* pg_irq_exit - one event: header word (type_len = data words, time delta), then the data */
static void pg_irq_exit(struct pg *pg, uint32_t delta, int irq)
{
	unsigned char d[16];
	uint32_t len = ev_irq_exit(d, irq, 1), h = (len / 4) | (delta << 5);

	memcpy(pg->b + pg->used, &h, 4);
	memcpy(pg->b + pg->used + 4, d, len);
	pg->used += 4 + len;
}

/* pg_end - the commit word: data size, missed flag, and the count after the data if >= 0 */
static void pg_end(struct pg *pg, struct spool *sp, int cpu, int missed, long long count)
{
	uint64_t commit = pg->used - 16;

	if (missed && count >= 0) {
		memcpy(pg->b + pg->used, &count, 8);
		commit |= 1u << 30;
	}
	if (missed)
		commit |= 0xffffffff80000000ull;	/* the kernel adds (1 << 31) as an int */
	memcpy(pg->b + 8, &commit, 8);
	spool_commit(sp, cpu);
}

/* expect - the records of @cpu, as a string: E event, O<n> overwritten, R<n> refused */
static void expect(struct conv *cv, int cpu, const char *want)
{
	char got[512] = "";
	size_t off = 0, used = 0;

	while (off < cv->cpu[cpu].used && used < sizeof(got) - 32) {
		const struct hgt_rec *r = (const void *)(cv->cpu[cpu].out + off);

		if (r->type == HGT_REC_LOST)
			used += snprintf(got + used, sizeof(got) - used, "%c%llu ", r->aux ? 'O' : 'R',
					 (unsigned long long)((const struct hgt_lost *)(r + 1))->count);
		else
			used += snprintf(got + used, sizeof(got) - used, "E ");
		off += r->len;
	}
	CHECK(!strcmp(got, want), "cpu %d: records '%s', expected '%s'", cpu, got, want);
}

static void test_convert(struct tep_handle *tep)
{
	struct ptrid_key key = { 1, 2 };
	struct hgev_map *m = hgev_map_alloc(tep, HGT_EV_ALL, &key);
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	struct tfs_stats st;
	struct hgt_cpu_stats hs;
	struct spool sp;
	struct conv cv;
	struct pg pg;
	const struct hgt_rec *r;

	spool_init(&sp, 3, 4096);
	conv_init(&cv, m, kb, NULL, 3, 8, 4096);
	CHECK(cv.buffer_pages == 3, "an 8 KiB buffer is %llu pages", (unsigned long long)cv.buffer_pages);

	/* CPU 0, overwrite mode: a page flagged with its count, one flagged without */
	memset(&st, 0, sizeof(st));
	conv_pass_begin(&cv, 0, &st, spool_next(&sp, 0));
	pg_start(&pg, &sp, 0, 1000);
	pg_irq_exit(&pg, 0, 1);
	pg_irq_exit(&pg, 10, 2);
	pg_irq_exit(&pg, 10, 3);
	pg_end(&pg, &sp, 0, 0, 0);
	st.read = 3;
	conv_pass_end(&cv, 0, &st, spool_next(&sp, 0));
	st.overrun = 5;
	conv_pass_begin(&cv, 0, &st, spool_next(&sp, 0));
	pg_start(&pg, &sp, 0, 2000);
	pg_irq_exit(&pg, 0, 4);
	pg_irq_exit(&pg, 10, 5);
	pg_end(&pg, &sp, 0, 1, 5);
	pg_start(&pg, &sp, 0, 3000);
	pg_irq_exit(&pg, 7, 6);
	pg_end(&pg, &sp, 0, 1, -1);
	st.overrun = 12;
	conv_pass_end(&cv, 0, &st, spool_next(&sp, 0));
	CHECK(!conv_pages(&cv, &sp, 0), "conv_pages failed");
	expect(&cv, 0, "E E E O5 E E O7 E ");
	r = rec_at(cv.cpu[0].out, cv.cpu[0].used, 3);
	CHECK(r->tsc == 2000, "the LOST record is stamped %llu, not as the event it precedes (2000)",
	      (unsigned long long)r->tsc);
	r = rec_at(cv.cpu[0].out, cv.cpu[0].used, 7);
	CHECK(r->tsc == 3007 && r->arg == 6, "the page's time stamp plus the event's delta: %llu",
	      (unsigned long long)r->tsc);
	conv_finish(&cv, 0, 4000, &st);
	expect(&cv, 0, "E E E O5 E E O7 E ");
	conv_stats(&cv, 0, &hs);
	CHECK(hs.read == 6 && hs.overwritten == 12 && hs.refused == 0 && hs.produced == 18 && hs.written == 18,
	      "cpu 0 stats: read %llu overwritten %llu produced %llu", (unsigned long long)hs.read,
	      (unsigned long long)hs.overwritten, (unsigned long long)hs.produced);
	CHECK(cv.cpu[0].estimated == 1, "one count came from the counter: %llu", (unsigned long long)cv.cpu[0].estimated);

	/* CPU 1, stop mode: drops while the reader slept go after what the buffer held */
	memset(&st, 0, sizeof(st));
	conv_pass_begin(&cv, 1, &st, spool_next(&sp, 1));
	pg_start(&pg, &sp, 1, 100);
	pg_irq_exit(&pg, 0, 1);
	pg_irq_exit(&pg, 1, 2);
	pg_end(&pg, &sp, 1, 0, 0);
	conv_pass_end(&cv, 1, &st, spool_next(&sp, 1));
	st.dropped = 4;
	st.entries = 3;
	conv_pass_begin(&cv, 1, &st, spool_next(&sp, 1));
	pg_start(&pg, &sp, 1, 200);
	pg_irq_exit(&pg, 0, 3);
	pg_irq_exit(&pg, 1, 4);
	pg_end(&pg, &sp, 1, 0, 0);
	pg_start(&pg, &sp, 1, 300);
	pg_irq_exit(&pg, 0, 5);
	pg_irq_exit(&pg, 1, 6);
	pg_end(&pg, &sp, 1, 0, 0);
	/* and 2 more while draining: a buffer's worth (3 pages) after the drain began, or its end */
	st.dropped = 6;
	st.entries = 0;
	conv_pass_end(&cv, 1, &st, spool_next(&sp, 1));
	CHECK(!conv_pages(&cv, &sp, 1), "conv_pages failed");
	expect(&cv, 1, "E E E E E R4 E ");
	conv_pass_begin(&cv, 1, &st, spool_next(&sp, 1));
	pg_start(&pg, &sp, 1, 400);
	pg_irq_exit(&pg, 0, 7);
	pg_end(&pg, &sp, 1, 0, 0);
	conv_pass_end(&cv, 1, &st, spool_next(&sp, 1));
	CHECK(!conv_pages(&cv, &sp, 1), "conv_pages failed");
	expect(&cv, 1, "E E E E E R4 E R2 E ");
	/* counted after the last drain: at the end */
	st.dropped = 9;
	conv_finish(&cv, 1, 500, &st);
	expect(&cv, 1, "E E E E E R4 E R2 E R3 ");
	conv_stats(&cv, 1, &hs);
	CHECK(hs.read == 7 && hs.refused == 9 && hs.produced == 16 && hs.written == 7, "cpu 1 stats");
	CHECK(cv.cpu[1].estimated == 2, "two placed by estimate: %llu", (unsigned long long)cv.cpu[1].estimated);

	/* CPU 2, stop mode, drops seen while a page was read: a buffer (3 pages) on, or one more */
	memset(&st, 0, sizeof(st));
	conv_pass_begin(&cv, 2, &st, spool_next(&sp, 2));
	{
		static const uint64_t first[] = { 100, 120, 140, 160, 180, 500, 600, 620, 630, 900, 910 };
		static const int nev[] = { 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1 };
		unsigned int i;

		for (i = 0; i < sizeof(first) / sizeof(first[0]); i++) {
			pg_start(&pg, &sp, 2, first[i]);
			pg_irq_exit(&pg, 0, 1);
			if (nev[i] > 1)
				pg_irq_exit(&pg, 10, 1);
			pg_end(&pg, &sp, 2, 0, 0);
			/* 5 dropped while page 1 was read, 2 while page 6 was */
			st.dropped = i >= 6 ? 7 : i >= 1 ? 5 : 0;
			conv_page_read(&cv, 2, &st, spool_next(&sp, 2) - 1);
		}
	}
	conv_pass_end(&cv, 2, &st, spool_next(&sp, 2));
	CHECK(!conv_pages(&cv, &sp, 2), "conv_pages failed");
	/* page 1 + 3 = 4, but the pause is before page 5; page 6 + 3 = 9, and the pause is there */
	expect(&cv, 2, "E E E E E E E E E E R5 E E E E E E R2 E E ");

	conv_free(&cv);
	spool_free(&sp);
	kbuffer_free(kb);
	hgev_map_free(m);
}

/*
 * test_file - a recording written through the library's writer and read back by
 * its reader, whose checks (records = stats' read, LOST counts within the
 * losses) must pass; a flagged page the counter gives no count drops its marker
 */
static void test_file(struct tep_handle *tep)
{
	struct ptrid_key key = { 1, 2 };
	struct hgev_map *m = hgev_map_alloc(tep, HGT_EV_ALL, &key);
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	char path[] = "/tmp/ftrace-units-XXXXXX";
	struct hgt_file_window win = { 1, 5000 };
	struct hgt_cpu_stats hs;
	struct tfs_stats st;
	struct hgt_writer w;
	struct hgt_file *f;
	struct hgt_cursor *cur;
	const struct hgt_rec *r;
	struct hg_err err;
	struct spool sp;
	struct conv cv;
	struct pg pg;
	uint32_t cpu0 = 0;
	int fd = mkstemp(path), n = 0, lost = 0, rc;

	close(fd);
	spool_init(&sp, 1, 4096);
	CHECK(!hgt_writer_open(&w, path, HGT_FILE_VERSION, "format: hgtrace 1\nnr_cpu_ids: 1\n"), "open");
	conv_init(&cv, m, kb, &w, 1, 8, 4096);
	memset(&st, 0, sizeof(st));
	conv_pass_begin(&cv, 0, &st, spool_next(&sp, 0));
	pg_start(&pg, &sp, 0, 1000);
	pg_irq_exit(&pg, 0, 1);
	pg_irq_exit(&pg, 5, 2);
	pg_end(&pg, &sp, 0, 0, 0);
	pg_start(&pg, &sp, 0, 2000);
	pg_irq_exit(&pg, 0, 3);
	pg_end(&pg, &sp, 0, 1, -1);
	conv_pass_end(&cv, 0, &st, spool_next(&sp, 0));
	CHECK(!conv_pages(&cv, &sp, 0), "conv_pages");
	conv_finish(&cv, 0, 4000, &st);
	CHECK(!conv_flush(&cv, 0), "flush");
	conv_stats(&cv, 0, &hs);
	CHECK(!hgt_writer_trailer(&w, &win, &hs, &cpu0, 1) && !hgt_writer_end(&w) && !hgt_writer_close(&w),
	      "trailer: %s", w.err.msg);
	rc = hgt_open(&f, path, 0, &err);
	CHECK(!rc, "the library refuses the file: %s", err.msg);
	if (!rc) {
		cur = hgt_cursor_open(f, HGT_ALL_CPUS, &err);
		while (cur && (rc = hgt_cursor_next(cur, &r, &err)) == 1) {
			n++;
			lost += r->type == HGT_REC_LOST;
		}
		CHECK(cur && rc == 0, "the library's cursor: %s", err.msg);
		CHECK(n == 3 && lost == 0 && hs.read == 3 && hs.overwritten == 0, "%d records, %d LOST", n, lost);
		hgt_cursor_close(cur);
		hgt_close(f);
	}
	unlink(path);
	conv_free(&cv);
	spool_free(&sp);
	kbuffer_free(kb);
	hgev_map_free(m);
}

static void test_look(void)
{
	const uint64_t mib = 1024 * 1024;
	struct ft_look def = { 0.1, 2 * mib, mib, 0 }, big = { 0.1, 20 * mib, 10 * mib, 0 };
	struct ft_look every = { 0.1, 20 * mib, 0, 0 }, slow = { 2.0, 20 * mib, 10 * mib, 0 };

	/* the default buffer: every -i, empty or filling, as before this rule */
	CHECK(ft_look_next(&def, 0, 0) == 0.1, "default buffer, empty: %g", ft_look_next(&def, 0, 0));
	CHECK(ft_look_next(&def, mib / 2, 5e6) == 0.1, "default buffer, filling: %g", ft_look_next(&def, mib / 2, 5e6));
	/* ten times the room: up to FT_LOOK_MAX_S; 1 MiB unread of 20: 0.95 s */
	CHECK(ft_look_next(&big, 0, 0) == FT_LOOK_MAX_S, "20 MiB, empty: %g", ft_look_next(&big, 0, 0));
	CHECK(ft_look_next(&big, 2 * mib, 0) > 0.89 && ft_look_next(&big, 2 * mib, 0) < 0.91,
	      "20 MiB, 2 MiB unread: %g", ft_look_next(&big, 2 * mib, 0));
	/* the room shrinks as it fills: 18 MiB unread leaves a default buffer's room */
	CHECK(ft_look_next(&big, 18 * mib, 0) == 0.1, "20 MiB, 18 unread: %g", ft_look_next(&big, 18 * mib, 0));
	/* the pace: 2 MiB a second toward 10 MiB at --drain-at 50 reaches it in 4 s: half, 2 s, capped;
	 * 40 MiB a second reaches it in 0.25 s: wait 0.125 s */
	CHECK(ft_look_next(&big, 0, 2.0 * mib) == FT_LOOK_MAX_S, "slow pace: %g", ft_look_next(&big, 0, 2.0 * mib));
	CHECK(ft_look_next(&big, 0, 40.0 * mib) > 0.124 && ft_look_next(&big, 0, 40.0 * mib) < 0.126,
	      "fast pace: %g", ft_look_next(&big, 0, 40.0 * mib));
	/* faster still: never below -i; past --drain-at: -i */
	CHECK(ft_look_next(&big, 0, 1000.0 * mib) == 0.1, "flood: %g", ft_look_next(&big, 0, 1000.0 * mib));
	CHECK(ft_look_next(&big, 11 * mib, 1.0) == 0.1, "past --drain-at: %g", ft_look_next(&big, 11 * mib, 1.0));
	/* --drain-at 0 reads at every look, every -i; an -i longer than the cap is kept */
	CHECK(ft_look_next(&every, 0, 0) == 0.1, "--drain-at 0: %g", ft_look_next(&every, 0, 0));
	CHECK(ft_look_next(&slow, 0, 0) == 2.0, "-i 2s: %g", ft_look_next(&slow, 0, 0));
	/* the kernel waking us at --drain-at on every CPU: no room rule, the pace and a 10 s cap */
	big.kernel_wakes = def.kernel_wakes = every.kernel_wakes = slow.kernel_wakes = 1;
	CHECK(ft_look_next(&big, 0, 0) == FT_LOOK_KERNEL_MAX_S, "woken, empty: %g", ft_look_next(&big, 0, 0));
	CHECK(ft_look_next(&big, 18 * mib, 0) == 0.1, "woken, past --drain-at: %g", ft_look_next(&big, 18 * mib, 0));
	CHECK(ft_look_next(&big, 0, 1.0 * mib) == 5.0, "woken, 1 MiB/s: %g", ft_look_next(&big, 0, 1.0 * mib));
	CHECK(ft_look_next(&big, 0, 1000.0 * mib) == 0.1, "woken, flood: %g", ft_look_next(&big, 0, 1000.0 * mib));
	CHECK(ft_look_next(&def, 0, 0) == FT_LOOK_KERNEL_MAX_S, "woken, 2 MiB: %g", ft_look_next(&def, 0, 0));
	CHECK(ft_look_next(&every, 0, 0) == 0.1, "woken, --drain-at 0: %g", ft_look_next(&every, 0, 0));
	CHECK(ft_look_next(&slow, 0, 0) == FT_LOOK_KERNEL_MAX_S, "woken, -i 2s: %g", ft_look_next(&slow, 0, 0));
}

/* a kallsyms text as the kernel prints it: core symbols by address, then the modules' */
static const char kallsyms[] =
	"0000000000000000 A fixed_percpu_data\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 t early_fn\n"
	"ffffffff81002000 D some_data\n"
	"ffffffff81003000 T tick_sched_timer\n"
	"ffffffff81003100 t a_function_whose_name_is_longer_than_thirty_one\n"
	"ffffffff81004000 T _etext\n"
	"ffffffffc0650390 t __pfx_watchdog_timer_expired\t[watchdog]\n"
	"ffffffffc06503a0 t watchdog_timer_expired\t[watchdog]\n"
	"ffffffffc0650400 d watchdog_data\t[watchdog]\n"
	"ffffffffc0651000 t other\t[watchdog]";	/* no newline at the end */

static void test_ksyms(void)
{
	static const uint64_t addr[] = { 0xffffffff81003000ull, 0xffffffff81001234ull, 0xffffffffc06503a0ull,
					 0xffffffff81002500ull, 0xffffffff81003180ull, 0x1000ull,
					 0xffffffffc0651008ull };
	static const char *const want[] = { "tick_sched_timer", "early_fn", "watchdog_timer_expired", "early_fn",
					    "a_function_whose_name_is_longer", "", "other" };
	static const size_t sizes[] = { 1 << 18, 4096, 97, 80 };
	char path[] = "/tmp/hg-ksyms-XXXXXX", names[7][32];
	unsigned int i, k, named;
	int fd = mkstemp(path);

	CHECK(fd >= 0 && write(fd, kallsyms, strlen(kallsyms)) == (ssize_t)strlen(kallsyms), "ksyms: temp file");
	close(fd);
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		named = ksyms_name_in(path, sizes[k], addr, 7, names);
		CHECK(named == 6, "ksyms (buffer %zu): %u named, want 6", sizes[k], named);
		for (i = 0; i < 7; i++)
			CHECK(!strcmp(names[i], want[i]), "ksyms (buffer %zu): %#llx named '%s', want '%s'", sizes[k],
			      (unsigned long long)addr[i], names[i], want[i]);
	}
	/* lines longer than the buffer: each is read as far as it fits, and the lines after them as before */
	ksyms_name_in(path, 40, addr, 7, names);
	CHECK(!strcmp(names[0], "tick_sched_timer") && !strcmp(names[6], "other"),
	      "ksyms (buffer 40): '%s', '%s'", names[0], names[6]);
	CHECK(ksyms_name_in("/nonexistent/kallsyms", 4096, addr, 7, names) == 0 && !names[0][0],
	      "ksyms: an unreadable file names nothing");
	unlink(path);
}

int main(void)
{
	struct tep_handle *tep;

	setvbuf(stdout, NULL, _IONBF, 0);
	tep = make_tep();

	test_ptrid();
	test_evmap(tep);
	test_convert(tep);
	test_file(tep);
	test_look();
	test_ksyms();
	tep_free(tep);
	printf("%s: %d of %d checks passed\n", failed ? "FAIL" : "ok", checks - failed, checks);
	return failed ? 1 : 0;
}

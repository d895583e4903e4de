// SPDX-License-Identifier: GPL-2.0
/* test_opts.c - the options both recorders take alike: values parsed, bad ones refused with a reason */
#include <math.h>
#include <stdlib.h>
#include "tap.h"
#include "hg_opts.h"
#include "hgtrace.h"

static struct hg_rec_opts fresh(void)
{
	return (struct hg_rec_opts){ .interval = 0.1, .events = HGT_EV_DEFAULT, .reader_cpu = -1,
				     .buffer_kb = 2048, .overwrite = 1 };
}

static void refused(int c, const char *arg, const char *want)
{
	struct hg_rec_opts o = fresh();
	struct hg_err e = { "", 0 };

	ok_msg(hg_rec_opt(&o, c, arg, &e), &e, want, "-%c '%s' refused: %s", c, arg, e.msg);
}

int main(void)
{
	struct hg_rec_opts o = fresh();
	struct hg_err e = { "", 0 };

	ok(hg_parse_seconds("10") == 10 && hg_parse_seconds("500ms") == 0.5 &&
	   fabs(hg_parse_seconds("20us") - 20e-6) < 1e-12 && hg_parse_seconds("1.5m") == 90,
	   "times: plain seconds, ms, us, minutes");
	ok(hg_parse_seconds("") < 0 && hg_parse_seconds("5h") < 0 && hg_parse_seconds("-1") < 0,
	   "times: empty, unknown unit and negative refused");

	ok(hg_rec_opt(&o, 'd', "2s", &e) == 1 && o.duration == 2, "-d 2s");
	ok(hg_rec_opt(&o, 'i', "50ms", &e) == 1 && o.interval == 0.05, "-i 50ms");
	ok(hg_rec_opt(&o, 'b', "64", &e) == 1 && o.buffer_kb == 64, "-b 64");
	ok(hg_rec_opt(&o, 'm', "stop", &e) == 1 && o.overwrite == 0, "-m stop");
	ok(hg_rec_opt(&o, 'm', "overwrite", &e) == 1 && o.overwrite == 1, "-m overwrite");
	ok(hg_rec_opt(&o, 'r', "50", &e) == 1 && o.prio == 50, "-r 50");
	ok(hg_rec_opt(&o, 'C', "1", &e) == 1 && o.reader_cpu == 1, "-C 1");
	ok(hg_rec_opt(&o, 'e', "sched", &e) == 1 && o.events == HGT_EV_SCHED && o.events_given == 1,
	   "the first -e replaces the default groups");
	ok(hg_rec_opt(&o, 'e', "irq,softirq", &e) == 1 &&
	   o.events == (HGT_EV_SCHED | HGT_EV_IRQ | HGT_EV_SOFTIRQ) && o.events_given == 2,
	   "the next -e adds to them");
	ok(hg_rec_opt(&o, 'c', "0,2-3", &e) == 1 && hg_cpuset_count(&o.cpus) == 3 &&
	   hg_cpuset_has(&o.cpus, 2) && !hg_cpuset_has(&o.cpus, 1), "-c 0,2-3");
	ok(hg_rec_opt(&o, 'c', "5", &e) == 1 && hg_cpuset_count(&o.cpus) == 1 && hg_cpuset_has(&o.cpus, 5),
	   "a second -c replaces the first");
	o.cpus_max = 4;
	ok_msg(hg_rec_opt(&o, 'c', "1,4", &e), &e, "bad CPU list '1,4': the module records CPUs 0 to 3",
	       "-c beyond cpus_max refused: %s", e.msg);
	ok(hg_cpuset_count(&o.cpus) == 1 && hg_cpuset_has(&o.cpus, 5), "and the CPUs before it are kept");
	hg_cpuset_free(&o.cpus);
	ok(hg_rec_opt(&o, 'o', "x", &e) == 0 && hg_rec_opt(&o, 'q', NULL, &e) == 0,
	   "another program's options are left to it");

	refused('d', "0", "bad duration '0'");
	refused('d', "soon", "bad duration");
	refused('i', "0.5ms", "bad interval '0.5ms' (1ms to 60s)");
	refused('i', "61s", "bad interval '61s' (1ms to 60s)");
	refused('b', "4", "bad buffer size '4' (8 to 1048576 KiB)");
	refused('b', "2097152", "bad buffer size");
	refused('b', "64k", "bad buffer size");
	refused('b', "-64", "bad buffer size");
	refused('m', "ring", "bad mode 'ring' (stop or overwrite)");
	refused('r', "0", "bad priority '0' (1 to 99)");
	refused('r', "100", "bad priority");
	refused('r', " 5", "bad priority");
	refused('C', "-1", "bad reader CPU '-1'");
	refused('C', "one", "bad reader CPU");
	refused('c', "3-1", "bad CPU list '3-1': ");
	refused('c', "x", "(e.g. 0,2-3)");
	refused('c', "8192", "bad CPU list '8192'");
	refused('e', "sched,,irq", "unknown event group ''");
	refused('e', "sched,bogus", "unknown event group 'bogus'");
	return tap_done();
}

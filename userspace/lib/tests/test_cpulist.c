// SPDX-License-Identifier: GPL-2.0
/* test_cpulist.c - CPU lists: the kernel's syntax parsed, bad lists refused with a reason, formatted back */
#include <stdlib.h>
#include "tap.h"
#include "hg_cpulist.h"

static void good(const char *s, unsigned count, unsigned nbits, const char *back)
{
	struct hg_cpuset set;
	const char *why = "x";
	char out[256];
	int rc = hg_cpulist_parse(s, &set, &why);

	hg_cpulist_format(&set, out, sizeof(out));
	ok(rc == 0 && !why && hg_cpuset_count(&set) == count && set.nbits == nbits && !strcmp(out, back),
	   "'%s': %u CPUs, formatted '%s'", s, hg_cpuset_count(&set), out);
	hg_cpuset_free(&set);
}

/* mask - what hg_cpuset_fprint_mask prints for @list */
static void mask(const char *list, const char *want)
{
	struct hg_cpuset set = { 0 };
	const char *why = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	hg_cpulist_parse(list, &set, &why);
	hg_cpuset_fprint_mask(f, &set);
	fclose(f);
	ok(!strcmp(buf, want), "'%s' as a mask: %zu hex digits, ends %s", list, len, len > 20 ? buf + len - 20 : buf);
	free(buf);
	hg_cpuset_free(&set);
}

static void bad(const char *s, const char *want)
{
	struct hg_cpuset set;
	const char *why = NULL;
	int rc = hg_cpulist_parse(s, &set, &why);

	ok(rc == -1 && why && strstr(why, want) && !set.bits && !set.nbits, "'%s' refused: %s", s, why ? why : "");
}

int main(void)
{
	struct hg_cpuset set = { 0 };
	char out[64];
	unsigned c;

	good("0", 1, 1, "0");
	good("0,2-5,8", 6, 9, "0,2-5,8");
	good("3\n", 1, 4, "3");
	good("5-5", 1, 6, "5");
	good("1,0", 2, 2, "0-1");
	good("0-3,2-6", 7, 7, "0-6");
	good("8191", 1, 8192, "8191");
	good("", 0, 0, "");
	good("\n", 0, 0, "");
	bad("8192", "beyond 8191");
	bad("0-99999999999999999999", "beyond 8191");
	bad("5-3", "runs backwards");
	bad("a", "expected a CPU number");
	bad("1,,2", "expected a CPU number");
	bad("1,", "expected a CPU number");
	bad("-1", "expected a CPU number");
	bad(" 1", "expected a CPU number");
	bad("1 ", "expected ','");
	bad("1-", "expected a CPU number");
	bad("1\n2", "expected ','");
	bad("0x1", "expected ','");

	mask("", "0000000000000000000000000000000000000000000000000000000000000000");
	mask("0", "0000000000000000000000000000000000000000000000000000000000000001");
	mask("1,255", "8000000000000000000000000000000000000000000000000000000000000002");
	mask("256", "00000000000000010000000000000000000000000000000000000000000000000000000000000000");
	mask("4,319", "80000000000000000000000000000000000000000000000000000000000000000000000000000010");

	hg_cpuset_add(&set, 3);
	hg_cpuset_add(&set, 100);
	hg_cpuset_add(&set, 9000);	/* beyond the limit: not added */
	ok(hg_cpuset_has(&set, 3) && hg_cpuset_has(&set, 100) && !hg_cpuset_has(&set, 4) &&
	   !hg_cpuset_has(&set, 9000) && hg_cpuset_count(&set) == 2 && set.nbits == 101, "add, has, count");
	hg_cpuset_free(&set);
	for (c = 0; c < 40; c += 2)
		hg_cpuset_add(&set, c);
	hg_cpulist_format(&set, out, 20);
	ok(strlen(out) < 20 && !strcmp(out, "0,2,4,6,8,10,12,..."), "truncated at an item, with ...: %s", out);
	hg_cpulist_format(&set, out, 4);
	ok(!strcmp(out, "..."), "no room for an item: ...");
	hg_cpuset_free(&set);
	hg_cpuset_add(&set, 0);
	hg_cpuset_add(&set, 1);
	hg_cpulist_format(&set, out, 4);
	ok(!strcmp(out, "0-1"), "exactly fits: %s", out);
	hg_cpuset_free(&set);
	return tap_done();
}

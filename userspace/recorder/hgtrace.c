// SPDX-License-Identifier: GPL-2.0
/*
 * hgtrace.c - front end of the ground-truth recorder: dispatch on argv[1].
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "hg_hgt_format.h"
#include "hgt_dev.h"
#include "hgtrace_cmds.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "record", hgt_cmd_record, "record the kernel's events into a file while a command runs" },
	{ "dump", hgt_cmd_dump, "print a recording as text, one event per line" },
	{ "stat", hgt_cmd_stat, "show the module's state, configuration and per-CPU counters; with FILE,\n"
				"           a recording's, and anything that makes it unfit to merge" },
	{ "stop", hgt_cmd_stop, "stop a recording left running" },
	{ "msa", hgt_cmd_msa, "show microstates of traced threads" },
	{ "pack", hgt_cmd_pack, "rewrite a recording with packed chunks (about 8x smaller)" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: hgtrace COMMAND [options]\n\n"
		"Ground-truth recorder for hourglass, on top of the hgtrace.ko module.\n\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\n'hgtrace COMMAND --help' tells more. ABI %d.%d, file formats %d and %d.\n"
		"Exit status, as every program of hourglass's (docs/exit-status.md): 0 done,\n"
		"1 bad command line, 2 could not run (module, privileges, ABI, an output that\n"
		"cannot be written), 3 a bad or unfinished input file.\n",
		HGT_ABI_MAJOR, HGT_ABI_MINOR, HGT_FILE_VERSION, HGT_FILE_VERSION_PACKED);
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? HGT_EXIT_USAGE : HGT_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("hgtrace %s (ABI %d.%d)\n", HGT_TOOL_VERSION, HGT_ABI_MAJOR, HGT_ABI_MINOR);
		return HGT_EXIT_OK;
	}
	/* record --ftrace: the module-less recorder, a program of its own beside this one */
	for (i = 2; !strcmp(argv[1], "record") && i < (size_t)argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--ftrace")) {
			static char path[4096];
			ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - sizeof("-ftrace"));

			if (n > 0) {
				strcpy(path + n, "-ftrace");
				argv[0] = path;
				execv(path, argv);
			}
			fprintf(stderr, "hgtrace: record --ftrace runs %s: %s (make userspace; it needs "
				"libtracefs-dev)\n", n > 0 ? path : "hgtrace-ftrace", strerror(errno));
			return HGT_EXIT_ENV;
		}
	/* stat FILE: a recording's figures (dump_stat.c); stat alone: the module's (control.c) */
	if (!strcmp(argv[1], "stat") && argc == 3 && argv[2][0] != '-')
		return hgt_cmd_stat_file(argv[2]);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "hgtrace: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return HGT_EXIT_USAGE;
}

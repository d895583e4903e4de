// SPDX-License-Identifier: GPL-2.0
/*
 * control.c - hgtrace stat, stop and msa: look at and steer the module.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hgt_dev.h"
#include "hgtrace_cmds.h"

int hgt_cmd_stat(int argc, char **argv)
{
	struct hgt_dev d;
	struct hgt_config cfg;
	unsigned int cpu;

	if (argc == 2 && argv[1][0] != '-') {
		/* a file: stat is the module's, a recording's counters are dump's (trace-cmd stat is
		 * the kernel's too) */
		fprintf(stderr, "hgtrace stat: '%s': stat shows the loaded module, it reads no file; a "
			"recording's counters and window: hgtrace dump -s FILE (its last lines)\n", argv[1]);
		return HGT_EXIT_USAGE;
	}
	if (argc > 1) {
		fprintf(argc == 2 && !strcmp(argv[1], "--help") ? stdout : stderr,
			"usage: hgtrace stat\n\nShow the module's ABI, state, configuration and "
			"per-CPU counters.\n");
		return argc == 2 && !strcmp(argv[1], "--help") ? HGT_EXIT_OK : HGT_EXIT_USAGE;
	}
	if (hgt_dev_open(&d))
		return HGT_EXIT_ENV;
	if (hgt_dev_get_config(&d, &cfg)) {
		hgt_dev_close(&d);
		return HGT_EXIT_ENV;
	}
	printf("abi: %u.%u\ntsc_khz: %u\nmode: %s\nbuffer_bytes_per_cpu: %llu\n"
	       "events: 0x%x (available 0x%x)\nmsa_threads: %u\n",
	       d.hello.abi_major, d.hello.abi_minor, d.hello.tsc_khz,
	       cfg.mode == HGT_MODE_OVERWRITE ? "overwrite" : "stop",
	       (unsigned long long)cfg.buffer_bytes, cfg.events, d.hello.events_available,
	       cfg.msa_threads);
	/* 1.4: who holds the module (docs/hgtrace-abi.md, "Ownership"); 0 for nobody */
	if (d.hello.abi_minor >= 4)
		printf("owner: %d\n", (int)hgt_dev_owner(&d));
	printf("# cpu state produced written refused overwritten read reader_fault\n");
	for (cpu = 0; cpu < d.hello.nr_cpu_ids; cpu++) {
		struct hgt_stats st;

		if (hgt_dev_stats(&d, cpu, &st))
			continue;
		printf("%u %s %llu %llu %llu %llu %llu %llu\n", cpu,
		       st.state == HGT_STATE_RUNNING ? "running" : "stopped",
		       (unsigned long long)st.s.produced, (unsigned long long)st.s.written,
		       (unsigned long long)st.s.refused, (unsigned long long)st.s.overwritten,
		       (unsigned long long)st.s.read, (unsigned long long)st.s.reader_fault);
	}
	hgt_dev_close(&d);
	return HGT_EXIT_OK;
}

int hgt_cmd_stop(int argc, char **argv)
{
	struct hgt_dev d;
	int ret;

	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "usage: hgtrace stop\n");
		return HGT_EXIT_USAGE;
	}
	if (hgt_dev_open(&d))
		return HGT_EXIT_ENV;
	ret = hgt_dev_ioctl(&d, HGT_IOC_STOP, NULL, "stopping") ? HGT_EXIT_ENV : HGT_EXIT_OK;
	hgt_dev_close(&d);
	return ret;
}

/* hgt_cmd_msa - microstates of the given pids, in ns, one line each */
int hgt_cmd_msa(int argc, char **argv)
{
	static const char *const names[HGT_MSA_NR] = {
		"user", "sys", "runnable", "sleep", "disk", "interrupted", "stopped", "dead"
	};
	struct hgt_dev d;
	int i, k, ret = HGT_EXIT_OK;

	if (argc < 2 || !strcmp(argv[1], "--help")) {
		fprintf(argc < 2 ? stderr : stdout,
			"usage: hgtrace msa PID...\n\nMicrostates of traced threads in ns: "
			"time in each state since first seen.\nAll threads: cat /proc/hgtrace/msa\n");
		return argc < 2 ? HGT_EXIT_USAGE : HGT_EXIT_OK;
	}
	if (hgt_dev_open(&d))
		return HGT_EXIT_ENV;
	printf("# pid tgid state switches");
	for (k = 0; k < HGT_MSA_NR; k++)
		printf(" %s", names[k]);
	printf(" total\n");
	for (i = 1; i < argc; i++) {
		struct hgt_msa m = { 0 };
		uint64_t total = 0;
		char *end;

		m.pid = strtol(argv[i], &end, 10);
		if (*end || m.pid <= 0) {
			fprintf(stderr, "hgtrace: bad pid '%s'\n", argv[i]);
			ret = HGT_EXIT_USAGE;
			continue;
		}
		if (hgt_dev_msa(&d, &m)) {
			fprintf(stderr, "hgtrace: pid %d: %s\n", m.pid,
				errno == ESRCH ? "not seen by the module (not traced?)" : strerror(errno));
			ret = HGT_EXIT_ENV;
			continue;
		}
		printf("%d %d %s %u", m.pid, m.tgid, names[m.state < HGT_MSA_NR ? m.state : 0],
		       m.nr_switches);
		for (k = 0; k < HGT_MSA_NR; k++) {
			printf(" %llu", (unsigned long long)(m.cycles[k] * 1000000 / d.hello.tsc_khz));
			total += m.cycles[k];
		}
		printf(" %llu\n", (unsigned long long)(total * 1000000 / d.hello.tsc_khz));
	}
	hgt_dev_close(&d);
	return ret;
}

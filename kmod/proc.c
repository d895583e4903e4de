// SPDX-License-Identifier: GPL-2.0
/*
 * proc.c - /proc/hgtrace/status and /proc/hgtrace/msa, text for people.
 *
 * status: ABI, state, buffer, events, per-CPU counters, every tracepoint and
 * whether this kernel has it. msa: one line per traced thread, in the spirit
 * of Chubb's /proc/<pid>/msa. Both are root-only (mode 0400).
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/pid.h>
#include <asm/tsc.h>
#include "hgtrace.h"

static struct proc_dir_entry *dir;

static int status_show(struct seq_file *m, void *v)
{
	struct hgt_cpu_stats s;
	int cpu;

	seq_printf(m, "abi %u.%u\n", HGT_ABI_MAJOR, HGT_ABI_MINOR);
	seq_printf(m, "state %s\n", READ_ONCE(hgt.running) ? "running" : "stopped");
	seq_printf(m, "probes %s\n", READ_ONCE(hgt.attached) ? "attached" : "detached");
	seq_printf(m, "owner %d\n", hgt_owner_tgid());
	seq_printf(m, "mode %s\n", hgt.mode == HGT_MODE_OVERWRITE ? "overwrite" : "stop");
	seq_printf(m, "buffer_bytes_per_cpu %lu\n", hgt.rb_bytes);
	seq_printf(m, "buffer_bytes_allocated_per_cpu %lu\n", hgt.buf_bytes);
	seq_printf(m, "store hgtrace ring\n");
	seq_printf(m, "reader_overtaken %llu\n", hgt_ring_overtaken());
	seq_printf(m, "events 0x%x\nevents_available 0x%x\n", hgt.events, hgt.events_available);
	seq_printf(m, "cpus %*pbl\n", cpumask_pr_args(&hgt.cpus));
	seq_printf(m, "filter_pids %u\n", hgt.filter.nr);
	seq_printf(m, "tsc_khz %u\n", tsc_khz);
	seq_printf(m, "msa_capacity %u\nmsa_overflow %llu\n", hgt.msa_capacity, hgt_msa_overflow());
	seq_printf(m, "funcs_unnamed %llu\n", hgt_funcs_unnamed());
	seq_puts(m, "# cpu produced written refused overwritten read reader_fault\n");
	mutex_lock(&hgt.read_lock);	/* the buffer may be being replaced */
	for_each_possible_cpu(cpu) {
		hgt_buffer_stats(cpu, &s);
		seq_printf(m, "cpu%d %llu %llu %llu %llu %llu %llu\n", cpu, s.produced, s.written,
			   s.refused, s.overwritten, s.read, s.reader_fault);
	}
	mutex_unlock(&hgt.read_lock);
	hgt_tracepoints_show(m);
	return 0;
}

static int msa_show(struct seq_file *m, void *v)
{
	mutex_lock(&hgt.ctl_lock);	/* the table may be being replaced */
	hgt_msa_show(m);
	mutex_unlock(&hgt.ctl_lock);
	return 0;
}

int hgt_proc_init(void)
{
	dir = proc_mkdir(HGT_NAME, NULL);
	if (!dir)
		return -ENOMEM;
	if (!proc_create_single("status", 0400, dir, status_show) ||
	    !proc_create_single("msa", 0400, dir, msa_show)) {
		proc_remove(dir);
		return -ENOMEM;
	}
	return 0;
}

void hgt_proc_exit(void)
{
	proc_remove(dir);
}

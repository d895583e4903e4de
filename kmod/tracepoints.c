// SPDX-License-Identifier: GPL-2.0
/*
 * tracepoints.c - find the kernel's tracepoints by name and attach probes.
 *
 * The tracepoints we use are not exported to modules, so they are looked up
 * with for_each_kernel_tracepoint(). A tracepoint this kernel does not have
 * is reported (dmesg, /proc/hgtrace/status, hgt_hello.events_available) and
 * skipped: the module loads anyway with what exists.
 */
#include <linux/tracepoint.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include "hgtrace.h"
#include "compat.h"

#define HGT_MAX_PROBES	64

static struct tracepoint *found[HGT_MAX_PROBES];
static bool attached[HGT_MAX_PROBES];

static void match_tracepoint(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < hgt_nr_probes; i++)
		if (!found[i] && hgt_probes[i].probe && !strcmp(tp->name, hgt_probes[i].name))
			found[i] = tp;
}

/* hgt_tracepoints_find - look every tracepoint up once, at load */
int hgt_tracepoints_find(void)
{
	unsigned int i, missing = 0;

	BUILD_BUG_ON(ARRAY_SIZE(found) < 30);
	if (hgt_nr_probes > HGT_MAX_PROBES)
		return -E2BIG;
	for_each_kernel_tracepoint(match_tracepoint, NULL);
	for (i = 0; i < hgt_nr_probes; i++) {
		if (!hgt_probes[i].probe) {
			pr_notice(HGT_NAME ": tracepoint %s left out of this build (HGT_TP_SKIP); its events are not recorded\n",
				  hgt_probes[i].name);
			missing++;
		} else if (!found[i]) {
			pr_info(HGT_NAME ": tracepoint %s not found on this kernel; its events are not recorded\n",
				hgt_probes[i].name);
			missing++;
		}
	}
	if (!found[0])		/* sched_switch: without it nothing makes sense */
		return -ENOENT;
	return 0;
}

/*
 * hgt_tracepoints_available - HGT_EV_* groups with at least one tracepoint
 *
 * The vector group is partly config-dependent (thermal_apic), so a group
 * counts as available when any of its tracepoints exists; status lists each.
 */
u32 hgt_tracepoints_available(void)
{
	unsigned int i;
	u32 ev = 0;

	for (i = 0; i < hgt_nr_probes; i++)
		if (found[i])
			ev |= hgt_probes[i].event;
	return ev;
}

/*
 * hgt_tracepoints_attach - register the probes of the chosen groups
 *
 * Ahead of every other callback of each tracepoint (HGT_TP_PRIO, compat.h):
 * where a kernel calls probes preemptible, the task can be preempted between
 * one callback and the next, and a probe behind another tracer's would read
 * the TSC only once the task runs again, maybe on another CPU.
 *
 * In reverse table order, so that each exit probe (listed after its entry) is
 * in place before its entry probe: an irq that arrives while we attach can
 * then be missing its entry (harmless: depths clamp at zero) but never its
 * exit, which would leave the CPU "in an irq" for the microstates forever.
 */
int hgt_tracepoints_attach(u32 events)
{
	int i, ret;

	for (i = hgt_nr_probes - 1; i >= 0; i--) {
		if (!found[i] || !(hgt_probes[i].event & events))
			continue;
		ret = tracepoint_probe_register_prio(found[i], hgt_probes[i].probe, hgt_probes[i].data,
						     HGT_TP_PRIO);
		if (ret) {
			pr_warn(HGT_NAME ": cannot attach to %s: %d\n", hgt_probes[i].name, ret);
			hgt_tracepoints_detach();
			return ret;
		}
		attached[i] = true;
	}
	return 0;
}

/*
 * hgt_tracepoints_detach - unregister everything, without waiting
 *
 * In table order (entries before exits, the mirror of attach). A probe called
 * just before may still be running when this returns, but recording is off
 * by then (hgt_off: every probe tests the flag first and touches nothing when
 * it is clear), so the buffer, the counters and the microstate table can be
 * read, reset or freed all the same. Only the module's code must outlive such
 * a call: hgt_tracepoints_sync(), at unload.
 */
void hgt_tracepoints_detach(void)
{
	unsigned int i;

	for (i = 0; i < hgt_nr_probes; i++) {
		if (!attached[i])
			continue;
		tracepoint_probe_unregister(found[i], hgt_probes[i].probe, hgt_probes[i].data);
		attached[i] = false;
	}
}

/*
 * hgt_tracepoints_sync - wait until no call of a probe detached before is
 * left (the tracepoints' grace periods: on 7.3 a normal RCU one among them,
 * which a task preempted inside an RCU read-side section holds up). The
 * module's exit needs it before its code goes; nothing else does, so a
 * recorder's stop (HGT_IOC_STOP) no longer waits for it (docs/testing.md,
 * "The hackbench stall under recording": 311 s under 400 workers on 7.3).
 */
void hgt_tracepoints_sync(void)
{
	tracepoint_synchronize_unregister();
}

/* hgt_tracepoints_show - one line per tracepoint for /proc/hgtrace/status */
void hgt_tracepoints_show(struct seq_file *m)
{
	unsigned int i;

	for (i = 0; i < hgt_nr_probes; i++)
		seq_printf(m, "tracepoint %-28s %s%s\n", hgt_probes[i].name,
			   !hgt_probes[i].probe ? "skipped (left out of this build)" :
			   found[i] ? "found" : "missing", attached[i] ? " attached" : "");
}

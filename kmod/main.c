// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - hgtrace.ko: ground-truth recorder for hourglass.
 *
 * Records what the kernel really did on each CPU (scheduler, interrupts,
 * softirqs, x86 vectors, NMIs, hrtimers, optionally system calls), stamped
 * with the raw TSC that hourglass reads in user space, into per-CPU ring
 * buffers drained through /dev/hgtrace. No kernel patch: existing tracepoints
 * are found by name and probes attached from a recording's start until its
 * recorder's last step.
 *
 * Load order: tracepoints, bitmaps, buffer, microstate table, /proc, device;
 * unwound in reverse on failure and at unload.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <asm/tsc.h>
#include <asm/msr.h>
#include <linux/utsname.h>
#include <linux/stringify.h>
#include "hgtrace.h"
#include "compat.h"

/* a notice, not #warning: -Werror must not stop a build for a newer kernel */
#if HGT_RELEASE_UNVALIDATED && !defined(__clang__)
#pragma message("hgtrace: Linux " UTS_RELEASE " is not one of the releases the module was validated on (" \
		HGT_VALIDATED_RELEASES "): it builds, untested there; see kmod/compat.h")
#endif
/* clang reports #pragma message as a warning, which -Werror makes an error: the load-time notice must do */

struct hgt_state hgt;

static unsigned long buffer_kb = 2048;
module_param(buffer_kb, ulong, 0444);
MODULE_PARM_DESC(buffer_kb, "buffer size per CPU at load, KiB (default 2048; stop mode rounds up to a power of two)");

static unsigned int msa_threads = 4096;
module_param(msa_threads, uint, 0444);
MODULE_PARM_DESC(msa_threads, "microstate table capacity, threads (default 4096)");

static bool overwrite;
module_param(overwrite, bool, 0444);
MODULE_PARM_DESC(overwrite, "start in overwrite mode instead of stop-when-full");

/*
 * discard: for bench/run.py's split only. The probes run as always and count
 * what they produce, but records go nowhere (counted as refused, so the
 * recorder reports them lost): the cost of the probes without the buffer.
 * Read when a recording starts.
 */
static bool discard;
module_param(discard, bool, 0644);
MODULE_PARM_DESC(discard, "benchmarks only: count records as refused instead of storing them");

/*
 * Recording starts and stops with a flag the probes test (hgt.running); being
 * attached is apart. START attaches the probes if they are not, OFF (the
 * recorder's stop) clears the flag and waits only until no probe is writing,
 * and STOP (the recorder's last step, once its command has ended; rmmod)
 * detaches them too, without waiting for the tracepoints' grace periods
 * (tracepoint_synchronize_unregister; on 7.3 a normal RCU grace period, which
 * any task preempted inside an RCU read-side section holds up): only the
 * module's exit waits for them (hgt_tracepoints_sync). A recorder that
 * detached and waited as it stopped waited on the workload it had recorded
 * (docs/testing.md, "The hackbench stall under recording").
 */

/* hgt_detach - unregister the probes (a call already under way may finish later); caller holds ctl_lock */
static void hgt_detach(void)
{
	if (!hgt.attached)
		return;
	hgt_tracepoints_detach();
	hgt.attached = false;
}

/* hgt_start - the probes attached (again, if the events changed since), recording on; caller holds ctl_lock */
int hgt_start(void)
{
	int cpu, ret;

	if (hgt.running)
		return -EBUSY;
	/* irq nesting seen by a previous recording means nothing now (attached probes are off: untouched) */
	for_each_possible_cpu(cpu)
		per_cpu_ptr(&hgt_pcpu, cpu)->hard_depth = 0;
	hgt.discard = READ_ONCE(discard);
	if (hgt.discard)
		pr_info(HGT_NAME ": discard is set: this recording stores nothing\n");
	if (hgt.attached && hgt.attached_events != hgt.events)
		hgt_detach();
	if (!hgt.attached) {
		ret = hgt_tracepoints_attach(hgt.events);
		if (ret)
			return ret;
		hgt.attached = true;
		hgt.attached_events = hgt.events;
	}
	/* everything above is seen by a probe that sees the flag (x86: stores stay in order) */
	smp_store_release(&hgt.running, true);
	return 0;
}

/*
 * hgt_off - recording off, the probes left attached; returns once none is
 * writing, having waited on no task (hgt_probes_quiesce); caller holds ctl_lock
 */
void hgt_off(void)
{
	if (!hgt.running)
		return;
	/*
	 * Under read_lock: a reader takes "not running, its ring empty" to mean that no
	 * writer is left (final_lost, ring.c: the last LOST marker, stamped stop_tsc),
	 * and STATS "stopped" to mean that the counters are final. Both hold only once
	 * the quiesce has returned; a reader between the flag and the quiesce raced a
	 * probe still writing (a review of 2026-12-07: a second reader, not hgtrace's).
	 */
	mutex_lock(&hgt.read_lock);
	WRITE_ONCE(hgt.running, false);
	hgt_probes_quiesce();
	hgt.stop_tsc = rdtsc_ordered();
	mutex_unlock(&hgt.read_lock);
	hgt_funcs_resolve();	/* takes read_lock itself */
}

/* hgt_stop - recording off and the probes detached; caller holds ctl_lock */
void hgt_stop(void)
{
	hgt_off();
	hgt_detach();
}

static int __init hgt_init(void)
{
	int ret;

	if (buffer_kb < 8 || buffer_kb > (1ul << 20)) {
		pr_err(HGT_NAME ": buffer_kb=%lu is outside 8..1048576\n", buffer_kb);
		return -EINVAL;
	}
	mutex_init(&hgt.ctl_lock);
	mutex_init(&hgt.read_lock);
	spin_lock_init(&hgt.owner_lock);
	cpumask_copy(&hgt.cpus, cpu_possible_mask);
	hgt.events = HGT_EV_DEFAULT;

	ret = hgt_tracepoints_find();
	if (ret) {
		pr_err(HGT_NAME ": sched_switch tracepoint not found, cannot record\n");
		return ret;
	}
	hgt.events_available = hgt_tracepoints_available();
	hgt.events &= hgt.events_available;

	ret = hgt_probes_init();
	if (ret)
		return ret;
	ret = hgt_buffer_alloc(buffer_kb * 1024, overwrite ? HGT_MODE_OVERWRITE : HGT_MODE_STOP);
	if (ret)
		goto err_probes;
	ret = hgt_msa_alloc(msa_threads);
	if (ret)
		goto err_buffer;
	ret = hgt_proc_init();
	if (ret)
		goto err_msa;
	ret = hgt_ctl_init();
	if (ret)
		goto err_proc;

	pr_info(HGT_NAME ": ABI %u.%u, %lu KiB per CPU, TSC %u kHz, events 0x%x of 0x%x\n",
		HGT_ABI_MAJOR, HGT_ABI_MINOR, buffer_kb, tsc_khz, hgt.events, HGT_EV_ALL);
	if (HGT_RELEASE_UNVALIDATED)
		pr_notice(HGT_NAME ": Linux %s is not one of the releases this module was validated "
			  "on (" HGT_VALIDATED_RELEASES "): untested here; see kmod/compat.h\n", init_utsname()->release);
	return 0;

err_proc:
	hgt_proc_exit();
err_msa:
	hgt_msa_free();
err_buffer:
	hgt_buffer_free();
err_probes:
	hgt_probes_exit();
	return ret;
}

static void __exit hgt_exit(void)
{
	/* the device holds a module reference while open, so no reader is left */
	hgt_ctl_exit();
	mutex_lock(&hgt.ctl_lock);
	hgt_stop();
	mutex_unlock(&hgt.ctl_lock);
	/* every probe call left over from this or an earlier detach, before the code goes */
	hgt_tracepoints_sync();
	hgt_proc_exit();
	hgt_msa_free();
	hgt_buffer_free();
	hgt_probes_exit();
	pr_info(HGT_NAME ": unloaded\n");
}

module_init(hgt_init);
module_exit(hgt_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("hourglass ground-truth recorder: scheduler, irq, softirq, timer and IPI events stamped with the TSC");
/* modinfo says the ABI, as DKMS's PACKAGE_VERSION does (kmod/dkms.conf) */
MODULE_VERSION(__stringify(HGT_ABI_MAJOR) "." __stringify(HGT_ABI_MINOR));

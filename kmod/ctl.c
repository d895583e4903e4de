// SPDX-License-Identifier: GPL-2.0
/*
 * ctl.c - /dev/hgtrace: the control interface and the reader's data path.
 *
 * Root only (CAP_SYS_ADMIN at open and at every call, device mode 0600).
 * Every open file must first agree on the ABI with HGT_IOC_HELLO; until then
 * everything else fails with -EPROTO. The device holds a module reference while open, so rmmod is
 * refused while a reader is attached. The module belongs to the file that
 * first changed its settings or started it, until that file's STOP or close
 * (ABI 1.4; hgt_ctl_cmd): a second recorder cannot change, reset, drain or
 * stop the first one's recording, not even between its OFF and its STOP. A
 * recorder that dies leaves it running, unowned, like tracefs, and the next
 * HGT_IOC_STOP or rmmod ends it.
 * Recording stopped with HGT_IOC_OFF leaves the probes attached (and testing
 * a flag) until HGT_IOC_STOP or rmmod.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/capability.h>
#include <linux/uaccess.h>
#include <linux/slab.h>
#include <linux/bitmap.h>
#include <linux/string.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <asm/tsc.h>
#include "hgtrace.h"

struct hgt_file {
	bool hello;
};

static int hgt_open(struct inode *inode, struct file *f)
{
	struct hgt_file *hf;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	hf = kzalloc(sizeof(*hf), GFP_KERNEL);
	if (!hf)
		return -ENOMEM;
	f->private_data = hf;
	return 0;
}

/*
 * The owner and its pid change under hgt.owner_lock, a spinlock, not
 * ctl_lock: a close, STATS and /proc/hgtrace/status must not wait behind a
 * command that waits on the kernel (a STOP's text patching, an OFF's
 * interrupt on every CPU, CONFIG's allocations). Whether @hf may act is decided under
 * ctl_lock too (hgt_ctl_cmd), so no other file can claim in between.
 */

/* hgt_claim - @hf changed the settings or started: it owns them, unless someone does */
static void hgt_claim(struct hgt_file *hf)
{
	spin_lock(&hgt.owner_lock);
	if (!hgt.owner) {
		hgt.owner_pid = get_task_pid(current, PIDTYPE_TGID);
		WRITE_ONCE(hgt.owner, hf);
	}
	spin_unlock(&hgt.owner_lock);
}

/* hgt_unclaim - nobody owns the module if @hf did, or if @hf is NULL */
static void hgt_unclaim(struct hgt_file *hf)
{
	struct pid *pid = NULL;

	spin_lock(&hgt.owner_lock);
	if (!hf || hgt.owner == hf) {
		pid = hgt.owner_pid;
		hgt.owner_pid = NULL;
		WRITE_ONCE(hgt.owner, NULL);
	}
	spin_unlock(&hgt.owner_lock);
	put_pid(pid);
}

/*
 * hgt_owned_elsewhere - does another file own the module? Then @hf may not
 * change, drain or stop it. Callers hold ctl_lock, but for read(): a read
 * racing another file's first claim reads what was there before it.
 */
static bool hgt_owned_elsewhere(struct hgt_file *hf)
{
	const void *owner = READ_ONCE(hgt.owner);

	return owner && owner != hf;
}

/* hgt_owner_tgid - the owner's pid as the caller sees it, 0 for none (or not visible there) */
pid_t hgt_owner_tgid(void)
{
	pid_t nr;

	spin_lock(&hgt.owner_lock);
	nr = hgt.owner_pid ? pid_vnr(hgt.owner_pid) : 0;
	spin_unlock(&hgt.owner_lock);
	return nr;
}

/*
 * The owner's close gives the module up, whatever state it is in: a recorder
 * killed while recording leaves its recording running for `hgtrace stop`.
 */
static int hgt_release(struct inode *inode, struct file *f)
{
	hgt_unclaim(f->private_data);
	kfree(f->private_data);
	return 0;
}

static long hgt_hello(struct hgt_file *hf, void __user *arg)
{
	struct hgt_hello h;
	bool ok;

	if (copy_from_user(&h, arg, sizeof(h)))
		return -EFAULT;
	ok = h.abi_major == HGT_ABI_MAJOR;
	memset(&h, 0, sizeof(h));
	h.abi_major = HGT_ABI_MAJOR;
	h.abi_minor = HGT_ABI_MINOR;
	h.nr_cpu_ids = nr_cpu_ids;
	h.tsc_khz = tsc_khz;
	h.events_available = hgt.events_available;
	if (copy_to_user(arg, &h, sizeof(h)))
		return -EFAULT;
	hf->hello = ok;
	return ok ? 0 : -EPROTONOSUPPORT;
}

/* hgt_get_config - the settings in force; caller holds ctl_lock */
static void hgt_get_config(struct hgt_config *c)
{
	memset(c, 0, sizeof(*c));
	c->buffer_bytes = hgt.rb_bytes;
	c->mode = hgt.mode;
	c->events = hgt.events;
	c->msa_threads = hgt.msa_capacity;
}

/*
 * hgt_cpus_from_bits - the CPUs named by the first nbits bits of words;
 * none named means every CPU; EINVAL for a CPU that is not possible
 */
static int hgt_cpus_from_bits(const unsigned long *words, unsigned int nbits, struct cpumask *mask)
{
	unsigned int cpu;

	cpumask_clear(mask);
	for_each_set_bit(cpu, words, nbits) {
		if (cpu >= nr_cpu_ids || !cpu_possible(cpu))
			return -EINVAL;
		cpumask_set_cpu(cpu, mask);
	}
	if (cpumask_empty(mask))
		cpumask_copy(mask, cpu_possible_mask);
	return 0;
}

/*
 * hgt_set_config - validate everything first, then apply; stopped only;
 * caller holds ctl_lock. cpus: the CPUs to record, NULL to keep them.
 */
static long hgt_set_config(const struct hgt_config *c, const struct cpumask *cpus)
{
	int ret;

	if (hgt.running)
		return -EBUSY;
	if (c->flags || memchr_inv(c->reserved, 0, sizeof(c->reserved)))
		return -EINVAL;
	if (c->mode > HGT_MODE_OVERWRITE || (c->events & ~HGT_EV_ALL) || !c->events)
		return -EINVAL;
	if (c->events & ~hgt.events_available)
		return -EOPNOTSUPP;
	if (c->buffer_bytes && (c->buffer_bytes < 8192 || c->buffer_bytes > (1ull << 30)))
		return -EINVAL;
	if (c->msa_threads > (1u << 20))
		return -EINVAL;

	if ((c->buffer_bytes && c->buffer_bytes != hgt.rb_bytes) || c->mode != hgt.mode) {
		mutex_lock(&hgt.read_lock);
		ret = hgt_buffer_alloc(c->buffer_bytes ? c->buffer_bytes : hgt.rb_bytes, c->mode);
		mutex_unlock(&hgt.read_lock);
		if (ret)
			return ret;
	}
	if (c->msa_threads && c->msa_threads != hgt.msa_capacity) {
		ret = hgt_msa_alloc(c->msa_threads);
		if (ret)
			return ret;
	}
	hgt.events = c->events;
	if (cpus)
		cpumask_copy(&hgt.cpus, cpus);
	return 0;
}

/* ABI 1.0's CONFIG: the same settings, and CPUs 0..255 as a 256-bit mask */
static long hgt_set_config_1_0(const struct hgt_config_1_0 *old)
{
	struct hgt_config c = {
		.buffer_bytes = old->buffer_bytes, .mode = old->mode,
		.events = old->events, .msa_threads = old->msa_threads,
	};
	cpumask_var_t mask;
	long ret;

	BUILD_BUG_ON(sizeof(old->cpumask[0]) != sizeof(unsigned long));
	if (!alloc_cpumask_var(&mask, GFP_KERNEL))
		return -ENOMEM;
	ret = hgt_cpus_from_bits((const unsigned long *)old->cpumask, 256, mask);
	if (!ret)
		ret = hgt_set_config(&c, mask);
	free_cpumask_var(mask);
	return ret;
}

static void hgt_get_config_1_0(struct hgt_config_1_0 *old)
{
	struct hgt_config c;
	int cpu;

	hgt_get_config(&c);
	memset(old, 0, sizeof(*old));
	old->buffer_bytes = c.buffer_bytes;
	old->mode = c.mode;
	old->events = c.events;
	old->msa_threads = c.msa_threads;
	/* all that 1.0 can say; a reader of a machine with more CPUs needs 1.1 */
	for_each_cpu(cpu, &hgt.cpus)
		if (cpu < 256)
			old->cpumask[cpu / 64] |= 1ull << (cpu % 64);
}

/* hgt_set_cpus - HGT_IOC_SET_CPUS: the CPUs to record, a set of any size */
static long hgt_set_cpus(struct hgt_file *hf, void __user *arg)
{
	unsigned long *bits = NULL;
	struct hgt_cpus a;
	cpumask_var_t mask;
	long ret;

	if (copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	if (a.flags || memchr_inv(a.reserved, 0, sizeof(a.reserved)) || a.nbits > HGT_CPUS_MAX_BITS)
		return -EINVAL;
	if (!alloc_cpumask_var(&mask, GFP_KERNEL))
		return -ENOMEM;
	bits = bitmap_zalloc(max(a.nbits, 1u), GFP_KERNEL);
	ret = -ENOMEM;
	if (!bits)
		goto out;
	ret = -EFAULT;
	if (a.nbits && copy_from_user(bits, u64_to_user_ptr(a.bits),
				      BITS_TO_LONGS(a.nbits) * sizeof(long)))
		goto out;
	ret = hgt_cpus_from_bits(bits, a.nbits, mask);
	if (ret)
		goto out;
	mutex_lock(&hgt.ctl_lock);
	if (hgt.running || hgt_owned_elsewhere(hf)) {
		ret = -EBUSY;
	} else {
		cpumask_copy(&hgt.cpus, mask);
		hgt_claim(hf);
	}
	mutex_unlock(&hgt.ctl_lock);
out:
	bitmap_free(bits);
	free_cpumask_var(mask);
	return ret;
}

/* hgt_get_cpus - HGT_IOC_GET_CPUS: the CPUs recorded, nr_cpu_ids bits */
static long hgt_get_cpus(void __user *arg)
{
	unsigned long *bits;
	struct hgt_cpus a;
	u32 room;
	long ret = 0;

	if (copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	if (a.flags || memchr_inv(a.reserved, 0, sizeof(a.reserved)))
		return -EINVAL;
	room = a.nbits;
	a.nbits = nr_cpu_ids;
	if (copy_to_user(arg, &a, sizeof(a)))
		return -EFAULT;
	if (room < nr_cpu_ids)
		return -ENOSPC;
	bits = bitmap_zalloc(nr_cpu_ids, GFP_KERNEL);
	if (!bits)
		return -ENOMEM;
	mutex_lock(&hgt.ctl_lock);
	bitmap_copy(bits, cpumask_bits(&hgt.cpus), nr_cpu_ids);
	mutex_unlock(&hgt.ctl_lock);
	if (copy_to_user(u64_to_user_ptr(a.bits), bits, BITS_TO_LONGS(nr_cpu_ids) * sizeof(long)))
		ret = -EFAULT;
	bitmap_free(bits);
	return ret;
}

static long hgt_set_filter(const struct hgt_filter *flt)
{
	u32 i;

	if (hgt.running)
		return -EBUSY;
	if (flt->nr > HGT_FILTER_MAX || flt->flags)
		return -EINVAL;
	for (i = 0; i < flt->nr; i++)
		if (flt->pids[i] <= 0)
			return -EINVAL;
	hgt.filter = *flt;
	return 0;
}

static long hgt_reset(void)
{
	if (hgt.running)
		return -EBUSY;
	mutex_lock(&hgt.read_lock);
	hgt_buffer_reset();
	hgt_probes_reset();
	mutex_unlock(&hgt.read_lock);
	hgt_msa_reset();
	return 0;
}

/*
 * hgt_stats - HGT_IOC_STATS of either version: 1.0's layout is the start of
 * 1.1's, so @size bytes are written back
 */
static long hgt_stats(void __user *arg, size_t size)
{
	struct hgt_stats st;

	BUILD_BUG_ON(offsetof(struct hgt_stats, msa_overflow) !=
		     offsetof(struct hgt_stats_1_0, msa_overflow));
	memset(&st, 0, sizeof(st));
	if (copy_from_user(&st.cpu, arg, sizeof(st.cpu)))
		return -EFAULT;
	if (st.cpu >= nr_cpu_ids || !cpu_possible(st.cpu))
		return -EINVAL;
	/* read_lock: HGT_IOC_CONFIG may be replacing the buffer under us */
	mutex_lock(&hgt.read_lock);
	hgt_buffer_stats(st.cpu, &st.s);
	/* under read_lock: "stopped" is said once no probe writes (hgt_off) */
	st.state = hgt.running ? HGT_STATE_RUNNING : HGT_STATE_STOPPED;
	mutex_unlock(&hgt.read_lock);
	st.msa_overflow = hgt_msa_overflow();
	st.funcs_unnamed = hgt_funcs_unnamed();
	st.owner = hgt_owner_tgid();
	return copy_to_user(arg, &st, size) ? -EFAULT : 0;
}

/* hgt_msa_ioctl - HGT_IOC_MSA of either version: 1.0's layout is the start of 1.1's */
static long hgt_msa_ioctl(void __user *arg, size_t size)
{
	struct hgt_msa m;
	int ret;

	BUILD_BUG_ON(offsetof(struct hgt_msa, cycles) != offsetof(struct hgt_msa_1_0, cycles) ||
		     sizeof(struct hgt_msa_1_0) > offsetof(struct hgt_msa, reserved));
	memset(&m, 0, sizeof(m));
	if (copy_from_user(&m.pid, arg, sizeof(m.pid)))
		return -EFAULT;
	/* ctl_lock: HGT_IOC_CONFIG may be replacing the table under us */
	mutex_lock(&hgt.ctl_lock);
	ret = hgt_msa_get(&m);
	mutex_unlock(&hgt.ctl_lock);
	if (ret)
		return ret;
	return copy_to_user(arg, &m, size) ? -EFAULT : 0;
}

/*
 * hgt_ctl_cmd - the commands that change, start or stop the recording: under
 * ctl_lock, and refused (EBUSY) to a file other than the owner. The first
 * that succeeds makes @hf the owner, so that its settings are still its own
 * when it starts; its STOP gives the module up (its OFF does not: it drains
 * before its STOP, and nobody else may reset, start or read until then).
 */
static long hgt_ctl_cmd(struct hgt_file *hf, unsigned int cmd, void __user *uarg)
{
	union {
		struct hgt_config c;
		struct hgt_config_1_0 c10;
		struct hgt_filter flt;
	} u;
	long ret = 0;

	if (cmd == HGT_IOC_CONFIG && copy_from_user(&u.c, uarg, sizeof(u.c)))
		return -EFAULT;
	if (cmd == HGT_IOC_CONFIG_1_0 && copy_from_user(&u.c10, uarg, sizeof(u.c10)))
		return -EFAULT;
	if (cmd == HGT_IOC_FILTER && copy_from_user(&u.flt, uarg, sizeof(u.flt)))
		return -EFAULT;
	mutex_lock(&hgt.ctl_lock);
	if (hgt_owned_elsewhere(hf)) {
		mutex_unlock(&hgt.ctl_lock);
		return -EBUSY;
	}
	switch (cmd) {
	case HGT_IOC_CONFIG:
		ret = hgt_set_config(&u.c, NULL);
		break;
	case HGT_IOC_CONFIG_1_0:
		ret = hgt_set_config_1_0(&u.c10);
		break;
	case HGT_IOC_FILTER:
		ret = hgt_set_filter(&u.flt);
		break;
	case HGT_IOC_START:
		ret = hgt_start();
		break;
	case HGT_IOC_OFF:
		hgt_off();
		mutex_unlock(&hgt.ctl_lock);
		return 0;
	case HGT_IOC_STOP:
		hgt_stop();
		hgt_unclaim(NULL);
		mutex_unlock(&hgt.ctl_lock);
		return 0;
	case HGT_IOC_RESET:
		ret = hgt_reset();
		break;
	}
	if (!ret)
		hgt_claim(hf);
	mutex_unlock(&hgt.ctl_lock);
	return ret;
}

static long hgt_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct hgt_file *hf = f->private_data;
	void __user *uarg = (void __user *)arg;
	union {
		struct hgt_config c;
		struct hgt_config_1_0 c10;
		struct hgt_filter flt;
	} u;

	/* checked at every call, not only at open: a file passed to another process */
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (cmd == HGT_IOC_HELLO)
		return hgt_hello(hf, uarg);
	if (!hf->hello)
		return -EPROTO;
	switch (cmd) {
	case HGT_IOC_CONFIG:
	case HGT_IOC_CONFIG_1_0:
	case HGT_IOC_FILTER:
	case HGT_IOC_START:
	case HGT_IOC_OFF:
	case HGT_IOC_STOP:
	case HGT_IOC_RESET:
		return hgt_ctl_cmd(hf, cmd, uarg);
	case HGT_IOC_GET_CONFIG:
		mutex_lock(&hgt.ctl_lock);
		hgt_get_config(&u.c);
		mutex_unlock(&hgt.ctl_lock);
		return copy_to_user(uarg, &u.c, sizeof(u.c)) ? -EFAULT : 0;
	case HGT_IOC_GET_CONFIG_1_0:
		mutex_lock(&hgt.ctl_lock);
		hgt_get_config_1_0(&u.c10);
		mutex_unlock(&hgt.ctl_lock);
		return copy_to_user(uarg, &u.c10, sizeof(u.c10)) ? -EFAULT : 0;
	case HGT_IOC_SET_CPUS:
		return hgt_set_cpus(hf, uarg);
	case HGT_IOC_GET_CPUS:
		return hgt_get_cpus(uarg);
	case HGT_IOC_GET_FILTER:
		mutex_lock(&hgt.ctl_lock);
		u.flt = hgt.filter;
		mutex_unlock(&hgt.ctl_lock);
		return copy_to_user(uarg, &u.flt, sizeof(u.flt)) ? -EFAULT : 0;
	case HGT_IOC_STATS:
	case HGT_IOC_STATS_1_0:
		return hgt_stats(uarg, _IOC_SIZE(cmd));
	case HGT_IOC_MSA:
	case HGT_IOC_MSA_1_0:
		return hgt_msa_ioctl(uarg, _IOC_SIZE(cmd));
	default:
		return -ENOTTY;
	}
}

static ssize_t hgt_read(struct file *f, char __user *buf, size_t count, loff_t *pos)
{
	struct hgt_file *hf = f->private_data;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (!hf->hello)
		return -EPROTO;
	/* another file's recording is drained by its owner alone */
	if (hgt_owned_elsewhere(hf))
		return -EBUSY;
	return hgt_buffer_read(buf, count);
}

static const struct file_operations hgt_fops = {
	.owner = THIS_MODULE,
	.open = hgt_open,
	.release = hgt_release,
	.read = hgt_read,
	.unlocked_ioctl = hgt_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice hgt_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = HGT_NAME,
	.fops = &hgt_fops,
	.mode = 0600,
};

int hgt_ctl_init(void)
{
	return misc_register(&hgt_misc);
}

void hgt_ctl_exit(void)
{
	misc_deregister(&hgt_misc);
}

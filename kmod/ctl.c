// SPDX-License-Identifier: GPL-2.0
/*
 * ctl.c - /dev/hgtrace: the control interface and the reader's data path.
 *
 * Root only (CAP_SYS_ADMIN, device mode 0600). Every open file must first
 * agree on the ABI with HGT_IOC_HELLO; until then everything else fails with
 * -EPROTO. The device holds a module reference while open, so rmmod is
 * refused while a reader is attached. Recording state does not belong to a
 * file: a recorder that dies leaves it running, like tracefs, and the next
 * HGT_IOC_STOP or rmmod ends it.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/capability.h>
#include <linux/uaccess.h>
#include <linux/slab.h>
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

static int hgt_release(struct inode *inode, struct file *f)
{
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

static void hgt_get_config(struct hgt_config *c)
{
	int cpu;

	memset(c, 0, sizeof(*c));
	c->buffer_bytes = hgt.rb_bytes;
	c->mode = hgt.mode;
	c->events = hgt.events;
	c->msa_threads = hgt.msa_capacity;
	for_each_cpu(cpu, &hgt.cpus)
		if (cpu < 256)
			c->cpumask[cpu / 64] |= 1ull << (cpu % 64);
}

/* hgt_set_config - validate everything first, then apply; stopped only */
static long hgt_set_config(const struct hgt_config *c)
{
	struct cpumask mask;
	int cpu, ret;
	bool any = false;

	if (hgt.running)
		return -EBUSY;
	if (c->mode > HGT_MODE_OVERWRITE || (c->events & ~HGT_EV_ALL) || !c->events)
		return -EINVAL;
	if (c->events & ~hgt.events_available)
		return -EOPNOTSUPP;
	if (c->buffer_bytes && (c->buffer_bytes < 8192 || c->buffer_bytes > (1ull << 30)))
		return -EINVAL;
	if (c->msa_threads > (1u << 20))
		return -EINVAL;
	cpumask_clear(&mask);
	for (cpu = 0; cpu < 256; cpu++) {
		if (!(c->cpumask[cpu / 64] & (1ull << (cpu % 64))))
			continue;
		if (cpu >= nr_cpu_ids || !cpu_possible(cpu))
			return -EINVAL;
		cpumask_set_cpu(cpu, &mask);
		any = true;
	}
	if (!any)
		cpumask_copy(&mask, cpu_possible_mask);

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
	cpumask_copy(&hgt.cpus, &mask);
	return 0;
}

static long hgt_set_filter(const struct hgt_filter *flt)
{
	u32 i;

	if (hgt.running)
		return -EBUSY;
	if (flt->nr > HGT_FILTER_MAX)
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

static long hgt_stats(void __user *arg)
{
	struct hgt_stats st;

	if (copy_from_user(&st, arg, sizeof(st)))
		return -EFAULT;
	if (st.cpu >= nr_cpu_ids || !cpu_possible(st.cpu))
		return -EINVAL;
	memset(&st.s, 0, sizeof(st.s));
	/* read_lock: HGT_IOC_CONFIG may be replacing the buffer under us */
	mutex_lock(&hgt.read_lock);
	hgt_buffer_stats(st.cpu, &st.s);
	mutex_unlock(&hgt.read_lock);
	st.state = hgt.running ? HGT_STATE_RUNNING : HGT_STATE_STOPPED;
	st.msa_overflow = hgt_msa_overflow();
	return copy_to_user(arg, &st, sizeof(st)) ? -EFAULT : 0;
}

static long hgt_msa_ioctl(void __user *arg)
{
	struct hgt_msa m;
	int ret;

	if (copy_from_user(&m, arg, sizeof(m)))
		return -EFAULT;
	/* ctl_lock: HGT_IOC_CONFIG may be replacing the table under us */
	mutex_lock(&hgt.ctl_lock);
	ret = hgt_msa_get(&m);
	mutex_unlock(&hgt.ctl_lock);
	if (ret)
		return ret;
	return copy_to_user(arg, &m, sizeof(m)) ? -EFAULT : 0;
}

static long hgt_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct hgt_file *hf = f->private_data;
	void __user *uarg = (void __user *)arg;
	union {
		struct hgt_config c;
		struct hgt_filter flt;
	} u;
	long ret;

	if (cmd == HGT_IOC_HELLO)
		return hgt_hello(hf, uarg);
	if (!hf->hello)
		return -EPROTO;

	switch (cmd) {
	case HGT_IOC_CONFIG:
		if (copy_from_user(&u.c, uarg, sizeof(u.c)))
			return -EFAULT;
		mutex_lock(&hgt.ctl_lock);
		ret = hgt_set_config(&u.c);
		mutex_unlock(&hgt.ctl_lock);
		return ret;
	case HGT_IOC_GET_CONFIG:
		mutex_lock(&hgt.ctl_lock);
		hgt_get_config(&u.c);
		mutex_unlock(&hgt.ctl_lock);
		return copy_to_user(uarg, &u.c, sizeof(u.c)) ? -EFAULT : 0;
	case HGT_IOC_FILTER:
		if (copy_from_user(&u.flt, uarg, sizeof(u.flt)))
			return -EFAULT;
		mutex_lock(&hgt.ctl_lock);
		ret = hgt_set_filter(&u.flt);
		mutex_unlock(&hgt.ctl_lock);
		return ret;
	case HGT_IOC_START:
		mutex_lock(&hgt.ctl_lock);
		ret = hgt_start();
		mutex_unlock(&hgt.ctl_lock);
		return ret;
	case HGT_IOC_STOP:
		mutex_lock(&hgt.ctl_lock);
		hgt_stop();
		mutex_unlock(&hgt.ctl_lock);
		return 0;
	case HGT_IOC_RESET:
		mutex_lock(&hgt.ctl_lock);
		ret = hgt_reset();
		mutex_unlock(&hgt.ctl_lock);
		return ret;
	case HGT_IOC_STATS:
		return hgt_stats(uarg);
	case HGT_IOC_MSA:
		return hgt_msa_ioctl(uarg);
	default:
		return -ENOTTY;
	}
}

static ssize_t hgt_read(struct file *f, char __user *buf, size_t count, loff_t *pos)
{
	struct hgt_file *hf = f->private_data;

	if (!hf->hello)
		return -EPROTO;
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

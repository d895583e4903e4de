/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hgt_dev.h - talking to /dev/hgtrace: open, agree on the ABI, control.
 *
 * The helpers below speak the module's own minor version (from HELLO): ABI
 * 1.1's ioctls with a 1.1 module, 1.0's layouts with a 1.0 module, so that
 * callers see one interface whatever module is loaded.
 */
#ifndef HGT_DEV_H
#define HGT_DEV_H

#include <stdint.h>
#include <sys/types.h>
#include "hgtrace.h"

/* Exit codes shared by every hgtrace subcommand (like rtla: "could not run" != "ran"). */
#define HGT_EXIT_OK		0
#define HGT_EXIT_USAGE		1	/* bad command line */
#define HGT_EXIT_ENV		2	/* could not run: no module, no privileges, ABI mismatch */
#define HGT_EXIT_DATA		3	/* bad or truncated input file */

struct hgt_dev {
	int fd;
	struct hgt_hello hello;		/* what the module said */
};

int hgt_dev_open(struct hgt_dev *d);
void hgt_dev_close(struct hgt_dev *d);
int hgt_dev_ioctl(struct hgt_dev *d, unsigned long cmd, void *arg, const char *what);

/* Each returns 0, or -1 with a message on stderr that names what was being done. */
int hgt_dev_get_config(struct hgt_dev *d, struct hgt_config *c);
int hgt_dev_set_config(struct hgt_dev *d, const struct hgt_config *c);
/* hgt_dev_get_cpus - the CPUs recorded: *bits (malloc'd, free it) of *nbits = nr_cpu_ids bits */
int hgt_dev_get_cpus(struct hgt_dev *d, uint64_t **bits, unsigned int *nbits);
/* hgt_dev_set_cpus - record the CPUs of @bits (@nbits bits); none set = every CPU */
int hgt_dev_set_cpus(struct hgt_dev *d, const uint64_t *bits, unsigned int nbits);
/* hgt_dev_get_filter - the pid filter in force; 1 (no message) when the module cannot say (1.0) */
int hgt_dev_get_filter(struct hgt_dev *d, struct hgt_filter *f);
/*
 * hgt_dev_off - recording off, the probes left attached where the module can
 * (1.3: HGT_IOC_OFF, which waits on no task); HGT_IOC_STOP on an older one.
 * Quiet and async-signal-safe: -1 with errno.
 */
int hgt_dev_off(const struct hgt_dev *d);
/* hgt_dev_owner - the pid owning the module (ABI 1.4), 0 for none or an older module */
pid_t hgt_dev_owner(struct hgt_dev *d);
/* hgt_dev_stats, hgt_dev_msa - quiet: -1 with errno, for callers that go on to the next CPU or pid */
int hgt_dev_stats(struct hgt_dev *d, unsigned int cpu, struct hgt_stats *st);
int hgt_dev_msa(struct hgt_dev *d, struct hgt_msa *m);

#endif

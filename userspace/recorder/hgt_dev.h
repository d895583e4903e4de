/* SPDX-License-Identifier: GPL-2.0 */
/* hgt_dev.h - talking to /dev/hgtrace: open, agree on the ABI, control */
#ifndef HGT_DEV_H
#define HGT_DEV_H

#include <stdint.h>
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

#endif

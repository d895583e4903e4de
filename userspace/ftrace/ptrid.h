/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ptrid.h - ids that stand for kernel pointers without revealing them.
 *
 * The module names timers, callbacks and NMI handlers by a keyed SipHash of
 * their address, with a key drawn when it loads (docs/hgtrace-abi.md). The
 * ftrace recorder does the same with a key drawn per recording, so the same
 * pointer gets the same id within one file and the file holds no address.
 * The two recorders' ids differ (different keys); only equality within one
 * file means anything.
 */
#ifndef HG_PTRID_H
#define HG_PTRID_H

#include <stdint.h>

struct ptrid_key {
	uint64_t k0, k1;
};

/* ptrid_key_init - draw a fresh key (getrandom); -1 if the kernel gives none */
int ptrid_key_init(struct ptrid_key *key);
/* ptrid - SipHash-2-4 of one 64-bit word, folded to a nonzero 32-bit id */
uint32_t ptrid(const struct ptrid_key *key, uint64_t ptr);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hgt_columns.h - what the packer (hgt_pack.c) and the unpacker
 * (hgt_decode.c) of packed chunks must agree on. Private to the library.
 */
#ifndef HGT_COLUMNS_H
#define HGT_COLUMNS_H

#include <stdint.h>
#include "hgtrace.h"

static inline uint64_t hgt_zigzag(int64_t d)
{
	return d >= 0 ? (uint64_t)d << 1 : (((uint64_t)-(d + 1)) << 1) | 1;
}

static inline int64_t hgt_unzigzag(uint64_t z)
{
	return z & 1 ? -(int64_t)(z >> 1) - 1 : (int64_t)(z >> 1);
}

/*
 * hgt_arg_ref - whose previous arg predicts this type's arg
 *
 * An exit names what its entry named (the irq, the vector, the timer), and a
 * wakeup the task its waking named: a delta from the entry is 0 where a delta
 * from the last exit of the same kind is often large (timer ids are hashes).
 */
static inline uint8_t hgt_arg_ref(uint8_t type)
{
	switch (type) {
	case HGT_REC_IRQ_EXIT:		return HGT_REC_IRQ_ENTRY;
	case HGT_REC_SOFTIRQ_EXIT:	return HGT_REC_SOFTIRQ_ENTRY;
	case HGT_REC_VEC_EXIT:		return HGT_REC_VEC_ENTRY;
	case HGT_REC_HRTIMER_EXIT:	return HGT_REC_HRTIMER_ENTRY;
	case HGT_REC_WAKEUP:		return HGT_REC_WAKING;
	default:			return type;
	}
}

/* a varint of a 32-bit value or a zigzag of a 32-bit difference takes at most 5 bytes */
#define HGT_VARINT_MAX 5

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kitem.h - a kernel record as the exporters hold it in their reorder
 * windows (reorder.h): RO_ITEM bytes, its key first.
 */
#ifndef KITEM_H
#define KITEM_H

#include <stdint.h>
#include <string.h>
#include "hgtrace.h"
#include "reorder.h"

struct kitem {
	uint64_t ts;		/* as written: TSC cycles from base_tsc */
	uint8_t rank;
	uint8_t type, flags, aux;
	uint32_t arg;
	uint32_t p[4];		/* the payload's first 16 bytes (every type the exports use fits) */
};
_Static_assert(sizeof(struct kitem) == RO_ITEM, "a kernel record fills a reorder slot");

/* kitem_payload - the payload bytes a record of @type must have */
static inline unsigned kitem_payload(unsigned type)
{
	switch (type) {
	case HGT_REC_SWITCH:
		return sizeof(struct hgt_switch);
	case HGT_REC_WAKING: case HGT_REC_WAKEUP: case HGT_REC_WAKEUP_NEW:
		return sizeof(struct hgt_wake);
	case HGT_REC_MIGRATE:
		return sizeof(struct hgt_migrate);
	case HGT_REC_NMI:
		return sizeof(struct hgt_nmi);
	case HGT_REC_HRTIMER_ENTRY:
		return sizeof(struct hgt_hrtimer);
	case HGT_REC_COMM:
		return sizeof(struct hgt_comm);
	case HGT_REC_NAME:
		return sizeof(struct hgt_name);
	case HGT_REC_LOST:
		return sizeof(struct hgt_lost);
	}
	return 0;
}

static inline void kitem_fill(struct kitem *it, const struct hgt_rec *r, unsigned payload)
{
	it->type = r->type;
	it->flags = r->flags;
	it->aux = r->aux;
	it->arg = r->arg;
	/* constant sizes: a call to memcpy would cost more than the copy */
	if (payload >= 16)
		memcpy(it->p, r + 1, 16);
	else if (payload >= 8)
		memcpy(it->p, r + 1, 8);
}

#endif

// SPDX-License-Identifier: GPL-2.0
/* abi_layout - print the ABI's sizes, offsets and enum values for test_abi.py */
#include <stddef.h>
#include <stdio.h>
#include "hgtrace.h"

#define S(t) printf("sizeof %s %zu\n", #t, sizeof(struct t))
#define O(t, f) printf("offsetof %s.%s %zu\n", #t, #f, offsetof(struct t, f))
#define E(v) printf("enum %s %d\n", #v, v)

int main(void)
{
	S(hgt_rec); S(hgt_switch); S(hgt_wake); S(hgt_migrate); S(hgt_nmi); S(hgt_hrtimer);
	S(hgt_comm); S(hgt_name); S(hgt_lost); S(hgt_chunk); S(hgt_cpu_stats);
	O(hgt_rec, tsc); O(hgt_rec, type); O(hgt_rec, len); O(hgt_rec, flags); O(hgt_rec, aux);
	O(hgt_rec, arg); O(hgt_switch, prev_state); O(hgt_switch, next_prio); O(hgt_comm, comm);
	E(HGT_REC_SWITCH); E(HGT_REC_WAKING); E(HGT_REC_WAKEUP); E(HGT_REC_WAKEUP_NEW);
	E(HGT_REC_MIGRATE); E(HGT_REC_EXIT); E(HGT_REC_IRQ_ENTRY); E(HGT_REC_IRQ_EXIT);
	E(HGT_REC_SOFTIRQ_ENTRY); E(HGT_REC_SOFTIRQ_EXIT); E(HGT_REC_VEC_ENTRY); E(HGT_REC_VEC_EXIT);
	E(HGT_REC_NMI); E(HGT_REC_HRTIMER_ENTRY); E(HGT_REC_HRTIMER_EXIT); E(HGT_REC_SYS_ENTER);
	E(HGT_REC_SYS_EXIT); E(HGT_REC_COMM); E(HGT_REC_NAME); E(HGT_REC_LOST); E(HGT_REC_MAX);
	E(HGT_CHUNK_MAGIC);
	return 0;
}

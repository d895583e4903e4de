/* SPDX-License-Identifier: GPL-2.0 */
/*
 * spool.h - ring-buffer pages read from trace_pipe_raw, kept per CPU as they came.
 *
 * Reading a page while the command runs costs one read(); turning its events
 * into records costs far more, so the recorder keeps the pages and converts
 * them once the command is over (or when the pages held pass a limit). Pages
 * are numbered per CPU from 0 in the order read, so that a loss noted at a
 * drain can name the page where it belongs.
 */
#ifndef HG_SPOOL_H
#define HG_SPOOL_H

#include <stddef.h>
#include <stdint.h>

struct spool_cpu {
	char **blocks;
	size_t nblocks;
	size_t npages;		/* held */
	uint64_t first;		/* number of the first page held */
};

struct spool {
	size_t psize;		/* bytes a page takes (the sub-buffer size) */
	size_t per_block;	/* pages a block holds */
	size_t bytes;		/* held over all CPUs */
	int ncpus;
	struct spool_cpu *cpu;
};

int spool_init(struct spool *s, int ncpus, size_t psize);
void spool_free(struct spool *s);
/* spool_slot - where @cpu's next page goes (psize bytes); NULL when out of memory */
char *spool_slot(struct spool *s, int cpu);
/* spool_commit - the slot now holds a page */
void spool_commit(struct spool *s, int cpu);
/* spool_next - the number the next page of @cpu will get */
uint64_t spool_next(const struct spool *s, int cpu);
/* spool_page - page number @n of @cpu (held: first <= n < first + npages) */
char *spool_page(const struct spool *s, int cpu, uint64_t n);
/* spool_release - forget every page @cpu holds (numbering goes on) */
void spool_release(struct spool *s, int cpu);

#endif

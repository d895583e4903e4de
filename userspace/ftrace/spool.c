// SPDX-License-Identifier: GPL-2.0
/*
 * spool.c - pages in blocks of 1 MiB, so that holding many costs few allocations.
 */
#include <stdlib.h>
#include <string.h>
#include "spool.h"

#define BLOCK_BYTES	(1u << 20)

int spool_init(struct spool *s, int ncpus, size_t psize)
{
	memset(s, 0, sizeof(*s));
	s->psize = psize;
	s->per_block = BLOCK_BYTES / psize ? BLOCK_BYTES / psize : 1;
	s->ncpus = ncpus;
	s->cpu = calloc(ncpus, sizeof(*s->cpu));
	return s->cpu ? 0 : -1;
}

void spool_free(struct spool *s)
{
	int cpu;

	for (cpu = 0; s->cpu && cpu < s->ncpus; cpu++)
		spool_release(s, cpu);
	for (cpu = 0; s->cpu && cpu < s->ncpus; cpu++)
		free(s->cpu[cpu].blocks);
	free(s->cpu);
	s->cpu = NULL;
}

char *spool_slot(struct spool *s, int cpu)
{
	struct spool_cpu *c = &s->cpu[cpu];
	size_t b = c->npages / s->per_block;

	if (b == c->nblocks) {
		char **nb = realloc(c->blocks, (b + 1) * sizeof(*nb));

		if (!nb)
			return NULL;
		c->blocks = nb;
		c->blocks[b] = malloc(s->per_block * s->psize);
		if (!c->blocks[b])
			return NULL;
		c->nblocks = b + 1;
		s->bytes += s->per_block * s->psize;
	}
	return c->blocks[b] + (c->npages % s->per_block) * s->psize;
}

void spool_commit(struct spool *s, int cpu)
{
	s->cpu[cpu].npages++;
}

uint64_t spool_next(const struct spool *s, int cpu)
{
	return s->cpu[cpu].first + s->cpu[cpu].npages;
}

char *spool_page(const struct spool *s, int cpu, uint64_t n)
{
	const struct spool_cpu *c = &s->cpu[cpu];
	size_t i = n - c->first;

	return c->blocks[i / s->per_block] + (i % s->per_block) * s->psize;
}

void spool_release(struct spool *s, int cpu)
{
	struct spool_cpu *c = &s->cpu[cpu];
	size_t b;

	for (b = 0; b < c->nblocks; b++)
		free(c->blocks[b]);
	s->bytes -= c->nblocks * s->per_block * s->psize;
	c->nblocks = 0;
	c->first += c->npages;
	c->npages = 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * ksyms.c - one pass over /proc/kallsyms for a handful of addresses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ksyms.h"

unsigned int ksyms_name(const uint64_t *addr, unsigned int n, char (*names)[32])
{
	uint64_t *best = calloc(n ? n : 1, sizeof(*best));
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256] = "", type;
	unsigned long long a;
	unsigned int i, named = 0, exact = 0;

	for (i = 0; i < n; i++)
		names[i][0] = 0;
	if (!f || !best) {
		if (f)
			fclose(f);
		free(best);
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 || !a)
			continue;
		/* text symbols only: callbacks are functions */
		if (type != 't' && type != 'T')
			continue;
		for (i = 0; i < n; i++)
			if (a <= addr[i] && a > best[i]) {
				best[i] = a;
				memcpy(names[i], name, 31);
				names[i][31] = 0;
				exact += a == addr[i];
			}
		/* callbacks are function entries: once each has its exact symbol, the rest cannot do better */
		if (exact == n)
			break;
	}
	fclose(f);
	for (i = 0; i < n; i++)
		named += names[i][0] != 0;
	free(best);
	return named;
}

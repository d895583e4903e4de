// SPDX-License-Identifier: GPL-2.0
/*
 * labels.c - the user's names for what ran beside hourglass: `--label
 * PID=NAME`, `--label comm:PREFIX=NAME` (every task whose comm starts so: a
 * load's forked workers), `--label irq:N=NAME`. `hourglass record --load`
 * labels its loads; the report then says what each load did to the gaps.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

enum { L_PID, L_COMM, L_IRQ };

struct label {
	int kind;
	uint32_t id;
	char *prefix;
	char *name;
};

static struct label *labels;
static size_t nlabels, caplabels;

int labels_add(const char *spec)
{
	const char *eq = strrchr(spec, '=');
	struct label l = { 0 };
	char *end;

	if (!eq || eq == spec || !eq[1])
		return -1;
	l.name = xstrdup(eq + 1);
	if (!strncmp(spec, "comm:", 5)) {
		l.kind = L_COMM;
		l.prefix = strndup(spec + 5, eq - spec - 5);
		if (!*l.prefix)
			return -1;
	} else {
		unsigned long v;

		l.kind = strncmp(spec, "irq:", 4) ? L_PID : L_IRQ;
		v = strtoul(spec + (l.kind == L_IRQ ? 4 : 0), &end, 10);
		if (end != eq || v > UINT32_MAX)
			return -1;
		l.id = (uint32_t)v;
	}
	VEC_PUSH(labels, nlabels, caplabels, l);
	return 0;
}

int labels_any(void)
{
	return nlabels > 0;
}

size_t labels_count(void)
{
	return nlabels;
}

const char *labels_name(size_t i)
{
	return labels[i].name;
}

/* labels_task - the label of a task: by pid first, then by its comm; -1 if none */
int labels_task(uint32_t pid)
{
	const char *comm = NULL;
	size_t i;

	if (!nlabels || !pid)
		return -1;
	for (i = 0; i < nlabels; i++)
		if (labels[i].kind == L_PID && labels[i].id == pid)
			return (int)i;
	for (i = 0; i < nlabels; i++) {
		if (labels[i].kind != L_COMM)
			continue;
		if (!comm && !(comm = names_comm(pid)))
			return -1;
		if (!strncmp(comm, labels[i].prefix, strlen(labels[i].prefix)))
			return (int)i;
	}
	return -1;
}

int labels_irq(uint32_t irq)
{
	size_t i;

	for (i = 0; i < nlabels; i++)
		if (labels[i].kind == L_IRQ && labels[i].id == irq)
			return (int)i;
	return -1;
}

/* labels_comp - the label of a gap's component (a task or an irq), -1 if none */
int labels_comp(uint8_t kind, int64_t id)
{
	if (kind == HGG_K_TASK && id > 0)
		return labels_task((uint32_t)id);
	if (kind == HGG_K_IRQ && id >= 0)
		return labels_irq((uint32_t)id);
	return -1;
}

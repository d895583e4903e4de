// SPDX-License-Identifier: GPL-2.0
/*
 * classes.c - hgmerge --classes FILE: a class for each gap, decided outside the merger (a
 * profile's model, hourglass report --profile), put in the rules' place. The merger still
 * judges, counts and exports every gap: the classes change only what the inference says, so
 * every figure and file comes from the one engine, whoever inferred.
 *
 * FILE (docs/profile.md, "THE CLASSES FILE"): the line "hourglass-classes 1", then a line a
 * gap, "CPU G0 CLASS": the gap's CPU, its g0 (the TSC of the thread's last read before it, as
 * the gap stream gives it) and a class name of the gap stream's (switch_hg ... hidden). Blank
 * lines and lines starting with # are skipped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "export.h"	/* hgg_class_name: the one table of the classes' names */

struct klass {
	uint64_t g0;
	uint32_t cpu;
	uint8_t cls;
};

struct classes {
	const char *path;
	struct klass *k;
	size_t n, cap;
	uint64_t applied, missing;	/* involuntary gaps found in the file, and not */
};

/*
 * may_say - whether a profile's model may name a gap @cls: the inference's classes, by their
 * names in the one table (hgg_class_name, export_names.c), not by their place in the enum;
 * not voluntary (the thread's own), nor other and unexplainable (the kernel's account alone)
 */
static int may_say(int cls)
{
	return cls != HGG_C_VOLUNTARY && cls != HGG_C_OTHER && cls != HGG_C_UNEXPLAINABLE;
}

/* class_of - the class named @name that a model may say, -1 for none */
static int class_of(const char *name)
{
	int k;

	for (k = 0; k < HGG_C_N; k++)
		if (may_say(k) && !strcmp(name, hgg_class_name[k]))
			return k;
	return -1;
}

/* classes_listed - the names a model may say, for an error: "switch_hg, switch_other, ..." */
static const char *classes_listed(char *buf, size_t size)
{
	size_t at = 0;
	int k;

	buf[0] = 0;
	for (k = 0; k < HGG_C_N; k++)
		if (may_say(k) && at < size)
			at += (size_t)snprintf(buf + at, size - at, "%s%s", at ? ", " : "", hgg_class_name[k]);
	return buf;
}

static int by_key(const void *a, const void *b)
{
	const struct klass *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->g0 < y->g0 ? -1 : x->g0 > y->g0;
}

struct classes *classes_read(const char *path)
{
	struct classes *c = xcalloc(1, sizeof(*c));
	FILE *f = fopen(path, "r");
	char line[256];
	size_t lineno = 0, i;

	if (!f)
		fail_env("%s: cannot open: %s", path, strerror(errno));
	c->path = path;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long g0;
		unsigned long cpu;
		char name[32];
		struct klass k;
		int n = 0, cls;

		lineno++;
		if (!strchr(line, '\n') && !feof(f))
			fail("%s: line %zu: too long", path, lineno);
		line[strcspn(line, "\r\n")] = 0;
		if (lineno == 1) {
			if (strcmp(line, "hourglass-classes 1"))
				fail("%s: line 1 is '%.40s', not 'hourglass-classes 1': not a classes file of this "
				     "version", path, line);
			continue;
		}
		if (!line[0] || line[0] == '#')
			continue;
		if (sscanf(line, "%lu %llu %31s %n", &cpu, &g0, name, &n) != 3 || line[n] || cpu > UINT32_MAX)
			fail("%s: line %zu: '%.60s' is not 'CPU G0 CLASS'", path, lineno, line);
		cls = class_of(name);
		if (cls < 0) {
			char names[128];

			fail("%s: line %zu: '%s' is not a class (%s)", path, lineno, name,
			     classes_listed(names, sizeof(names)));
		}
		k.cls = (uint8_t)cls;
		k.cpu = (uint32_t)cpu;
		k.g0 = g0;
		VEC_PUSH(c->k, c->n, c->cap, k);
	}
	if (ferror(f))
		fail_env("%s: cannot read: %s", path, strerror(errno));
	fclose(f);
	if (!lineno)
		fail("%s: empty: not a classes file", path);
	qsort(c->k, c->n, sizeof(*c->k), by_key);
	for (i = 1; i < c->n; i++)
		if (!by_key(&c->k[i - 1], &c->k[i]))
			fail("%s: two classes for the gap at TSC %llu on CPU %u", path,
			     (unsigned long long)c->k[i].g0, c->k[i].cpu);
	return c;
}

out_of_line void classes_apply(struct classes *c, struct hgg_gap *g)
{
	struct klass key = { .g0 = g->g0, .cpu = g->cpu }, *k;

	if (g->vol)
		return;
	k = bsearch(&key, c->k, c->n, sizeof(*c->k), by_key);
	if (!k) {
		c->missing++;
		return;
	}
	g->inferred = k->cls;
	g->rule = HGG_R_MODEL;
	c->applied++;
}

void classes_finish(struct classes *c, struct run *r)
{
	if (c->missing)
		warn(r, "%s: %llu of %llu involuntary gaps have no class in it: the rules decided them", c->path,
		     (unsigned long long)c->missing, (unsigned long long)(c->missing + c->applied));
	free(c->k);
	free(c);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * timeunits.c - parse the paper's self-describing times.
 *
 * A unit is required: "5" could mean seconds or milliseconds, and a silent
 * guess would make a run a thousand times too long or too short.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "timeunits.h"

static const struct {
	const char *name;
	double ns;
} units[] = {
	{ "ns", 1.0 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	{ "m", 60e9 }, { "min", 60e9 }, { "h", 3600e9 },
};

const char *hg_parse_time(const char *s, uint64_t *ns)
{
	char *end;
	double v;
	size_t i;

	if (!s || !*s)
		return "missing time";
	if (*s == '-')
		return "negative time";
	if (!isdigit((unsigned char)*s) && *s != '.')
		return "not a number";
	v = strtod(s, &end);
	if (end == s || !isfinite(v))
		return "not a number";
	if (!*end)
		return "no unit (write ns, us, ms, s, m or h, e.g. 1.5s)";
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].name))
			continue;
		v *= units[i].ns;
		if (v > 1e18)
			return "too long (more than 31 years)";
		/* "0.5ns" would be rounded to a time nobody asked for */
		if (fabs(v - nearbyint(v)) > 1e-3)
			return "not a whole number of nanoseconds";
		*ns = (uint64_t)llround(v);
		return NULL;
	}
	return "unknown unit (write ns, us, ms, s, m or h)";
}

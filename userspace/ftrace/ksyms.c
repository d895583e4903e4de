// SPDX-License-Identifier: GPL-2.0
/*
 * ksyms.c - one pass over /proc/kallsyms for a handful of addresses.
 *
 * The file is read in large chunks and each line taken apart by hand: a
 * 7.3 kernel lists 231 000 symbols, and a callback in a module (the
 * watchdog's, there) is named only at the end of the file, after every one
 * of them. fgets() and sscanf() a line made that pass 0.8 s of the 1.3 s it
 * took under emulation; the kernel's own printing of the file is the rest.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ksyms.h"

struct scan {
	const uint64_t *addr;
	unsigned int n, exact;
	uint64_t *best;
	char (*names)[32];
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/*
 * line - "ADDRESS TYPE NAME [\t[module]]" from @p to @end (no newline): a text
 * symbol at or before an address, and closer to it than the best so far,
 * becomes its name; lines that are not three fields, or of address 0, are skipped
 */
static void line(struct scan *s, const char *p, const char *end)
{
	unsigned long long a = 0;
	const char *name;
	unsigned int i;
	size_t len;
	int digits = 0, v;
	char type;

	while (p < end && blank(*p))
		p++;
	for (; p < end && (v = hexval(*p)) >= 0; p++, digits++)
		a = a << 4 | (unsigned)v;
	while (p < end && blank(*p))
		p++;
	if (!digits || !a || p >= end)
		return;
	type = *p++;
	/* text symbols only: callbacks are functions */
	if (type != 't' && type != 'T')
		return;
	while (p < end && blank(*p))
		p++;
	for (name = p; p < end && !blank(*p); p++)
		;
	len = p - name;
	if (!len)
		return;
	if (len > 31)
		len = 31;
	for (i = 0; i < s->n; i++)
		if (a <= s->addr[i] && a > s->best[i]) {
			s->best[i] = a;
			memcpy(s->names[i], name, len);
			s->names[i][len] = 0;
			s->exact += a == s->addr[i];
		}
}

unsigned int ksyms_name_in(const char *path, size_t size, const uint64_t *addr, unsigned int n,
			   char (*names)[32])
{
	struct scan s = { addr, n, 0, calloc(n ? n : 1, sizeof(uint64_t)), names };
	char *buf = size >= 2 ? malloc(size) : NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC), skip = 0;
	unsigned int i, named = 0;
	size_t have = 0;

	for (i = 0; i < n; i++)
		names[i][0] = 0;
	/* callbacks are function entries: once each has its exact symbol, the rest cannot do better */
	while (fd >= 0 && buf && s.best && s.exact != n) {
		ssize_t got = read(fd, buf + have, size - have);
		char *p = buf, *end, *nl;

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (have && !skip)
				line(&s, buf, buf + have);	/* a last line without its newline */
			break;
		}
		end = buf + have + got;
		while (s.exact != n && (nl = memchr(p, '\n', end - p))) {
			if (!skip)
				line(&s, p, nl);
			skip = 0;
			p = nl + 1;
		}
		have = end - p;
		if (have == size) {
			/* a line longer than the buffer: its start is as much of it as is read */
			if (!skip)
				line(&s, buf, buf + have);
			skip = 1;
			have = 0;
		} else {
			memmove(buf, p, have);
		}
	}
	if (fd >= 0)
		close(fd);
	for (i = 0; i < n; i++)
		named += names[i][0] != 0;
	free(s.best);
	free(buf);
	return named;
}

unsigned int ksyms_name(const uint64_t *addr, unsigned int n, char (*names)[32])
{
	return ksyms_name_in("/proc/kallsyms", 256 * 1024, addr, n, names);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * io.c - reading a file at an offset, writing all of a buffer, and the first
 * check of a file (hg_io.h).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "hg_io.h"

int hg_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;

	/* a short read is not the end: only 0 is (a truncated file), or an error */
	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int hg_read_prelude(int fd, uint64_t size, const char *path, void *buf, size_t len, const char *magic,
		    const char *what, struct hg_err *err)
{
	size_t have = size < len ? (size_t)size : len;
	char q[64];

	if (!size)
		return hg_err_set(err, "%s: offset 0: empty file", path);
	memset(buf, 0, len);
	if (hg_pread_all(fd, buf, have, 0))
		return hg_err_set(err, "%s: cannot read it", path);
	if (memcmp(buf, magic, have < 8 ? have : 8))
		return hg_err_set(err, "%s: offset 0: not %s (bad magic %s)", path, what,
				  hg_quote(q, sizeof(q), buf, have < 8 ? have : 8));
	if (have < len)
		return hg_err_set(err, "%s: offset 0: truncated in the prelude (%zu bytes, %zu needed)", path,
				  have, len);
	return 0;
}

int hg_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (w == 0) {
			errno = ENOSPC;
			return -1;
		}
		p += w;
		n -= w;
	}
	return 0;
}

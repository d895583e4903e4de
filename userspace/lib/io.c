// SPDX-License-Identifier: GPL-2.0
/*
 * io.c - reading a file at an offset (hg_io.h).
 */
#include <errno.h>
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

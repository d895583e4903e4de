// SPDX-License-Identifier: GPL-2.0
/*
 * out_tmp.c - temporary names beside the output, renamed when complete.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "out_tmp.h"

char *out_dir(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, slash - path);
}

int out_create(const char *path, char **tmp, struct hg_err *err)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
	char *name = malloc(dlen + strlen(base) + 16);
	int fd;

	*tmp = NULL;
	if (!name)
		return hg_err_set(err, "%s: out of memory", path);
	/* a dot name: a listing of the folder does not show it as an output */
	sprintf(name, "%.*s.%s.XXXXXX", (int)dlen, path, base);
	fd = mkostemp(name, O_CLOEXEC);
	if (fd < 0) {
		hg_err_set(err, "%s: cannot create a file in its folder: %s", path, strerror(errno));
		free(name);
		return -1;
	}
	/* mkstemp's 0600 is for secrets: an output gets the mode a plain create would give it */
	{
		mode_t mask = umask(0);

		umask(mask);
		fchmod(fd, 0666 & ~mask);
	}
	*tmp = name;
	return fd;
}

int out_commit(const char *tmp, const char *path, struct hg_err *err)
{
	if (rename(tmp, path)) {
		int e = errno;

		unlink(tmp);
		return hg_err_set(err, "%s: cannot rename %s to it: %s", path, tmp, strerror(e));
	}
	return 0;
}

void out_discard(char *tmp)
{
	if (tmp)
		unlink(tmp);
	free(tmp);
}

int out_write_all(int fd, const void *buf, size_t n)
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

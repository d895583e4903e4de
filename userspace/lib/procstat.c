// SPDX-License-Identifier: GPL-2.0
/*
 * procstat.c - a process's parent and name from /proc/PID/stat (hg_procstat.h).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "hg_procstat.h"

pid_t hg_proc_parent(pid_t pid, char *comm, size_t len)
{
	char path[64], buf[512], *open_paren, *close_paren;
	ssize_t n;
	int fd;
	long pp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* "pid (comm) state ppid ...": comm may hold spaces and parentheses */
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren ||
	    sscanf(close_paren + 1, " %*c %ld", &pp) != 1)
		return -1;
	if (comm && len)
		snprintf(comm, len, "%.*s", (int)(close_paren - open_paren - 1), open_paren + 1);
	return (pid_t)pp;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hg_procstat.h - what /proc/PID/stat says of a process that the tools ask:
 * its parent and its command name (hourglass finding the recorder above it,
 * a recorder finding the command's orphans).
 */
#ifndef HG_PROCSTAT_H
#define HG_PROCSTAT_H

#include <stddef.h>
#include <sys/types.h>

/*
 * hg_proc_parent - @pid's parent, and its command name into @comm (@len
 * bytes, cut if longer) unless @comm is NULL; -1 if the process is gone or
 * its stat cannot be read
 */
pid_t hg_proc_parent(pid_t pid, char *comm, size_t len);

#endif

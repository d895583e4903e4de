/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hg_child.h - the recorders' wait for their command after Ctrl-C, one rule
 * for hgtrace record and hgtrace-ftrace record.
 */
#ifndef HG_CHILD_H
#define HG_CHILD_H

#include <signal.h>
#include <sys/types.h>

/*
 * hg_child_ends_itself - whether @pid ended within @grace_ms and while
 * *@signals kept the value it had at the call (a further signal, a second
 * Ctrl-C, ends the wait at once); its wait status in @status when it did.
 * After a Ctrl-C the terminal sent the command the same SIGINT: hourglass
 * then writes its trace, a recorder below finishes its file, and a SIGTERM
 * from above would reach them as a second Ctrl-C and cut that short.
 */
int hg_child_ends_itself(pid_t pid, int *status, int grace_ms, volatile sig_atomic_t *signals);

#endif

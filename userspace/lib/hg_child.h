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

/*
 * A recorder sleeps to its next drain in one wait (ppoll with a mask) that the
 * command's end and the stop signals end, with no look every so often: on
 * the CPU it records, such a look is a gap it made. The signals are blocked
 * but inside the wait, so that one coming just before it is not missed.
 *
 * hg_child_wakes - SIGCHLD caught (by a handler that does nothing) and
 * blocked, from before the command is let go (after the fork: the command
 * must not inherit the block); @saved gets the mask as it was, to put back
 * after the waits.
 * hg_stop_wakes - SIGINT, SIGTERM and SIGHUP blocked too; @inside gets the
 * mask to wait with: @saved's, SIGCHLD unblocked.
 */
void hg_child_wakes(sigset_t *saved);
void hg_stop_wakes(const sigset_t *saved, sigset_t *inside);

struct timespec;
struct pollfd;

/*
 * hg_wait_until - sleep to @at (CLOCK_MONOTONIC) with @mask, or less when a signal
 * comes or one of @fds (@nfds of them, none when 0) is ready: ppoll()'s result, 0 when
 * @at has passed
 */
int hg_wait_until(const struct timespec *at, const sigset_t *mask, struct pollfd *fds, unsigned int nfds);

#endif

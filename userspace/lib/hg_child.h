/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hg_child.h - the recorders' command: started held until recording has
 * started, and waited for after Ctrl-C; one rule for hgtrace record and
 * hgtrace-ftrace record.
 */
#ifndef HG_CHILD_H
#define HG_CHILD_H

#include <signal.h>
#include <sys/types.h>

/*
 * hg_stop_catch - SIGINT, SIGTERM and SIGHUP to @handler, without SA_RESTART
 * (a sleep or a wait returns at once); the dispositions found are kept for
 * hg_child_start's command. Called before anything is changed, so that a
 * signal at any point ends a recording the same way.
 */
void hg_stop_catch(void (*handler)(int));

/*
 * hg_child_start - fork @cmd, held on a pipe until hg_child_release(@go_fd):
 * its pid, or -1 (errno set, no pipe left open). The stop signals are blocked
 * across the fork and the child puts back their dispositions as hg_stop_catch
 * found them before it unblocks them: with the recorder's handler there, a
 * Ctrl-C landing between the fork and the exec was caught by the child's copy
 * of the handler and lost, and the command then ran as if never interrupted
 * (docs/testing.md). A closed pipe (the recorder gave up) ends it with 127
 * before its exec. With @pid_env, the command finds the recorder's pid in
 * that variable (hgtrace record: HGTRACE_RECORD_PID, for SIGUSR1). @prog
 * names the recorder in the message of an exec that failed.
 */
pid_t hg_child_start(char **cmd, int *go_fd, const char *prog, const char *pid_env);

/*
 * hg_child_release - let the held command run, and close *@go_fd (-1 after):
 * 0, or -1 when it could not be told (the same Ctrl-C ended it: EPIPE, with
 * SIGPIPE ignored for the write, so that the recorder is not killed with
 * recording on)
 */
int hg_child_release(int *go_fd);

/*
 * hg_child_subreaper - what the command leaves behind comes to us: the
 * processes it forked and did not wait for are reparented to this process
 * when it dies (prctl PR_SET_CHILD_SUBREAPER), not to init. Called before
 * hg_child_start. 0, or -1 with errno.
 * hg_child_end_orphans - once the command is reaped: SIGKILL every child of
 * ours and reap them, again as long as more come (their own children,
 * reparented in turn), for @limit_ms at most; how many it reaped.
 * A command the recorder ends (an error, -d) may die before its own
 * children: hackbench killed while its groups wait for their start keeps
 * 400 workers waiting forever, holding the recorder's output open.
 */
int hg_child_subreaper(void);
int hg_child_end_orphans(int limit_ms);

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

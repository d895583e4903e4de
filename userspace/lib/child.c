// SPDX-License-Identifier: GPL-2.0
/*
 * child.c - a recorder's wait for its command to end by itself (hg_child.h).
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "hg_child.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int hg_child_ends_itself(pid_t pid, int *status, int grace_ms, volatile sig_atomic_t *signals)
{
	long long until = now_ms() + grace_ms;
	sig_atomic_t seen = *signals;

	/* polled, not waited for: a signal must end the wait even where SA_RESTART is set */
	for (;;) {
		pid_t got = waitpid(pid, status, WNOHANG);

		if (got == pid)
			return 1;
		if (got < 0 && errno != EINTR)
			return 0;
		if (*signals != seen || now_ms() >= until)
			return 0;
		usleep(10000);
	}
}

static void on_child(int sig)
{
	(void)sig;		/* only to end a recorder's wait (hg_child_wakes) */
}

void hg_child_wakes(sigset_t *saved)
{
	struct sigaction sa;
	sigset_t set;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_child;
	sa.sa_flags = SA_NOCLDSTOP;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, saved);
}

void hg_stop_wakes(const sigset_t *saved, sigset_t *inside)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	*inside = *saved;
	sigdelset(inside, SIGCHLD);
}

int hg_wait_until(const struct timespec *at, const sigset_t *mask, struct pollfd *fds, unsigned int nfds)
{
	struct timespec now, left;

	clock_gettime(CLOCK_MONOTONIC, &now);
	left.tv_sec = at->tv_sec - now.tv_sec;
	left.tv_nsec = at->tv_nsec - now.tv_nsec;
	if (left.tv_nsec < 0) {
		left.tv_nsec += 1000000000L;
		left.tv_sec--;
	}
	if (left.tv_sec < 0)
		return 0;
	return ppoll(fds, nfds, &left, mask);
}

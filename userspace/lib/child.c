// SPDX-License-Identifier: GPL-2.0
/*
 * child.c - a recorder's command: started held, released, and waited for to
 * end by itself (hg_child.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "hg_child.h"
#include "hg_procstat.h"

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NR_STOPS	(sizeof(stop_signals) / sizeof(stop_signals[0]))

/* the stop signals' dispositions as hg_stop_catch found them, for the command */
static struct sigaction found_action[NR_STOPS];
static int caught;

void hg_stop_catch(void (*handler)(int))
{
	struct sigaction sa;
	unsigned int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < NR_STOPS; i++)
		sigaction(stop_signals[i], &sa, &found_action[i]);
	caught = 1;
}

pid_t hg_child_start(char **cmd, int *go_fd, const char *prog, const char *pid_env)
{
	sigset_t stops, was;
	unsigned int i;
	int p[2], err;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	sigemptyset(&stops);
	for (i = 0; i < NR_STOPS; i++)
		sigaddset(&stops, stop_signals[i]);
	sigprocmask(SIG_BLOCK, &stops, &was);
	pid = fork();
	if (pid == 0) {
		char c, ppid[24];

		for (i = 0; caught && i < NR_STOPS; i++)
			sigaction(stop_signals[i], &found_action[i], NULL);
		sigprocmask(SIG_SETMASK, &was, NULL);
		close(p[1]);
		/* a closed pipe means: do not run it */
		if (read(p[0], &c, 1) != 1)
			_exit(127);
		signal(SIGPIPE, SIG_DFL);	/* a recorder may ignore it; the command must not */
		if (pid_env) {
			snprintf(ppid, sizeof(ppid), "%d", (int)getppid());
			setenv(pid_env, ppid, 1);
		}
		execvp(cmd[0], cmd);
		fprintf(stderr, "%s: cannot run %s: %s\n", prog, cmd[0], strerror(errno));
		_exit(127);
	}
	err = errno;
	sigprocmask(SIG_SETMASK, &was, NULL);
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		errno = err;
		return -1;
	}
	*go_fd = p[1];
	return pid;
}

int hg_child_release(int *go_fd)
{
	struct sigaction ign, was;
	ssize_t n;

	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &was);
	n = write(*go_fd, "g", 1);
	sigaction(SIGPIPE, &was, NULL);
	close(*go_fd);
	*go_fd = -1;
	return n == 1 ? 0 : -1;
}

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

int hg_child_subreaper(void)
{
	return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

/* kill_children - SIGKILL each child of ours; how many */
static int kill_children(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t me = getpid();
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		pid_t pid;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		pid = (pid_t)atol(e->d_name);
		if (hg_proc_parent(pid, NULL, 0) == me && !kill(pid, SIGKILL))
			n++;
	}
	closedir(d);
	return n;
}

int hg_child_end_orphans(int limit_ms)
{
	long long end = now_ms() + limit_ms;
	int ended = 0;

	for (;;) {
		int killed = kill_children();

		/* reap what died; a zombie of ours is a child too, and killing it again is harmless */
		while (waitpid(-1, NULL, WNOHANG) > 0)
			ended++;
		if (!killed || now_ms() > end)
			break;
		usleep(20000);
	}
	return ended;
}

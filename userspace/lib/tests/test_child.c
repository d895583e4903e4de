// SPDX-License-Identifier: GPL-2.0
/* test_child.c - hg_child_ends_itself: a command that ends, one that does not, a second signal */
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "tap.h"
#include "hg_child.h"

static volatile sig_atomic_t signals;

static void on_usr1(int sig)
{
	(void)sig;
	signals++;
}

static pid_t child_sleeping(int ms, int code)
{
	pid_t pid = fork();

	if (pid == 0) {
		usleep(ms * 1000);
		_exit(code);
	}
	return pid;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	int status = -1;
	pid_t pid;
	double t;

	signal(SIGUSR1, on_usr1);
	pid = child_sleeping(50, 7);
	ok(hg_child_ends_itself(pid, &status, 5000, &signals) == 1, "a command that ends within the grace is seen to");
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 7, "with its wait status (exit %d)", WEXITSTATUS(status));

	pid = child_sleeping(5000, 0);
	t = now_s();
	ok(hg_child_ends_itself(pid, &status, 100, &signals) == 0, "one that outlives the grace is not");
	ok(now_s() - t < 2, "and the wait ends with the grace (%.3f s)", now_s() - t);

	/* a second signal while waiting ends the wait: a parent sends it 50 ms in */
	if (fork() == 0) {
		usleep(50000);
		kill(getppid(), SIGUSR1);
		_exit(0);
	}
	t = now_s();
	ok(hg_child_ends_itself(pid, &status, 5000, &signals) == 0, "a further signal ends the wait");
	ok(now_s() - t < 2, "at once, not at the grace's end (%.3f s)", now_s() - t);
	kill(pid, SIGKILL);
	while (wait(NULL) > 0)
		;
	ok(hg_child_ends_itself(pid, &status, 100, &signals) == 0, "a command already reaped: no wait, 0");
	return tap_done();
}

// SPDX-License-Identifier: GPL-2.0
/*
 * test_child.c - hg_child_start and hg_child_release: held until released, not run when
 * given up, the stop signals as found, the recorder's pid, a release that finds the
 * command gone; hg_child_ends_itself: a command that ends, one that does not, a second signal
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
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

static void on_stop(int sig)
{
	(void)sig;
}

/* status_of - @pid's wait status */
static int status_of(pid_t pid)
{
	int status = -1;

	while (waitpid(pid, &status, 0) < 0)
		;
	return status;
}

static void test_start(void)
{
	char mark[] = "/tmp/hg-test-child-XXXXXX", pidstr[24], script[128];
	char *touch[] = { "touch", mark, NULL }, *fail[] = { "sh", "-c", "exit 3", NULL };
	char *env[] = { "sh", "-c", script, NULL }, *none[] = { "hg-no-such-command-here", NULL };
	int go = -1, fd = mkstemp(mark), status;
	pid_t pid;

	close(fd);
	unlink(mark);
	/* the stop signals as a recorder finds them when it starts: by default */
	signal(SIGINT, SIG_DFL);
	hg_stop_catch(on_stop);

	pid = hg_child_start(touch, &go, "test_child", NULL);
	ok(pid > 0 && go >= 0, "a command is started held (pid %d, pipe %d)", (int)pid, go);
	close(go);
	status = status_of(pid);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 127 && access(mark, F_OK),
	   "given up before its release, it ends with 127 without running");

	pid = hg_child_start(fail, &go, "test_child", NULL);
	ok(hg_child_release(&go) == 0 && go == -1, "released: the pipe is closed and -1");
	status = status_of(pid);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 3, "and the command runs (exit %d)", WEXITSTATUS(status));

	snprintf(pidstr, sizeof(pidstr), "%d", (int)getpid());
	snprintf(script, sizeof(script), "test \"$HG_TEST_PID\" = %s", pidstr);
	pid = hg_child_start(env, &go, "test_child", "HG_TEST_PID");
	hg_child_release(&go);
	status = status_of(pid);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the command finds the recorder's pid in @pid_env");

	/* a Ctrl-C while it is held reaches it with the disposition found, not the recorder's handler */
	pid = hg_child_start(touch, &go, "test_child", NULL);
	kill(pid, SIGINT);
	status = status_of(pid);
	ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT && access(mark, F_OK),
	   "a SIGINT while held ends it as the default does, before it runs");
	ok(hg_child_release(&go) == -1 && go == -1,
	   "releasing a command that has ended fails, and SIGPIPE does not end the recorder");

	pid = hg_child_start(none, &go, "test_child", NULL);
	hg_child_release(&go);
	status = status_of(pid);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 127, "a command that cannot run ends with 127");
	unlink(mark);
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

	test_start();
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

	/* a command that dies before its children (hackbench killed as its groups wait to start) */
	ok(hg_child_subreaper() == 0, "the recorder adopts its command's orphans");
	pid = fork();
	if (pid == 0) {
		int i;

		for (i = 0; i < 3; i++)
			if (fork() == 0) {
				pause();	/* waits forever, as hackbench's workers for their start */
				_exit(0);
			}
		_exit(0);
	}
	waitpid(pid, &status, 0);
	ok(hg_child_end_orphans(5000) == 3, "the three it left waiting are ended and reaped");
	ok(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD, "none is left");
	ok(hg_child_end_orphans(5000) == 0, "with none, none is ended");
	return tap_done();
}

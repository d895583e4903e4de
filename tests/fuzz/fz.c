// SPDX-License-Identifier: GPL-2.0
/*
 * fz.c - the fuzz targets' shared helpers (fz.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fz.h"

void __sanitizer_report_error_summary(const char *summary);

#define FD_SCAN 512		/* descriptors a target may hold at once, and more */

static char dir[256];
static unsigned char open_at_mark[FD_SCAN];

static void remove_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[512];

	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			unlink(p);
		}
	closedir(d);
	rmdir(dir);
}

const char *fz_dir(void)
{
	const char *base;
	struct stat st;

	if (dir[0])
		return dir;
	base = getenv("FZ_TMPDIR");
	if (!base)
		base = !stat("/dev/shm", &st) && S_ISDIR(st.st_mode) && !access("/dev/shm", W_OK) ? "/dev/shm" :
			getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	snprintf(dir, sizeof(dir), "%s/hgfuzz-XXXXXX", base);
	if (!mkdtemp(dir)) {
		fprintf(stderr, "fuzz: cannot make a scratch directory in %s: %s\n", base, strerror(errno));
		abort();
	}
	atexit(remove_dir);
	return dir;
}

const char *fz_file(const char *name, const void *data, size_t n)
{
	static char path[512];
	const char *p = data;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", fz_dir(), name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "fuzz: cannot write %s: %s\n", path, strerror(errno));
		abort();
	}
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w <= 0) {
			fprintf(stderr, "fuzz: cannot write %s: %s\n", path, strerror(errno));
			abort();
		}
		p += w;
		n -= (size_t)w;
	}
	close(fd);
	return path;
}

void fz_fail(const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "fuzz: broken promise: %s\n", msg);
	/* libFuzzer's -close_fd_mask closes stderr: the sanitizer's report still reaches the log */
	__sanitizer_report_error_summary(msg);
	abort();
}

int fz_blames_memory(const char *msg)
{
	char own[1024];
	size_t i, n = 0;
	int quoted = 0;

	/* the message's own words, not what it quotes from the file */
	for (i = 0; msg[i] && n < sizeof(own) - 1; i++) {
		if (quoted && msg[i] == '\\' && msg[i + 1])
			i++;	/* an escaped byte of the quoted text */
		else if (msg[i] == '"')
			quoted = !quoted;
		else if (!quoted)
			own[n++] = msg[i];
	}
	own[n] = 0;
	return strstr(own, "out of memory") || strstr(own, "more memory than there is") || strstr(own, "no memory");
}

void fz_bad_message(const char *msg, const char *path)
{
	if (!msg[0])
		fz_fail("an error without a message (file %s)", path);
	if (strncmp(msg, path, strlen(path)))
		fz_fail("an error that does not start with the file %s: \"%s\"", path, msg);
	if (fz_blames_memory(msg + strlen(path)))
		fz_fail("a small input said it needs more memory than there is: \"%s\"", msg);
}

void fz_fd_mark(void)
{
	int fd;

	for (fd = 0; fd < FD_SCAN; fd++)
		open_at_mark[fd] = fcntl(fd, F_GETFD) != -1;
}

void fz_fd_reap(void)
{
	int fd;

	for (fd = 0; fd < FD_SCAN; fd++)
		if (!open_at_mark[fd] && fcntl(fd, F_GETFD) != -1)
			close(fd);
}

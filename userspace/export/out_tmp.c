// SPDX-License-Identifier: GPL-2.0
/*
 * out_tmp.c - temporary names beside the output, renamed when complete.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "out_tmp.h"

/*
 * The temporary names made and not yet settled (renamed or removed), so that a program that
 * must stop half-way, on a bad input found in the middle of its pass or on a signal, leaves
 * none of them in the user's folder: out_discard_pending(). Slots are taken and emptied with
 * atomics, so that threads can add names while the stopping one empties them; a name is
 * taken out of its slot before it is renamed or freed, and out_discard_pending() only reads
 * and unlinks (async-signal-safe). The stop must come on the thread that settles names (the
 * program's main thread: hgmerge blocks the signals in the exporters' threads), else a name
 * could be freed while the handler reads it.
 */
#define OUT_PENDING 32
static _Atomic(char *) pending[OUT_PENDING];

void out_track(char *name)
{
	int i;

	for (i = 0; i < OUT_PENDING; i++) {
		char *none = NULL;

		if (atomic_compare_exchange_strong(&pending[i], &none, name))
			return;
	}
	/* more than OUT_PENDING at once: this one is not removed on a stop */
}

int out_untrack(const char *name)
{
	int i;

	for (i = 0; i < OUT_PENDING; i++) {
		char *mine = (char *)name;

		if (atomic_compare_exchange_strong(&pending[i], &mine, NULL))
			return 1;
	}
	return 0;
}

void out_discard_pending(void)
{
	int i;

	for (i = 0; i < OUT_PENDING; i++) {
		char *name = atomic_exchange(&pending[i], NULL);

		if (name)
			unlink(name);
	}
}

char *out_dir(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, slash - path);
}

int out_create(const char *path, char **tmp, struct hg_err *err)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
	char *name = malloc(dlen + strlen(base) + 16);
	int fd;

	*tmp = NULL;
	if (!name)
		return hg_err_env(err, "%s: out of memory", path);
	/* a dot name: a listing of the folder does not show it as an output */
	sprintf(name, "%.*s.%s.XXXXXX", (int)dlen, path, base);
	/*
	 * tracked before the file exists, not after: a stop between mkostemp() and out_track()
	 * left the file behind (a Ctrl-C sent as soon as it appeared, tests/unit/test_merge.py,
	 * 1 run in some tens). Until mkostemp() fills in the name, a stop unlinks the template:
	 * no file of that name, nothing done.
	 */
	out_track(name);
	fd = mkostemp(name, O_CLOEXEC);
	if (fd < 0) {
		hg_err_env(err, "%s: cannot create a file in its folder: %s", path, strerror(errno));
		if (out_untrack(name))
			free(name);
		return -1;
	}
	/* mkstemp's 0600 is for secrets: an output gets the mode a plain create would give it */
	{
		mode_t mask = umask(0);

		umask(mask);
		fchmod(fd, 0666 & ~mask);
	}
	*tmp = name;
	return fd;
}

int out_commit(const char *tmp, const char *path, struct hg_err *err)
{
	out_untrack(tmp);
	if (rename(tmp, path)) {
		int e = errno;

		unlink(tmp);
		return hg_err_env(err, "%s: cannot rename %s to it: %s", path, tmp, strerror(e));
	}
	return 0;
}

void out_discard(char *tmp)
{
	if (!tmp)
		return;
	unlink(tmp);
	/* not ours to free if a stop took it meanwhile (nor one out_track had no room for: a few
	 * bytes, where a stop would have left the file) */
	if (out_untrack(tmp))
		free(tmp);
}

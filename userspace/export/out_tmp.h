/* SPDX-License-Identifier: GPL-2.0 */
/*
 * out_tmp.h - an output is written under a temporary name in its own folder
 * and renamed when complete, so that a reader never sees half a file and an
 * error leaves nothing behind.
 */
#ifndef OUT_TMP_H
#define OUT_TMP_H

#include "hg_err.h"

/* out_create - open "DIR/.BASE.XXXXXX" for @path; returns the fd and the name in *tmp
 * (malloc'd), which is pending (out_discard_pending) until out_commit or out_discard */
int out_create(const char *path, char **tmp, struct hg_err *err);
/* out_commit - rename @tmp to @path; on failure @tmp is removed */
int out_commit(const char *tmp, const char *path, struct hg_err *err);
/* out_discard - remove @tmp (if any) and free the name */
void out_discard(char *tmp);
/* out_track - @name is pending as well (a temporary file made otherwise); out_untrack - no
 * longer (1 if it was); out_discard_pending - remove every pending name (on a stop: from
 * exit or a signal handler, on the thread that settles names; the names are not freed) */
void out_track(char *name);
int out_untrack(const char *name);
void out_discard_pending(void);
/* out_dir - the folder of @path ("." when it has none), malloc'd */
char *out_dir(const char *path);

#endif

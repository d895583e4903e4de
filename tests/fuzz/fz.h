/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fz.h - what every fuzz target shares: the input as a real file (the
 * readers take paths, and cursors open them again), the checks that a
 * reader's error is one of ours, and the clean-up after a target that
 * did not finish (a longjmp out of hgmerge's fail()).
 */
#ifndef FZ_H
#define FZ_H

#include <stddef.h>
#include <stdint.h>

/* fz_file - @n bytes of @data as the file @name in the target's scratch directory; its path */
const char *fz_file(const char *name, const void *data, size_t n);
/* fz_dir - the scratch directory (tmpfs when there is one), made on first use */
const char *fz_dir(void);

/*
 * fz_bad_message - abort() unless @msg is a reader's error about @path: it
 * names the file and never blames memory (the inputs are small: a reader
 * that runs out of memory on one sized something from an unchecked field)
 */
void fz_bad_message(const char *msg, const char *path);

/* fz_blames_memory - @msg's own words (not what it quotes) say memory ran out */
int fz_blames_memory(const char *msg);

/* fz_fail - abort() with a message: a broken promise of the library, for libFuzzer to report */
void fz_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* fz_fd_mark, fz_fd_reap - close every descriptor a target opened since the mark and left open */
void fz_fd_mark(void);
void fz_fd_reap(void);

#endif

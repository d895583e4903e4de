/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hg_err.h - how the library reports a bad file or a bad argument.
 *
 * Library functions never print and never exit: they fill a struct hg_err
 * and return -1 (or NULL). The message is complete and names the file, the
 * offset and what was wrong ("run.hgt: offset 4096: chunk of CPU 70000, but
 * the recording has 2 CPUs"); the program prints it and exits 3 (bad input).
 */
#ifndef HG_ERR_H
#define HG_ERR_H

#include <stddef.h>

#define HG_ERR_MAX 512
#define HG_EXIT_BAD_INPUT 3	/* every program: a file that is not what it claims */

struct hg_err {
	char msg[HG_ERR_MAX];
};

/* hg_err_set - format the message; returns -1 so that callers can `return hg_err_set(...)` */
int hg_err_set(struct hg_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * hg_quote - bytes from a file, safe to print in a message: "...", printable
 * ASCII as it is, anything else as \xNN, cut with "..." to fit @len (> 8)
 */
const char *hg_quote(char *out, size_t len, const void *s, size_t n);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hg_err.h - how the library reports a bad file or a bad argument.
 *
 * Library functions never print and never exit: they fill a struct hg_err
 * and return -1 (or NULL). The message is complete and names the file, the
 * offset and what was wrong ("run.hgt: offset 4096: chunk of CPU 70000, but
 * the recording has 2 CPUs"); the program prints it and exits with @status:
 * 3 (bad input) from hg_err_set, 2 (could not run: memory, an output that
 * cannot be created or written) from hg_err_env (docs/exit-status.md).
 */
#ifndef HG_ERR_H
#define HG_ERR_H

#include <stddef.h>
#include <stdint.h>

#define HG_ERR_MAX 512
#define HG_EXIT_ENV 2		/* every program: could not run (memory, an unwritable output) */
#define HG_EXIT_BAD_INPUT 3	/* every program: a file that is not what it claims */

struct hg_err {
	char msg[HG_ERR_MAX];
	int status;		/* the exit status it calls for: HG_EXIT_BAD_INPUT or HG_EXIT_ENV */
};

/* hg_err_set - a bad input: format the message; returns -1 so that callers can
 * `return hg_err_set(...)` */
int hg_err_set(struct hg_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* hg_err_env - the same for what the machine refused: memory, an output that cannot be written */
int hg_err_env(struct hg_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* hg_err_at - a bad input at offset @off of the file @path: "PATH: offset OFF: what" */
int hg_err_at(struct hg_err *e, const char *path, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* hg_err_status - the exit status @e calls for (bad input unless hg_err_env said otherwise) */
static inline int hg_err_status(const struct hg_err *e)
{
	return e->status == HG_EXIT_ENV ? HG_EXIT_ENV : HG_EXIT_BAD_INPUT;
}

/*
 * hg_quote - bytes from a file, safe to print in a message: "...", printable
 * ASCII as it is, anything else as \xNN, cut with "..." to fit @len (> 8)
 */
const char *hg_quote(char *out, size_t len, const void *s, size_t n);

#endif

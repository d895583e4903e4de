/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tap.h - the Test Anything Protocol for the library's unit tests: one
 * "ok N - what" or "not ok N - what" a check, the plan at the end, exit 1
 * when any check failed.
 */
#ifndef TAP_H
#define TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

static int __attribute__((format(printf, 4, 5), unused))
tap_ok(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond) {
		tap_failed++;
		printf("#   failed at %s:%d\n", file, line);
	}
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

/* ok_msg - @rc is -1 and the message holds @want (and is printed when it does not) */
#define ok_msg(rc, err, want, ...) do {							\
	int _r = (rc);									\
	if (!ok(_r == -1 && strstr((err)->msg, (want)), __VA_ARGS__))			\
		printf("#   rc %d, message: %s\n#   wanted: %s\n", _r, (err)->msg, (want));	\
} while (0)

static int __attribute__((unused)) tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif

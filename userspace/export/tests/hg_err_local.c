// SPDX-License-Identifier: GPL-2.0
/*
 * hg_err_local.c - TEMPORARY: hg_err_set for the export tests and bench
 * until userspace/lib (build/lib/libhg.a) is merged; the Makefile links
 * libhg.a instead as soon as it exists. Not part of libhgexport.a.
 */
#include <stdarg.h>
#include <stdio.h>

#include "hg_err.h"

int hg_err_set(struct hg_err *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ksyms.h - names for kernel addresses, from /proc/kallsyms, read once after the run.
 *
 * The module prints a callback's name with %ps when it first sees it; ftrace
 * events carry only the address. The recorder keeps the addresses it saw and
 * names them all in one pass over /proc/kallsyms once tracing has stopped, so
 * naming costs the workload nothing. Where kallsyms hides addresses
 * (kptr_restrict, lockdown), nothing is named.
 */
#ifndef HG_KSYMS_H
#define HG_KSYMS_H

#include <stddef.h>
#include <stdint.h>

/*
 * ksyms_name - for each of @n addresses, the name of the symbol that starts
 * at or before it into names[i] (32 bytes, "" if none); returns how many were named
 */
unsigned int ksyms_name(const uint64_t *addr, unsigned int n, char (*names)[32]);
/* ksyms_name_in - the same from the kallsyms text in @path, read into a buffer of @size bytes (tests) */
unsigned int ksyms_name_in(const char *path, size_t size, const uint64_t *addr, unsigned int n,
			   char (*names)[32]);

#endif

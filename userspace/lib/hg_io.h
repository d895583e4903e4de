/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hg_io.h - reading a file at an offset, writing all of a buffer, and the
 * first check of a file, for the readers and writers of both formats.
 */
#ifndef HG_IO_H
#define HG_IO_H

#include <stddef.h>
#include <stdint.h>

#include "hg_err.h"

/* hg_pread_all - @len bytes at @off: 0, or -1 when the file is shorter or unreadable */
int hg_pread_all(int fd, void *buf, size_t len, uint64_t off);

/* hg_write_all - @n bytes at the current offset, across short writes and signals: 0, or -1
 * with errno (ENOSPC when write() wrote nothing) */
int hg_write_all(int fd, const void *buf, size_t n);

/*
 * hg_read_prelude - the first @len bytes of @path (@fd, @size bytes) into @buf, zeroed first,
 * whose first 8 are @magic: 0, or -1 with @err saying what was wrong, at offset 0: an empty
 * file, one that cannot be read, "not an @what (bad magic ...)", or one shorter than @len
 * ("truncated in the prelude"). The magic is checked before the length, so that a short file
 * of another kind is named as such. What the rest of the prelude holds (versions) is the
 * format's own to check.
 */
int hg_read_prelude(int fd, uint64_t size, const char *path, void *buf, size_t len, const char *magic,
		    const char *what, struct hg_err *err);

#endif

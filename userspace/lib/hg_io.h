/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hg_io.h - reading a file at an offset, for the readers of both formats.
 */
#ifndef HG_IO_H
#define HG_IO_H

#include <stddef.h>
#include <stdint.h>

/* hg_pread_all - @len bytes at @off: 0, or -1 when the file is shorter or unreadable */
int hg_pread_all(int fd, void *buf, size_t len, uint64_t off);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fz_track.h - take back what the code under test allocated and opened
 * during one input (fz_track.c; link with FZ_WRAP, tests/fuzz/Makefile).
 */
#ifndef FZ_TRACK_H
#define FZ_TRACK_H

#include <stddef.h>

/* fz_track_begin - from now on, note every block and stream the code under test makes */
void fz_track_begin(void);
/* fz_track_limit - fz_fail() when the code under test asks for a block larger than @bytes (0: any) */
void fz_track_limit(size_t bytes);
/* fz_track_reap - close and free what is still open and live, stop noting; how many blocks */
size_t fz_track_reap(void);

#endif

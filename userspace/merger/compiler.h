/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compiler.h - the merger's fast paths in one place: branch hints, forced inlining, the
 * out-of-line slow halves, and HG_FAST, the switch that turns the hand-written fast paths off.
 *
 * A fast path is a second way to the same answer: a walk where a search would do, a pass's
 * results replayed instead of computed again, a loop written out for its common case. Each one
 * keeps the plain way beside it, taken when HG_FAST is 0 (make -C userspace/merger FAST=0 builds
 * build/hgmerge-nofast), and tests/unit/test_merge_fast.py checks that both builds write the same
 * bytes. Test a fast path with `if (HG_FAST && ...)`, not #if: both ways are compiled in both
 * builds, so neither can rot unseen.
 */
#ifndef HGMERGE_COMPILER_H
#define HGMERGE_COMPILER_H

#ifndef HG_FAST
#define HG_FAST 1
#endif

#if HG_FAST
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
/* a step of a per-event loop: inlined whatever the compiler's estimate of its size */
#define hot_inline	inline __attribute__((always_inline))
/* the less common half of a step, kept out of the loop's way; cold_path: the rare one (a table
 * grown, a first use) */
#define out_of_line	__attribute__((noinline))
#define cold_path	__attribute__((noinline, cold))
/* a function that runs the steps of a per-event loop: every call in it inlined (but cold_path's
 * and out_of_line's), whichever file the callee is in (-flto) */
#define flatten_hot	__attribute__((flatten))
#else
#define likely(x)	(x)
#define unlikely(x)	(x)
#define hot_inline	inline
#define out_of_line
#define cold_path
#define flatten_hot
#endif

#endif

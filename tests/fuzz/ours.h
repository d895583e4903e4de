/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ours.h - forced into every file of ours that fuzz_import links (-include):
 * their code goes to a section of its own, whose bounds the linker names
 * (__start_hg_ours, __stop_hg_ours), so that a crash can be told to be in
 * our code or in a library's, whatever runtime shares the executable.
 */
#pragma clang section text = "hg_ours"

/* SPDX-License-Identifier: GPL-2.0 */
/* hgtrace_cmds.h - the subcommands of hgtrace, one file each */
#ifndef HGTRACE_CMDS_H
#define HGTRACE_CMDS_H

#include <stdint.h>

#ifndef HGT_TOOL_VERSION
#define HGT_TOOL_VERSION "0.1"
#endif

int hgt_cmd_record(int argc, char **argv);
int hgt_cmd_dump(int argc, char **argv);
int hgt_cmd_stat(int argc, char **argv);
/* hgt_cmd_stat_file - hgtrace stat FILE: a recording's figures, and what a merger would refuse */
int hgt_cmd_stat_file(const char *path);
int hgt_cmd_stop(int argc, char **argv);
int hgt_cmd_msa(int argc, char **argv);
int hgt_cmd_pack(int argc, char **argv);

/* hgt_pack_file - rewrite a recording with packed chunks (@in may be @out): 0, 1 if @in was
 * unfinished (packed as it is), -1 bad input, -2 cannot write (message printed; @in untouched) */
int hgt_pack_file(const char *in, const char *out, int level);

#endif

"""The module codes a switch's lags with its own lag_code() (kmod/msa.c: one
find-last-set, issue 54), not with the ABI's hgt_lag_code() (kmod/uapi/hgtrace.h,
a loop, the code's definition). Both compiled here: the same code for every
value below 2^22 and at and around every power of two up to 2^64, where the
exponent changes and where the code's range ends."""
import os
import re
import subprocess

from conftest import TOP

DRIVER = r"""
#include <stdio.h>
#include <stdint.h>
#include "hgtrace.h"
typedef uint16_t u16;
typedef uint64_t u64;
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
static inline unsigned int fls64(u64 x) { return x ? 64 - __builtin_clzll(x) : 0; }
%s
static int check(u64 v)
{
	if (lag_code(v) == hgt_lag_code(v))
		return 0;
	printf("%%llu: module 0x%%x, ABI 0x%%x\n", (unsigned long long)v, lag_code(v), hgt_lag_code(v));
	return 1;
}
int main(void)
{
	int bad = 0, b;
	u64 v, d;

	for (v = 0; v < (1u << 22); v++)
		bad += check(v);
	for (b = 12; b < 64; b++)
		for (d = 0; d < 4096; d++) {
			bad += check(((u64)1 << b) + d);
			bad += check(((u64)1 << b) - d);
			bad += check((((u64)1 << b) - 1) ^ (d << (b > 12 ? b - 12 : 0)));
		}
	bad += check(~(u64)0);
	printf("%%d\n", bad);
	return bad != 0;
}
"""


def test_module_lag_code_is_the_abis(tmp_path):
    src = open(os.path.join(TOP, "kmod", "msa.c")).read()
    m = re.search(r"^static __always_inline u16 lag_code\(u64 v\)\n\{.*?^\}\n", src, re.S | re.M)
    assert m, "kmod/msa.c has no lag_code()"
    c = tmp_path / "lag_code.c"
    c.write_text(DRIVER % m.group(0))
    exe = tmp_path / "lag_code"
    subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-I", os.path.join(TOP, "kmod", "uapi"), "-o", str(exe),
                    str(c)], check=True)
    p = subprocess.run([str(exe)], capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.strip().endswith("0"), p.stdout[-2000:]

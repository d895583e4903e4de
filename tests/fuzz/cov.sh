#!/bin/bash
# cov.sh - line coverage of our code by each fuzz target's corpus (make cov).
#
#   cov.sh OUT TARGET...
#
# OUT/cov holds the targets built for clang's source-based coverage (with the
# sanitizers: tests/fuzz/Makefile says why). Each runs its corpus once (OUT/work/<target> when a run grew
# one, else the seeds); the lines of the sources it is about are counted.
set -u
out=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
prof=$(command -v llvm-profdata || ls /usr/lib/llvm-*/bin/llvm-profdata 2>/dev/null | tail -1)
cov=$(command -v llvm-cov || ls /usr/lib/llvm-*/bin/llvm-cov 2>/dev/null | tail -1)
[ -n "$prof" ] && [ -n "$cov" ] || { echo "cov.sh: no llvm-profdata/llvm-cov (apt install llvm)" >&2; exit 2; }
lib=$top/userspace/lib
. "$here/env.sh"
for t in "$@"; do
	case $t in
	hgt)	seeds=hgt files="$lib/hgt_read.c $lib/hgt_decode.c $lib/io.c" ;;
	hgl)	seeds=hgl files="$lib/hgl_read.c $lib/json_parse.c" ;;
	json)	seeds=json files="$lib/json_parse.c $lib/jsonw.c $lib/utf8.c" ;;
	merge)	seeds=merge files="$(ls "$top"/userspace/merger/*.c | tr '\n' ' ')$lib/hgt_read.c $lib/hgl_read.c" ;;
	import)	seeds=dat files="$top/userspace/recorder/import_dat.c" ;;
	*)	continue ;;
	esac
	corpus=$out/work/$t
	[ -d "$corpus" ] && [ -n "$(ls "$corpus")" ] || corpus=$here/corpus/$seeds
	rm -f "$out"/cov/"$t"-*.profraw
	# the profile is written at exit: no leak report first (make fuzz checks leaks)
	export ASAN_OPTIONS
	ASAN_OPTIONS=$(asan_options "$t"):detect_leaks=0
	if [ "$t" = import ]; then
		# one process an input: libtracecmd may spoil a process's heap on a corrupt file
		for f in "$corpus"/*; do
			LLVM_PROFILE_FILE=$out/cov/$t-%p.profraw "$out/cov/fuzz_$t" -runs=1 -artifact_prefix="$out/cov/" "$f" >/dev/null 2>&1
		done
	else
		LLVM_PROFILE_FILE=$out/cov/$t-%p.profraw "$out/cov/fuzz_$t" -runs=0 -artifact_prefix="$out/cov/" "$corpus" >/dev/null 2>&1
	fi
	"$prof" merge -sparse -o "$out/cov/$t.profdata" "$out"/cov/"$t"-*.profraw
	n=$(ls "$corpus" | wc -l)
	# shellcheck disable=SC2086
	"$cov" report "$out/cov/fuzz_$t" -instr-profile="$out/cov/$t.profdata" $files 2>/dev/null |
		awk -v t="$t" -v n="$n" '
		/^TOTAL/ { printf "fuzz_%-6s %5d inputs: lines %s of %s (%s), regions %s\n", t, n, $8 - $9, $8, $10, $4 }
		/\.c / && $1 !~ /^TOTAL/ { sub(".*/", "", $1); files = files sprintf(" %s %s", $1, $10) }
		END { print "             by file:" files }'
done

#!/bin/bash
# run.sh - run each fuzz target for a set time and say what it did.
#
#   run.sh OUT SECONDS TARGET...      (tests/fuzz/Makefile: make fuzz, make check)
#   FUZZ_RUNS=N run.sh ...            also stop a target after N executions (the long run's
#                                     million: make fuzz FUZZ_SECONDS=3600 FUZZ_RUNS=1000000)
#   FUZZ_TIMEOUT=S run.sh ...         an input running S seconds is a hang (default 10; make
#                                     check's smoke gives 60, for a busy host)
#   FUZZ_FORKS=N run.sh ... import    fuzz_import's workers at a time (default 1): its -fork
#                                     mode (below) runs at about 130 inputs a second a worker,
#                                     so the million is hours on one core
#
# Each target starts from a copy of its seeds (corpus/<target>: the tree is
# left alone) plus what earlier runs found (OUT/work/<target>), with the
# formats' dictionary, a per-input time limit and the allocation limit the
# formats document (conf below). One line a target: executions, edge
# coverage (libFuzzer's cov: edges of our code reached), features, corpus,
# and the verdict. A crash, hang, leak or allocation beyond the limit
# stops the target, keeps its input in OUT/artifacts/<target>/ and fails
# the run; tests/fuzz/repro TARGET FILE runs it again.
#
# fuzz_import runs in libFuzzer's -fork mode: libtracecmd, not built for
# the sanitizers, sometimes corrupts the heap it shares with us on a
# corrupt file, which shows later, in whatever input comes next. A worker
# that dies so is replaced and its input kept; afterwards each kept input
# is run again alone (answered_alone): one that crashes alone and was not
# recognised as the libraries' crash is ours and fails the run; one that does
# not (the heap an earlier input spoiled) is counted as theirs. A hang is run
# through hgtrace-import itself: libtracecmd loops for ever on some corrupt
# headers (trace-cmd report too), which the importer's watchdog answers with
# exit 3. fuzz_import.c tells how crashes inside the libraries are recognised.
set -u
out=$1 secs=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)

# answered_alone TARGET INPUT - an input a -fork run kept, run again alone and
# with a time limit (a hang must not hang the run): a crash is run through the
# target (exit 0: it does not crash alone, the heap was spoiled by an earlier
# input); a hang (libFuzzer's timeout-*) through the product's hgtrace-import,
# whose watchdog ends a libtracecmd that loops on the file's headers: exit 0 or
# 3 is an answer, a signal or our own time limit is ours
answered_alone() {
	local t=$1 in=$2 rc
	if [[ $(basename "$in") == timeout-* ]]; then
		HGTRACE_IMPORT_OPEN_S=20 timeout -k 5 120 "$here/../../build/hgtrace-import" "$in" \
			-o "$in.alone.hgt" >"$in.alone.log" 2>&1
		rc=$?
		rm -f "$in.alone.hgt"
		[ $rc -eq 0 ] || { [ $rc -eq 3 ] && ! grep -q "in its own code" "$in.alone.log"; }
		return
	fi
	timeout -k 5 300 "$here/repro" "$t" "$in" >"$in.alone.log" 2>&1
}
. "$here/env.sh"

# target: seeds, max input length, -malloc_limit_mb
#   hgt, merge: a chunk's payload and its records once decoded are at most 64 MiB
#     (HGT_MAX_CHUNK_BYTES, HGT_MAX_RAW_BYTES in hg_hgt.h): no single allocation beyond
#   hgl: the info section is at most 16 MiB (HGL_MAX_INFO_BYTES), records are read in
#     64 KiB blocks; json: what the info section may hold
#   import: hgtrace-import's own buffers are 64 KiB chunks and a 4 MiB table of pids
#     (fuzz_import.c holds ours to 8 MiB); libtracecmd sizes what the file declares: beyond
#     256 MiB its malloc() returns NULL (env.sh), as a machine would say no
conf() {
	case $1 in
	hgt)	echo "hgt 16384 65" ;;
	hgl)	echo "hgl 16384 17" ;;
	json)	echo "json 16384 17" ;;
	merge)	echo "merge 24576 65" ;;
	import)	echo "dat 65536 256" ;;
	report)	echo "- 65536 2048" ;;	# Python: the bytes choose the corruptions (py/fuzz_report.py)
	esac
}

status=0
for t in "$@"; do
	read -r seeds maxlen mlimit <<<"$(conf "$t")"
	work=$out/work/$t art=$out/artifacts/$t/ log=$out/logs/$t.log tally=$out/logs/$t.tally
	mkdir -p "$work" "$art" "$(dirname "$log")"
	rm -f "$tally"
	[ "$seeds" = - ] || cp -n "$here/corpus/$seeds"/* "$work"/ 2>/dev/null
	before=$(ls "$art")
	mode=() leaks=1
	if [ "$t" = import ]; then
		# libtracecmd leaks on every file: a leak check after each input would be most of the
		# time; fuzz_import checks that our code leaves nothing (fz_track) instead
		mode=(-fork="${FUZZ_FORKS:-1}" -ignore_crashes=1 -ignore_timeouts=0 -ignore_ooms=0)
		leaks=0
	fi
	runs=()
	[ -z "${FUZZ_RUNS:-}" ] || runs=(-runs="$FUZZ_RUNS")
	t0=$(date +%s)
	run=("$out/fuzz_$t")
	[ "$t" != report ] || run=("$out/pyenv/bin/python" "$here/py/fuzz_report.py")
	FZ_TALLY=$tally ASAN_OPTIONS=$(asan_options "$t") "${run[@]}" "$work" "${mode[@]}" "${runs[@]}" \
		-detect_leaks=$leaks -dict="$here/hg.dict" -max_len="$maxlen" -max_total_time="$secs" \
		-timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 -malloc_limit_mb="$mlimit" -close_fd_mask=3 \
		-artifact_prefix="$art" -print_final_stats=1 -reload=0 >"$log" 2>&1
	rc=$?
	took=$(( $(date +%s) - t0 ))
	if [ ${#mode[@]} -eq 0 ]; then
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		last=$(grep -E '^#[0-9]+' "$log" | tail -1)
		cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
		ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
		corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
	else		# -fork: "#N: cov: C ft: F corp: K exec/s ..."
		last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1)
		execs=$(sed -n 's/^#\([0-9]*\):.*/\1/p' <<<"$last")
		cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
		ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
		corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
	fi
	new=$(comm -13 <(echo "$before") <(ls "$art") | grep -v '\.alone\.log$')
	ours=0 theirs=0
	# -fork with -ignore_crashes exits with the last lost worker's status: the run is whole
	# when libFuzzer says it fuzzed its time; its kept inputs, run alone, give the verdict
	if [ ${#mode[@]} -gt 0 ] && grep -q '^INFO: fuzzed for' "$log"; then
		rc=0
	fi
	if [ ${#mode[@]} -gt 0 ] && [ $rc -eq 0 ]; then
		for a in $new; do
			if answered_alone "$t" "$art$a"; then
				theirs=$((theirs + 1))
			else
				ours=$((ours + 1))
				echo "             fails alone (ours): $art$a ($art$a.alone.log)"
			fi
		done
	else
		ours=$(wc -w <<<"$new")
	fi
	if [ $rc -eq 0 ] && [ "$ours" -eq 0 ]; then
		verdict=ok
	else
		verdict="FAILED (exit $rc, $ours new in $art; $log)"
		status=1
	fi
	printf 'fuzz_%-6s %10s executions in %5ss, %6s edges, %6s features, corpus %5s: %s\n' \
		"$t" "${execs:-?}" "$took" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$verdict"
	if [ -f "$tally" ]; then
		awk '$1 == "import" { w += $2; r += $3; c += $4 } $1 == "merge" { d += $2; f += $3 }
		END {
			if (w + r + c) printf "             %d imports written, %d inputs refused, %d crashes inside " \
				"libtracecmd/libtraceevent caught (not ours)\n", w, r, c
			if (d + f) printf "             %d merges finished, %d inputs refused (fail())\n", d, f
		}' "$tally"
	fi
	[ "$theirs" -eq 0 ] || echo "             $theirs inputs kept by libFuzzer are answered when run alone" \
		"(a heap libtracecmd had spoiled, or its own loop on a corrupt file; kept in $art)"
	if [ "$verdict" != ok ]; then
		grep -E 'ERROR|SUMMARY|broken promise|runtime error' "$log" | grep -v 'failed to allocate' | head -5 |
			sed 's/^/             /'
	fi
done
exit $status

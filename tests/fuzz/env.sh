# env.sh - the sanitizers' settings of the fuzz targets (sourced by run.sh and repro)
here=${here:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:${UBSAN_OPTIONS:-}"
# asan_options TARGET - ASAN_OPTIONS for it; fuzz_import: what libtracecmd asks beyond 256 MiB
# is refused (malloc returns NULL), as a machine would
asan_options() {
	local o="suppressions=$here/asan.supp:detect_stack_use_after_return=0"
	[ "$1" != import ] || o="$o:allocator_may_return_null=1:max_allocation_size_mb=256"
	echo "$o${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
}

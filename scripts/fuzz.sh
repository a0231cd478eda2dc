#!/usr/bin/env bash
# fuzz.sh - builds the libFuzzer targets of tests/fuzz/ (clang, AddressSanitizer
# and UndefinedBehaviorSanitizer, everything instrumented, in build-fuzz/)
# and runs each for SECONDS (default 60), two at a time, from its committed
# seed corpus tests/fuzz/corpus/TARGET (copied: the committed one is not
# changed). A crash, a leak, a failed property or a sanitizer report fails the
# run; the input is kept as build-fuzz/crashes/TARGET-* and belongs in the
# seed corpus as a regression case once fixed. Prints the executions per
# target.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Targets: space (the space JSON loader), args (--shape, --arch, durations,
# numbers, byte sizes, configuration keys, --filter), landscape (the
# landscape CSV reader), wire (the worker wire decoder), export (the C header,
# dispatch header, HTML report, JSON/T4 exports and query table written from a
# database whose text columns hold the fuzzer's strings).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(space args landscape wire export)
case $secs in '' | *[!0-9]* | 0) echo "fuzz.sh: SECONDS '$secs': expected a whole number of seconds, at least 1" >&2; exit 2 ;; esac

. scripts/install-packages.sh
install_packages fuzz.sh clang libclang-rt-dev
if [ ! -f build-fuzz/build.ninja ]; then
    CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
fi
for t in "${targets[@]}"; do
    [ -d "tests/fuzz/corpus/$t" ] || { echo "fuzz.sh: unknown target '$t'; expected space, args, landscape, wire or export" >&2; exit 2; }
done
ninja -C build-fuzz "${targets[@]/#/tests/fuzz/fuzz_}" >/dev/null

mkdir -p build-fuzz/crashes build-fuzz/logs
work=$(mktemp -d /tmp/fattn-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
run_one() {
    local t=$1 max_len=
    mkdir -p "$work/$t"
    cp "tests/fuzz/corpus/$t"/* "$work/$t/"
    # The wire target writes its input into one socket buffer.
    [ "$t" = wire ] && max_len=-max_len=65536
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        "build-fuzz/tests/fuzz/fuzz_$t" -max_total_time="$secs" -print_final_stats=1 ${max_len:+"$max_len"} \
        -artifact_prefix="build-fuzz/crashes/$t-" "$work/$t" >"build-fuzz/logs/$t.log" 2>&1
}
export -f run_one
export secs work
status=0
printf '%s\n' "${targets[@]}" | xargs -P 2 -I{} bash -c 'run_one {}' || status=1
for t in "${targets[@]}"; do
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "build-fuzz/logs/$t.log")
    if grep -q "^==[0-9]*==ERROR\|runtime error:\|^SUMMARY: \|deadly signal" "build-fuzz/logs/$t.log" || [ -z "$execs" ]; then
        echo "fuzz.sh: $t FAILED; log build-fuzz/logs/$t.log, input under build-fuzz/crashes/" >&2
        tail -30 "build-fuzz/logs/$t.log" >&2
        status=1
    else
        echo "fuzz.sh: $t: $execs executions in ${secs}s, no crash, no sanitizer report"
    fi
done
exit $status

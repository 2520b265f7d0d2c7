#!/usr/bin/env bash
# Runs a ctest preset's tests N times beside one busy loop per core, the way an attacker ran
# `make test` on a 2-core machine while other work ran (issue 34 item 1): a test that waits for
# a thread by wall time, or assumes an engine faster than the clock, fails here first.
#
#   tools/stress-test.sh [-p PRESET] [-n RUNS] [-b BUILD_DIR] [-j JOBS] [-l LOOPS] [-- CTEST_ARGS...]
#
#   -p PRESET     asan or tsan (default tsan: its filter, the label "threads", and its
#                 environment, TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1)
#   -n RUNS       how many times (default 3)
#   -b BUILD_DIR  run the tests of this build tree instead of the preset's (build-tsan/, ...),
#                 with the preset's filter and environment; it must be built already
#   -j JOBS       ctest jobs (default: the preset's)
#   -l LOOPS      busy loops (default: one per core); 3 on 2 cores beside other work made the
#                 load of 9-12 the issue saw
#   CTEST_ARGS    passed on, e.g. -R test_interactive
#
# Prints per run: pass or fail, the failed tests, the wall time and the load average; exits
# non-zero when any run failed. The busy loops are killed on exit, whatever ends the script.
set -u

preset=tsan runs=3 build_dir="" jobs="" loops=""
while getopts "p:n:b:j:l:h" opt; do
    case $opt in
    p) preset=$OPTARG ;;
    n) runs=$OPTARG ;;
    b) build_dir=$OPTARG ;;
    j) jobs=$OPTARG ;;
    l) loops=$OPTARG ;;
    *) sed -n '2,19p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift

root=$(cd "$(dirname "$0")/.." && pwd)
case $preset in
asan)
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    filter=() default_jobs=2 ;;
tsan)
    export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
    filter=(-L threads) default_jobs=1 ;;
*) echo "stress-test: unknown preset '$preset' (asan or tsan)" >&2; exit 2 ;;
esac
[ -n "$build_dir" ] || build_dir=$root/build-$preset
if [ ! -f "$build_dir/CTestTestfile.cmake" ]; then
    echo "stress-test: $build_dir has no tests: build it first (make test, or cmake --preset" \
        "$preset && cmake --build --preset $preset)" >&2
    exit 2
fi
jobs=${jobs:-$default_jobs}

busy=()
stop_busy() {
    [ ${#busy[@]} -gt 0 ] && kill "${busy[@]}" 2>/dev/null
    wait "${busy[@]}" 2>/dev/null
    busy=()
}
trap stop_busy EXIT
trap 'exit 130' INT TERM HUP

loops=${loops:-$(nproc)}
for _ in $(seq "$loops"); do
    (while :; do :; done) &
    busy+=($!)
done
echo "stress-test: preset $preset, $runs runs of ctest in $build_dir beside $loops busy loops"

failed_runs=0
for run in $(seq "$runs"); do
    log=$(mktemp /tmp/issim-stress-XXXXXX.log)
    start=$(date +%s.%N)
    (cd "$build_dir" && ctest "${filter[@]}" -j "$jobs" --timeout 300 --output-on-failure "$@") \
        >"$log" 2>&1
    status=$?
    seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    summary=$(grep -E "tests passed|tests failed" "$log" | tail -n1)
    if [ $status -eq 0 ]; then
        printf 'run %d: pass  %6.1f s  load %s  (%s)\n' "$run" "$seconds" "$load" "$summary"
        rm -f "$log"
    else
        failed_runs=$((failed_runs + 1))
        printf 'run %d: FAIL  %6.1f s  load %s  (%s; log %s)\n' "$run" "$seconds" "$load" \
            "$summary" "$log"
        grep -E '^\s+[0-9]+ - ' "$log" | sed 's/^/    /'
    fi
done
echo "stress-test: $((runs - failed_runs)) of $runs runs passed"
[ $failed_runs -eq 0 ]

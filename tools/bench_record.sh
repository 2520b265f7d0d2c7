#!/usr/bin/env bash
# Recording benchmark (docs/performance.md, "HDF5 recording"): the 240-body pile recorded at
# every output step with every variable, headless, to CSV and to HDF5, against the same run
# without a recording. Prints rows, bytes, wall time and rows per wall second; not a test.
# A headless run blocks the engine while the recorder's ring is full (nothing is dropped), so a
# recorder that does not keep up shows as a longer wall time than the run without one.
# Usage: tools/bench_record.sh [BUILD_DIR] [UNTIL_SECONDS]
set -eu
build=${1:-build}
until=${2:-10}
issim=$build/issim
[[ -x $issim ]] || { echo "bench_record: no $issim (build first)" >&2; exit 1; }
dir=$(mktemp -d /tmp/issim-bench-record.XXXXXX)
trap 'rm -rf "$dir"' EXIT

run() { # $1: label, $2: output path or empty
    local args=(run scenes/pile.lua --headless --until "$until" --quiet --vars '')
    [[ -n $2 ]] && args+=(--record "$2")
    local out wall rows bytes steps
    out=$("$issim" "${args[@]}")
    wall=$(sed -n 's/.*, \([0-9.]*\) s wall.*/\1/p' <<<"$out")
    steps=$(sed -n 's/.*: \([0-9]*\) time steps.*/\1/p' <<<"$out")
    if [[ -n $2 ]]; then
        rows=$(sed -n 's/^recorded *\([0-9]*\) rows.*/\1/p' <<<"$out")
        bytes=$(stat -c %s "$2")
        # One row per output step plus the initial state: any fewer were dropped.
        printf '%-8s rows %7s  dropped %s  bytes %11s  wall %7.2f s  %8.0f rows/s  %.3f x real time\n' \
            "$1" "$rows" "$((steps + 1 - rows))" "$bytes" "$wall" \
            "$(awk -v r="$rows" -v w="$wall" 'BEGIN { print r / w }')" \
            "$(awk -v u="$until" -v w="$wall" 'BEGIN { print u / w }')"
    else
        printf '%-8s wall %7.2f s  %.3f x real time\n' "$1" "$wall" \
            "$(awk -v u="$until" -v w="$wall" 'BEGIN { print u / w }')"
    fi
}

echo "pile (240 bodies), every variable, every output step, ${until} s simulated"
run none ""
run csv "$dir/pile.csv"
run hdf5 "$dir/pile.h5"
csv=$(stat -c %s "$dir/pile.csv")
h5=$(stat -c %s "$dir/pile.h5")
awk -v c="$csv" -v h="$h5" 'BEGIN { printf "csv / hdf5 bytes: %.2f\n", c / h }'

#!/usr/bin/env bash
# Sweep scaling (issue 18 targets): a 100-run bar-drop sweep (the contact-map drop,
# scenes/bar_drop_map.lua: 25 angles x 4 speeds, 0.5 ms each, about 9 ms of computing per run) on 1 and 2 threads and on 1 and 2 MPI ranks, wall time and speed-up; and the
# overhead per run beyond the run itself (the same sweep with runs of one output step).
# Usage: tools/bench_sweep.sh [build dir, default build]
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
bin=$build/issim
tmp=$(mktemp -d /tmp/issim-bench-sweep.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
grid=(--grid angle_deg=18:90:25 --grid speed=0.5,1,2,3)
wall() { # seconds of wall time of the command
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN {print b - a}'
}
run() { rm -f "$tmp/t.csv"; wall "$@" --out "$tmp/t.csv" --quiet; }
scene=scenes/bar_drop_map.lua
echo "## sweep: 100 bar-drop runs ($scene, --until 5e-4), $(nproc) cores"
t1=$(run "$bin" sweep $scene "${grid[@]}" --until 5e-4 --threads 1)
t2=$(run "$bin" sweep $scene "${grid[@]}" --until 5e-4 --threads 2)
m1=$(run mpirun -np 1 "$bin" sweep $scene "${grid[@]}" --until 5e-4 --threads 1)
m2=$(run mpirun -np 2 --oversubscribe "$bin" sweep $scene "${grid[@]}" --until 5e-4 --threads 1)
printf "threads  1: %6.2f s   2: %6.2f s   speed-up %.2f (target >= 1.8)\n" "$t1" "$t2" "$(awk -v a="$t1" -v b="$t2" 'BEGIN {print a / b}')"
printf "MPI      1: %6.2f s   2: %6.2f s   speed-up %.2f (target >= 1.8)\n" "$m1" "$m2" "$(awk -v a="$m1" -v b="$m2" 'BEGIN {print a / b}')"
# Overhead: the runs' own time is in the table (wall_s: scene load, engine build, run); a run of
# one 1e-5 s output step is almost all load and build.
rm -f "$tmp/o.csv"
"$bin" sweep $scene "${grid[@]}" --until 1e-5 --threads 1 --out "$tmp/o.csv" --quiet >/dev/null
over=$(tail -n +2 "$tmp/o.csv" | awk -F, '{s += $NF} END {printf "%.2f", 1000 * s / NR}')
rm -f "$tmp/t.csv"
start=$(date +%s.%N)
"$bin" sweep $scene "${grid[@]}" --until 5e-4 --threads 1 --out "$tmp/t.csv" --quiet >/dev/null
end=$(date +%s.%N)
inside=$(tail -n +2 "$tmp/t.csv" | awk -F, '{s += $NF} END {print s}')
outside=$(awk -v a="$start" -v b="$end" -v c="$inside" 'BEGIN {print 1000 * ((b - a) - c) / 100}')
printf "per run: %.2f ms to load the scene and build the engine (a 1e-5 s run), %.2f ms of sweep bookkeeping outside the runs (target < 5 ms)\n" "$over" "$outside"

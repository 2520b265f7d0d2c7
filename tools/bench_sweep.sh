#!/usr/bin/env bash
# Sweep scaling (issue 18 targets): the contact-map bar drop (scenes/bar_drop_map.lua, --until
# 5e-4) swept on 1 and 2 threads and on 1 and 2 MPI ranks, wall time and speed-up, five times
# each (1 and 2 alternated, so both see the same background load), every figure printed:
# - the issue's 100-run sweep (25 angles x 4 speeds): since the map is read once per process
#   (about 0.4 ms of computing per run) it is 40 ms of runs, and the fixed costs of a process
#   (start, the one map read, under MPI the launch) decide its speed-up;
# - a 2,500-run sweep of the same scene (625 angles x 4 speeds, about 1 s of runs): the speed-up
#   once the runs outweigh the fixed costs;
# - where an MPI sweep's wall time goes (ISSIM_SWEEP_TIMES=1: launch to main, MPI_Init, runs,
#   MPI_Finalize, exit), and the overhead per run beyond the run itself.
# Each scaling line is printed three ways: the whole wall time, the sweep's own part (MPI_Init or
# main to the table written: what issim controls), and what the two workers lost, waiting for a
# core (another process's load: the machine is shared) or blocked inside the process.
# Usage: tools/bench_sweep.sh [build dir, default build]
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
bin=$build/issim
tmp=$(mktemp -d /tmp/issim-bench-sweep.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
scene=scenes/bar_drop_map.lua
small=(--grid angle_deg=18:90:25 --grid speed=0.5,1,2,3)
large=(--grid angle_deg=18:90:625 --grid speed=0.5,1,2,3)
now() { date +%s.%N; }
# One sweep (a fresh table): "whole own waiting blocked" in seconds. whole: the launching
# shell's wall time (process start, under MPI mpirun's launch, exit); own: the sweep's own part,
# from MPI_Init's return (or main) to the table written (ISSIM_SWEEP_TIMES phases, rank 0);
# waiting / blocked: its workers' time runnable without a core (other processes' load) and
# blocked (on a lock or the kernel: serialisation inside the process), summed over workers.
wall() {
  local start end
  rm -f "$tmp/t.csv"
  start=$(now)
  ISSIM_SWEEP_TIMES=1 "$@" --out "$tmp/t.csv" --quiet >/dev/null 2>"$tmp/t.err"
  end=$(now)
  awk -v a="$start" -v b="$end" '/sweep-phase rank 0 / {p[$4] = $5}
    /sweep-worker/ {w += $12; k += $14}
    END {s = ("mpi-init-done" in p) ? p["mpi-init-done"] : p["main"]
      printf "%.3f %.3f %.3f %.3f\n", b - a, p["table-sorted"] - s, w, k}' "$tmp/t.err"
}
# scaling LABEL GRID-NAME: five pairs (1 then 2 workers) of threads, then of ranks
scaling() {
  local label=$1 name=$2[@]
  local grid=("${!name}")
  for kind in threads MPI; do
    local whole="" own="" rw="" ro="" lost=""
    for i in 1 2 3 4 5; do
      if [ $kind = threads ]; then
        read -r a ao aw ab < <(wall "$bin" sweep $scene "${grid[@]}" --until 5e-4 --threads 1)
        read -r b bo bw bb < <(wall "$bin" sweep $scene "${grid[@]}" --until 5e-4 --threads 2)
      else
        read -r a ao aw ab < <(wall mpirun -np 1 "$bin" sweep $scene "${grid[@]}" --until 5e-4 \
          --threads 1)
        read -r b bo bw bb < <(wall mpirun -np 2 --oversubscribe "$bin" sweep $scene "${grid[@]}" \
          --until 5e-4 --threads 1)
      fi
      whole+=$(printf " %.2f/%.2f" "$a" "$b")
      own+=$(printf " %.3f/%.3f" "$ao" "$bo")
      rw+=$(awk -v a="$a" -v b="$b" 'BEGIN {printf " %.2f", a / b}')
      ro+=$(awk -v a="$ao" -v b="$bo" 'BEGIN {printf " %.2f", a / b}')
      lost+=$(printf " %.2f/%.3f" "$bw" "$bb")
    done
    printf "%-10s %-7s whole 1/2 s:%s  speed-up:%s (target >= 1.8)\n" "$label" "$kind" "$whole" "$rw"
    printf "%-10s %-7s own   1/2 s:%s  speed-up:%s\n" "$label" "$kind" "$own" "$ro"
    printf "%-10s %-7s 2 workers waiting for a core / blocked, s:%s\n" "$label" "$kind" "$lost"
  done
}
echo "## sweep: bar-drop runs ($scene, --until 5e-4), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
scaling "100 runs" small
scaling "2500 runs" large
# Phases of the 100-run MPI sweep (rank 0; seconds from mpirun's start), median of five.
phases() {
  for i in 1 2 3 4 5; do
    rm -f "$tmp/p.csv"
    start=$(now)
    ISSIM_SWEEP_TIMES=1 "$@" "$bin" sweep $scene "${small[@]}" --until 5e-4 --threads 1 \
      --out "$tmp/p.csv" --quiet 2>"$tmp/p.err" >/dev/null
    end=$(now)
    awk -v t0="$start" -v t1="$end" '$3 == 0 && /sweep-phase/ {t[$4] = $5}
      END {printf "%.3f %.3f %.3f %.3f %.3f %.3f\n", t["main"] - t0,
        t["mpi-init-done"] - t["main"], t["table-sorted"] - t["runs-start"],
        t["mpi-finalize-done"] - t["table-sorted"], t1 - t["mpi-finalize-done"], t1 - t0}' \
      "$tmp/p.err"
  done | sort -n -k6 | sed -n 3p
}
for np in 1 2; do
  read -r launch init runs fin exit total < <(phases mpirun -np $np --oversubscribe)
  printf "MPI -np %d phases (median of 5): launch to main %.3f s, MPI_Init %.3f, runs %.3f, MPI_Finalize %.3f, exit %.3f; total %.3f s\n" \
    $np "$launch" "$init" "$runs" "$fin" "$exit" "$total"
done
# Overhead: the runs' own time is in the table (wall_s: scene load, engine build, run); a run of
# one 1e-5 s output step is almost all load and build.
rm -f "$tmp/o.csv"
"$bin" sweep $scene "${small[@]}" --until 1e-5 --threads 1 --out "$tmp/o.csv" --quiet >/dev/null
over=$(tail -n +2 "$tmp/o.csv" | awk -F, '{s += $NF} END {printf "%.2f", 1000 * s / NR}')
rm -f "$tmp/t.csv"
start=$(now)
"$bin" sweep $scene "${small[@]}" --until 5e-4 --threads 1 --out "$tmp/t.csv" --quiet >/dev/null
end=$(now)
inside=$(tail -n +2 "$tmp/t.csv" | awk -F, '{s += $NF} END {print s}')
outside=$(awk -v a="$start" -v b="$end" -v c="$inside" 'BEGIN {print 1000 * ((b - a) - c) / 100}')
printf "per run: %.2f ms to load the scene and build the engine (a 1e-5 s run; the first run also reads the map), %.2f ms of sweep bookkeeping and process start outside the runs (target < 5 ms)\n" "$over" "$outside"

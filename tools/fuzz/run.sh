#!/usr/bin/env bash
# Runs every libFuzzer harness built in build-fuzz/ for FUZZ_SECONDS (default 60) each, one after
# the other, on its committed corpus (tools/fuzz/corpus/<name>, read only) plus a scratch corpus
# (build-fuzz/corpus/<name>, where new inputs go and which later runs start from). Crashes, leaks,
# timeouts and OOMs are written to build-fuzz/crashes/<name>/; logs to build-fuzz/logs/<name>.log.
# Prints one line per harness (executions, exec/s, coverage) and exits 1 if any harness failed.
# Usage: tools/fuzz/run.sh [harness names...]   (default: all of build-fuzz/fuzz_*)
set -u
cd "$(dirname "$0")/../.."
seconds=${FUZZ_SECONDS:-60}
build=build-fuzz
names=("$@")
if [[ ${#names[@]} -eq 0 ]]; then
  for bin in "$build"/fuzz_*; do
    [[ -x $bin ]] && names+=("$(basename "$bin" | sed 's/^fuzz_//')")
  done
fi
[[ ${#names[@]} -gt 0 ]] || { echo "fuzz: no harnesses in $build (cmake --build --preset fuzz)" >&2; exit 1; }

export OPENBLAS_NUM_THREADS=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=0
for name in "${names[@]}"; do
  bin=$build/fuzz_$name
  # Seeds, read only: the committed corpus (fixed crashers, small cases) and, where they fit, the
  # project's own scenes and assets, read in place rather than copied.
  seeds=()
  [[ -d tools/fuzz/corpus/$name ]] && seeds+=("tools/fuzz/corpus/$name")
  [[ $name == scene ]] && seeds+=(scenes)
  [[ $name == obj ]] && seeds+=(assets)
  [[ $name == map && -d assets/maps ]] && seeds+=(assets/maps)
  scratch=$build/corpus/$name
  crashes=$build/crashes/$name
  log=$build/logs/$name.log
  dict=()
  [[ -f tools/fuzz/$name.dict ]] && dict=(-dict="tools/fuzz/$name.dict")
  mkdir -p "$scratch" "$crashes" "$build/logs"
  "$bin" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -print_final_stats=1 \
    "${dict[@]}" -artifact_prefix="$crashes/" "$scratch" "${seeds[@]}" >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  eps=$(sed -n 's/.* exec\/s: \([0-9]*\).*/\1/p' <<<"$last")
  if [[ $rc -eq 0 ]]; then
    printf 'fuzz %-6s ok     %ss: %s runs, %s exec/s, cov %s, ft %s, corpus %s files\n' "$name" \
      "$seconds" "${runs:-?}" "${eps:-?}" "${cov:-?}" "${ft:-?}" "$(ls "$scratch" | wc -l)"
  else
    failed=1
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    printf 'fuzz %-6s FAILED (exit %d): artifact %s, log %s\n' "$name" "$rc" "${artifact:-none}" "$log"
    grep -m 1 -E 'ERROR: |runtime error|fuzz_[a-z]+: ' "$log" | sed 's/^/  /' ||
      tail -n 3 "$log" | sed 's/^/  /'
    echo "  reproduce: $bin ${artifact:-<artifact>}"
  fi
done
exit $failed

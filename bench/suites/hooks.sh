#!/usr/bin/env bash
# Suite hooks: what an instrumented call costs.
#  1. hook_benchmark (Google Benchmark): a loop, not instrumented, calling an
#     instrumented leaf (BM_InstrumentedCall: 1 call = 2 events), a caller of
#     two leaves (BM_CallerWithTwoCallees: per call), an excluded function
#     and calls inside paused regions. Configurations: no-op (glibc's hooks,
#     no runtime), parlot (the runtime, default settings), parlot-nc
#     (PARLOT_COMPRESS=0: raw words), parlot-notime (PARLOT_CLOCK_EVENTS=0:
#     no clock samples), parlot-flight (PARLOT_MODE=flight: the flight
#     recorder, blocks to the in-memory ring). Baseline no-op; "added ns/event" = (ns - no-op) / 2.
#  2. The dense loop (flat_cost_loop loop EVENTS THREADS: an instrumented
#     caller/leaf loop, events counted by the program) under hyperfine, 1 and
#     4 threads: no-op, parlot, parlot-notime, parlot-flight. Added ns/event over no-op
#     from wall time; trace bytes of the traced run.
# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
set -euo pipefail
need "$RT" "$READER" "$BENCH_BIN/hook_benchmark" "$BENCH_BIN/flat_cost_loop"
tmp="$OUT/tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

# 1. Per-call cost, Google Benchmark.
filter='BM_InstrumentedCall$|BM_CallerWithTwoCallees|BM_ExcludedCall|BM_CallPaused'
min_time=$([ "$QUICK" = 1 ] && echo 0.05 || echo 0.2)
gbargs=(--benchmark_filter="$filter" --benchmark_min_time="$min_time")
exclude='parlot_bench_excluded_*'
gb no-op "$BENCH_BIN/hook_benchmark" "${gbargs[@]}"
for c in parlot parlot-nc parlot-notime parlot-flight; do
  extra=()
  case $c in
    parlot-nc) extra=(PARLOT_COMPRESS=0) ;;
    parlot-flight) extra=(PARLOT_MODE=flight) ;;
    parlot-notime) extra=(PARLOT_CLOCK_EVENTS=0) ;;
  esac
  rm -rf "$tmp/t"
  gb "$c" env PARLOT_QUIET=1 PARLOT_DIR="$tmp/t" PARLOT_EXCLUDE="$exclude" LD_PRELOAD="$RT" \
    ${extra[@]+"${extra[@]}"} "$BENCH_BIN/hook_benchmark" "${gbargs[@]}"
done
echo "### Per call (hook_benchmark; ns of CPU per item: a call, 2 events)"
echo
table gbench --baseline no-op --events-per-item 2 "$OUT/no-op.json" "$OUT/parlot.json" \
  "$OUT/parlot-nc.json" "$OUT/parlot-notime.json" "$OUT/parlot-flight.json"

# 2. The dense loop, whole process, hyperfine.
events=$([ "$QUICK" = 1 ] && echo 100000000 || echo 1000000000)
files=()
for threads in 1 4; do
  name="dense-loop-${threads}t"
  cmd="$BENCH_BIN/flat_cost_loop loop $events $threads"
  hf "$name" --prepare "rm -rf $tmp/d" \
    -n no-op "$cmd" \
    -n parlot "env $(trace_env "$tmp/d") $cmd" \
    -n parlot-notime "env PARLOT_CLOCK_EVENTS=0 $(trace_env "$tmp/d") $cmd" \
    -n parlot-flight "env PARLOT_MODE=flight $(trace_env "$tmp/d") $cmd"
  if [ "$DRY_RUN" = 0 ]; then
    # The exact count the program printed, and the traced run's bytes.
    n=$("$BENCH_BIN/flat_cost_loop" loop "$events" "$threads" | sed -n 's/^events //p')
    rm -rf "$tmp/d"
    env PARLOT_QUIET=1 PARLOT_DIR="$tmp/d" LD_PRELOAD="$RT" "$BENCH_BIN/flat_cost_loop" loop "$events" "$threads" >/dev/null
    traced=$(events_of "$tmp/d")
    [ "$traced" = "$n" ] || note "$name: the trace has $traced events, the program made $n"
    echo "{\"events\": $n, \"bytes\": {\"parlot\": $(bytes_of "$tmp/d")}}" >"$OUT/$name.meta.json"
  fi
  files+=("$OUT/$name.json")
done
echo
echo "### Dense loop ($events events in all, wall time, hyperfine)"
echo
table hyperfine --baseline no-op "${files[@]}"

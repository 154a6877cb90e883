#!/usr/bin/env bash
# Microbenchmarks (issue "measure like the paper"), printed as Markdown:
#  1. Cost of one instrumented call (an entry and an exit event) under
#     glibc's no-op hooks (the floor), Parlot, Parlot uncompressed
#     (PARLOT_COMPRESS=0) and Parlot compressing to nowhere
#     (PARLOT_DISCARD=1), from bench/hook_benchmark; configurations are run
#     in turn ROUNDS times and the median of each is kept.
#  2. Codec throughput and ratio on traces recorded from the examples, against
#     zstd -1, zstd -19 and lz4 (bench/codec_comparison_benchmark).
#  3. Per-event latency distribution, incremental compression against
#     buffer-then-compress-the-block (bench/latency_benchmark).
# Usage: bench/micro.sh [OUTDIR]   (default bench-results/micro)
# Environment: PARLOT_BUILD_DIR (default build), ROUNDS (default 3).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out="${1:-bench-results/micro}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
build="${PARLOT_BUILD_DIR:-build}"
rounds="${ROUNDS:-3}"
"$root/scripts/install-deps.sh"
PARLOT_BUILD_DIR="$build" "$root/scripts/build.sh" >/dev/null
rt="$root/$build/runtime/libparlotrt.so"
bin="$root/$build/bench"
ex="$root/$build/examples"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# ---- 1. Hook cost -----------------------------------------------------------
# hook_run CONFIG: prints "benchmark cpu_ns" lines for one run.
hook_run() {
  local envs=()
  case $1 in
    parlot) envs=(LD_PRELOAD="$rt" PARLOT_DIR="$work/hb") ;;
    parlot-nc) envs=(LD_PRELOAD="$rt" PARLOT_DIR="$work/hb" PARLOT_COMPRESS=0) ;;
    parlot-discard) envs=(LD_PRELOAD="$rt" PARLOT_DIR="$work/hb" PARLOT_DISCARD=1) ;;
    # The record filter: BM_ExcludedCall's and BM_AlternatingExcludedCalls'
    # callees are excluded, the rest recorded.
    parlot-exclude) envs=(LD_PRELOAD="$rt" PARLOT_DIR="$work/hb" PARLOT_EXCLUDE='parlot_bench_excluded_*') ;;
  esac
  rm -rf "$work/hb"
  env ${envs[@]+"${envs[@]}"} "$bin/hook_benchmark" --benchmark_min_time=1 --benchmark_format=csv 2>/dev/null |
    awk -F, '/^"BM_/ { gsub(/"/, "", $1); print $1, $4 }'
}
configs=(noop parlot parlot-nc parlot-discard parlot-exclude)
for r in $(seq "$rounds"); do
  for c in "${configs[@]}"; do
    hook_run "$c" | sed "s/^/$c /" >>"$work/hook.txt"
  done
done
{
  echo "## Hook cost: ns of CPU time per instrumented call (one entry + one exit event)"
  echo
  echo "Median of $rounds rounds; configurations run in turn. Per call: BM_CallerWithTwoCallees is divided by its 3 instrumented calls. 'per event over no-op' = (Parlot - no-op) / 2."
  echo
  echo "'PARLOT_EXCLUDE' runs with PARLOT_EXCLUDE='parlot_bench_excluded_*': BM_ExcludedCall and BM_AlternatingExcludedCalls then measure excluded functions, the other rows recorded functions under an active filter."
  echo
  echo "| benchmark | no-op | Parlot | Parlot-NC | compress to nowhere | PARLOT_EXCLUDE | Parlot per event over no-op |"
  echo "|---|---|---|---|---|---|---|"
  awk '
    { v[$2, $1] = v[$2, $1] " " $3; b[$2] = 1 }
    function med(s,    a, n, i, j, t) {
      n = split(s, a, " ")
      for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
      return a[int((n + 1) / 2)]
    }
    END {
      for (k in b) {
        calls = k ~ /TwoCallees/ ? 3 : k ~ /Alternating/ ? 2 : 1
        n = med(v[k, "noop"]) / calls; p = med(v[k, "parlot"]) / calls
        printf "| %s (per call) | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", k, n, p, med(v[k, "parlot-nc"]) / calls, med(v[k, "parlot-discard"]) / calls, med(v[k, "parlot-exclude"]) / calls, (p - n) / 2
      }
    }' "$work/hook.txt" | sort
  echo
} >"$out/hook.md"
cat "$out/hook.md"

# ---- Recorded traces for 2 and 3 ----------------------------------------------
traces=()
record() {  # name args...
  local name=$1
  shift
  [ -x "$ex/$name" ] || return 0
  rm -rf "$work/rec-$name"
  PARLOT_DIR="$work/rec-$name" LD_PRELOAD="$rt" "$ex/$name" "$@" >/dev/null
  # The largest thread file of the run.
  traces+=("$(find "$work/rec-$name" -name 'thread-*.trace' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2-)")
}
record cg 7000 20
record mg 32 2
record is 20 19 4
record quicksort_threads 2000000 2
record cpp_features 20000
trace_list=$(IFS=:; echo "${traces[*]}")

# ---- 2. Codec comparison --------------------------------------------------------
if [ -x "$bin/codec_comparison_benchmark" ]; then
  PARLOT_BENCH_TRACES="$trace_list" "$bin/codec_comparison_benchmark" --benchmark_min_time=0.5 \
    2>/dev/null | tee "$out/codec_comparison.txt"
else
  echo "codec_comparison_benchmark not built (zstd or lz4 missing)" | tee "$out/codec_comparison.txt"
fi

# ---- 3. Latency ---------------------------------------------------------------
if [ -x "$bin/latency_benchmark" ]; then
  PARLOT_BENCH_TRACE="${traces[0]}" "$bin/latency_benchmark" | tee "$out/latency.md"
fi

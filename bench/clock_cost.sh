#!/usr/bin/env bash
# What the time axis costs (issue 11 §1), printed as Markdown: clock samples
# off (PARLOT_CLOCK_EVENTS=0, the baseline), the default (a clock read every
# 1024 events, samples kept by the swing-door filter, tolerance 50 us), and
# every event timed (PARLOT_CLOCK_EVENTS=1), in the same run:
#  1. bench/hook_benchmark (CPU ns per instrumented call), ROUNDS interleaved
#     rounds, median; added ns per event = (config - off) / 2 per call.
#  2. The NAS-style kernels (build/examples cg, ep, is, mg): CPU seconds
#     (user + sys, median of ROUNDS), events, trace bytes, bytes per event,
#     added CPU ns per event over "off".
# Usage: bench/clock_cost.sh [OUTDIR]  (default bench-results/clock)
# Environment: PARLOT_BUILD_DIR (default build), ROUNDS (default 3).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out="${1:-bench-results/clock}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
build="$root/${PARLOT_BUILD_DIR:-build}"
rounds="${ROUNDS:-3}"
rt="$build/runtime/libparlotrt.so"
read_tool="$build/reader/parlot-read"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
configs=(off default every)
config_env() {
  case $1 in
    off) echo PARLOT_CLOCK_EVENTS=0 ;;
    default) echo PARLOT_CLOCK_UNSET=1 ;;
    every) echo PARLOT_CLOCK_EVENTS=1 ;;
  esac
}
# shellcheck source=bench/stats.sh
. "bench/stats.sh"

# ---- 1. Microbenchmark --------------------------------------------------------
for r in $(seq "$rounds"); do
  for c in "${configs[@]}"; do
    rm -rf "$work/hb"
    env -u PARLOT_CLOCK_EVENTS "$(config_env "$c")" LD_PRELOAD="$rt" PARLOT_DIR="$work/hb" \
      "$build/bench/hook_benchmark" --benchmark_filter='BM_InstrumentedCall|BM_CallerWithTwoCallees' \
      --benchmark_min_time=0.5 --benchmark_format=csv 2>/dev/null |
      awk -F, -v c="$c" '/^"BM_/ { gsub(/"/, "", $1); print c, $1, $4 }' >>"$work/hook.txt"
  done
done
{
  echo "## Hook cost with clock samples: CPU ns per instrumented call (median of $rounds interleaved rounds)"
  echo
  echo "| benchmark | off | default | every event | default: added ns/event | every event: added ns/event |"
  echo "|---|---|---|---|---|---|"
  for b in BM_InstrumentedCall BM_CallerWithTwoCallees; do
    calls=1
    [ "$b" = BM_CallerWithTwoCallees ] && calls=3
    o=$(awk -v b="$b" '$1 == "off" && $2 == b { print $3 }' "$work/hook.txt" | median)
    d=$(awk -v b="$b" '$1 == "default" && $2 == b { print $3 }' "$work/hook.txt" | median)
    e=$(awk -v b="$b" '$1 == "every" && $2 == b { print $3 }' "$work/hook.txt" | median)
    awk -v b="$b" -v c="$calls" -v o="$o" -v d="$d" -v e="$e" 'BEGIN {
      printf "| %s (per call) | %.2f | %.2f | %.2f | %+.3f | %+.2f |\n", b, o / c, d / c, e / c, (d - o) / c / 2, (e - o) / c / 2 }'
  done
  echo
} | tee "$out/hook.md"

# ---- 2. Kernels -------------------------------------------------------------------
kernel_args() {
  case $1 in
    cg) echo "8000 60" ;; ep) echo "24" ;; is) echo "22 19 10" ;; mg) echo "32 200" ;;
  esac
}
for r in $(seq "$rounds"); do
  for k in cg ep is mg; do
    for c in "${configs[@]}"; do
      d="$work/$k-$c"
      rm -rf "$d"
      # shellcheck disable=SC2046
      /usr/bin/time -f "%U %S" -o "$work/time" env -u PARLOT_CLOCK_EVENTS "$(config_env "$c")" \
        LD_PRELOAD="$rt" PARLOT_DIR="$d" "$build/examples/$k" $(kernel_args "$k") >/dev/null
      cpu=$(awk '{ print $1 + $2 }' "$work/time")
      total=$("$read_tool" info "$d" | awk '/^total:/ { print $4, $9 }')
      echo "$k $c $cpu $total" >>"$work/kernels.txt"
    done
  done
done
{
  echo "## Kernels: CPU seconds (median of $rounds), events, trace bytes"
  echo
  echo "| kernel | events | off s | default s | every s | off bytes | default bytes | every bytes | default added ns/event | every added ns/event | every bytes/event |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  for k in cg ep is mg; do
    ev=$(awk -v k="$k" '$1 == k { print $4; exit }' "$work/kernels.txt")
    o=$(awk -v k="$k" '$1 == k && $2 == "off" { print $3 }' "$work/kernels.txt" | median)
    d=$(awk -v k="$k" '$1 == k && $2 == "default" { print $3 }' "$work/kernels.txt" | median)
    e=$(awk -v k="$k" '$1 == k && $2 == "every" { print $3 }' "$work/kernels.txt" | median)
    bo=$(awk -v k="$k" '$1 == k && $2 == "off" { print $5; exit }' "$work/kernels.txt")
    bd=$(awk -v k="$k" '$1 == k && $2 == "default" { print $5; exit }' "$work/kernels.txt")
    be=$(awk -v k="$k" '$1 == k && $2 == "every" { print $5; exit }' "$work/kernels.txt")
    awk -v k="$k" -v ev="$ev" -v o="$o" -v d="$d" -v e="$e" -v bo="$bo" -v bd="$bd" -v be="$be" 'BEGIN {
      printf "| %s | %d | %.3f | %.3f | %.3f | %d | %d | %d | %+.3f | %+.2f | %.2f |\n",
        k, ev, o, d, e, bo, bd, be, (d - o) * 1e9 / ev, (e - o) * 1e9 / ev, be / ev }'
  done
  echo
} | tee "$out/kernels.md"

#!/usr/bin/env bash
# Codec 1 against codec 2 in the runtime and the reader (issue 12), printed
# as Markdown:
#  1. Hook cost: bench/hook_benchmark under glibc's no-op hooks, Parlot
#     codec 1 and Parlot codec 2 (PARLOT_CODEC), run in turn ROUNDS times,
#     median CPU ns per call; "per event over no-op" = (Parlot - no-op) / 2.
#  2. Instructions per event on the dense loop (test/e2e call_fixture
#     "loop": 200,000 x 3 nested calls = 1.2 M events) under callgrind:
#     (Ir with the runtime - Ir without) / events, for each codec.
#  3. Decoding: codec_benchmark BM_ReadRecordedTrace (ThreadEventReader,
#     file I/O included, events/s) and `parlot-read stats` wall time, on the
#     streams of bench/record_codec_streams.sh recorded with each codec.
# Usage: bench/codec_cost.sh [OUTDIR]  (default bench-results/codec)
# Environment: PARLOT_BUILD_DIR (default build), ROUNDS (default 3),
#   DEBIAN_DIR (lua/sqlite3 from bench/debian_programs/build.sh, optional).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out="${1:-bench-results/codec}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
build="${PARLOT_BUILD_DIR:-build}"
rounds="${ROUNDS:-3}"
rt="$root/$build/runtime/libparlotrt.so"
bin="$root/$build/bench"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# shellcheck source=bench/stats.sh
. "bench/stats.sh"

# ---- 1. Hook cost -------------------------------------------------------------
hook_run() {  # config -> "benchmark cpu_ns" lines
  local envs=()
  case $1 in
    codec1) envs=(LD_PRELOAD="$rt" PARLOT_DIR="$work/hb" PARLOT_CODEC=1) ;;
    codec2) envs=(LD_PRELOAD="$rt" PARLOT_DIR="$work/hb" PARLOT_CODEC=2) ;;
  esac
  rm -rf "$work/hb"
  env ${envs[@]+"${envs[@]}"} "$bin/hook_benchmark" --benchmark_min_time=1 --benchmark_format=csv 2>/dev/null |
    awk -F, '/^"BM_/ { gsub(/"/, "", $1); print $1, $4 }'
}
for r in $(seq "$rounds"); do
  for c in noop codec1 codec2; do hook_run "$c" | sed "s/^/$c /" >>"$work/hook.txt"; done
done
{
  echo "## Hook cost, ns of CPU time per instrumented call (median of $rounds interleaved rounds)"
  echo
  echo "| benchmark | no-op | codec 1 | codec 2 | codec 1 per event over no-op | codec 2 per event over no-op |"
  echo "|---|---|---|---|---|---|"
  for b in $(awk '{ print $2 }' "$work/hook.txt" | sort -u); do
    calls=1
    case $b in *TwoCallees*) calls=3 ;; esac
    n=$(awk -v b="$b" '$1 == "noop" && $2 == b { print $3 }' "$work/hook.txt" | median)
    p1=$(awk -v b="$b" '$1 == "codec1" && $2 == b { print $3 }' "$work/hook.txt" | median)
    p2=$(awk -v b="$b" '$1 == "codec2" && $2 == b { print $3 }' "$work/hook.txt" | median)
    awk -v b="$b" -v c="$calls" -v n="$n" -v p1="$p1" -v p2="$p2" 'BEGIN {
      printf "| %s (per call) | %.2f | %.2f | %.2f | %.2f | %.2f |\n", b, n / c, p1 / c, p2 / c, (p1 - n) / c / 2, (p2 - n) / c / 2 }'
  done
  echo
} | tee "$out/hook.md"

# ---- 2. Instructions per event (callgrind) ---------------------------------------
fixture="$root/$build/test/e2e/call_fixture_gcc_O2"
if command -v valgrind >/dev/null && [ -x "$fixture" ]; then
  ir() {  # env... -> total instructions of the fixture's loop run
    rm -f "$work/cg.out"
    env "$@" valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$fixture" loop >/dev/null 2>&1
    awk '/^summary:/ { print $2 }' "$work/cg.out"
  }
  base=$(ir PARLOT_QUIET=1)
  events=1200002  # main + 200,000 x 3 calls, entries and exits
  {
    echo "## Instructions per event on the dense loop (callgrind, call_fixture loop, $events events)"
    echo
    echo "| configuration | instructions | over no-op per event |"
    echo "|---|---|---|"
    echo "| no-op hooks | $base | 0 |"
    for c in 1 2; do
      rm -rf "$work/cgt"
      i=$(ir LD_PRELOAD="$rt" PARLOT_DIR="$work/cgt" PARLOT_QUIET=1 PARLOT_CODEC=$c)
      awk -v c="$c" -v i="$i" -v b="$base" -v e="$events" 'BEGIN { printf "| codec %s | %d | %.2f |\n", c, i, (i - b) / e }'
    done
    echo
  } | tee "$out/instructions.md"
fi

# ---- 3. Decoding ------------------------------------------------------------------
for c in 1 2; do
  RECORD_CODEC=$c "$root/bench/record_codec_streams.sh" "$work/streams$c" >/dev/null
done
mevents() {  # trace file -> median M events/s of ROUNDS runs
  for r in $(seq "$rounds"); do
    PARLOT_BENCH_TRACE="$1" "$bin/codec_benchmark" --benchmark_filter=ReadRecorded \
      --benchmark_format=json 2>/dev/null |
      awk -F': ' '/"items_per_second"/ { gsub(/,/, "", $2); print $2 / 1e6 }'
  done | median
}
{
  echo "## Decoding: M events/s through ThreadEventReader (file I/O included), median of $rounds"
  echo
  echo "| stream | codec 1 M events/s | codec 2 M events/s | codec 1 file bytes | codec 2 file bytes |"
  echo "|---|---|---|---|---|"
  for f in "$work"/streams1/*.trace; do
    name=$(basename "$f" .trace)
    f2="$work/streams2/$name.trace"
    printf "| %s | %.1f | %.1f | %d | %d |\n" "$name" "$(mevents "$f")" "$(mevents "$f2")" \
      "$(stat -c %s "$f")" "$(stat -c %s "$f2")"
  done
  echo
} | tee "$out/decode.md"

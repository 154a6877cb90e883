#!/usr/bin/env bash
# Whole-program figures for the bundled examples, as the paper measures them
# (§4.2): runtime of the uninstrumented build, of the instrumented build with
# glibc's no-op hooks, under Parlot, and under Parlot uncompressed
# (PARLOT_COMPRESS=0), each the median of RUNS runs; the slowdowns against
# the no-op and uninstrumented builds; events, raw and trace bytes,
# compression ratio, bandwidth per thread; and the decode speed of
# `parlot-read stats` (events per second, symbolization included).
# Prints a Markdown table. Usage: bench/run_examples.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
runs="${RUNS:-3}"
rt="$PWD/$build/runtime/libparlotrt.so"
read_tool="$PWD/$build/reader/parlot-read"
ex="$PWD/$build/examples"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# name|arguments (sized for a few seconds per run on one core)
workloads=(
  "quicksort_threads|10000000 2"
  "cpp_features|300000"
  "cg|20000 100"
  "jacobi|600 200"
)

now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.9f\", $* }"; }
# median wall seconds of running "$@" $runs times (stdout discarded)
median_time() {
  local times=()
  for _ in $(seq "$runs"); do
    local t0 t1
    t0=$(now)
    "$@" >/dev/null
    t1=$(now)
    times+=("$(calc "$t1 - $t0")")
  done
  printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

traced() { rm -rf "$work/trace"; PARLOT_DIR="$work/trace" LD_PRELOAD="$rt" "$@"; }
traced_nc() { rm -rf "$work/trace"; PARLOT_DIR="$work/trace" PARLOT_COMPRESS=0 LD_PRELOAD="$rt" "$@"; }

printf '| example | args | uninstrumented s | no-op hooks s | Parlot s | Parlot-NC s | Parlot / no-op | Parlot / uninstr. | NC / no-op | threads | events | raw bytes | trace bytes | ratio | kB/s per thread | decode Mev/s |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n'
for w in "${workloads[@]}"; do
  name="${w%%|*}"
  args="${w#*|}"
  [ -x "$ex/$name" ] || continue
  # shellcheck disable=SC2086
  if [ -x "$ex/${name}_plain" ]; then plain=$(median_time "$ex/${name}_plain" $args); else plain=""; fi
  # shellcheck disable=SC2086
  noop=$(median_time "$ex/$name" $args)
  # shellcheck disable=SC2086
  nc=$(median_time traced_nc "$ex/$name" $args)
  # shellcheck disable=SC2086
  parlot=$(median_time traced "$ex/$name" $args)
  # The last Parlot run's trace stays in $work/trace.
  info=$("$read_tool" info "$work/trace")
  total=$(echo "$info" | awk '/^total:/ {print}')
  threads=$(echo "$total" | awk '{print $2}')
  events=$(echo "$total" | awk '{print $4}')
  raw=$(echo "$total" | awk '{print $6}')
  bytes=$(echo "$total" | awk '{print $9}')
  ratio=$(calc "$raw / $bytes")
  kbps=$(calc "$bytes / 1000 / $parlot / $threads")
  t0=$(now); "$read_tool" stats "$work/trace" >/dev/null; t1=$(now)
  decode=$(calc "$events / ($t1 - $t0) / 1000000")
  ratio_noop=$(calc "$parlot / $noop")
  ratio_nc=$(calc "$nc / $noop")
  if [ -n "$plain" ]; then ratio_plain=$(printf '%.2f' "$(calc "$parlot / $plain")"); plain=$(printf '%.3f' "$plain"); else ratio_plain="-"; plain="-"; fi
  printf '| %s | %s | %s | %.3f | %.3f | %.3f | %.2f | %s | %.2f | %s | %s | %s | %s | %.0f | %.1f | %.0f |\n' \
    "$name" "$args" "$plain" "$noop" "$parlot" "$nc" "$ratio_noop" "$ratio_plain" "$ratio_nc" \
    "$threads" "$events" "$raw" "$bytes" "$ratio" "$kbps" "$decode"
done

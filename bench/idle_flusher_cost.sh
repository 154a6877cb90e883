#!/usr/bin/env bash
# What the idle flusher costs (runtime/process/idle_flusher.h), printed as Markdown:
# PARLOT_FLUSH_MS=0 (no flusher thread, the baseline) against the default
# (1000 ms: a round every 500 ms) and rounds every 5 ms and 0.5 ms
# (PARLOT_FLUSH_MS=10, 1), in the same run, ROUNDS interleaved rounds,
# median. Workloads: build/examples/quicksort_threads (4 busy threads) and
# cg (one busy thread). Columns: wall and CPU seconds (user + sys) of the
# traced run, trace bytes, and the CPU change over the baseline.
# Usage: bench/idle_flusher_cost.sh  Environment: PARLOT_BUILD_DIR (build),
# ROUNDS (3).
set -euo pipefail
cd "$(dirname "$0")/.."
build="$PWD/${PARLOT_BUILD_DIR:-build}"
rounds="${ROUNDS:-3}"
rt="$build/runtime/libparlotrt.so"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
configs=(0 1000 10 1)
workloads=("quicksort_threads 8000000 4" "cg 8000 200")

# shellcheck source=bench/stats.sh
. "bench/stats.sh"

for r in $(seq "$rounds"); do
  for w in "${workloads[@]}"; do
    name=${w%% *}
    for c in "${configs[@]}"; do
      dir="$work/t"
      rm -rf "$dir"
      # shellcheck disable=SC2086
      /usr/bin/time -f "%e %U %S" -o "$work/time" env LD_PRELOAD="$rt" PARLOT_DIR="$dir" \
        PARLOT_FLUSH_MS="$c" "$build/examples/"$w > /dev/null
      read -r wall user sys < "$work/time"
      echo "$wall" >> "$work/$name.$c.wall"
      echo "$user + $sys" | bc >> "$work/$name.$c.cpu"
      du -sb "$dir" | cut -f1 >> "$work/$name.$c.bytes"
    done
  done
done

echo "| workload | PARLOT_FLUSH_MS | wall s | CPU s | trace bytes | CPU vs no flusher |"
echo "|---|---|---|---|---|---|"
for w in "${workloads[@]}"; do
  name=${w%% *}
  base=$(median < "$work/$name.0.cpu")
  for c in "${configs[@]}"; do
    label=$c
    [ "$c" = 0 ] && label="0 (no flusher)"
    cpu=$(median < "$work/$name.$c.cpu")
    printf '| %s | %s | %s | %s | %s | %s |\n' "$w" "$label" "$(median < "$work/$name.$c.wall")" \
      "$cpu" "$(median < "$work/$name.$c.bytes")" \
      "$(awk -v a="$cpu" -v b="$base" 'BEGIN { printf "%+.1f%%", (b > 0 ? 100 * (a - b) / b : 0) }')"
  done
done

#!/usr/bin/env bash
# Suite codec: Parlot's incremental codec (codec 2, the runtime's) against
# zstd and lz4 on event streams recorded by the runtime
# (codec_comparison_benchmark, Google Benchmark). Streams: the largest
# thread of a traced run of the dense loop, cg, mg, is, the threaded
# quicksort and, when built (suite programs), lua. Codecs: parlot2 (one
# event at a time, as the runtime compresses), parlot1 (the first codec,
# PARLOT_CODEC=1), zstd -1 and -19 and lz4 on
# the runtime's 256 KiB blocks of raw words, zstd -19 on the whole stream
# (the best an offline compressor does). Baseline: parlot2's ratio.
# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
set -euo pipefail
need "$RT" "$BENCH_BIN/codec_comparison_benchmark" "$BENCH_BIN/flat_cost_loop"
tmp="$OUT/tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

# name|command (instrumented)
runs=()
add() {  # name full-args quick-args binary
  local a=$2
  [ "$QUICK" = 1 ] && a=$3
  need "$4" && runs+=("$1|$4 $a")
  return 0
}
add dense_loop "loop 100000000 1" "loop 10000000 1" "$BENCH_BIN/flat_cost_loop"
add cg "7000 20" "2000 5" "$EXAMPLES/cg"
add mg "32 2" "16 2" "$EXAMPLES/mg"
add is "20 19 4" "16 12 2" "$EXAMPLES/is"
add quicksort_threads "2000000 2" "200000 2" "$EXAMPLES/quicksort_threads"
debian="${PARLOT_BENCH_DEBIAN:-$ROOT/bench-results/debian}"
[ -x "$debian/bin/lua" ] && [ "$QUICK" = 0 ] && runs+=("lua|$debian/bin/lua $debian/workloads/bench.lua 1")
[ "$DRY_RUN" = 1 ] && exit 0

traces=()
for r in "${runs[@]}"; do
  name=${r%%|*}
  rm -rf "${tmp:?}/$name"
  # shellcheck disable=SC2086  # the command's words
  (cd "$tmp" && env PARLOT_QUIET=1 PARLOT_DIR="$tmp/$name" LD_PRELOAD="$RT" ${r#*|} >/dev/null)
  # The thread with the most bytes, named after the workload.
  largest=$(find "$tmp/$name" -name 'thread-*.trace' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2)
  [ -n "$largest" ] || { note "$name: no thread file"; exit 1; }
  cp "$largest" "$tmp/$name.trace"
  traces+=("$tmp/$name.trace")
done
min_time=$([ "$QUICK" = 1 ] && echo 0.02 || echo 0.2)
# zstd -19 takes seconds per stream: 5 repetitions unless BENCH_REPS says.
BENCH_REPS=${BENCH_REPS:-$([ "$QUICK" = 1 ] && echo 3 || echo 5)} gb codec env PARLOT_BENCH_CODECS=parlot2,parlot1,zstd1,zstd19,lz4,zstd19-whole \
  PARLOT_BENCH_TRACES="$(IFS=:; echo "${traces[*]}")" \
  "$BENCH_BIN/codec_comparison_benchmark" --benchmark_min_time="$min_time"
echo "### Compression ratio and speed on recorded streams (one core)"
echo
table codec "$OUT/codec.json"

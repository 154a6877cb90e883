#!/usr/bin/env bash
# Suite processes: what a traced process and a traced thread pay beside
# their cost per event.
#  1. Fixed cost per process: examples/mg 8 1 (a few thousand events: start,
#     a few calls, end) under hyperfine, no-op hooks (baseline) and parlot.
#  2. Many processes: examples/fork_tree 256 100 (257 processes; --quick 32
#     100), no-op and parlot; added ms per process.
#  3. Thread creation: thread_create_cost (process CPU ns per pthread_create
#     + join, timed by the program, not instrumented) untraced (baseline)
#     and traced (the runtime's interposer numbers threads by creation);
#     the traced run also times the C library's own pthread_create
#     (interposer bypassed). Repeated runs.
#  4. Memory per thread: peak RSS (/usr/bin/time %M) of thread_memory T C
#     (T threads alive at once, C calls each) untraced and traced; added KiB
#     per thread. Repeated runs.
# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
set -euo pipefail
need "$RT" "$EXAMPLES/mg" "$EXAMPLES/fork_tree" "$BENCH_BIN/thread_create_cost" "$BENCH_BIN/thread_memory"
tmp="$OUT/tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
rm -f "$OUT/samples.tsv" "$OUT/memory.tsv"

# 1 and 2: hyperfine.
mg="$EXAMPLES/mg 8 1"
BENCH_RUNS=${BENCH_RUNS:-$([ "$QUICK" = 1 ] && echo 10 || echo 40)} \
  hf process-start --prepare "rm -rf $tmp/t" -n no-op "$mg" -n parlot "env $(trace_env "$tmp/t") $mg"
[ "$DRY_RUN" = 1 ] || echo '{"per": 1, "per_name": "process"}' >"$OUT/process-start.meta.json"
children=$([ "$QUICK" = 1 ] && echo 32 || echo 256)
ft="$EXAMPLES/fork_tree $children 100"
hf many-processes --prepare "rm -rf $tmp/t" -n no-op "$ft" -n parlot "env $(trace_env "$tmp/t") $ft"
[ "$DRY_RUN" = 1 ] || echo "{\"per\": $((children + 1)), \"per_name\": \"process\"}" >"$OUT/many-processes.meta.json"

# 3 and 4: repeated runs of programs that measure themselves.
n=$([ "$QUICK" = 1 ] && echo 500 || echo 2000)
rounds=$([ "$QUICK" = 1 ] && echo 5 || echo 15)
if [ "$DRY_RUN" = 0 ]; then
  note "thread_create_cost and thread_memory, $(reps) runs"
  for _ in $(seq "$(reps)"); do
    # $(...) waits for each run's end (the traced one finishes its trace).
    out=$("$BENCH_BIN/thread_create_cost" "$n" "$rounds")
    read -r _ ul _ _ _ _ <<<"$out"
    out=$(env PARLOT_QUIET=1 PARLOT_DIR="$tmp/c" LD_PRELOAD="$RT" "$BENCH_BIN/thread_create_cost" "$n" "$rounds")
    read -r _ tl _ td _ _ <<<"$out"
    sample "pthread_create + join" 1 untraced "$ul"
    sample "pthread_create + join" 1 "traced" "$tl"
    sample "pthread_create + join" 1 "traced, libc's own" "$td"
    for tc in "1 10" "64 10" "64 100000"; do
      read -r t c <<<"$tc"
      g="$t threads x $c calls"
      /usr/bin/time -f %M -o "$tmp/rss" "$BENCH_BIN/thread_memory" "$t" "$c" >/dev/null
      printf '%s\t%s\t%s\t%s\n' "$g" "$t" untraced "$(tail -1 "$tmp/rss")" >>"$OUT/memory.tsv"
      rm -rf "$tmp/m"
      env PARLOT_QUIET=1 PARLOT_DIR="$tmp/m" LD_PRELOAD="$RT" \
        /usr/bin/time -f %M -o "$tmp/rss" "$BENCH_BIN/thread_memory" "$t" "$c" >/dev/null
      printf '%s\t%s\t%s\t%s\n' "$g" "$t" parlot "$(tail -1 "$tmp/rss")" >>"$OUT/memory.tsv"
    done
  done
fi
echo "### Fixed cost per process and many processes (wall time, hyperfine)"
echo
table hyperfine --baseline no-op "$OUT/process-start.json" "$OUT/many-processes.json"
echo
echo "### Thread creation (thread_create_cost: CPU ns per create + join, $n threads x $rounds rounds)"
echo
table samples --baseline untraced --unit ns --per thread "$OUT/samples.tsv"
echo
echo "### Memory per thread (thread_memory: peak RSS)"
echo
table samples --baseline untraced --unit KiB --per thread "$OUT/memory.tsv"

#!/usr/bin/env bash
# Memory per traced thread: peak RSS (/usr/bin/time %M) of
# bench/thread_memory (T threads, each C calls of a leaf, all alive at the
# peak) untraced and with libparlotrt.so preloaded, and the difference per
# thread. Configurations run in turn, ROUNDS times; medians. Printed as
# Markdown.
# Usage: bench/thread_memory.sh   Environment: PARLOT_BUILD_DIR (build),
#   THREADS ("1 64 256"), CALLS ("10 100000"), ROUNDS (3), BASE_RUNTIME
#   (optional: another libparlotrt.so, e.g. an older build's copy, measured
#   as a third configuration "base").
set -euo pipefail
cd "$(dirname "$0")/.."
build="${PARLOT_BUILD_DIR:-build}"
bin="$build/bench/thread_memory"
rt="$PWD/$build/runtime/libparlotrt.so"
base="${BASE_RUNTIME:-}"
read -r -a threads <<<"${THREADS:-1 64 256}"
read -r -a calls <<<"${CALLS:-10 100000}"
rounds="${ROUNDS:-3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# shellcheck source=bench/stats.sh
. "bench/stats.sh"
rss() {  # runtime-or-empty threads calls -> peak RSS in KB
  rm -rf "$work/t"
  if [ -n "$1" ]; then
    LD_PRELOAD="$1" PARLOT_DIR="$work/t" /usr/bin/time -f "%M" -o "$work/rss" "$bin" "$2" "$3" >/dev/null
    if [ ! -d "$work/t" ]; then echo "no trace written: is $bin instrumented?" >&2; exit 1; fi
  else
    /usr/bin/time -f "%M" -o "$work/rss" "$bin" "$2" "$3" >/dev/null
  fi
  tail -1 "$work/rss"
}

if [ -n "$base" ]; then
  echo "| threads | calls per thread | untraced KB | base KB | base KB per thread | Parlot KB | Parlot KB per thread |"
  echo "|---|---|---|---|---|---|---|"
else
  echo "| threads | calls per thread | untraced KB | Parlot KB | Parlot KB per thread |"
  echo "|---|---|---|---|---|"
fi
for t in "${threads[@]}"; do
  for c in "${calls[@]}"; do
    : >"$work/u"; : >"$work/p"; : >"$work/b"
    for _ in $(seq "$rounds"); do
      rss "" "$t" "$c" >>"$work/u"
      if [ -n "$base" ]; then rss "$base" "$t" "$c" >>"$work/b"; fi
      rss "$rt" "$t" "$c" >>"$work/p"
    done
    u=$(median <"$work/u")
    p=$(median <"$work/p")
    if [ -n "$base" ]; then
      b=$(median <"$work/b")
      awk -v t="$t" -v c="$c" -v u="$u" -v b="$b" -v p="$p" 'BEGIN {
        printf "| %d | %d | %d | %d | %.0f | %d | %.0f |\n", t, c, u, b, (b - u) / t, p, (p - u) / t }'
    else
      awk -v t="$t" -v c="$c" -v u="$u" -v p="$p" 'BEGIN {
        printf "| %d | %d | %d | %d | %.0f |\n", t, c, u, p, (p - u) / t }'
    fi
  done
done

#!/usr/bin/env bash
# What numbering threads by creation costs (runtime/interposers/thread_create_interposer.cpp):
# bench/thread_create_cost (process CPU ns per pthread_create + join, median
# of ROUNDS interleaved rounds of N threads) run untraced and with
# libparlotrt.so preloaded. In each run the program also creates threads
# with the C library's own pthread_create (the interposer bypassed): the
# traced run's "linked / libc" ratio is the interposer's own cost; the
# untraced run's is the same function twice (the noise floor); "traced
# linked / untraced linked" is what a program sees (two processes: noisier).
# Usage: bench/thread_create_cost.sh   Environment: PARLOT_BUILD_DIR
# (default build), N (default 2000), ROUNDS (default 15), REPEATS (default 3).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${PARLOT_BUILD_DIR:-build}"
bin="$build/bench/thread_create_cost"
rt="$build/runtime/libparlotrt.so"
n="${N:-2000}"
rounds="${ROUNDS:-15}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "| repeat | untraced linked ns | untraced libc ns | untraced linked / libc | traced linked ns (interposed) | traced libc ns | traced linked / libc | traced / untraced linked |"
echo "|---|---|---|---|---|---|---|---|"
for r in $(seq "${REPEATS:-3}"); do
  read -r _ ul _ ud _ ur < <("$bin" "$n" "$rounds")
  read -r _ tl _ td _ tr < <(LD_PRELOAD="$PWD/$rt" PARLOT_DIR="$work/t" "$bin" "$n" "$rounds")
  if [ -e "$work/t" ]; then echo "unexpected trace directory: the benchmark is instrumented?" >&2; exit 1; fi
  awk -v r="$r" -v ul="$ul" -v ud="$ud" -v ur="$ur" -v tl="$tl" -v td="$td" -v tr="$tr" \
    'BEGIN { printf "| %d | %d | %d | %.3f | %d | %d | %.3f | %.3f |\n", r, ul, ud, ur, tl, td, tr, tl / ul }'
done

#!/usr/bin/env bash
# Records the event streams codec_comparison_benchmark and codec_benchmark
# compare codecs on (issue 12): one traced run of each example (and of lua
# and sqlite3 when bench/debian_programs/build.sh has built them into
# DEBIAN_DIR), keeping the largest thread file of each run as OUTDIR/<name>.trace.
# Prints the colon-separated list for PARLOT_BENCH_TRACES on stdout.
# Usage: bench/record_codec_streams.sh OUTDIR
# Environment: PARLOT_BUILD_DIR (default build), DEBIAN_DIR (optional),
# RECORD_CODEC (PARLOT_CODEC of the runs, default 1: codec 1's format is
# fixed, so the files stay readable while codec 2 is being changed).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out="${1:?usage: $0 OUTDIR}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
build="${PARLOT_BUILD_DIR:-build}"
rt="$root/$build/runtime/libparlotrt.so"
ex="$root/$build/examples"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
list=()
record() {  # name binary [args...] (stdin from $stdin_file if set)
  local name=$1 bin=$2
  shift 2
  [ -x "$bin" ] || return 0
  rm -rf "$work/$name"
  PARLOT_CODEC="${RECORD_CODEC:-1}" PARLOT_DIR="$work/$name" LD_PRELOAD="$rt" PARLOT_QUIET=1 "$bin" "$@" <"${stdin_file:-/dev/null}" >/dev/null
  local f
  f=$(find "$work/$name" -name 'thread-*.trace' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2-)
  cp "$f" "$out/$name.trace"
  list+=("$out/$name.trace")
}
record quicksort_threads "$ex/quicksort_threads" 2000000 2
record cpp_features "$ex/cpp_features" 20000
record cg "$ex/cg" 7000 20
record is "$ex/is" 20 19 4
record mg "$ex/mg" 32 2
record ep "$ex/ep" 20
# The Debian programs (bench/debian_programs/build.sh DEBIAN_DIR), smaller
# runs than the whole-program benchmark's: one round of the Lua workload.
if [ -n "${DEBIAN_DIR:-}" ]; then
  record lua "$DEBIAN_DIR/bin/lua" "$DEBIAN_DIR/workloads/bench.lua" 1
  if [ -f "$DEBIAN_DIR/workloads/workload.sql" ]; then
    stdin_file="$DEBIAN_DIR/workloads/workload.sql" record sqlite3 "$DEBIAN_DIR/bin/sqlite3"
  fi
fi
(IFS=:; echo "${list[*]}")

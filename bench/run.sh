#!/usr/bin/env bash
# bench/run.sh [--quick] [--dry-run] [--no-build] [--out DIR] [SUITE...]
#
# Runs Parlot's benchmark suites and prints one Markdown table per suite.
# Every row is a figure measured in this run against a baseline measured in
# the same run (traced / untraced time, ns per event over glibc's no-op
# hooks), with its spread (one standard deviation over the repetitions).
#
# Suites (when none is named: all but inlining and sleds; docs/BENCHMARKS.md shows a run):
#   hooks      cost per event: hook_benchmark (Google Benchmark) and the
#              dense loop (flat_cost_loop) under hyperfine
#   codec      compression ratio and speed on recorded event streams against
#              zstd and lz4 (codec_comparison_benchmark)
#   programs   whole programs: untraced, no-op hooks, traced, uftrace
#              (hyperfine), on the examples and, when built, the Debian lua
#              and sqlite3 (bench/debian_programs/build.sh)
#   reader     parlot-read's views and exports on a large trace (time, peak
#              RSS), and reading a job of many processes serially, with
#              threads and under mpirun
#   mpi        cost of an MPI call through the wrappers, with and without
#              argument recording; the MPI kernels with and without wrappers
#   libcalls   cost of a recorded library call against an rtld-audit module
#              and uftrace; trace bytes
#   processes  fixed cost per process, many processes, thread creation,
#              memory per thread
#   inlining   (only when named: it builds 14 binaries) lua, sqlite3 and
#              (PARLOT_BENCH_LULESH: its source tree) LULESH built with gcc
#              and clang, fully instrumented and instrumented after inlining
#              (parlot_instrument AFTER_INLINING), untraced and traced
#   sleds      (only when named: it builds lua, sqlite3 and LULESH in five
#              variants) built plain, with sleds and with hooks: tracing off
#              and on, interleaved rounds, wall and CPU time; the sleds'
#              patching speed
#
# Options:
#   --quick     small sizes and few repetitions: the suites in a few minutes
#               on 2 cores (checks that the suites work; figures are noisy)
#   --dry-run   builds nothing, runs nothing: checks that the suite scripts
#               (all of them, inlining and sleds too, when none is named) parse, the
#               tools are installed and the binaries exist
#   --no-build  does not run `cmake --build` first
#   --out DIR   where the JSON of the tools goes (default bench-results/,
#               one subdirectory per suite)
# Environment: PARLOT_BUILD_DIR (default build; configured with
#   scripts/build.sh), BENCH_RUNS (hyperfine runs per command),
#   BENCH_REPS (Google Benchmark repetitions), PARLOT_BENCH_DEBIAN (where the
#   Debian programs are built, default bench-results/debian),
#   PARLOT_BENCH_LULESH (LULESH 2.0's source tree, for the inlining and
#   sleds suites), PARLOT_BENCH_LULESH_SIZE (its -s in the sleds suite,
#   default 25).
set -euo pipefail
cd "$(dirname "$0")/.."
all_suites=(hooks codec programs reader mpi libcalls processes inlining sleds)
default_suites=(hooks codec programs reader mpi libcalls processes)
QUICK=0
DRY_RUN=0
build=1
out=bench-results
suites=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --dry-run) DRY_RUN=1 ;;
    --no-build) build=0 ;;
    --out) out="$2"; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench/run.sh: unknown option $1 (--help)" >&2; exit 2 ;;
    *)
      [[ " ${all_suites[*]} " == *" $1 "* ]] || { echo "bench/run.sh: no suite '$1' (${all_suites[*]})" >&2; exit 2; }
      suites+=("$1") ;;
  esac
  shift
done
# --dry-run checks every suite's script, inlining's and sleds' too.
if [ ${#suites[@]} -eq 0 ] && [ "$DRY_RUN" = 1 ]; then suites=("${all_suites[@]}"); fi
[ ${#suites[@]} -gt 0 ] || suites=("${default_suites[@]}")
export QUICK DRY_RUN
# shellcheck source=bench/lib/common.sh
. bench/lib/common.sh

status=0
for tool in hyperfine /usr/bin/python3; do
  command -v "$tool" >/dev/null || { note "$tool is not installed (scripts/install-deps.sh)"; status=1; }
done
if [ "$DRY_RUN" = 0 ] && [ "$build" = 1 ]; then
  [ -f "$BUILD/CMakeCache.txt" ] || { note "no build in $BUILD: run scripts/build.sh first"; exit 1; }
  note "building in $BUILD (cmake --build -j2)"
  cmake --build "$BUILD" -j2 --target bench_programs >/dev/null
fi
note "build: $BUILD; load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"

for s in "${suites[@]}"; do
  bash -n "bench/suites/$s.sh" || { status=1; continue; }
  SUITE=$s
  OUT="$out/$s"
  mkdir -p "$OUT"
  OUT="$(cd "$OUT" && pwd)"
  export SUITE OUT
  if [ "$DRY_RUN" = 1 ]; then
    bash "bench/suites/$s.sh" >/dev/null || { note "suite $s: not ready"; status=1; }
    continue
  fi
  printf '\n## %s%s\n\n' "$s" "$([ "$QUICK" = 1 ] && echo ' (--quick)')"
  started=$(date +%s)
  load=$(cut -d' ' -f1 /proc/loadavg)
  bash "bench/suites/$s.sh" || { note "suite $s failed"; status=1; }
  printf '\n%s: %d s, load average %s at the start, %s at the end (%d cores).\n' \
    "$s" $(($(date +%s) - started)) "$load" "$(cut -d' ' -f1 /proc/loadavg)" "$(nproc)"
done
SUITE=bench
[ "$DRY_RUN" = 1 ] && [ "$status" = 0 ] && note "dry run: ${suites[*]}: scripts parse, tools and binaries present"
exit "$status"

#!/usr/bin/env bash
# Flat cost (issue 12 §4): does Parlot's cost per event grow with run length
# or with thread count? Printed as Markdown. Workloads: bench/flat_cost_loop
# (build/bench/flat_cost_loop), instrumented, run without the runtime
# (glibc's no-op hooks: "no-op") and with LD_PRELOAD=libparlotrt.so
# ("parlot", output to a local directory, default settings).
#  1. Run length: `flat_cost_loop loop E 1` for each E of LENGTHS (default
#     1e8 and 1e10 events), one thread.
#  2. Threads: `flat_cost_loop loop THREAD_EVENTS T` for T in THREADS
#     (default 1 2 4 8 16; the total number of events is fixed), and the
#     OpenMP stencil `flat_cost_loop stencil STENCIL_N STENCIL_SWEEPS` with
#     OMP_NUM_THREADS=2.
# Each configuration runs ROUNDS times (default 3), the configurations of a
# round in turn (interleaved); figures are medians. CPU = user + sys of the
# whole process (/usr/bin/time), so ns per event stays meaningful with more
# threads than cores. Events: the program's exact count for the loop, the
# trace's (parlot-read stats) for the stencil; every traced run's event count
# is checked against it.
# Columns: CPU ns per event of each configuration, and Parlot's added CPU ns
# per event = (parlot - no-op) / events.
# Usage: bench/flat_cost.sh [OUTDIR]  (default bench-results/flat)
# Environment: PARLOT_BUILD_DIR (build), ROUNDS (3), LENGTHS ("1e8 1e10"),
#   THREADS ("1 2 4 8 16"), THREAD_EVENTS (4e8), STENCIL_N (2000; 0 = no stencil),
#   STENCIL_SWEEPS (25), PARLOT_ENV (extra VAR=value settings for the traced
#   runs, e.g. "PARLOT_FLUSH_MS=0"), PARLOT_RUNTIME (the runtime to measure,
#   default the build's libparlotrt.so), BASE_RUNTIME (optional: another
#   runtime, e.g. a copy of an older build, run as a third configuration
#   "base" in every round, for before/after comparisons), BASE_ENV (extra
#   VAR=value settings for the base configuration only, after PARLOT_ENV:
#   e.g. BASE_RUNTIME=build/runtime/libparlotrt.so BASE_ENV=PARLOT_FLUSH_MS=0
#   compares two settings of one runtime).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out="${1:-bench-results/flat}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
build="$root/${PARLOT_BUILD_DIR:-build}"
rounds="${ROUNDS:-3}"
read -r -a lengths <<<"${LENGTHS:-1e8 1e10}"
read -r -a threads <<<"${THREADS:-1 2 4 8 16}"
thread_events="${THREAD_EVENTS:-4e8}"
stencil_n="${STENCIL_N:-2000}"
stencil_sweeps="${STENCIL_SWEEPS:-25}"
read -r -a parlot_env <<<"${PARLOT_ENV:-}"
read -r -a base_env <<<"${BASE_ENV:-}"
rt="${PARLOT_RUNTIME:-$build/runtime/libparlotrt.so}"
base_rt="${BASE_RUNTIME:-}"
configs=(noop parlot)
[ -n "$base_rt" ] && configs=(noop base parlot)
prog="$build/bench/flat_cost_loop"
reader="$build/reader/parlot-read"
for f in "$rt" "$prog" "$reader" ${base_rt:+"$base_rt"}; do
  [ -x "$f" ] || [ -f "$f" ] || { echo "missing $f (build first)" >&2; exit 1; }
done
work="$(mktemp -d "${TMPDIR:-/tmp}/flat-cost.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# shellcheck source=bench/stats.sh
. "bench/stats.sh"
int() { awk -v x="$1" 'BEGIN { printf "%.0f", x }'; }

# run NAME CONFIG ARGS...: one timed run; appends CPU s to $work/NAME.CONFIG.cpu
# and the event count (program's, else the trace's) to $work/NAME.events.
run() {
  local name=$1 config=$2
  shift 2
  local envs=()
  case $config in
    parlot) envs=(LD_PRELOAD="$rt") ;;
    base) envs=(LD_PRELOAD="$base_rt") ;;
  esac
  [ "$config" != noop ] && envs+=(PARLOT_DIR="$work/trace" PARLOT_QUIET=1
    ${parlot_env[@]+"${parlot_env[@]}"})
  [ "$config" = base ] && envs+=(${base_env[@]+"${base_env[@]}"})
  rm -rf "$work/trace"
  env ${envs[@]+"${envs[@]}"} /usr/bin/time -f "%e %U %S" -o "$work/time" "$@" >"$work/stdout"
  local wall user sys
  read -r wall user sys <"$work/time"
  awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }' >>"$work/$name.$config.cpu"
  echo "$wall" >>"$work/$name.$config.wall"
  local expected
  expected=$(awk '$1 == "events" { print $2 }' "$work/stdout")
  if [ "$config" != noop ]; then
    local traced
    traced=$("$reader" info "$work/trace" | awk '/^total:/ { print $4; exit }')
    if [ -n "$expected" ] && [ "$traced" != "$expected" ]; then
      echo "$name: the trace holds $traced events, the program made $expected" >&2
      exit 1
    fi
    echo "$traced" >"$work/$name.events"
  fi
}

# row LABEL NAME: a table row from the runs of NAME.
row() {
  local label=$1 name=$2 events noop parlot base=-1 base_wall=-1
  events=$(cat "$work/$name.events")
  noop=$(median <"$work/$name.noop.cpu")
  parlot=$(median <"$work/$name.parlot.cpu")
  if [ -n "$base_rt" ]; then
    base=$(median <"$work/$name.base.cpu")
    base_wall=$(median <"$work/$name.base.wall")
  fi
  awk -v l="$label" -v e="$events" -v n="$noop" -v p="$parlot" -v b="$base" -v bw="$base_wall" \
    -v nw="$(median <"$work/$name.noop.wall")" -v pw="$(median <"$work/$name.parlot.wall")" 'BEGIN {
    printf "| %s | %.0f | %.2f / %.2f | ", l, e, nw, n
    if (b >= 0) printf "%.2f / %.2f | ", bw, b
    printf "%.2f / %.2f | %.2f | ", pw, p, n * 1e9 / e
    if (b >= 0) printf "%.2f | %.2f | ", b * 1e9 / e, (b - n) * 1e9 / e
    printf "%.2f | %.2f |\n", p * 1e9 / e, (p - n) * 1e9 / e }'
}

header() {
  if [ -n "$base_rt" ]; then
    echo "| $1 | events | no-op wall / CPU s | base wall / CPU s | Parlot wall / CPU s | no-op CPU ns/event | base CPU ns/event | base added CPU ns/event | Parlot CPU ns/event | Parlot added CPU ns/event |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
  else
    echo "| $1 | events | no-op wall / CPU s | Parlot wall / CPU s | no-op CPU ns/event | Parlot CPU ns/event | Parlot added CPU ns/event |"
    echo "|---|---|---|---|---|---|---|"
  fi
}

for r in $(seq "$rounds"); do
  for e in "${lengths[@]}"; do
    for c in "${configs[@]}"; do run "len-$e" "$c" "$prog" loop "$(int "$e")" 1; done
  done
  for t in "${threads[@]}"; do
    for c in "${configs[@]}"; do run "thr-$t" "$c" "$prog" loop "$(int "$thread_events")" "$t"; done
  done
  if [ "$stencil_n" != 0 ]; then
    for c in "${configs[@]}"; do
      OMP_NUM_THREADS=2 run stencil "$c" "$prog" stencil "$stencil_n" "$stencil_sweeps"
    done
  fi
done

{
  if [ "${#lengths[@]}" -ne 0 ]; then
    echo "### Run length: one thread, call-dense loop (median of $rounds interleaved runs)"
    echo
    header "events asked"
    for e in "${lengths[@]}"; do row "$e" "len-$e"; done
    echo
  fi
  echo "### Threads: call-dense loop, $thread_events events in all; OpenMP stencil (median of $rounds interleaved runs)"
  echo
  header "workload"
  for t in "${threads[@]}"; do row "loop, $t thread(s)" "thr-$t"; done
  [ "$stencil_n" != 0 ] && row "stencil ${stencil_n}x${stencil_n}, $stencil_sweeps sweeps, OMP_NUM_THREADS=2" stencil
  echo
  echo "CPU = user + sys (/usr/bin/time), $(nproc) cores; settings of the traced runs: ${PARLOT_ENV:-defaults}; Parlot = $rt${base_rt:+, base = $base_rt ${BASE_ENV:-}}."
} | tee "$out/flat_cost.md"

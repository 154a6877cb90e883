#!/usr/bin/env bash
# Reading big jobs (issue 9 §6-§7): records examples/fork_tree with N
# children (N + 1 processes; children 517 and 900 are outliers when N is
# big enough) and, in the same run, times `stats`, `classes --by trace` and
# `stacks` and `loops` read serially (-j 1: the single-threaded reader, the
# baseline), with one decoding thread per core (-j 0), and under
# `mpirun -np 4` (-j 1 each). Prints wall time, CPU time (user + sys, all processes), peak
# RSS (the largest process), events/s per CPU second and overall, the ratio
# to the serial run, and checks that every variant printed the same output.
# A second part does the same on one big thread (examples/user_api M: 2M+6
# events) for stats, classes and stacks. With PARLOT_READ_BASELINE set to
# another parlot-read (e.g. one built from main), each view is first run
# with it (-j 1, row "baseline") and the serial row is compared to it, and
# it also runs under mpirun (row "mpirun4.baseline", its MPI plugin found
# next to it).
# Usage: bench/many_processes.sh [BUILD_DIR] [CHILDREN] [ITERATIONS] [USER_API_N]
#        (defaults: build 1024 2000 100000000; USER_API_N 0 skips part two)
set -euo pipefail
build="${1:-build}"
children="${2:-1024}"
iterations="${3:-2000}"
big="${4:-100000000}"
work="$(mktemp -d "${TMPDIR:-/tmp}/parlot-many.XXXXXX")"
trap 'rm -rf "$work"' EXIT
parlot="$build/frontend/parlot"
read_tool="$(realpath "$build/reader/parlot-read")"
mpirun=(mpirun --allow-run-as-root --oversubscribe -np 4)

outliers=()
for k in 517 900; do
  if ((k < children)); then outliers+=(--outlier "$k"); fi
done

# events DIR: total events of the trace.
events() {
  "$read_tool" info "$1" | sed -n 's/^total: [0-9]* threads, \([0-9]*\) events.*/\1/p'
}

# measure LABEL EVENTS BASE COMMAND...: runs COMMAND under /usr/bin/time,
# prints one table row; BASE is the label of the serial run to compare with
# (output must be identical, wall ratio printed).
measure() {
  local label="$1" n="$2" base="$3"
  shift 3
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >"$work/$label.out" 2>"$work/$label.err"
  read -r wall user sys rss <"$work/time"
  local cpu
  cpu=$(echo "$user + $sys" | bc)
  local per_core overall
  per_core=$(echo "$n / ($cpu + 0.001) / 1000000" | bc -l)
  overall=$(echo "$n / ($wall + 0.001) / 1000000" | bc -l)
  local same="" speedup=""
  if [[ -n "$base" ]]; then
    cmp -s "$work/$base.out" "$work/$label.out" && same="same output" || same="OUTPUT DIFFERS"
    read -r base_wall <"$work/$base.wall"
    speedup=$(printf 'wall x%.2f' "$(echo "$base_wall / $wall" | bc -l)")
  fi
  echo "$wall" >"$work/$label.wall"
  printf '%-26s wall %7.2f s  cpu %7.2f s  rss %8d KiB  %8.1f M ev/s/cpu  %8.1f M ev/s  %s %s\n' \
    "$label" "$wall" "$cpu" "$rss" "$per_core" "$overall" "$speedup" "$same"
}

views() {
  local dir="$1" n="$2"
  shift 2
  for view in "$@"; do
    local name="${view// /-}"
    name="${name//--/}"
    if [[ -n "${PARLOT_READ_BASELINE:-}" ]]; then
      measure "$name.baseline" "$n" "" "$PARLOT_READ_BASELINE" $view -j 1 "$dir"
      measure "$name.serial" "$n" "$name.baseline" "$read_tool" $view -j 1 "$dir"
    else
      measure "$name.serial" "$n" "" "$read_tool" $view -j 1 "$dir"
    fi
    measure "$name.threads" "$n" "$name.serial" "$read_tool" $view -j 0 "$dir"
    if command -v mpirun >/dev/null; then
      if [[ -n "${PARLOT_READ_BASELINE:-}" ]]; then
        measure "$name.mpirun4.baseline" "$n" "$name.serial" "${mpirun[@]}" \
          "$(realpath "$PARLOT_READ_BASELINE")" $view -j 1 "$dir"
      fi
      measure "$name.mpirun4" "$n" "$name.serial" "${mpirun[@]}" "$read_tool" $view -j 1 "$dir"
    fi
  done
}

start=$(date +%s.%N)
"$parlot" record -q -d "$work/job" -- "$build/examples/fork_tree" "$children" "$iterations" \
  "${outliers[@]}" >/dev/null
n=$(events "$work/job")
printf 'fork_tree %s %s %s: %s processes, %s events, %s trace bytes, recorded in %.1f s\n' \
  "$children" "$iterations" "${outliers[*]}" "$(ls "$work/job" | wc -l)" "$n" \
  "$(du -sb "$work/job" | cut -f1)" "$(echo "$(date +%s.%N) - $start" | bc)"
echo "$(nproc) cores"
views "$work/job" "$n" "stats" "classes --by trace" "stacks" "loops"
echo "--- classes --by trace (serial) output, head"
head -n 12 "$work/classes-by-trace.serial.out"

if ((big > 0)); then
  rm -rf "$work/job"
  "$parlot" record -q -d "$work/big" -- "$build/examples/user_api" "$big" >/dev/null
  n=$(events "$work/big")
  printf '\nuser_api %s: one thread of %s events, %s trace bytes\n' "$big" "$n" \
    "$(du -sb "$work/big" | cut -f1)"
  for view in "stats" "classes --by trace" "stacks"; do
    name="big.${view// /-}"
    if [[ -n "${PARLOT_READ_BASELINE:-}" ]]; then
      measure "$name.baseline" "$n" "" "$PARLOT_READ_BASELINE" $view -j 1 "$work/big"
      measure "$name" "$n" "$name.baseline" "$read_tool" $view -j 1 "$work/big"
    else
      measure "$name" "$n" "" "$read_tool" $view -j 1 "$work/big"
    fi
  done
fi

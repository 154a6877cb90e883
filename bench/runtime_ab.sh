#!/usr/bin/env bash
# A/B comparison of Parlot runtimes inside whole programs (issue 12): the
# Lua interpreter and sqlite3 of bench/debian_programs, each run under every
# configuration in turn, ROUNDS rounds, CPU s (user + sys, /usr/bin/time).
#
# Usage: bench/runtime_ab.sh NAME=SPEC [NAME=SPEC ...]
#   SPEC   `none` (glibc's no-op hooks) or the path of a libparlotrt.so,
#          then optionally `,VAR=VALUE` settings for that configuration,
#          e.g.  old=/tmp/old.so  new=build/runtime/libparlotrt.so
#                nc=build/runtime/libparlotrt.so,PARLOT_COMPRESS=0
# Environment: ROUNDS (default 9), ONLY (regex of workload names),
#   AB_DIR (default bench-results/runtime_ab; the Debian programs are built
#   there once and reused).
#
# Prints, per workload (bench/runtime_ab_report.awk): each configuration's
# median CPU s and range, its added ns per event over `none` (when given),
# and its difference from the first traced configuration as the median of
# the per-round differences, with how many rounds it was lower and higher.
# Pairing the configurations within a round takes out slow drift of the
# machine, and each round starts one configuration later than the last
# (use a multiple of their number as ROUNDS), so that none always runs in
# the same place of the round. On the 2-core VM of issue 12, two runs an
# hour apart can still move one runtime against another by 0.1 s
# (docs/BENCHMARKS.md), so run it more than once before believing a
# difference of a few percent.
set -euo pipefail
[ $# -ge 1 ] || {
  sed -n '2,/^set /p' "$0" | sed '$d'
  exit 2
}
# Runtime paths relative to the caller's directory, made absolute.
specs=()
for a in "$@"; do
  name=${a%%=*} spec=${a#*=}
  [[ "$a" == *=* && -n "$name" ]] || {
    echo "runtime_ab: expected NAME=SPEC, got '$a'" >&2
    exit 2
  }
  rt=${spec%%,*}
  if [ "$rt" != none ]; then
    [ -f "$rt" ] || {
      echo "runtime_ab: no runtime at '$rt'" >&2
      exit 2
    }
    spec="$(cd "$(dirname "$rt")" && pwd)/$(basename "$rt")${spec:${#rt}}"
  fi
  specs+=("$name=$spec")
done
set -- "${specs[@]}"
cd "$(dirname "$0")/.."
root=$PWD
rounds="${ROUNDS:-9}"
out="${AB_DIR:-bench-results/runtime_ab}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
build="${PARLOT_BUILD_DIR:-build}"
reader="$root/$build/reader/parlot-read"
[ -x "$reader" ] || PARLOT_BUILD_DIR="$build" "$root/scripts/build.sh" >/dev/null

"$root/bench/debian_programs/build.sh" "$out/debian" >&2
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# name|instrumented binary|plain binary|argument...|stdin file or -
workloads=()
while IFS= read -r line; do
  [[ -z "$line" || "$line" == \#* ]] && continue
  name="${line%%|*}"
  [[ -n "${ONLY:-}" && ! "$name" =~ $ONLY ]] && continue
  workloads+=("$line")
done <"$out/debian/workloads.txt"
[ ${#workloads[@]} -gt 0 ] || {
  echo "runtime_ab: no workloads" >&2
  exit 1
}

# run WORKLOAD SPEC TIMEFILE: one run of the workload under SPEC.
run() {
  local -a f
  IFS='|' read -r -a f <<<"$1"
  local n=${#f[@]} spec=$2 rt=${2%%,*}
  local -a env=() args=("${f[@]:3:n-4}")
  if [ "$rt" != none ]; then
    rm -rf "$work/trace"
    env=("LD_PRELOAD=$rt" "PARLOT_DIR=$work/trace")
  fi
  if [[ "$spec" == *,* ]]; then
    local -a extra
    IFS=, read -r -a extra <<<"${spec#*,}"
    env+=("${extra[@]}")
  fi
  local in=/dev/null
  [ "${f[n - 1]}" != - ] && in="${f[n - 1]}"
  env "${env[@]}" /usr/bin/time -f "%U %S" -o "$3" "${f[1]}" "${args[@]}" <"$in" >/dev/null 2>&1
}

# Events of each workload: one run under the first traced configuration.
: >"$out/events.txt"
first=""
for a in "$@"; do
  if [ -z "$first" ] && [ "${a#*=}" != none ]; then first="${a#*=}"; fi
done
[ -n "$first" ] || {
  echo "runtime_ab: no Parlot runtime among the configurations" >&2
  exit 1
}
for w in "${workloads[@]}"; do
  run "$w" "$first" "$work/time"
  events=$("$reader" info "$work/trace" | awk '/^total:/ { for (i = 1; i < NF; ++i) if ($(i + 1) == "events,") print $i }')
  echo "${w%%|*} $events" >>"$out/events.txt"
done

: >"$out/runs.txt"
order=("$@")
for r in $(seq "$rounds"); do
  for w in "${workloads[@]}"; do
    # Round r runs the configurations from the ((r - 1) mod n)-th on, so
    # that over n rounds each runs in every place of the round: the place
    # alone moved a runtime by 0.04-0.05 s on lua (issue 12).
    for ((k = 0; k < ${#order[@]}; ++k)); do
      a=${order[(r - 1 + k) % ${#order[@]}]}
      run "$w" "${a#*=}" "$work/time"
      awk -v w="${w%%|*}" -v c="${a%%=*}" -v r="$r" '{ printf "%s %s %d %.3f\n", w, c, r, $1 + $2 }' \
        "$work/time" >>"$out/runs.txt"
    done
  done
done

configs="" traced=""
for a in "$@"; do
  configs+="${a%%=*} "
  if [ "${a#*=}" != none ]; then traced+="${a%%=*} "; fi
done
awk -v configs="$configs" -v traced="$traced" -f "$root/bench/median.awk" -f "$root/bench/runtime_ab_report.awk" \
  "$out/events.txt" "$out/runs.txt"

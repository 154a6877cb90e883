#!/usr/bin/env bash
# Reader speed per core (issue 9 §6, issue 12 §3): `parlot-read stats` and
# `classes --by trace` with one decoding thread (--jobs 1), CPU time (user +
# sys) of each command on each trace directory, median of ROUNDS interleaved
# runs, printed as M events/s per core. With a second parlot-read (BASE, e.g.
# a copy built from main) both run in the same rounds, interleaved, and the
# ratio new/base is printed; their outputs are compared (they must be equal).
# Usage: bench/reader_speed.sh PARLOT_READ [BASE_PARLOT_READ] -- TRACE_DIR...
# Environment: ROUNDS (default 3).
set -euo pipefail
new="${1:?usage: $0 PARLOT_READ [BASE_PARLOT_READ] -- TRACE_DIR...}"
shift
base=""
if [ "${1:-}" != "--" ]; then
  base="$1"
  shift
fi
[ "${1:-}" = "--" ] && shift
rounds="${ROUNDS:-3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# cpu_seconds TOOL ARGS...: runs the tool, prints user + sys seconds.
cpu_seconds() {
  /usr/bin/time -f "%U %S" -o "$work/time" "$@" >"$work/out" 2>&1
  read -r user sys <"$work/time"
  echo "$user + $sys" | bc
}

# shellcheck source=bench/stats.sh
. "$(dirname "$0")/stats.sh"

printf '%-16s %-20s %10s %12s %12s %8s\n' trace command events "base Mev/s" "new Mev/s" ratio
for dir in "$@"; do
  events=$("$new" info "$dir" | awk '/^total:/ {print $4}')
  for cmd in "stats" "classes --by trace"; do
    : >"$work/new.t"
    : >"$work/base.t"
    for ((r = 0; r < rounds; ++r)); do
      # shellcheck disable=SC2086
      cpu_seconds "$new" $cmd --jobs 1 "$dir" >>"$work/new.t"
      cp "$work/out" "$work/new.out"
      if [ -n "$base" ]; then
        # shellcheck disable=SC2086
        cpu_seconds "$base" $cmd --jobs 1 "$dir" >>"$work/base.t"
        cmp -s "$work/out" "$work/new.out" || {
          echo "output of '$cmd $dir' differs from the base's" >&2
          exit 1
        }
      fi
    done
    n=$(median <"$work/new.t")
    new_rate=$(echo "scale=1; $events / $n / 1000000" | bc)
    if [ -n "$base" ]; then
      b=$(median <"$work/base.t")
      base_rate=$(echo "scale=1; $events / $b / 1000000" | bc)
      ratio=$(echo "scale=2; $b / $n" | bc)
    else
      base_rate=-
      ratio=-
    fi
    printf '%-16s %-20s %10s %12s %12s %8s\n' "$(basename "$dir")" "$cmd" "$events" "$base_rate" \
      "$new_rate" "$ratio"
  done
done

#!/usr/bin/env bash
# The loop-level diff (diffNLR) on two big threads: records examples/user_api
# with N and N-1 iterations (2N+6 and 2N+4 events: one thread each), then
# times, in the same run, `stats` of both traces (decoding only: the
# baseline), `diff --no-loops` (first divergence and call counts) and `diff`
# (the same plus both loop summaries and their diff), and prints wall time,
# CPU time, peak RSS and the ratios against the baseline.
# Usage: bench/loop_diff.sh [BUILD_DIR] [N]     (defaults: build 50000000)
set -euo pipefail
build="${1:-build}"
n="${2:-50000000}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
parlot="$build/frontend/parlot"
read_tool="$build/reader/parlot-read"
program="$build/examples/user_api"

"$parlot" record -q -d "$work/left" -- "$program" "$n" >/dev/null
"$parlot" record -q -d "$work/right" -- "$program" "$((n - 1))" >/dev/null

# measure NAME COMMAND...: prints NAME, wall s, CPU s (user + sys), peak RSS KiB.
measure() {
  local name="$1"
  shift
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >"$work/$name.out"
  read -r wall user sys rss <"$work/time"
  cpu=$(echo "$user + $sys" | bc)
  printf '%-16s wall %7.2f s  cpu %7.2f s  rss %8d KiB\n' "$name" "$wall" "$cpu" "$rss"
  echo "$wall $cpu" >"$work/$name.t"
}

echo "two threads of $((2 * n + 6)) and $((2 * n + 4)) events (user_api $n, $((n - 1)))"
measure stats-both sh -c "'$read_tool' stats '$work/left' >/dev/null && '$read_tool' stats '$work/right' >/dev/null"
measure diff-no-loops "$read_tool" diff --no-loops "$work/left" "$work/right"
measure diff "$read_tool" diff "$work/left" "$work/right"
read -r base_wall base_cpu <"$work/stats-both.t"
for name in diff-no-loops diff; do
  read -r wall cpu <"$work/$name.t"
  printf '%-16s / stats-both: wall %.2fx  cpu %.2fx\n' "$name" "$(echo "$wall / $base_wall" | bc -l)" \
    "$(echo "$cpu / $base_cpu" | bc -l)"
done
echo "--- diff output (loop-level part)"
sed -n '/loop-level/,$p' "$work/diff.out"

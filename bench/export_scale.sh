#!/usr/bin/env bash
# Exports and report at scale (issue 11): records examples/cg sized to give
# at least 10^8 events (one thread), then measures, in the same run, wall
# time, CPU time and peak RSS (/usr/bin/time) of
#   stats                      the baseline (decoding and counting only)
#   report                     per function, and --by thread
#   export --format folded --exclude '^sparse_matvec$'  (the filter stage's cost)
#   export --format F          every format parlot-read was built with
# and prints a Markdown table with the ratios against stats. Single-file
# formats write to a pipe counted by wc -c (the disk is not measured); otf2
# writes its archive to a temporary directory (du gives its size).
# chrome is run three ways: as is (it must refuse: more than 10^7 events),
# narrowed with --window 0:10000000, and with the limit lifted
# (--chrome-limit) to show what its memory does at full size.
# Usage: bench/export_scale.sh [BUILD_DIR] [CG_N] [CG_ITERATIONS]
#        (defaults: build 20000 100: about 1.06 x 10^8 events)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
cg_n="${2:-20000}"
cg_iterations="${3:-100}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
parlot="$build/frontend/parlot"
read_tool="$build/reader/parlot-read"
trace="$work/cg"

"$parlot" record -q -d "$trace" -- "$build/examples/cg" "$cg_n" "$cg_iterations" >/dev/null
events=$("$read_tool" info "$trace" | sed -n 's/^total: .* threads*, \([0-9]*\) events.*/\1/p')
trace_bytes=$(du -sb "$trace" | cut -f1)
echo "trace: build/examples/cg $cg_n $cg_iterations, $events events, $trace_bytes bytes on disk"
echo

# measure NAME EXPECTED_STATUS COMMAND...: runs COMMAND (stdout counted by
# wc -c) under /usr/bin/time; records wall s, CPU s, peak RSS KiB, status,
# output bytes in $work/NAME.m.
measure() {
  local name="$1" expected="$2"
  shift 2
  local status=0
  { /usr/bin/time -f "%e %U %S %M" -o "$work/$name.time" "$@" | wc -c >"$work/$name.bytes"; } \
    2>"$work/$name.err" || status=$?
  status=$(awk '/^Command exited with non-zero status/ { print $NF }' "$work/$name.time")
  status="${status:-0}"
  read -r wall user sys rss < <(tail -1 "$work/$name.time")
  if [ "$status" != "$expected" ]; then
    echo "$name: exit status $status, expected $expected" >&2
    cat "$work/$name.err" >&2
  fi
  echo "$wall $(echo "$user + $sys" | bc) $rss $status $(cat "$work/$name.bytes")" >"$work/$name.m"
}

formats=$("$read_tool" export --help | sed -n 's/.*{\(.*\)}.*/\1/p' | head -1 | tr ',' ' ')
measure stats 0 "$read_tool" stats "$trace"
measure report 0 "$read_tool" report "$trace"
measure report-by-thread 0 "$read_tool" report --by thread "$trace"
# The filter stage: a mid-level function (sparse_matvec, caller of row_dot) dropped.
measure export-folded-filtered 0 "$read_tool" export -f folded --exclude '^sparse_matvec$' "$trace" -o -
rows=(stats report report-by-thread export-folded-filtered)
for f in $formats; do
  case $f in
    otf2)
      measure export-otf2 0 "$read_tool" export -f otf2 "$trace" -o "$work/otf2"
      du -sb "$work/otf2" | cut -f1 >"$work/otf2.size"
      awk -v b="$(cat "$work/otf2.size")" '{ $5 = b; print }' "$work/export-otf2.m" >"$work/m" &&
        mv "$work/m" "$work/export-otf2.m"
      rm -rf "$work/otf2"
      rows+=(export-otf2)
      ;;
    chrome)
      measure export-chrome 2 "$read_tool" export -f chrome "$trace" -o "$work/refused.json"
      measure export-chrome-window 0 "$read_tool" export -f chrome --window 0:10000000 "$trace" -o -
      measure export-chrome-unlimited 0 "$read_tool" export -f chrome --chrome-limit 18446744073709551615 \
        "$trace" -o -
      rows+=(export-chrome export-chrome-window export-chrome-unlimited)
      ;;
    *)
      measure "export-$f" 0 "$read_tool" export -f "$f" "$trace" -o -
      rows+=("export-$f")
      ;;
  esac
done

read -r base_wall base_cpu base_rss _ <"$work/stats.m"
echo "| command | exit | wall s | CPU s | peak RSS MiB | output bytes | bytes/event | wall / stats | CPU / stats | RSS / stats |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for name in "${rows[@]}"; do
  read -r wall cpu rss status bytes <"$work/$name.m"
  awk -v n="$name" -v w="$wall" -v c="$cpu" -v r="$rss" -v s="$status" -v b="$bytes" -v e="$events" \
    -v bw="$base_wall" -v bc="$base_cpu" -v br="$base_rss" 'BEGIN {
      printf "| %s | %d | %.2f | %.2f | %.1f | %.0f | %.2f | %.2f | %.2f | %.2f |\n",
        n, s, w, c, r / 1024, b, b / e, w / bw, c / bc, r / br }'
done
echo
echo "bytes/event: output bytes / all $events events (export-chrome-window writes events 0..10^7 only)"
echo "chrome without --window: $(head -c 300 "$work/export-chrome.err")"

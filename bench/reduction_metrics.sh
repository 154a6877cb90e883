#!/usr/bin/env bash
# bench/reduction_metrics.sh TRACE_DIR [PARLOT_READ]
#
# The seed's comparison of similarity metrics (Mohror and Karavanic, SC
# 2009) on one recorded trace: `parlot-read reduce --evaluate` with every
# metric at its default threshold (the seed's best), one Markdown table row
# each: metric, threshold, size of the reduced trace (% of the full one),
# degree of matching, segments kept, approximation distance (90th
# percentile of the recreated times' error) and the performance trends
# retained. docs/BENCHMARKS.md "reduce" shows runs on NPB CG and LULESH.
# The reduced traces go to a temporary directory, removed at the end.
set -euo pipefail
trace=${1:?usage: bench/reduction_metrics.sh TRACE_DIR [PARLOT_READ]}
read_tool=${2:-parlot-read}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "| metric | threshold | size | degree of matching | kept | approximation distance | trends retained |"
echo "|---|---|---|---|---|---|---|"
for m in reldiff absdiff manhattan euclidean chebyshev avgwave haarwave iterk iteravg; do
  r=$("$read_tool" reduce "$trace" -o "$work/$m" --metric "$m" --evaluate)
  field() { sed -n "$1" <<<"$r"; }
  threshold=$(field 's/^# evaluation .* threshold \(.*\)/\1/p')
  size=$(field 's/^size: .*bytes, \(.*\)% of the full trace/\1%/p')
  matching=$(field 's/^degree of matching: \([0-9.]*\) .*/\1/p')
  kept=$(field 's/^degree of matching: .*; \([0-9]*\) segments, \([0-9]*\) kept)/\2 of \1/p')
  distance=$(field 's/^approximation distance: \(.*\) (90%.*/\1/p')
  trends=$(field 's/^trends retained: \(.*\)/\1/p')
  echo "| $m | $threshold | $size | $matching | $kept | $distance | $trends |"
  rm -rf "${work:?}/$m"
done

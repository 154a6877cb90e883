#!/usr/bin/env bash
# Checks bench/lib/table.py on tool output with known figures: ratios to the
# baseline and their spreads (r * sqrt((sa/a)^2 + (sb/b)^2)), ns per event
# added over the no-op hooks, M events/s, peak RSS and trace bytes
# (hyperfine JSON), ns per item and per event from Google Benchmark
# aggregates, samples with their per-call difference, the codec table, and
# output bytes per event, and a clear error for a missing baseline or a corrupt file.
# Usage: table_test.sh REPO_ROOT
set -euo pipefail
root="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
table=("$root/bench/lib/table.py")
report="$dir/report.txt"
# shellcheck source=test/bench/expect_lines.sh
. "$root/test/bench/expect_lines.sh"

# hyperfine: untraced 1.0 s ± 0.1, no-op 1.2 ± 0.06, parlot 1.5 ± 0.15, on 10^8 events.
cat >"$dir/cg.json" <<'J'
{"results": [
 {"command": "untraced", "mean": 1.0, "stddev": 0.1, "user": 0.9, "system": 0.05},
 {"command": "no-op", "mean": 1.2, "stddev": 0.06, "user": 1.1, "system": 0.05},
 {"command": "parlot", "mean": 1.5, "stddev": 0.15, "user": 1.3, "system": 0.1}]}
J
echo '{"events": 100000000, "bytes": {"parlot": 12345}}' >"$dir/cg.meta.json"
# A reader group: 2 * 10^8 events, stats 0.5 s.
cat >"$dir/big.json" <<'J'
{"results": [
 {"command": "stats", "mean": 0.5, "stddev": null, "user": 0.4, "system": 0.1},
 {"command": "classes", "mean": 2.0, "stddev": null, "user": 1.9, "system": 0.1}]}
J
echo '{"events": 200000000, "rate": true, "rss_kib": {"stats": 7800}, "out_bytes": {"classes": 400000000}}' \
  >"$dir/big.meta.json"
/usr/bin/python3 "${table[@]}" hyperfine --baseline untraced --second no-op "$dir/cg.json" >"$report"
expect "| cg | parlot | 1.50 ± 0.15 | 1.50 ± 0.21 | 1.25 ± 0.14 | 1.40 | 3.00 ± 1.6 | 2.50 | 12,345 |"
expect "| cg | untraced | 1.00 ± 0.10 | 1 | 0.833 ± 0.093 | 0.950 | - | - | - |"
expect "| cg | no-op | 1.20 ± 0.060 | 1.20 ± 0.13 | 1 | 1.15 | - | - | - |"
/usr/bin/python3 "${table[@]}" hyperfine --baseline stats "$dir/big.json" >>"$report"
expect "| big | classes | 2.00 | 4.00 | 2.00 | 100 | - | 2.00 |"
expect "| big | stats | 0.500 | 1 | 0.500 | 400 | 7,800 | - |"

# Google Benchmark: no-op 4 ns per item (2.5e8 items/s, no spread), parlot
# 10 ns ± 10% (1e8 ± 1e7 items/s); 2 events per item.
gbench() {  # mean stddev
  cat <<J
{"benchmarks": [
 {"name": "BM_Call_mean", "run_name": "BM_Call", "aggregate_name": "mean", "items_per_second": $1},
 {"name": "BM_Call_median", "run_name": "BM_Call", "aggregate_name": "median", "items_per_second": 1},
 {"name": "BM_Call_stddev", "run_name": "BM_Call", "aggregate_name": "stddev", "items_per_second": $2}]}
J
}
gbench 2.5e8 0 >"$dir/no-op.json"
gbench 1e8 1e7 >"$dir/parlot.json"
/usr/bin/python3 "${table[@]}" gbench --baseline no-op --events-per-item 2 "$dir/no-op.json" "$dir/parlot.json" >"$report"
expect "| BM_Call | no-op | 4.00 ± 0 | 1 | - |"
expect "| BM_Call | parlot | 10.0 ± 1.0 | 2.50 ± 0.25 | 3.00 ± 0.50 |"

# Samples: base 10 and 12, x 20 and 22, per 2 calls.
printf 'g\t2\tbase\t10\ng\t2\tbase\t12\ng\t2\tx\t20\ng\t2\tx\t22\n' >"$dir/s.tsv"
/usr/bin/python3 "${table[@]}" samples --baseline base --per call "$dir/s.tsv" >"$report"
expect "| g | x | 21.0 ± 1.4 | 1.91 ± 0.28 | 5.00 ± 1.0 |"

# Codec: parlot2 ratio 1000 (200 bytes for 10^6 events), zstd19 ratio 100.
cat >"$dir/codec.json" <<'J'
{"benchmarks": [
 {"name": "BM_Compress/parlot2/cg_mean", "run_name": "BM_Compress/parlot2/cg", "aggregate_name": "mean",
  "events": 5e8, "ratio": 1000, "compressed_bytes": 200, "stream_events": 1e6},
 {"name": "BM_Compress/parlot2/cg_stddev", "run_name": "BM_Compress/parlot2/cg", "aggregate_name": "stddev",
  "events": 1e7, "ratio": 0, "compressed_bytes": 0, "stream_events": 0},
 {"name": "BM_Compress/zstd19/cg_mean", "run_name": "BM_Compress/zstd19/cg", "aggregate_name": "mean",
  "events": 2e7, "ratio": 100, "compressed_bytes": 2000, "stream_events": 1e6},
 {"name": "BM_Decompress/parlot2/cg_mean", "run_name": "BM_Decompress/parlot2/cg", "aggregate_name": "mean",
  "events": 4e8, "ratio": 1000, "compressed_bytes": 200, "stream_events": 1e6}]}
J
/usr/bin/python3 "${table[@]}" codec "$dir/codec.json" >"$report"
expect "| cg | parlot2 | 1,000 | 1.00 | 200 | 500 ± 10 | 400 |"
expect "| cg | zstd19 | 100.0 | 10.0 | 2,000 | 20.0 | - |"

# Errors: a missing baseline, a corrupt file.
if /usr/bin/python3 "${table[@]}" hyperfine --baseline nothing "$dir/cg.json" >/dev/null 2>"$report"; then
  echo "a missing baseline was accepted" >&2
  fail=1
fi
expect "cg.json: no command named 'nothing'"
echo '{"results": [' >"$dir/bad.json"
if /usr/bin/python3 "${table[@]}" hyperfine --baseline x "$dir/bad.json" >/dev/null 2>"$report"; then
  echo "a corrupt file was accepted" >&2
  fail=1
fi
expect "bad.json:"
finish "table.py: ratios, spreads and added costs as expected"

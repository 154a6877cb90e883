#!/usr/bin/env bash
# Checks bench/lib/interleave.py: the table of interleaved rounds with known
# figures (a ratio is the median of the per-round ratios, not the ratio of
# the means; min-max beside it; labels and events from the meta file), a
# clear error for a missing baseline, and a real run of two commands (every
# round times each once; the slower one is slower).
# Usage: interleave_test.sh REPO_ROOT
set -euo pipefail
root="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
tool=("/usr/bin/python3" "$root/bench/lib/interleave.py")
report="$dir/report.txt"
# shellcheck source=test/bench/expect_lines.sh
. "$root/test/bench/expect_lines.sh"

# Three rounds; the load changes between rounds (plain 1, 2, 4 s): the
# per-round ratios of "x" are 1.1, 1.2, 1.0 (median 1.10), the ratio of the
# means 7.5 / 7 = 1.07.
cat >"$dir/prog.json" <<'J'
{"rounds": 3, "order": ["plain", "x"], "load": [1, 2, 3],
 "results": {"plain": {"wall": [1, 2, 4], "cpu": [0.5, 1, 2]},
             "x": {"wall": [1.1, 2.4, 4.0], "cpu": [0.6, 1.0, 2.2]}}}
J
echo '{"events": {"x": 1234567}, "labels": {"x": "x traced"}}' >"$dir/prog.meta.json"
"${tool[@]}" table --baseline plain "$dir/prog.json" >"$report"
expect "| prog | plain | 2.33 ± 1.5 | 1 | 1.17 ± 0.76 | 1 | - |"
expect "| prog | x traced | 2.50 ± 1.5 | 1.10 (1.00-1.20) | 1.27 ± 0.83 | 1.10 (1.00-1.20) | 1,234,567 |"

if "${tool[@]}" table --baseline nothing "$dir/prog.json" >/dev/null 2>"$dir/err"; then
  echo "a missing baseline was accepted" >&2
  fail=1
fi
grep -q "no command named 'nothing'" "$dir/err" || { cat "$dir/err" >&2; fail=1; }

# A real run: 2 rounds (after a warm-up) of a fast and a slow command.
"${tool[@]}" run --rounds 2 --out "$dir/run.json" -n fast "true" -n slow "sleep 0.2" 2>/dev/null
/usr/bin/python3 - "$dir/run.json" >>"$report" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"]
print("rounds", d["rounds"], "order", ",".join(d["order"]), "loads", len(d["load"]))
print("timed", len(r["fast"]["wall"]), len(r["slow"]["wall"]), len(r["slow"]["cpu"]))
print("slow is slower", all(s > f + 0.15 for s, f in zip(r["slow"]["wall"], r["fast"]["wall"])))
P
expect "rounds 2 order fast,slow loads 2"
expect "timed 2 2 2"
expect "slow is slower True"
finish "interleave.py: paired ratios, labels, events, errors and a real run as expected"

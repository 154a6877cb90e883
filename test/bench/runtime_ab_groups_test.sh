#!/usr/bin/env bash
# Checks bench/runtime_ab_groups.awk on runs with known figures: each
# configuration's median and the per-round difference of the two groups'
# means. Usage: runtime_ab_groups_test.sh REPO_ROOT
set -euo pipefail
root="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
{
  # lua, 3 rounds. Round means: A (a0, a1) 2.05, 2.15, 2.30; B (b0, b1)
  # 2.20, 2.10, 2.40. A - B: -0.15, +0.05, -0.10: median -0.10, 2 lower,
  # 1 higher, although a0's median (2.1) is above b0's (2.0).
  echo "lua a0 1 2.000"
  echo "lua a1 1 2.100"
  echo "lua b0 1 2.000"
  echo "lua b1 1 2.400"
  echo "lua none 1 1.000"
  echo "lua a0 2 2.100"
  echo "lua a1 2 2.200"
  echo "lua b0 2 1.900"
  echo "lua b1 2 2.300"
  echo "lua a0 3 2.200"
  echo "lua a1 3 2.400"
  echo "lua b0 3 2.100"
  echo "lua b1 3 2.700"
  # sqlite3, 2 rounds, b1 missing in round 2 (only round 1 pairs); even
  # counts take the lower middle.
  echo "sqlite3 a0 1 1.500"
  echo "sqlite3 a1 1 1.700"
  echo "sqlite3 b0 1 1.600"
  echo "sqlite3 b1 1 1.600"
  echo "sqlite3 a0 2 1.400"
  echo "sqlite3 a1 2 1.600"
  echo "sqlite3 b0 2 1.500"
} >"$dir/runs.txt"
awk -v A="a0 a1" -v B="b0 b1" -f "$root/bench/median.awk" -f "$root/bench/runtime_ab_groups.awk" "$dir/runs.txt" >"$dir/report.txt"
report="$dir/report.txt"
# shellcheck source=test/bench/expect_lines.sh
source "$(dirname "$0")/expect_lines.sh"
expect "lua"
expect "  A: a0 2.100 a1 2.200"
expect "  B: b0 2.000 b1 2.400"
expect "  mean(A) - mean(B): median -0.100 s over 3 rounds (2 lower, 1 higher)"
expect "sqlite3"
expect "  A: a0 1.400 a1 1.600"
expect "  B: b0 1.500 b1 1.600"
expect "  mean(A) - mean(B): median +0.000 s over 1 rounds (0 lower, 0 higher)"
if awk -f "$root/bench/median.awk" -f "$root/bench/runtime_ab_groups.awk" "$dir/runs.txt" >/dev/null 2>&1; then
  echo "FAIL: no groups given, but the report exited 0"
  exit 1
fi
finish "runtime_ab groups: all figures as expected"

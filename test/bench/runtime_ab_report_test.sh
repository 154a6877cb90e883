#!/usr/bin/env bash
# Checks bench/runtime_ab_report.awk on runs with known figures: medians,
# ranges, added ns per event over `none`, and the per-round differences from
# the first traced configuration. Usage: runtime_ab_report_test.sh REPO_ROOT
set -euo pipefail
root="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
printf 'lua 500000000\nsqlite3 250000000\n' >"$dir/events.txt"
{
  # lua: none 1.0 / 1.1 / 0.9; old 2.0 / 2.2 / 2.1; new 1.9 / 2.25 / 1.95:
  # new minus old per round -0.10, +0.05, -0.15 (median -0.10, 2 lower, 1
  # higher) although new's median alone (1.95) is 0.15 below old's (2.10).
  echo "lua none 1 1.000"
  echo "lua old 1 2.000"
  echo "lua new 1 1.900"
  echo "lua none 2 1.100"
  echo "lua old 2 2.200"
  echo "lua new 2 2.250"
  echo "lua none 3 0.900"
  echo "lua old 3 2.100"
  echo "lua new 3 1.950"
  # sqlite3: four rounds, new missing in round 4 (paired over 3 rounds);
  # even counts take the lower middle.
  echo "sqlite3 none 1 0.800"
  echo "sqlite3 old 1 1.800"
  echo "sqlite3 new 1 1.800"
  echo "sqlite3 none 2 0.820"
  echo "sqlite3 old 2 1.900"
  echo "sqlite3 new 2 1.850"
  echo "sqlite3 none 3 0.780"
  echo "sqlite3 old 3 1.850"
  echo "sqlite3 new 3 1.870"
  echo "sqlite3 none 4 0.790"
  echo "sqlite3 old 4 1.700"
} >"$dir/runs.txt"
awk -v configs="none old new" -v traced="old new" -f "$root/bench/median.awk" -f "$root/bench/runtime_ab_report.awk" \
  "$dir/events.txt" "$dir/runs.txt" >"$dir/report.md"
report="$dir/report.md"
# shellcheck source=test/bench/expect_lines.sh
source "$(dirname "$0")/expect_lines.sh"
expect "### lua (500,000,000 events, 3 rounds)"
expect "| configuration | median CPU s | range | added ns/event | minus old, median of the rounds (s) | rounds lower / higher |"
expect "| none | 1.000 | 0.900-1.100 | - | - | - |"
# (2.1 - 1.0) s / 5e8 events = 2.2 ns; (1.95 - 1.0) / 5e8 = 1.9 ns.
expect "| old | 2.100 | 2.000-2.200 | 2.20 | (reference) | - |"
expect "| new | 1.950 | 1.900-2.250 | 1.90 | -0.100 | 2 / 1 |"
expect "### sqlite3 (250,000,000 events, 4 rounds)"
# Lower middles: none 0.790, old 1.800; (1.8 - 0.79) / 2.5e8 = 4.04 ns.
expect "| none | 0.790 | 0.780-0.820 | - | - | - |"
expect "| old | 1.800 | 1.700-1.900 | 4.04 | (reference) | - |"
# new: 1.800, 1.850, 1.870 (median 1.850, 4.24 ns); minus old 0, -0.05,
# +0.02: median 0.000, 1 lower, 1 higher.
expect "| new | 1.850 | 1.800-1.870 | 4.24 | +0.000 | 1 / 1 |"
finish "runtime_ab report: all figures as expected"

#!/usr/bin/env bash
# Suite inlining: what instrumenting after inlining saves. Debian's lua 5.4
# and sqlite3 and LULESH 2.0 (C++; when PARLOT_BENCH_LULESH names its
# source tree), each built with gcc and with clang
# (bench/debian_programs/build_variants.sh): uninstrumented, fully
# instrumented (-finstrument-functions: every call, inlined ones too, calls
# the hooks) and the cheap build parlot_instrument(AFTER_INLINING) gives
# (clang: -finstrument-functions-after-inlining; gcc: system headers
# excluded). Each run untraced (glibc's no-op hooks) and traced; baseline
# the uninstrumented build of the same compiler. Events of one traced run
# of each build: what the cheap build leaves out of the trace.
# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
set -euo pipefail
tmp="$OUT/tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
need "$RT" "$READER"
command -v clang >/dev/null || { note "clang is not installed"; exit 1; }
debian="${PARLOT_BENCH_DEBIAN:-$ROOT/bench-results/debian}"
lulesh="${PARLOT_BENCH_LULESH:-}"
[ "$DRY_RUN" = 0 ] || exit 0
if [ -z "$lulesh" ]; then note "PARLOT_BENCH_LULESH not set: LULESH skipped"; fi
note "building the variants into $debian/variants (once)"
"$ROOT/bench/debian_programs/build_variants.sh" "$debian" $lulesh >/dev/null
V="$debian/variants"
wl="$debian/workloads"

# name|arguments (word-split by hyperfine), full and --quick.
programs=("lua|$wl/bench.lua $([ "$QUICK" = 1 ] && echo 1 || echo 15)"
  "sqlite3|:memory: '.read $wl/workload.sql'")
[ -n "$lulesh" ] && programs+=("lulesh|-s $([ "$QUICK" = 1 ] && echo 10 || echo 20) -i 100 -q")

files=()
events_rows=()
for p in "${programs[@]}"; do
  IFS='|' read -r name args <<<"$p"
  for cc in gcc clang; do
    b="$V/$name-$cc"
    need "$b-plain" "$b-all" "$b-cheap"
    hf "$name-$cc" --prepare "rm -rf $tmp/p" --output null \
      -n untraced "$b-plain $args" \
      -n no-op "$b-all $args" -n parlot "env $(trace_env "$tmp/p") $b-all $args" \
      -n "no-op cheap" "$b-cheap $args" -n "parlot cheap" "env $(trace_env "$tmp/p") $b-cheap $args"
    files+=("$OUT/$name-$cc.json")
    row="| $name | $cc"
    for v in all cheap; do
      rm -rf "$tmp/p"
      eval "env $(trace_env "$tmp/p") $b-$v $args" >/dev/null
      row+=" | $(events_of "$tmp/p")"
    done
    events_rows+=("$row |")
  done
done
echo "### Instrumented after inlining (wall time, hyperfine; baseline: uninstrumented, same compiler)"
echo
table hyperfine --baseline untraced --second no-op "${files[@]}"
echo
echo "### Events of one traced run"
echo
echo "| program | compiler | all calls (-finstrument-functions) | cheap build |"
echo "|---|---|---|---|"
printf '%s\n' "${events_rows[@]}"

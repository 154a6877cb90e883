#!/usr/bin/env bash
# Suite programs: whole programs under hyperfine, wall time.
# Configurations: untraced (built without -finstrument-functions), no-op
# (instrumented, glibc's no-op hooks: what instrumenting costs before any
# tracer), parlot (the runtime preloaded, default settings), uftrace
# (`uftrace record --no-libcall`, the same functions as Parlot; when
# installed). Baseline untraced; "× no-op" and the added ns per event over
# no-op isolate the tracer. Trace bytes and events from one traced run.
# Workloads: the NAS-style kernels cg, ep, is, mg, the threaded quicksort
# and cpp_features from examples/, and the Debian lua 5.4 and sqlite3 of
# bench/debian_programs/build.sh (built into $PARLOT_BENCH_DEBIAN, default
# bench-results/debian; --quick uses them only when already built).
# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
set -euo pipefail
tmp="$OUT/tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
need "$RT" "$READER"
uftrace=0
command -v uftrace >/dev/null && uftrace=1 || note "uftrace not installed: no uftrace column"

# name|instrumented|untraced|arguments (hyperfine word-split)
workloads=()
add() {  # name full-args quick-args
  local a=$2
  [ "$QUICK" = 1 ] && a=$3
  need "$EXAMPLES/$1" "$EXAMPLES/$1_plain" && workloads+=("$1|$EXAMPLES/$1|$EXAMPLES/$1_plain|$a")
  return 0
}
add cg "30000 60" "7000 20"
add ep "26" "22"
add is "23 19 10" "20 19 4"
add mg "64 300" "32 20"
add quicksort_threads "4000000 2" "1000000 2"
add cpp_features "100000" "20000"
debian="${PARLOT_BENCH_DEBIAN:-$ROOT/bench-results/debian}"
if [ "$DRY_RUN" = 0 ] && [ "$QUICK" = 0 ] && [ ! -f "$debian/workloads.txt" ]; then
  note "building the Debian programs into $debian (a few minutes, once)"
  "$ROOT/bench/debian_programs/build.sh" "$debian" >&2
fi
if [ -f "$debian/workloads.txt" ]; then
  workloads+=("lua|$debian/bin/lua|$debian/bin/lua_plain|$debian/workloads/bench.lua $([ "$QUICK" = 1 ] && echo 1 || echo 15)")
  workloads+=("sqlite3|$debian/bin/sqlite3|$debian/bin/sqlite3_plain|:memory: '.read $debian/workloads/workload.sql'")
else
  note "no Debian programs in $debian: lua and sqlite3 skipped"
fi

files=()
for w in "${workloads[@]}"; do
  IFS='|' read -r name instr plain args <<<"$w"
  cmds=(-n untraced "$plain $args" -n no-op "$instr $args"
    -n parlot "env $(trace_env "$tmp/p") $instr $args")
  [ "$uftrace" = 1 ] && cmds+=(-n uftrace "uftrace record --no-libcall -d $tmp/u $instr $args")
  hf "$name" --prepare "rm -rf $tmp/p $tmp/u" --output null "${cmds[@]}"
  files+=("$OUT/$name.json")
  [ "$DRY_RUN" = 0 ] || continue
  # One traced run of each tracer for events and bytes.
  rm -rf "$tmp/p" "$tmp/u"
  eval "env $(trace_env "$tmp/p") $instr $args" >/dev/null
  bytes="\"parlot\": $(bytes_of "$tmp/p")"
  if [ "$uftrace" = 1 ]; then
    eval "uftrace record --no-libcall -d $tmp/u $instr $args" >/dev/null 2>&1 || true
    [ -d "$tmp/u" ] && bytes+=", \"uftrace\": $(bytes_of "$tmp/u")"
  fi
  echo "{\"events\": $(events_of "$tmp/p"), \"bytes\": {$bytes}}" >"$OUT/$name.meta.json"
done
echo "### Whole programs (wall time, hyperfine; added ns/event over no-op)"
echo
table hyperfine --baseline untraced --second no-op "${files[@]}"

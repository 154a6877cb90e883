#!/usr/bin/env bash
# Suite libcalls: what recording a call into an uninstrumented shared
# library costs (PARLOT_LIBCALLS=1).
#  1. libcall_cost: an instrumented loop calling a library's `x + 1` through
#     the PLT, timed by the program itself (CPU ns per call). Configurations:
#     bare (no tracer, the baseline), parlot (the runtime, library calls
#     off), libcalls (PARLOT_LIBCALLS=1: two events per call), ld_audit (an
#     LD_AUDIT module whose la_pltenter/la_pltexit only count: the least a
#     tracer built on rtld-audit pays), uftrace (`uftrace record`, library
#     calls on; its CPU is the traced process's only). Repeated runs. Trace
#     bytes of one run of libcalls and uftrace.
#  2. When the Debian lua is built (suite programs): lua under hyperfine,
#     no-op hooks, parlot, libcalls, uftrace (library calls on).
# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
set -euo pipefail
need "$RT" "$BENCH_BIN/libcall_cost" "$BENCH_BIN/libparlot_bench_audit.so"
tmp="$OUT/tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
rm -f "$OUT/samples.tsv"
configs=(bare parlot libcalls ld_audit)
command -v uftrace >/dev/null && configs+=(uftrace)
calls=$([ "$QUICK" = 1 ] && echo 1000000 || echo 10000000)
cost="$BENCH_BIN/libcall_cost"
run() {  # config directory -> "wall cpu" ns per call
  case $1 in
    bare) "$cost" "$calls" ;;
    parlot) env PARLOT_QUIET=1 PARLOT_DIR="$2" LD_PRELOAD="$RT" "$cost" "$calls" ;;
    libcalls) env PARLOT_LIBCALLS=1 PARLOT_QUIET=1 PARLOT_DIR="$2" LD_PRELOAD="$RT" "$cost" "$calls" ;;
    ld_audit) LD_AUDIT="$BENCH_BIN/libparlot_bench_audit.so" "$cost" "$calls" 2>/dev/null ;;
    uftrace) uftrace record -d "$2" "$cost" "$calls" 2>/dev/null ;;
  esac
}
bytes=""
if [ "$DRY_RUN" = 0 ]; then
  note "libcall_cost, $(reps) runs of each configuration"
  for i in $(seq "$(reps)"); do
    for c in "${configs[@]}"; do
      d="$tmp/$c.$i"
      # $(...) waits for the run to end (read < <(...) would not: uftrace
      # would still be writing while the next run starts).
      out=$(run "$c" "$d")
      read -r _ cpu <<<"$out"
      sample "$calls calls" 1 "$c" "$cpu"
      if [ "$i" = 1 ] && { [ "$c" = libcalls ] || [ "$c" = uftrace ]; }; then
        bytes+="$c $(bytes_of "$d") bytes; "
      fi
    done
    rm -rf "$tmp"/*."$i"
  done
fi
echo "### CPU ns per library call (libcall_cost)"
echo
table samples --baseline bare --unit ns --per call "$OUT/samples.tsv"
echo
echo "Trace of one run: ${bytes:-not measured}" | sed "s/; $/./"

debian="${PARLOT_BENCH_DEBIAN:-$ROOT/bench-results/debian}"
if [ -x "$debian/bin/lua" ]; then
  lua="$debian/bin/lua $debian/workloads/bench.lua $([ "$QUICK" = 1 ] && echo 1 || echo 5)"
  cmds=(-n no-op "$lua" -n parlot "env $(trace_env "$tmp/p") $lua"
    -n libcalls "env PARLOT_LIBCALLS=1 $(trace_env "$tmp/p") $lua")
  command -v uftrace >/dev/null && cmds+=(-n uftrace "uftrace record -d $tmp/u $lua")
  hf lua --prepare "sh -c 'rm -rf $tmp/p $tmp/u || true'" "${cmds[@]}"
  if [ "$DRY_RUN" = 0 ]; then
    rm -rf "$tmp/p" "$tmp/u"
    eval "env PARLOT_LIBCALLS=1 $(trace_env "$tmp/p") $lua" >/dev/null
    b="\"libcalls\": $(bytes_of "$tmp/p")"
    if command -v uftrace >/dev/null; then
      eval "uftrace record -d $tmp/u $lua" >/dev/null 2>&1 || true
      [ -d "$tmp/u" ] && b+=", \"uftrace\": $(bytes_of "$tmp/u")"
    fi
    echo "{\"bytes\": {$b}}" >"$OUT/lua.meta.json"
  fi
  echo
  echo "### Whole program: lua, library calls recorded (wall time, hyperfine)"
  echo
  table hyperfine --baseline no-op "$OUT/lua.json"
else
  note "no Debian lua in $debian (suite programs builds it): whole-program part skipped"
fi

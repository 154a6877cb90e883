#!/usr/bin/env bash
# Library calls on a whole program (issue 10 §3): CPU time (user + sys of
# everything the command starts, /usr/bin/time) and trace bytes of
#   noop        the instrumented program with glibc's no-op hooks
#   parlot      Parlot, main image only (the default)
#   libcalls    Parlot with PARLOT_LIBCALLS=1
#   uftrace     uftrace record (library calls on, its default; its writer included)
#   uftrace_nolib  uftrace record --no-libcall
# "added" = configuration minus noop, same run; median of N interleaved runs.
# Usage: bench/libcalls_whole_program.sh [--runs N] [--stdin FILE] INSTRUMENTED_PROGRAM ARGS...
#   e.g. with DEBIAN_DIR from bench/debian_programs/build.sh:
#   $DEBIAN_DIR/bin/lua $DEBIAN_DIR/workloads/bench.lua 1
#   --stdin $DEBIAN_DIR/workloads/workload.sql $DEBIAN_DIR/bin/sqlite3 :memory:
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs=3
input=/dev/null
if [ "${1:-}" = --runs ]; then runs=$2; shift 2; fi
if [ "${1:-}" = --stdin ]; then input=$2; shift 2; fi
[ $# -ge 1 ] || { echo "usage: $0 [--runs N] PROGRAM ARGS..." >&2; exit 2; }
build="$root/${PARLOT_BUILD_DIR:-build}"
rt="$build/runtime/libparlotrt.so"
configs=(noop parlot libcalls)
command -v uftrace >/dev/null && configs+=(uftrace uftrace_nolib)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/stats.sh
. "$root/bench/stats.sh"
declare -A cpu bytes
for ((i = 0; i < runs; i++)); do
  for c in "${configs[@]}"; do
    rm -rf "$work/t"
    case $c in
      noop) cmd=("$@") ;;
      parlot) cmd=(env LD_PRELOAD="$rt" PARLOT_DIR="$work/t" PARLOT_QUIET=1 "$@") ;;
      libcalls) cmd=(env PARLOT_LIBCALLS=1 LD_PRELOAD="$rt" PARLOT_DIR="$work/t" PARLOT_QUIET=1 "$@") ;;
      uftrace) cmd=(uftrace record -d "$work/t" "$@") ;;
      uftrace_nolib) cmd=(uftrace record --no-libcall -d "$work/t" "$@") ;;
    esac
    /usr/bin/time -f "%U %S" -o "$work/time" "${cmd[@]}" <"$input" >/dev/null 2>"$work/err" ||
      { echo "$c failed: $(tail -3 "$work/err")" >&2; exit 1; }
    cpu[$c]+="$(awk '{print $1 + $2}' "$work/time") "
    [ "$i" = 0 ] && bytes[$c]=$( [ -d "$work/t" ] && du -sb "$work/t" | awk '{print $1}' || echo 0)
  done
done
m() { echo "$1" | tr ' ' '\n' | grep -v '^$' | median; }
base=$(m "${cpu[noop]}")
echo "## $* (CPU s, median of $runs interleaved runs)"
echo
echo "| configuration | CPU s | added over no-op, s | trace bytes |"
echo "|---|---|---|---|"
for c in "${configs[@]}"; do
  v=$(m "${cpu[$c]}")
  printf '| %s | %s | %.2f | %s |\n' "$c" "$v" "$(echo "$v - $base" | bc -l)" "${bytes[$c]}"
done

#!/usr/bin/env bash
# What recording a library call costs (issue 10 §3): bench/libcall_cost
# calls an uninstrumented shared library's cheapest function 10 M times
# through the PLT; it prints ns per call (wall, process CPU). Configurations:
#   bare         glibc's no-op hooks (no tracer)
#   parlot       the runtime preloaded, library calls off (the default)
#   libcalls     the runtime with PARLOT_LIBCALLS=1 (2 events per call)
#   ld_audit     LD_AUDIT=libparlot_bench_audit.so: la_pltenter/la_pltexit
#                that only count (the rtld-audit way, nothing recorded)
#   uftrace      uftrace record (library calls on, its default)
# "added" = configuration minus bare, same run. Median of N interleaved runs.
# uftrace's CPU column counts the traced process only, not uftrace's writer.
# Usage: bench/libcall_cost.sh [--runs N]   (after scripts/build.sh)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs=3
[ "${1:-}" = --runs ] && runs=$2
build="$root/${PARLOT_BUILD_DIR:-build}"
rt="$build/runtime/libparlotrt.so"
cost="$build/bench/libcall_cost"
audit="$build/bench/libparlot_bench_audit.so"
for f in "$rt" "$cost" "$audit"; do
  [ -e "$f" ] || { echo "libcall_cost: $f is missing (scripts/build.sh)" >&2; exit 1; }
done
configs=(bare parlot libcalls ld_audit)
command -v uftrace >/dev/null && configs+=(uftrace)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/stats.sh
. "$root/bench/stats.sh"
declare -A wall cpu
for ((i = 0; i < runs; i++)); do
  for c in "${configs[@]}"; do
    rm -rf "$work/t"
    case $c in
      bare) out=$("$cost") ;;
      parlot) out=$(LD_PRELOAD="$rt" PARLOT_DIR="$work/t" PARLOT_QUIET=1 "$cost") ;;
      libcalls) out=$(PARLOT_LIBCALLS=1 LD_PRELOAD="$rt" PARLOT_DIR="$work/t" PARLOT_QUIET=1 "$cost") ;;
      ld_audit) out=$(LD_AUDIT="$audit" "$cost" 2>/dev/null) ;;
      uftrace) out=$(uftrace record -d "$work/t" "$cost" 2>/dev/null) ;;
    esac
    wall[$c]+="$(echo "$out" | awk '{print $1}') "
    cpu[$c]+="$(echo "$out" | awk '{print $2}') "
    if [ "$c" = libcalls ] && [ "$i" = 0 ]; then
      bytes_parlot=$(du -sb "$work/t" | awk '{print $1}')
    fi
    if [ "$c" = uftrace ] && [ "$i" = 0 ]; then
      bytes_uftrace=$(du -sb "$work/t" | awk '{print $1}')
    fi
  done
done
m() { echo "$1" | tr ' ' '\n' | grep -v '^$' | median; }
bw=$(m "${wall[bare]}")
bc=$(m "${cpu[bare]}")
echo "## ns per library call, 10 M calls (median of $runs interleaved runs)"
echo
echo "| configuration | wall ns/call | CPU ns/call | wall added over bare | CPU added over bare |"
echo "|---|---|---|---|---|"
for c in "${configs[@]}"; do
  w=$(m "${wall[$c]}")
  p=$(m "${cpu[$c]}")
  printf '| %s | %s | %s | %.2f | %.2f |\n' "$c" "$w" "$p" "$(echo "$w - $bw" | bc -l)" "$(echo "$p - $bc" | bc -l)"
done
echo
echo "Trace bytes of one run: libcalls ${bytes_parlot:-?}, uftrace ${bytes_uftrace:-n/a}."

#!/usr/bin/env bash
# What Parlot's MPI wrappers (libparlotmpi.so) cost:
#  1. ns added per MPI call: mpi_call_cost (10 M MPI_Comm_rank calls, one
#     rank) bare, under the runtime, and under the runtime + the wrappers;
#  2. whole-run slowdown of every MPI kernel (2 ranks, the sizes of
#     bench/whole_program.sh): the runtime alone against runtime + wrappers.
# Median of N interleaved runs (default 3). Usage:
#   bench/mpi_overhead.sh [--runs N]        (after scripts/build.sh)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs=3
[ "${1:-}" = --runs ] && runs=$2
build="$root/${PARLOT_BUILD_DIR:-build}"
rt="$build/runtime/libparlotrt.so"
mpi="$build/runtime/mpi/libparlotmpi.so"
ex="$build/examples"
cost="$build/bench/mpi_call_cost"
for f in "$rt" "$mpi" "$cost"; do
  [ -e "$f" ] || { echo "mpi_overhead: $f is missing (scripts/build.sh, with MPI)" >&2; exit 1; }
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/stats.sh
. "$root/bench/stats.sh"
now() { date +%s.%N; }

echo "## ns per MPI_Comm_rank call (median of $runs interleaved runs, 10 M calls)"
echo
echo "| configuration | ns per call | added over bare |"
echo "|---|---|---|"
declare -A ns
for ((i = 0; i < runs; i++)); do
  for c in bare runtime wrappers; do
    envs=()
    case $c in
      runtime) envs=(LD_PRELOAD="$rt" PARLOT_DIR="$work/t" PARLOT_QUIET=1) ;;
      wrappers) envs=(LD_PRELOAD="$rt:$mpi" PARLOT_DIR="$work/t" PARLOT_QUIET=1) ;;
    esac
    rm -rf "$work/t"
    v=$(env ${envs[@]+"${envs[@]}"} "$cost" 10000000 | awk '{print $1}')
    ns[$c]+="$v "
  done
done
bare=$(echo ${ns[bare]} | tr ' ' '\n' | median)
for c in bare runtime wrappers; do
  m=$(echo ${ns[$c]} | tr ' ' '\n' | median)
  printf '| %s | %.2f | %.2f |\n' "$c" "$m" "$(awk -v a="$m" -v b="$bare" 'BEGIN {print a - b}')"
done

echo
echo "## MPI kernels, 2 ranks: runtime alone vs runtime + MPI wrappers (median of $runs, s)"
echo
echo "| kernel | args | runtime s | + wrappers s | ratio | MPI calls traced |"
echo "|---|---|---|---|---|---|"
mpirun_cmd=(mpirun --allow-run-as-root --oversubscribe -np 2)
for k in "cg_mpi|30000 60" "ep_mpi|26" "is_mpi|23 19 10" "mg_mpi|64 300"; do
  name=${k%%|*}
  args=${k#*|}
  [ -x "$ex/$name" ] || continue
  declare -A t=()
  for ((i = 0; i < runs; i++)); do
    for c in runtime wrappers; do
      pre="$rt"
      [ $c = wrappers ] && pre="$rt:$mpi"
      rm -rf "$work/$c"
      t0=$(now)
      # shellcheck disable=SC2086
      "${mpirun_cmd[@]}" -x LD_PRELOAD="$pre" -x PARLOT_DIR="$work/$c" -x PARLOT_QUIET=1 \
        "$ex/$name" $args >/dev/null
      t1=$(now)
      t[$c]+="$(awk -v a="$t1" -v b="$t0" 'BEGIN {print a - b}') "
    done
  done
  a=$(echo ${t[runtime]} | tr ' ' '\n' | median)
  b=$(echo ${t[wrappers]} | tr ' ' '\n' | median)
  calls=$("$build/reader/parlot-read" stats "$work/wrappers" --by program |
    awk '$2 ~ /^MPI_/ && $0 !~ /->/ {s += $1} END {print s + 0}')
  printf '| %s | %s | %.3f | %.3f | %.4f | %s |\n' "$name" "$args" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN {print b / a}')" "$calls"
done

#!/usr/bin/env bash
# What recording MPI call arguments (PARLOT_MPI_ARGS=1) costs:
#  1. instructions per call (valgrind's count of executed instructions,
#     callgrind: the difference between runs of N and 2N calls, divided by
#     N, so MPI_Init and the process's start cancel out) of MPI_Comm_rank
#     and of an MPI_Send + MPI_Recv pair to self (bench/mpi_call_cost.c):
#     bare, under the runtime + MPI wrappers, and the same with
#     PARLOT_MPI_ARGS=1;
#  2. ns per call, same configurations (median of N runs, 1 M calls);
#  3. trace bytes of cg_mpi (2 ranks) with and without PARLOT_MPI_ARGS=1.
# With PARLOT_MPI_WRAPPERS_BEFORE=<an older libparlotmpi.so> the tables get
# a column for it ("before"): the wrappers without argument recording.
# Usage: bench/mpi_args_cost.sh [--runs N]      (after scripts/build.sh)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs=3
[ "${1:-}" = --runs ] && runs=$2
build="$root/${PARLOT_BUILD_DIR:-build}"
rt="$build/runtime/libparlotrt.so"
mpi="$build/runtime/mpi/libparlotmpi.so"
cost="$build/bench/mpi_call_cost"
cg="$build/examples/cg_mpi"
for f in "$rt" "$mpi" "$cost" "$cg"; do
  [ -e "$f" ] || { echo "mpi_args_cost: $f is missing (scripts/build.sh, with MPI)" >&2; exit 1; }
done
command -v valgrind >/dev/null || { echo "mpi_args_cost: valgrind is needed" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
before="${PARLOT_MPI_WRAPPERS_BEFORE:-}"
configs="bare wrappers args"
[ -n "$before" ] && configs="bare before wrappers args"
# shellcheck source=bench/stats.sh
. "$root/bench/stats.sh"

# env of a configuration
config_env() {
  case $1 in
    bare) echo "" ;;
    before) echo "LD_PRELOAD=$rt:$before PARLOT_DIR=$work/t PARLOT_QUIET=1" ;;
    wrappers) echo "LD_PRELOAD=$rt:$mpi PARLOT_DIR=$work/t PARLOT_QUIET=1 PARLOT_MPI_ARGS=0" ;;
    args) echo "LD_PRELOAD=$rt:$mpi PARLOT_DIR=$work/t PARLOT_QUIET=1 PARLOT_MPI_ARGS=1" ;;
  esac
}

# Instructions executed by one run (callgrind's total Ir).
instructions() {  # config mode calls
  rm -rf "$work/t" "$work/cg.out"
  # valgrind preloads its own objects: give it the program's LD_PRELOAD.
  env $(config_env "$1") valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
    "$cost" "$3" "$2" >/dev/null 2>&1
  awk '/^summary:/ {print $2}' "$work/cg.out"
}

echo "configurations: bare = no preload; before = runtime + \$PARLOT_MPI_WRAPPERS_BEFORE;"
echo "wrappers = runtime + libparlotmpi.so, PARLOT_MPI_ARGS=0; args = the same, PARLOT_MPI_ARGS=1"
echo
echo "## Instructions per call (callgrind, (Ir(2N) - Ir(N)) / N, N = 20000)"
echo
header() {
  printf '| call'
  for c in $configs; do printf ' | %s' "$c"; done
  echo " |"
  printf '|---'
  for c in $configs; do printf '|---'; done
  echo "|"
}
label_of() { [ "$1" = rank ] && echo "MPI_Comm_rank" || echo "MPI_Send + MPI_Recv to self"; }
header
n=20000
for mode in rank sendrecv; do
  printf '| %s' "$(label_of $mode)"
  for c in $configs; do
    a=$(instructions $c $mode $n)
    b=$(instructions $c $mode $((2 * n)))
    printf ' | %s' "$(awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN {printf "%.1f", (b - a) / n}')"
  done
  echo " |"
done
echo
echo "## ns per call (median of $runs interleaved runs, 1 M calls)"
echo
header
for mode in rank sendrecv; do
  declare -A ns=()
  for ((i = 0; i < runs; i++)); do
    for c in $configs; do
      rm -rf "$work/t"
      v=$(env $(config_env $c) "$cost" 1000000 $mode | awk '{print $1}')
      ns[$c]+="$v "
    done
  done
  printf '| %s' "$(label_of $mode)"
  for c in $configs; do printf ' | %.1f' "$(echo ${ns[$c]} | tr ' ' '\n' | median)"; done
  echo " |"
done
echo
echo "## Trace bytes of cg_mpi 30000 60, 2 ranks (thread files, both ranks)"
echo
echo "| configuration | trace bytes | MPI calls with arguments | ratio |"
echo "|---|---|---|---|"
declare -A bytes
for a in 0 1; do
  rm -rf "$work/t"
  mpirun --allow-run-as-root --oversubscribe -np 2 -x LD_PRELOAD="$rt:$mpi" -x PARLOT_DIR="$work/t" \
    -x PARLOT_QUIET=1 -x PARLOT_MPI_ARGS=$a "$cg" 30000 60 >/dev/null
  bytes[$a]=$(find "$work/t" -name 'thread-*.trace' -printf '%s\n' | awk '{s += $1} END {print s}')
  calls=$("$build/reader/parlot-read" trace "$work/t" --format jsonl | grep -c '"mpi":' || true)
  printf '| PARLOT_MPI_ARGS=%s | %s | %s | %s |\n' "$a" "${bytes[$a]}" "$calls" \
    "$(awk -v a="${bytes[$a]}" -v b="${bytes[0]}" 'BEGIN {printf "%.2f", a / b}')"
done

#!/usr/bin/env bash
# Suite mpi: what Parlot's MPI wrappers (libparlotmpi.so) cost.
#  1. ns per MPI call, as mpi_call_cost measures it itself (a timed loop of
#     N calls on one rank, not instrumented: only the wrappers make events):
#     MPI_Comm_rank, and an MPI_Send to itself plus the MPI_Recv that takes
#     it. Configurations: bare (no runtime, the baseline), runtime (the
#     runtime alone: the calls are not wrapped), wrappers (runtime and
#     wrappers), args (wrappers with PARLOT_MPI_ARGS=1: peer, tag, bytes,
#     communicator recorded). Repeated runs; mean and spread.
#  2. The MPI kernels on 2 ranks (mpirun -np 2) under hyperfine: no-op
#     hooks (baseline), the runtime alone, runtime and wrappers.
# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
set -euo pipefail
command -v mpirun >/dev/null || { note "mpirun not installed: suite skipped"; exit 0; }
need "$RT" "$MPI_WRAPPERS" "$BENCH_BIN/mpi_call_cost"
tmp="$OUT/tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
rm -f "$OUT/samples.tsv"

calls=$([ "$QUICK" = 1 ] && echo 1000000 || echo 10000000)
if [ "$DRY_RUN" = 0 ]; then
  note "mpi_call_cost, $(reps) runs of each configuration"
  for _ in $(seq "$(reps)"); do
    for kind in rank sendrecv; do
      for c in bare runtime wrappers args; do
        envs=()
        case $c in
          runtime) envs=(LD_PRELOAD="$RT") ;;
          wrappers) envs=(LD_PRELOAD="$RT:$MPI_WRAPPERS") ;;
          args) envs=(LD_PRELOAD="$RT:$MPI_WRAPPERS" PARLOT_MPI_ARGS=1) ;;
        esac
        rm -rf "$tmp/t"
        ns=$(env PARLOT_QUIET=1 PARLOT_DIR="$tmp/t" ${envs[@]+"${envs[@]}"} \
          "$BENCH_BIN/mpi_call_cost" "$calls" "$kind" | awk '{print $1}')
        group="MPI_Comm_rank"
        [ "$kind" = sendrecv ] && group="MPI_Send + MPI_Recv to self"
        sample "$group" 1 "$c" "$ns"
      done
    done
  done
fi

k=()
add() {  # name full-args quick-args
  local a=$2
  [ "$QUICK" = 1 ] && a=$3
  need "$EXAMPLES/$1" && k+=("$1|$a")
  return 0
}
add cg_mpi "30000 60" "7000 20"
add ep_mpi "26" "22"
add is_mpi "23 19 10" "20 19 4"
add mg_mpi "64 300" "32 20"
files=()
for w in "${k[@]}"; do
  name=${w%%|*}
  cmd="$EXAMPLES/$name ${w#*|}"
  run="${MPIRUN[*]} -np 2 -x PARLOT_QUIET=1 -x PARLOT_DIR=$tmp/t"
  hf "$name" --prepare "rm -rf $tmp/t" \
    -n no-op "${MPIRUN[*]} -np 2 $cmd" \
    -n runtime "$run -x LD_PRELOAD=$RT $cmd" \
    -n wrappers "$run -x LD_PRELOAD=$RT:$MPI_WRAPPERS $cmd"
  files+=("$OUT/$name.json")
done
echo "### ns per MPI call (mpi_call_cost, $calls calls, one rank)"
echo
table samples --baseline bare --unit ns --per call "$OUT/samples.tsv"
echo
echo "### MPI kernels on 2 ranks (wall time, hyperfine)"
echo
table hyperfine --baseline no-op "${files[@]}"

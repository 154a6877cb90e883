#!/usr/bin/env bash
# Many oversubscribed MPI ranks on one machine (docs/BENCHMARKS.md "Many
# ranks"): an SPMD program with two threads per rank (bench/spmd_threads_mpi.c)
# traced under `mpirun --oversubscribe` at several rank counts, in each trace
# layout the runtime has (`process`; `node` too when the runtime knows
# PARLOT_LAYOUT, nodes simulated by PARLOT_NODE_RANKS consecutive ranks).
# Prints one table row per (layout, ranks):
#
#   files, dirs     what the trace directory holds at the end (find)
#   creates         files and directories created in the trace directory,
#                   temporaries included: successful open/openat/creat with
#                   O_CREAT and mkdir/mkdirat on its paths, from a second run
#                   under `strace -f -C -e trace=%file` (its summary, the
#                   whole job's, is at the end of the log in the scratch
#                   directory)
#   opens, mkdirs, renames, unlinks, stats
#                   the runtime's metadata system calls: those of the same
#                   log on paths in the trace directory
#   bytes, B/rank   the trace directory's size (apparent bytes)
#   fn, map         distinct `functions` and `loadmap` contents over the
#                   ranks (process layout; 1 = every rank wrote the same bytes)
#   once_B          the bytes with each distinct file content stored once
#                   (what a container that deduplicates whole files keeps)
#   wall_s, wall0_s the job's wall time (mpirun start to exit, no strace),
#                   traced and untraced
#   end_ms, end0_ms the time from the last rank's MPI_Finalize to mpirun's
#                   exit (the trace's finish runs there), traced and untraced
#
# then a model extrapolating the creates to 10^5 ranks at 15,000 and 29,000
# creates/s (a Lustre metadata server, idle), linear in ranks (process
# layout) or in nodes (node layout).
#
# Usage: bench/many_ranks.sh [BUILD_DIR] [RANKS...]
#   BUILD_DIR   Parlot's build tree (default: build); its runtime/libparlotrt.so
#   RANKS       rank counts (default: 16 64 256)
# Environment: MANY_RANKS_WORK (scratch directory, default
# /tmp/parlot-many-ranks), MANY_RANKS_STEPS / MANY_RANKS_CALLS (the program's
# steps and calls per step and thread, default 20 and 20000),
# PARLOT_NODE_RANKS (ranks per simulated node, default 16),
# MANY_RANKS_STRACE=0 to skip the strace runs.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
shift || true
ranks_list=("$@")
[ ${#ranks_list[@]} -gt 0 ] || ranks_list=(16 64 256)
build=$(cd "$build" && pwd)
runtime=$build/runtime/libparlotrt.so
[ -e "$runtime" ] || { echo "no $runtime: build Parlot first" >&2; exit 1; }
work=${MANY_RANKS_WORK:-/tmp/parlot-many-ranks}
steps=${MANY_RANKS_STEPS:-20}
calls=${MANY_RANKS_CALLS:-20000}
node_ranks=${PARLOT_NODE_RANKS:-16}
use_strace=${MANY_RANKS_STRACE:-1}
command -v mpirun >/dev/null && command -v mpicc >/dev/null ||
  { echo "needs mpirun and mpicc" >&2; exit 1; }
if [ "$use_strace" = 1 ] && ! command -v strace >/dev/null; then
  echo "strace not found: no system-call counts" >&2
  use_strace=0
fi
mkdir -p "$work"
program=$work/spmd_threads_mpi
mpicc -O2 -g -finstrument-functions -pthread "$here/spmd_threads_mpi.c" -o "$program"

# The node layout, once the runtime has it.
layouts=(process)
if grep -q PARLOT_LAYOUT "$runtime" 2>/dev/null; then layouts+=(node); fi

now_ns() { date +%s%N; }

# run_job RANKS LAYOUT(none = untraced) TRACE_DIR [strace output]
# Prints "wall_ns end_ns" (end_ns: last MPI_Finalize to mpirun's exit).
run_job() {
  local n=$1 layout=$2 dir=$3 strace_out=${4:-}
  local log=$work/finalize.log
  rm -rf "$dir" "$log"
  local env=(-x "SPMD_FINALIZE_LOG=$log")
  if [ "$layout" != none ]; then
    env+=(-x "LD_PRELOAD=$runtime" -x "PARLOT_DIR=$dir" -x "PARLOT_LAYOUT=$layout"
      -x "PARLOT_NODE_RANKS=$node_ranks")
  fi
  local cmd=(mpirun --allow-run-as-root --oversubscribe -np "$n" "${env[@]}"
    "$program" "$steps" "$calls")
  if [ -n "$strace_out" ]; then
    # Open MPI under strace sometimes reports a rank that finished (its
    # trace whole) as exited improperly: the counts stand, the status not.
    strace -f -qq -C -e trace=%file -e status=successful -o "$strace_out" "${cmd[@]}" \
      >/dev/null 2>&1 || echo "note: the ${n}-rank job under strace exited with $?" >&2
    echo "0 0"
    return
  fi
  local t0 t1
  t0=$(now_ns)
  "${cmd[@]}" >/dev/null
  t1=$(now_ns)
  local last
  last=$(sort -n "$log" | tail -1)
  echo "$((t1 - t0)) $((t1 - last))"
}

# count STRACE_LOG DIR: the system calls on paths under DIR (the trace
# directory) in the log: "creates opens mkdirs renames unlinks stats", where
# creates are the successful opens with O_CREAT and mkdirs.
count() {
  local f=$1 dir=$2
  grep -F "$dir" "$f" | awk '
    { call = $2; sub(/\(.*/, "", call) }
    call ~ /^(open|openat|creat)$/ { opens++; if ($0 ~ /O_CREAT/) creates++ }
    call ~ /^mkdir(at)?$/ { mkdirs++; creates++ }
    call ~ /^rename(at|at2)?$/ { renames++ }
    call ~ /^unlink(at)?$/ { unlinks++ }
    call ~ /^(stat|lstat|newfstatat|statx|access|faccessat2?)$/ { stats++ }
    END { printf "%d %d %d %d %d %d\n", creates, opens, mkdirs, renames, unlinks, stats }'
}

printf '%-8s %6s %6s %5s %8s %8s %6s %7s %6s %6s %11s %8s %4s %4s %11s %7s %7s %7s %7s\n' \
  layout ranks files dirs creates opens mkdirs renames unlink stats bytes B/rank fn map once_B \
  wall_s wall0_s end_ms end0_ms
declare -A per_rank_creates
for n in "${ranks_list[@]}"; do
  base_t=$(run_job "$n" none "$work/none")
  for layout in "${layouts[@]}"; do
    dir=$work/trace-$layout-$n
    read -r wall end <<<"$(run_job "$n" "$layout" "$dir")"
    files=$(find "$dir" -type f | wc -l)
    dirs=$(find "$dir" -mindepth 1 -type d | wc -l)
    # The files' bytes (directories are the file system's).
    bytes=$(find "$dir" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
    # Distinct contents: of the per-process metadata files, and of all files.
    fn=- map=-
    if [ "$layout" = process ]; then
      fn=$(md5sum "$dir"/*/functions | cut -d' ' -f1 | sort -u | wc -l)
      map=$(md5sum "$dir"/*/loadmap | cut -d' ' -f1 | sort -u | wc -l)
    fi
    once=$(find "$dir" -type f -exec md5sum {} + | sort -k1,1 -u | cut -d' ' -f3- |
      while read -r f; do stat -c %s "$f"; done | awk '{ s += $1 } END { print s + 0 }')
    counts="- - - - - -"
    if [ "$use_strace" = 1 ]; then
      run_job "$n" "$layout" "$dir.strace" "$work/strace-$layout-$n.txt" >/dev/null
      rm -rf "$dir.strace"
      counts=$(count "$work/strace-$layout-$n.txt" "$dir.strace")
      per_rank_creates[$layout,$n]=${counts%% *}
    fi
    read -r -a base <<<"$base_t"
    read -r c_creates c_opens c_mkdirs c_renames c_unlinks c_stats <<<"$counts"
    printf '%-8s %6d %6d %5d %8s %8s %6s %7s %6s %6s %11d %8d %4s %4s %11d %7.2f %7.2f %7.0f %7.0f\n' \
      "$layout" "$n" "$files" "$dirs" "$c_creates" "$c_opens" "$c_mkdirs" "$c_renames" \
      "$c_unlinks" "$c_stats" "$bytes" "$((bytes / n))" "$fn" "$map" "$once" \
      "$(echo "$wall / 1000000000" | bc -l)" \
      "$(echo "${base[0]} / 1000000000" | bc -l)" "$(echo "$end / 1000000" | bc -l)" \
      "$(echo "${base[1]} / 1000000" | bc -l)"
  done
done

# The model: creates per rank (process layout) or per node of
# PARLOT_NODE_RANKS ranks (node layout), from the largest run, times 10^5
# ranks, at an idle Lustre metadata server's 15,000 and 29,000 creates/s.
if [ "$use_strace" = 1 ]; then
  n=${ranks_list[-1]}
  echo
  echo "model: creates at 10^5 ranks (from the ${n}-rank run), at 15,000 and 29,000 creates/s"
  for layout in "${layouts[@]}"; do
    c=${per_rank_creates[$layout,$n]:-}
    [ -n "$c" ] || continue
    if [ "$layout" = node ]; then
      per=$(echo "$c / ($n / $node_ranks)" | bc -l)
      total=$(echo "$per * 100000 / $node_ranks" | bc -l)
      unit="node of $node_ranks ranks"
    else
      per=$(echo "$c / $n" | bc -l)
      total=$(echo "$per * 100000" | bc -l)
      unit=rank
    fi
    printf '  %-8s %.2f creates per %s -> %.0f creates: %.1f s to %.1f s of metadata server\n' \
      "$layout" "$per" "$unit" "$total" "$(echo "$total / 29000" | bc -l)" \
      "$(echo "$total / 15000" | bc -l)"
  done
fi

#!/usr/bin/env bash
# Whole-program benchmark in the shape of the ParLoT paper's evaluation
# (§4.2 metrics, Tables 1-4, Figs. 2-7): every workload runs under every
# configuration, RUNS times each (interleaved, so machine noise spreads over
# all configurations alike), and the median runtime is kept.
#
# Configurations
#   uninstrumented  the workload built without -finstrument-functions
#   noop            instrumented build, glibc's no-op hooks (the floor)
#   parlot-discard  Parlot, compressing to nowhere (PARLOT_DISCARD=1)
#   parlot-nc       Parlot uncompressed (PARLOT_COMPRESS=0, the paper's -NC)
#   parlot-codec1   Parlot with the first codec (PARLOT_CODEC=1: LZ words,
#                   format version 1), for the codec's before and after
#   parlot          Parlot
#   uftrace         `uftrace record --no-libcall` of the instrumented build
#                   (same functions as Parlot: no PLT library calls)
#   lttng           LTTng-UST liblttng-ust-cyg-profile-fast.so, own session
#                   (lttng-sessiond started and stopped by this script;
#                   default channel, discard mode: lost events are counted)
#   callgrind       valgrind --tool=callgrind on the uninstrumented build
#
# Workloads: the NAS-style kernels in examples/ (cg, ep, is, mg), each also as
# a 2-rank OpenMPI program (mpirun -np 2), and two Debian source packages
# built with -finstrument-functions (bench/debian_programs/build.sh): the Lua
# 5.4 interpreter on a benchmark script and sqlite3 on a SQL workload.
#
# Output (in OUTDIR, default bench-results/):
#   results.csv   one row per workload x configuration (columns below)
#   results.md    Tables 1-4 and the targets, as Markdown
#   *.png         gnuplot plots: slowdown, bandwidth, compression ratio,
#                 trace size (Figs. 2-7 shape)
#
# Metrics (paper §4.2): slowdown = median runtime / median uninstrumented
# runtime (and / no-op); bandwidth = trace bytes / runtime / cores, in kB/s
# (1 kB = 1000 bytes); compression ratio = raw bytes (the 16-bit word
# stream) / trace bytes on disk (Parlot). Trace bytes are everything the tool
# leaves on disk (Parlot: all files of the trace directory; uftrace: its data
# directory; LTTng: its output directory; callgrind: its profile files).
#
# Usage: bench/whole_program.sh [--quick] [--runs N] [--only REGEX]
#                               [--configs LIST] [--no-debian] [OUTDIR]
#   --quick       test-sized kernels only, 1 run (checks the pipeline)
#   --runs N      runs per configuration (default 3)
#   --only REGEX  workloads whose name matches (grep -E)
#   --configs L   comma-separated configurations (default: all)
#   --no-debian   skip the Debian source programs
# Environment: PARLOT_BUILD_DIR (default build).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

quick=0
runs=3
only=""
configs_arg=""
debian=1
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; runs=1 ;;
    --runs) runs="$2"; shift ;;
    --only) only="$2"; shift ;;
    --configs) configs_arg="$2"; shift ;;
    --no-debian) debian=0 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "whole_program: unknown option $1" >&2; exit 2 ;;
    *) out="$1" ;;
  esac
  shift
done
out="${out:-bench-results}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

all_configs=(uninstrumented noop parlot-discard parlot-nc parlot-codec1 parlot uftrace lttng callgrind)
if [ -n "$configs_arg" ]; then
  IFS=, read -r -a configs <<<"$configs_arg"
  # The baselines are always needed for the ratios.
  for base in noop uninstrumented; do
    [[ " ${configs[*]} " == *" $base "* ]] || configs=("$base" "${configs[@]}")
  done
else
  configs=("${all_configs[@]}")
fi

log() { echo "whole_program: $*" >&2; }

# ---- Dependencies and builds ------------------------------------------------
"$root/scripts/install-bench-deps.sh"
build="${PARLOT_BUILD_DIR:-build}"
PARLOT_BUILD_DIR="$build" "$root/scripts/build.sh" >/dev/null
rt="$root/$build/runtime/libparlotrt.so"
read_tool="$root/$build/reader/parlot-read"
ex="$root/$build/examples"
lttng_lib=/usr/lib/x86_64-linux-gnu/liblttng-ust-cyg-profile-fast.so.1
ranks=2
mpirun_cmd=(mpirun --allow-run-as-root --oversubscribe -np "$ranks")

# ---- Workloads ---------------------------------------------------------------
# name|kind|cores|instrumented binary|plain binary|arguments|stdin file or -
# Sized for 0.3-1 s uninstrumented: the slowest tools run 20-100x longer.
workloads=()
add_kernel() {  # name large-args quick-args
  local a="$2"
  [ "$quick" = 1 ] && a="$3"
  [ -x "$ex/$1" ] && workloads+=("$1|serial|1|$ex/$1|$ex/$1_plain|$a|-")
  [ -x "$ex/$1_mpi" ] && workloads+=("$1_mpi|mpi|$ranks|$ex/$1_mpi|$ex/$1_mpi_plain|$a|-")
  return 0
}
add_kernel cg "30000 60" ""
add_kernel ep "26" ""
add_kernel is "23 19 10" ""
add_kernel mg "64 300" ""

if [ "$debian" = 1 ] && [ "$quick" = 0 ]; then
  debian_dir="$out/debian"
  "$root/bench/debian_programs/build.sh" "$debian_dir" >&2
  # name|instrumented|plain|argument...|stdin file or - (see that script)
  while IFS='|' read -r -a f; do
    [ ${#f[@]} -ge 4 ] || continue
    [[ "${f[0]}" == \#* ]] && continue
    n=${#f[@]}
    a="${f[*]:3:n-4}"
    workloads+=("${f[0]}|serial|1|${f[1]}|${f[2]}|$a|${f[n - 1]}")
  done <"$debian_dir/workloads.txt"
fi

if [ -n "$only" ]; then
  kept=()
  for w in "${workloads[@]}"; do
    [[ "${w%%|*}" =~ $only ]] && kept+=("$w")
  done
  workloads=("${kept[@]}")
fi
[ ${#workloads[@]} -gt 0 ] || { log "no workloads"; exit 1; }

# ---- Running one configuration -----------------------------------------------
work="$(mktemp -d)"
sessiond_pid=""
cleanup() {
  [ -n "$sessiond_pid" ] && kill "$sessiond_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

start_sessiond() {
  [ -n "$sessiond_pid" ] && return 0
  if pgrep -x lttng-sessiond >/dev/null; then
    return 0  # someone else's daemon serves us
  fi
  lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1 || { log "lttng-sessiond does not start"; return 1; }
  sleep 1
  sessiond_pid=$(pgrep -x lttng-sessiond | head -1)
}

now() { date +%s.%N; }

# run_once CONFIG: runs the current workload under CONFIG once; sets
# elapsed (s), status (ok | exit N | output differs), lost (events) and
# leaves the trace in $tdir.
run_once() {
  local config=$1
  local bin=$instr
  case $config in uninstrumented|callgrind) bin=$plain ;; esac
  local envs=() wrapper=()
  case $config in
    parlot) envs=(LD_PRELOAD="$rt" PARLOT_DIR="$tdir/parlot" PARLOT_QUIET=1) ;;
    parlot-nc) envs=(LD_PRELOAD="$rt" PARLOT_DIR="$tdir/parlot" PARLOT_QUIET=1 PARLOT_COMPRESS=0) ;;
    parlot-discard) envs=(LD_PRELOAD="$rt" PARLOT_DIR="$tdir/parlot" PARLOT_QUIET=1 PARLOT_DISCARD=1) ;;
    parlot-codec1) envs=(LD_PRELOAD="$rt" PARLOT_DIR="$tdir/parlot" PARLOT_QUIET=1 PARLOT_CODEC=1) ;;
    lttng) envs=(LD_PRELOAD="$lttng_lib") ;;
    uftrace)
      if [ "$kind" = mpi ]; then
        wrapper=(sh -c 'exec uftrace record --no-libcall -d "$0.$OMPI_COMM_WORLD_RANK" "$@"' "$tdir/uftrace")
      else
        wrapper=(uftrace record --no-libcall -d "$tdir/uftrace")
      fi ;;
    callgrind) wrapper=(valgrind --tool=callgrind -q "--callgrind-out-file=$tdir/callgrind.out.%p") ;;
  esac
  local cmd=()
  if [ "$kind" = mpi ]; then
    cmd=("${mpirun_cmd[@]}")
    for e in ${envs[@]+"${envs[@]}"}; do cmd+=(-x "$e"); done
  else
    cmd=(env ${envs[@]+"${envs[@]}"})
  fi
  # shellcheck disable=SC2206
  local argv=($args)
  cmd+=(${wrapper[@]+"${wrapper[@]}"} "$bin" ${argv[@]+"${argv[@]}"})
  local in=/dev/null
  [ "$input" != "-" ] && in=$input
  rm -rf "$tdir"
  mkdir -p "$tdir"
  local session="parlot-bench-$$"
  if [ "$config" = lttng ]; then
    lttng create "$session" --output="$tdir/lttng" >/dev/null
    lttng enable-event -u -s "$session" 'lttng_ust_cyg_profile_fast:*' >/dev/null
    lttng start "$session" >/dev/null
  fi
  local t0 t1 rc=0
  t0=$(now)
  "${cmd[@]}" <"$in" >"$work/stdout" 2>"$work/stderr" || rc=$?
  t1=$(now)
  lost=0
  if [ "$config" = lttng ]; then
    local stop
    stop=$(lttng stop "$session" 2>&1 || true)
    lost=$(echo "$stop" | awk '/discarded/ { for (i = 1; i <= NF; ++i) if ($i ~ /^[0-9]+$/) s += $i } END { print s + 0 }')
    lttng destroy "$session" >/dev/null 2>&1 || true
  fi
  elapsed=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
  status=ok
  if [ "$rc" != 0 ]; then
    status="exit $rc"
    log "$name/$config: exit $rc: $(head -c 300 "$work/stderr")"
  elif [ -f "$work/expected" ] && ! cmp -s "$work/stdout" "$work/expected"; then
    status="output differs"
    log "$name/$config: output differs from the uninstrumented run"
  fi
}

# shellcheck source=bench/stats.sh
. "bench/stats.sh"

csv="$out/results.csv"
echo "workload,kind,cores,config,runs,median_s,min_s,max_s,slowdown_vs_uninstrumented,slowdown_vs_noop,trace_bytes,kB_per_s_per_core,events,raw_bytes,compression_ratio,lost_events,status" >"$csv"

for w in "${workloads[@]}"; do
  IFS='|' read -r name kind cores instr plain args input <<<"$w"
  log "$name ($kind, $cores cores): $args"
  tdir="$work/trace"
  rm -f "$work/expected"
  declare -A times=() bytes=() lost_of=() status_of=()
  events=""; raw=""
  for config in "${configs[@]}"; do times[$config]=""; status_of[$config]=ok; lost_of[$config]=0; done
  for run in $(seq "$runs"); do
    for config in "${configs[@]}"; do
      case $config in
        uftrace) command -v uftrace >/dev/null || { status_of[$config]="not installed"; continue; } ;;
        lttng) { [ -e "$lttng_lib" ] && start_sessiond; } || { status_of[$config]="not available"; continue; } ;;
        callgrind) command -v valgrind >/dev/null || { status_of[$config]="not installed"; continue; } ;;
      esac
      run_once "$config"
      [ "$config" = uninstrumented ] && [ ! -f "$work/expected" ] && cp "$work/stdout" "$work/expected"
      [ "$status" = ok ] || status_of[$config]=$status
      times[$config]+="$elapsed "
      lost_of[$config]=$lost
      bytes[$config]=$(du -sb "$tdir" | cut -f1)
      if [ "$config" = parlot ] && [ "$run" = "$runs" ]; then
        # Events and raw bytes of the whole trace: sum of every process.
        read -r events raw < <("$read_tool" info "$tdir/parlot" | awk '/^total:/ { e += $4; r += $6 } END { print e + 0, r + 0 }')
      fi
      rm -rf "$tdir"
    done
  done
  base_u=$(printf '%s\n' ${times[uninstrumented]} | median)
  base_n=$(printf '%s\n' ${times[noop]} | median)
  for config in "${configs[@]}"; do
    t=$(printf '%s\n' ${times[$config]} | median)
    if [ -z "$t" ]; then
      echo "$name,$kind,$cores,$config,0,,,,,,,,,,,,${status_of[$config]}" >>"$csv"
      continue
    fi
    mn=$(printf '%s\n' ${times[$config]} | sort -g | head -1)
    mx=$(printf '%s\n' ${times[$config]} | sort -g | tail -1)
    b=${bytes[$config]:-0}
    case $config in uninstrumented|noop) b="" ;; esac
    awk -v n="$name" -v k="$kind" -v c="$cores" -v cfg="$config" -v r="$runs" -v t="$t" -v mn="$mn" -v mx="$mx" \
        -v bu="$base_u" -v bn="$base_n" -v b="$b" -v e="$events" -v raw="$raw" -v l="${lost_of[$config]}" \
        -v s="${status_of[$config]}" 'BEGIN {
      su = bu > 0 ? sprintf("%.3f", t / bu) : ""
      sn = bn > 0 ? sprintf("%.3f", t / bn) : ""
      bw = (b != "" && t > 0) ? sprintf("%.2f", b / 1000 / t / c) : ""
      ratio = (b != "" && b > 0 && (cfg ~ /^parlot/) && cfg != "parlot-discard") ? sprintf("%.1f", raw / b) : ""
      ev = (b != "" && cfg != "callgrind") ? e : ""
      rw = (cfg ~ /^parlot/) ? raw : ""
      printf "%s,%s,%s,%s,%s,%.6f,%.6f,%.6f,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", n, k, c, cfg, r, t, mn, mx, su, sn, b, bw, ev, rw, ratio, (cfg == "lttng" ? l : ""), s
    }' >>"$csv"
  done
  unset times bytes lost_of status_of
done

log "results: $csv"
awk -F, -f "$root/bench/whole_program_report.awk" -v outdir="$out" -v runs="$runs" "$csv" >"$out/results.md"
if command -v gnuplot >/dev/null; then
  (cd "$out" && gnuplot "$root/bench/whole_program_plots.gp") || log "gnuplot failed"
fi
log "report: $out/results.md; plots: $out/*.png"
cat "$out/results.md"

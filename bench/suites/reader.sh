#!/usr/bin/env bash
# Suite reader: parlot-read's speed and memory (hyperfine, wall time; peak
# RSS from one run under /usr/bin/time).
#  1. One large trace (cg 30000 60, about 10^8 events; --quick: cg 7000 20):
#     stats (the baseline: decoding and counting), classes, report, and
#     export in every format parlot-read was built with, to a pipe (otf2 to
#     a directory). M events/s = events / wall s; output bytes per event.
#  2. A job of many processes (fork_tree 1024 2000 with two outliers: 1025
#     processes; --quick fork_tree 64 200): stats and classes on one thread
#     (-j 1, the baseline), on every core (-j 0) and under `mpirun -np 2`
#     (each rank opens its share of the processes).
# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
set -euo pipefail
need "$RT" "$READER" "$EXAMPLES/cg" "$EXAMPLES/fork_tree"
tmp="$OUT/tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

# Peak RSS in KiB of one run of each named command of a group, into the
# group's meta file beside its events. Arguments: group events NAME CMD...
meta() {
  local group=$1 events=$2 rss="" out="" name cmd bytes
  shift 2
  while [ $# -gt 0 ]; do
    name=$1 cmd=$2
    shift 2
    rm -rf "$tmp/otf2"
    # shellcheck disable=SC2086  # the command's words
    bytes=$(/usr/bin/time -f %M -o "$tmp/rss" $cmd 2>/dev/null | wc -c) || note "$group/$name failed"
    [ -d "$tmp/otf2" ] && bytes=$(bytes_of "$tmp/otf2")
    rss+="${rss:+, }\"$name\": $(tail -1 "$tmp/rss")"
    [[ $name == export-* ]] && out+="${out:+, }\"$name\": $bytes"
  done
  echo "{\"events\": $events, \"rss_kib\": {$rss}, \"out_bytes\": {$out}, \"rate\": true}" >"$OUT/$group.meta.json"
}

# 1. A large trace.
cg_args=$([ "$QUICK" = 1 ] && echo "7000 20" || echo "30000 60")
trace="$tmp/cg"
formats=$("$READER" export --help | sed -n 's/.*{\(.*\)}.*/\1/p' | head -1 | tr ',' ' ')
cmds=(stats "$READER stats $trace" classes "$READER classes $trace" report "$READER report $trace")
for f in $formats; do
  case $f in
    otf2) cmds+=("export-$f" "$READER export -f $f $trace -o $tmp/otf2") ;;
    chrome) cmds+=("export-$f" "$READER export -f $f --chrome-limit 18446744073709551615 $trace -o -") ;;
    *) cmds+=("export-$f" "$READER export -f $f $trace -o -") ;;
  esac
done
hfargs=()
for ((i = 0; i < ${#cmds[@]}; i += 2)); do hfargs+=(-n "${cmds[i]}" "${cmds[i + 1]}"); done
if [ "$DRY_RUN" = 0 ]; then
  # shellcheck disable=SC2086
  env PARLOT_QUIET=1 PARLOT_DIR="$trace" LD_PRELOAD="$RT" "$EXAMPLES/cg" $cg_args >/dev/null
  meta "cg-trace" "$(events_of "$trace")" "${cmds[@]}"
fi
# The JSON exports take tens of seconds each at full size: 3 runs.
BENCH_RUNS=${BENCH_RUNS:-3} hf cg-trace --prepare "rm -rf $tmp/otf2" "${hfargs[@]}"

# 2. Many processes.
ft_args=$([ "$QUICK" = 1 ] && echo "64 200 --outlier 3" || echo "1024 2000 --outlier 3 --outlier 700")
job="$tmp/job"
mpi=()
command -v mpirun >/dev/null && mpi=("${MPIRUN[@]}" -np 2)
cmds=()
for v in stats classes; do
  cmds+=("$v" "$READER $v -j 1 $job" "$v-j0" "$READER $v -j 0 $job")
  [ ${#mpi[@]} -gt 0 ] && cmds+=("$v-mpirun2" "${mpi[*]} $READER $v -j 1 $job")
done
hfargs=()
for ((i = 0; i < ${#cmds[@]}; i += 2)); do hfargs+=(-n "${cmds[i]}" "${cmds[i + 1]}"); done
if [ "$DRY_RUN" = 0 ]; then
  # shellcheck disable=SC2086
  env PARLOT_QUIET=1 PARLOT_DIR="$job" LD_PRELOAD="$RT" "$EXAMPLES/fork_tree" $ft_args >/dev/null
  meta "fork_tree" "$(events_of "$job")" "${cmds[@]}"
fi
hf fork_tree "${hfargs[@]}"
echo "### One large trace, and a job of many processes (wall time, hyperfine)"
echo
echo "cg $cg_args and fork_tree $ft_args: $(ls "$job" 2>/dev/null | wc -l) processes."
echo
table hyperfine --baseline stats "$OUT/cg-trace.json" "$OUT/fork_tree.json"

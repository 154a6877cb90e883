# shellcheck shell=bash
# Sourced by bench/run.sh and the suites in bench/suites/. Defines the paths
# of the build (BUILD, RT, MPI_WRAPPERS, READER, EXAMPLES, BENCH_BIN), the
# suite's output directory (OUT, set by run.sh per suite), QUICK (1 with
# --quick), DRY_RUN (1 with --dry-run: check, run nothing) and helpers:
#
#   need FILE...                  fail the suite unless every FILE exists
#   hf NAME [hyperfine args...]   hyperfine into $OUT/NAME.json (runs, warmup
#                                 and quiet output set here; -n names commands)
#   gb NAME COMMAND...            a Google Benchmark binary (COMMAND may start
#                                 with env VAR=value...) into $OUT/NAME.json
#                                 with repetitions and aggregates only
#   table SUBCOMMAND [args...]    bench/lib/table.py
#   trace_env DIR                 prints the env settings of a traced run
#                                 into DIR (quiet, runtime preloaded)
#   events_of DIR                 the events of a trace (parlot-read info)
#   bytes_of DIR                  bytes on disk under DIR
#   note TEXT                     a line on stderr, prefixed with the suite
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="$(cd "$ROOT" && realpath -m "${PARLOT_BUILD_DIR:-build}")"
RT="$BUILD/runtime/libparlotrt.so"
MPI_WRAPPERS="$BUILD/runtime/mpi/libparlotmpi.so"
READER="$BUILD/reader/parlot-read"
EXAMPLES="$BUILD/examples"
BENCH_BIN="$BUILD/bench"
QUICK="${QUICK:-0}"
DRY_RUN="${DRY_RUN:-0}"
MPIRUN=(mpirun --allow-run-as-root --oversubscribe)

note() { echo "[${SUITE:-bench}] $*" >&2; }

need() {
  local f missing=0
  for f in "$@"; do
    if [ ! -e "$f" ]; then
      note "missing $f (build it: cmake --build $BUILD -j2)"
      missing=1
    fi
  done
  return "$missing"
}

# Runs per hyperfine command: a few in --quick, more otherwise (BENCH_RUNS
# overrides both).
hf_runs() { echo "${BENCH_RUNS:-$([ "$QUICK" = 1 ] && echo 2 || echo 5)}"; }

hf() {
  local name=$1
  shift
  if [ "$DRY_RUN" = 1 ]; then return 0; fi
  note "hyperfine $name"
  hyperfine -N --style none --runs "$(hf_runs)" --warmup "$([ "$QUICK" = 1 ] && echo 0 || echo 1)" \
    --export-json "$OUT/$name.json" "$@" >/dev/null
}

gb() {
  local name=$1
  shift
  if [ "$DRY_RUN" = 1 ]; then return 0; fi
  note "google benchmark $name"
  local reps=${BENCH_REPS:-$([ "$QUICK" = 1 ] && echo 3 || echo 10)}
  "$@" --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true \
    --benchmark_format=json --benchmark_out_format=json --benchmark_out="$OUT/$name.json" >/dev/null
}

table() {
  if [ "$DRY_RUN" = 1 ]; then return 0; fi
  /usr/bin/python3 "$ROOT/bench/lib/table.py" "$@"
}

trace_env() { echo "PARLOT_QUIET=1 PARLOT_DIR=$1 LD_PRELOAD=$RT"; }

events_of() {
  "$READER" info "$1" | sed -n 's/^total: .* threads\{0,1\}, \([0-9]*\) events.*/\1/p'
}

bytes_of() { du -sb "$1" | awk '{print $1}'; }

# Repetitions of a measurement a suite takes itself (samples tables).
reps() { echo "${BENCH_RUNS:-$([ "$QUICK" = 1 ] && echo 3 || echo 7)}"; }

# sample GROUP PER NAME VALUE: one measurement into $OUT/samples.tsv.
sample() { printf '%s\t%s\t%s\t%s\n' "$@" >>"$OUT/samples.tsv"; }

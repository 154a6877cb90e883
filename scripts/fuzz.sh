#!/usr/bin/env bash
# Runs the libFuzzer targets of fuzz/ for a fixed time each and prints a
# summary.
#
#   scripts/fuzz.sh [seconds-per-target]          (default 60)
#
# 1. Builds the project normally (scripts/build.sh, build dir build/) and
#    traces a few examples under libparlotrt.so, for seed corpora of real
#    traces (LZ and raw codec, default and 4 KiB buffers, cut-short copies).
# 2. Configures build-fuzz/ with clang (-DPARLOT_BUILD_FUZZERS=ON, no
#    examples, tests or benchmarks) and builds only the fuzz targets.
# 3. Runs every target with -max_total_time=<seconds>. New inputs accumulate
#    in build-fuzz/corpus/<target> across runs (delete it to start over);
#    crashing inputs go to build-fuzz/artifacts/<target>/, full logs to
#    build-fuzz/logs/.
#
# Exit status: 0 when no target found anything, 1 when one crashed, leaked,
# timed out or ran out of memory, 2 when the build or the seed traces failed.
#
# Environment: PARLOT_BUILD_DIR (default build), PARLOT_FUZZ_BUILD_DIR
# (default build-fuzz), PARLOT_FUZZ_JOBS (targets run at once, default 1),
# PARLOT_FUZZ_TARGETS (space-separated subset, e.g. "decoder thread_file").
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

seconds="${1:-60}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [seconds-per-target]" >&2
  exit 2
fi
build="${PARLOT_BUILD_DIR:-build}"
fuzz_build="${PARLOT_FUZZ_BUILD_DIR:-build-fuzz}"
jobs="${PARLOT_FUZZ_JOBS:-1}"
read -r -a targets <<<"${PARLOT_FUZZ_TARGETS:-decoder thread_file function_table process_metadata load_map analyses classes stacks}"

t_start=$(date +%s)
logs="$fuzz_build/logs"
mkdir -p "$logs"

die() {
  echo "fuzz.sh: $1" >&2
  [ -n "${2:-}" ] && [ -f "$2" ] && tail -n 30 "$2" >&2
  exit 2
}

# ---- 1. normal build and real traces -----------------------------------------
# Seeding needs only the runtime and the examples: when the full build fails
# elsewhere (a test that does not compile), build just those and go on.
seed_programs=(parlotrt cg quicksort_threads cpp_features many_functions user_api)
if [ -x scripts/build.sh ]; then
  PARLOT_BUILD_DIR="$build" scripts/build.sh >"$logs/build.log" 2>&1 || build_failed=1
else
  { cmake -S . -B "$build" -G Ninja && cmake --build "$build"; } >"$logs/build.log" 2>&1 ||
    build_failed=1
fi
if [ -n "${build_failed:-}" ]; then
  echo "fuzz.sh: warning: the full build of $build failed (log: $logs/build.log);" \
    "building only ${seed_programs[*]}" >&2
  cmake --build "$build" --target "${seed_programs[@]}" >"$logs/build-seed-programs.log" 2>&1 ||
    die "building the seed programs failed (log: $logs/build-seed-programs.log)" \
      "$logs/build-seed-programs.log"
fi
runtime="$root/$build/runtime/libparlotrt.so"
examples="$root/$build/examples"
[ -f "$runtime" ] || die "no $runtime after the build"

traces="$fuzz_build/traces"
rm -rf "$traces"
mkdir -p "$traces"
: >"$logs/traces.log"
# trace NAME [VAR=VALUE...] PROGRAM [ARGS...]: runs PROGRAM under the runtime
# with PARLOT_DIR=$traces/NAME.
trace() {
  local name=$1
  shift
  env PARLOT_DIR="$root/$traces/$name" PARLOT_QUIET=1 LD_PRELOAD="$runtime" "$@" \
    >>"$logs/traces.log" 2>&1 || die "traced run '$name' failed (log: $logs/traces.log)" "$logs/traces.log"
}
trace cg_lz "$examples/cg" 30 2
trace quicksort_lz "$examples/quicksort_threads" 500 2
trace quicksort_raw PARLOT_COMPRESS=0 "$examples/quicksort_threads" 500 2
trace quicksort_lz_4k PARLOT_BUFFER_KB=4 "$examples/quicksort_threads" 20000 2
trace quicksort_raw_4k PARLOT_COMPRESS=0 PARLOT_BUFFER_KB=4 "$examples/quicksort_threads" 3000 2
trace cpp_features_lz_4k PARLOT_BUFFER_KB=4 "$examples/cpp_features"
# User marks (side records of kind 2) next to the events.
trace user_api_marks "$examples/user_api" 100
# IDs above 0x7fff (two-word literals); its thread file is cut to 16 KiB below.
if [ -x "$examples/many_functions" ]; then
  trace many_functions_4k PARLOT_BUFFER_KB=4 "$examples/many_functions"
fi

# ---- 2. fuzz build ------------------------------------------------------------
# A cache made with another compiler cannot be switched to clang in place.
if [ -f "$fuzz_build/CMakeCache.txt" ] &&
  ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' "$fuzz_build/CMakeCache.txt"; then
  rm -rf "$fuzz_build/CMakeCache.txt" "$fuzz_build/CMakeFiles"
fi
CC=clang CXX=clang++ cmake -S . -B "$fuzz_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPARLOT_BUILD_FUZZERS=ON -DPARLOT_BUILD_EXAMPLES=OFF -DPARLOT_BUILD_TESTS=OFF \
  -DPARLOT_BUILD_BENCH=OFF >"$logs/configure-fuzz.log" 2>&1 ||
  die "configuring $fuzz_build with clang failed (log: $logs/configure-fuzz.log)" "$logs/configure-fuzz.log"
# Only the fuzz targets: the rest of the project need not build with clang.
cmake --build "$fuzz_build" --target parlot_fuzzers >"$logs/build-fuzz.log" 2>&1 ||
  die "building the fuzz targets failed (log: $logs/build-fuzz.log)" "$logs/build-fuzz.log"
bin="$fuzz_build/fuzz"

# ---- seeds: committed hand-made ones + the real traces ------------------------
seeds="$fuzz_build/seeds"
rm -rf "$seeds"
for t in "${targets[@]}"; do
  mkdir -p "$seeds/$t" "$fuzz_build/corpus/$t" "$fuzz_build/artifacts/$t"
  if [ -d "fuzz/seeds/$t" ]; then cp fuzz/seeds/"$t"/* "$seeds/$t/" 2>/dev/null || true; fi
done
max_seed=$((64 * 1024))
add_seed() { # add_seed TARGET FILE NAME: copies FILE if that target runs
  [ -d "$seeds/$1" ] && cp "$2" "$seeds/$1/$3"
  return 0
}
for dir in "$traces"/*/pid-*; do
  run=$(basename "$(dirname "$dir")")
  for f in "$dir"/*; do
    name="$run-$(basename "$f")"
    size=$(stat -c %s "$f")
    case "$(basename "$f")" in
      process) add_seed process_metadata "$f" "$name" ;;
      loadmap) add_seed load_map "$f" "$name" ;;
      functions) [ "$size" -le "$max_seed" ] && add_seed function_table "$f" "$name" ;;
      thread-*.trace)
        if [ "$size" -gt "$max_seed" ]; then
          # Keep the first 16 KiB: a file cut short inside a block.
          head -c 16384 "$f" >"$traces/$name.head"
          f="$traces/$name.head"
          name="$name.head"
          size=16384
        else
          # Cut-short copies: no trailer, trailer cut, half the file.
          for cut in 96 40 $((size / 2)); do
            if [ "$size" -gt $((64 + cut)) ] && [ -d "$seeds/thread_file" ]; then
              head -c $((size - cut)) "$f" >"$seeds/thread_file/$name.cut$cut"
            fi
          done
        fi
        add_seed thread_file "$f" "$name"
        if [ -d "$seeds/decoder" ]; then
          "$bin/parlot-fuzz-seed" decoder-input "$f" "$seeds/decoder/$name" 2>>"$logs/traces.log" ||
            die "parlot-fuzz-seed failed on $f" "$logs/traces.log"
        fi
        ;;
    esac
  done
done
t_fuzz=$(date +%s)

# ---- 3. fuzzing -----------------------------------------------------------------
rm -f "$logs"/fuzz_*.log "$logs"/fuzz_*.rc
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
run_target() {
  local t=$1 dict=()
  [ -f "fuzz/dicts/$t.dict" ] && dict=(-dict="fuzz/dicts/$t.dict")
  local rc=0
  "$bin/fuzz_$t" "$fuzz_build/corpus/$t" "$seeds/$t" "${dict[@]}" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=1048576 \
    -print_final_stats=1 -artifact_prefix="$fuzz_build/artifacts/$t/" \
    >"$logs/fuzz_$t.log" 2>&1 || rc=$?
  echo "$rc" >"$logs/fuzz_$t.rc"
}
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  run_target "$t" &
done
wait

# ---- summary --------------------------------------------------------------------
status=0
printf '%-24s %-8s %12s %9s %6s %7s %6s\n' target result execs exec/s cov ft corpus
for t in "${targets[@]}"; do
  log="$logs/fuzz_$t.log"
  rc=$(cat "$logs/fuzz_$t.rc")
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  last=$(grep -E '^#[0-9]+[[:space:]]' "$log" | tail -n 1 || true)
  [ -z "$execs" ] && execs=$(sed -nE 's/^#([0-9]+).*/\1/p' <<<"$last")
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
  corp=$(sed -nE 's/.* corp: ([0-9]+)\/.*/\1/p' <<<"$last")
  result=ok
  if [ "$rc" != 0 ]; then
    status=1
    result=FOUND
  fi
  printf '%-24s %-8s %12s %9s %6s %7s %6s\n' "fuzz_$t" "$result" "${execs:--}" "${rate:--}" \
    "${cov:--}" "${ft:--}" "${corp:--}"
  if [ "$rc" != 0 ]; then
    what=$(grep -m1 -E '^(==[0-9]+==ERROR|ERROR: libFuzzer|SUMMARY|fuzz invariant violated)' "$log" ||
      echo "exit status $rc")
    unit=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    echo "    $what"
    [ -n "$unit" ] && echo "    reproduce: $bin/fuzz_$t $unit"
    echo "    log: $log"
  fi
done
t_end=$(date +%s)
echo "wall time: $((t_end - t_start)) s (build and seeds $((t_fuzz - t_start)) s, fuzzing $((t_end - t_fuzz)) s)"
exit "$status"

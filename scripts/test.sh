#!/usr/bin/env bash
# Builds everything with warnings as errors and runs the whole test suite
# (ctest), after installing whatever Debian packages are missing. Then the
# unit suites again under ASan+UBSan, the runtime's concurrent tests under
# TSan, and every libFuzzer target for 30 s (two at a time).
# PARLOT_SKIP_SANITIZERS=1 skips the sanitizer passes, PARLOT_SKIP_FUZZ=1
# the fuzzing.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
build="${PARLOT_BUILD_DIR:-build}"
scripts/build.sh
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"

if [ "${PARLOT_SKIP_SANITIZERS:-0}" != 1 ]; then
  # Instrumented examples and end-to-end runs are not sanitized (the runtime
  # is preloaded into programs built without sanitizers).
  san_opts=(-DPARLOT_BUILD_EXAMPLES=OFF -DPARLOT_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug)
  echo "== ASan+UBSan"
  PARLOT_BUILD_DIR="$build-asan" scripts/build.sh "${san_opts[@]}" -DPARLOT_SANITIZE=address,undefined
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
    ctest --test-dir "$build-asan" --output-on-failure -j "$(nproc)"
  echo "== TSan (runtime)"
  PARLOT_BUILD_DIR="$build-tsan" scripts/build.sh "${san_opts[@]}" -DPARLOT_SANITIZE=thread
  TSAN_OPTIONS=halt_on_error=1 ctest --test-dir "$build-tsan" --output-on-failure -j "$(nproc)" -R '^(FunctionIds|ShadowStack|Runtime)'
fi

if [ "${PARLOT_SKIP_FUZZ:-0}" != 1 ]; then
  echo "== libFuzzer (30 s per target)"
  PARLOT_FUZZ_JOBS=2 scripts/fuzz.sh 30
fi

#!/usr/bin/env bash
# Configures and builds Parlot into build/ (or $PARLOT_BUILD_DIR) with
# warnings as errors: everything (tests, benchmarks, examples), unless the
# arguments turn parts off. Extra arguments go to cmake's configure step;
# PARLOT_BUILD_TARGETS="a b" builds only those targets (scripts/demo.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${PARLOT_BUILD_DIR:-build}"
# The parts are named on every configure, so a build directory configured
# for the demo (tests and benchmarks off) builds everything again here.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPARLOT_WERROR=ON \
  -DPARLOT_BUILD_TESTS=ON -DPARLOT_BUILD_BENCH=ON -DPARLOT_BUILD_EXAMPLES=ON "$@" >/dev/null
targets=()
for t in ${PARLOT_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j "$(nproc)" "${targets[@]}"

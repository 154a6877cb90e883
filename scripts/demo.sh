#!/usr/bin/env bash
# The main job: install what is missing, build the runtime, the reader and
# the one example it runs (not the tests: scripts/test.sh builds everything),
# trace the bundled multithreaded quicksort example under libparlotrt.so,
# and print its summary and its named call trace.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --minimal
# Its own build directory and only the three targets it runs, unoptimised
# and without debug information: 0.6x the compile time of the same targets
# in the tests' RelWithDebInfo build (the runtime keeps its own -O2; the
# reader is slower than scripts/build.sh's, which is for real traces).
build="${PARLOT_DEMO_BUILD_DIR:-build-demo}"
PARLOT_BUILD_DIR="$build" PARLOT_BUILD_TARGETS="parlotrt parlot-read quicksort_threads" \
  scripts/build.sh -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O0 -DNDEBUG" \
  -DCMAKE_CXX_FLAGS_RELEASE="-O0 -DNDEBUG" -DPARLOT_BUILD_TESTS=OFF -DPARLOT_BUILD_BENCH=OFF
out="$(mktemp -d)/parlot.data"
echo "== tracing: LD_PRELOAD=$build/runtime/libparlotrt.so $build/examples/quicksort_threads 64 2"
PARLOT_DIR="$out" LD_PRELOAD="$PWD/$build/runtime/libparlotrt.so" "$build/examples/quicksort_threads" 64 2
echo "== parlot-read info $out"
"$build/reader/parlot-read" info "$out"
echo "== parlot-read trace $out"
"$build/reader/parlot-read" trace "$out"

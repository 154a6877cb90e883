#!/usr/bin/env bash
# The main job: install what is missing, build, trace the bundled
# multithreaded quicksort example under libparlotrt.so, and print its
# summary and its named call trace.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build="${PARLOT_BUILD_DIR:-build}"
out="$(mktemp -d)/parlot.data"
echo "== tracing: LD_PRELOAD=$build/runtime/libparlotrt.so $build/examples/quicksort_threads 64 2"
PARLOT_DIR="$out" LD_PRELOAD="$PWD/$build/runtime/libparlotrt.so" "$build/examples/quicksort_threads" 64 2
echo "== parlot-read info $out"
"$build/reader/parlot-read" info "$out"
echo "== parlot-read trace $out"
"$build/reader/parlot-read" trace "$out"

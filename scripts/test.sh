#!/usr/bin/env bash
# Builds everything with warnings as errors and runs the whole test suite
# (ctest), after installing whatever Debian packages are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build="${PARLOT_BUILD_DIR:-build}"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"

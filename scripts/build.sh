#!/usr/bin/env bash
# Configures and builds Parlot into build/ (or $PARLOT_BUILD_DIR) with
# warnings as errors. Extra arguments go to cmake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${PARLOT_BUILD_DIR:-build}"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPARLOT_WERROR=ON "$@" >/dev/null
cmake --build "$build" -j "$(nproc)"

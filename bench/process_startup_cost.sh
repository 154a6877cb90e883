#!/usr/bin/env bash
# Fixed cost of tracing a process (issue 12): what every process (every rank
# of a job, every short-lived tool) pays once, beside its cost per event.
# Runs `examples/mg 8 1` (about 3,300 events: start, a few calls, end) RUNS
# times in a row without the runtime (glibc's no-op hooks, "no-op") and with
# LD_PRELOAD of it ("parlot", a fresh output directory each run), and
# optionally of a second runtime ("base"), the configurations interleaved
# over ROUNDS rounds. Prints, per configuration, the wall ms per process
# (median of the rounds, and the range) and the ms added over no-op.
# Usage: bench/process_startup_cost.sh [BUILD_DIR]   (default build)
# Environment: RUNS (20), ROUNDS (5), PARLOT_RUNTIME (default the build's
#   libparlotrt.so), BASE_RUNTIME (optional: e.g. a copy of an older build).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
[ -x "$build/examples/mg" ] || PARLOT_BUILD_DIR="$build" scripts/build.sh >/dev/null
program="$PWD/$build/examples/mg"
runtime="${PARLOT_RUNTIME:-$PWD/$build/runtime/libparlotrt.so}"
runs="${RUNS:-20}"
rounds="${ROUNDS:-5}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

configs=(no-op parlot)
[ -n "${BASE_RUNTIME:-}" ] && configs+=(base)

# One round of a configuration: wall microseconds per process.
round_us() {
  local config=$1 rt="" start end
  case $config in
    parlot) rt=$runtime ;;
    base) rt=$BASE_RUNTIME ;;
  esac
  start=$(date +%s%N)
  for _ in $(seq "$runs"); do
    rm -rf "$work/trace"
    if [ -n "$rt" ]; then
      PARLOT_DIR="$work/trace" PARLOT_QUIET=1 LD_PRELOAD="$rt" "$program" 8 1 >/dev/null
    else
      "$program" 8 1 >/dev/null
    fi
  done
  end=$(date +%s%N)
  echo $(((end - start) / runs / 1000))
}

for _ in $(seq "$rounds"); do
  for c in "${configs[@]}"; do round_us "$c" >>"$work/$c.us"; done
done

# shellcheck source=bench/stats.sh
. "bench/stats.sh"
ms() { awk -v us="$1" 'BEGIN { printf "%.2f", us / 1000 }'; }
floor=$(median <"$work/no-op.us")
echo "### Fixed cost per process: examples/mg 8 1, $runs runs x $rounds rounds (wall ms per process)"
echo
echo "| configuration | median | range | added over no-op |"
echo "|---|---|---|---|"
for c in "${configs[@]}"; do
  med=$(median <"$work/$c.us")
  added=-
  [ "$c" != no-op ] && added=$(ms $((med - floor)))
  echo "| $c | $(ms "$med") | $(ms "$(sort -g "$work/$c.us" | head -1)")-$(ms "$(sort -g "$work/$c.us" | tail -1)") | $added |"
done

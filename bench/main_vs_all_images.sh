#!/usr/bin/env bash
# The paper's ParLoT(M) against ParLoT(A) (§4.1, Tables 1-3): the kernels
# traced with calls of the main image only (Parlot's default: instrumented
# code) and with the calls into every other image too (PARLOT_LIBCALLS=1:
# every call an instrumented object makes into an uninstrumented shared
# library, libc and libm included). For each: events, trace bytes,
# compression ratio, bandwidth in kB/s per core (trace bytes / run time /
# threads), run time, from `parlot-read info` of one run each.
# Usage: bench/main_vs_all_images.sh   (after scripts/build.sh)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/${PARLOT_BUILD_DIR:-build}"
rt="$build/runtime/libparlotrt.so"
read_tool="$build/reader/parlot-read"
ex="$build/examples"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
workloads=("cg|30000 60" "ep|24" "is|23 19 10" "mg|64 300" "quicksort_threads|2000000 2"
           "cpp_features|20000")
echo "| workload | image | events | trace bytes | ratio | kB/s per core | run time s |"
echo "|---|---|---|---|---|---|---|"
for w in "${workloads[@]}"; do
  name=${w%%|*}
  args=${w#*|}
  [ -x "$ex/$name" ] || continue
  for mode in M A; do
    rm -rf "$work/t"
    libcalls=0
    [ "$mode" = A ] && libcalls=1
    # shellcheck disable=SC2086
    PARLOT_LIBCALLS=$libcalls LD_PRELOAD="$rt" PARLOT_DIR="$work/t" PARLOT_QUIET=1 \
      "$ex/$name" $args >/dev/null
    "$read_tool" info "$work/t" | awk -v w="$name" -v m="$mode" '
      / duration / { for (i = 1; i <= NF; ++i) if ($i == "duration") { d = $(i + 1); u = $(i + 2) }
                     if (u == "ms") d /= 1000; if (u == "us") d /= 1e6; dur += d }
      /^total:/ { threads = $2; events = $4; bytes = $9; ratio = $13; sub(",", "", ratio) }
      END { printf "| %s | %s | %s | %s | %s | %.2f | %.2f |\n", w, m, events, bytes, ratio,
            bytes / dur / threads / 1000, dur }'
  done
done

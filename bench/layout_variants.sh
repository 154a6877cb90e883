#!/usr/bin/env bash
# Builds the runtime (libparlotrt.so) of one source tree under several code
# layouts, for bench/runtime_ab.sh (issue 12). Two builds of the same code
# can differ by 0.1-0.3 s on lua only because their hot code sits at other
# addresses (docs/BENCHMARKS.md, "Codec 2 against raw words over code
# layouts"); comparing two configurations over several layouts of each
# averages that out (Mytkowicz et al., "Producing wrong data without doing
# anything obviously wrong!", ASPLOS 2009).
#
# Usage: bench/layout_variants.sh SRC OUTDIR TAG
#   SRC     a Parlot source tree (this checkout, or a `git worktree` of an
#           older commit)
#   OUTDIR  where the runtimes go: OUTDIR/TAG-0.so .. OUTDIR/TAG-3.so
# Layout i is built with the compiler flags LAYOUT_FLAGS[i] (below) added to
# the release build's: 0 is the default build, the others move functions,
# loops and jump targets to other alignments. Prints the runtimes' paths.
set -euo pipefail
[ $# -eq 3 ] || {
  sed -n '2,/^set /p' "$0" | sed '$d'
  exit 2
}
src="$(cd "$1" && pwd)"
mkdir -p "$2"
out="$(cd "$2" && pwd)"
tag=$3
LAYOUT_FLAGS=(
  ""
  "-falign-functions=64"
  "-falign-functions=64 -falign-loops=32"
  "-falign-functions=32 -falign-jumps=16 -falign-loops=16"
)
for i in "${!LAYOUT_FLAGS[@]}"; do
  b="$out/build-$tag-$i"
  cmake -S "$src" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPARLOT_BUILD_EXAMPLES=OFF \
    -DPARLOT_BUILD_BENCH=OFF -DPARLOT_BUILD_TESTS=OFF "-DCMAKE_CXX_FLAGS=${LAYOUT_FLAGS[$i]}" >/dev/null
  cmake --build "$b" --target parlotrt -j "$(nproc)" >/dev/null
  cp "$b/runtime/libparlotrt.so" "$out/$tag-$i.so"
  echo "$out/$tag-$i.so"
done

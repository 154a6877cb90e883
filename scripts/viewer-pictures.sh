#!/usr/bin/env bash
# Makes the README's viewer pictures from the bundled quicksort_threads
# example (5 threads): docs/images/speedscope-quicksort.png (speedscope in
# headless Chromium, served from 127.0.0.1) and docs/images/dot-quicksort.png
# (Graphviz dot). Needs a build (scripts/build.sh) and scripts/install-deps.sh
# (chromium, graphviz, speedscope under build-deps/npm).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${PARLOT_BUILD_DIR:-build}"
speedscope="$PWD/build-deps/npm/node_modules/speedscope/dist/release"
work="$(mktemp -d)"
server=""
cleanup() {
  [ -z "$server" ] || kill "$server"
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p docs/images

PARLOT_DIR="$work/trace" LD_PRELOAD="$PWD/$build/runtime/libparlotrt.so" \
  "$build/examples/quicksort_threads"
"$build/reader/parlot-read" export --format dot --top 12 "$work/trace" -o "$work/quicksort.dot"
dot -Tpng -Gdpi=72 "$work/quicksort.dot" -o docs/images/dot-quicksort.png

# One sorting thread (thread #2): its quicksort recursion.
tid=$("$build/reader/parlot-read" info "$work/trace" | awk '$1 == "#2" { print $2 }')
"$build/reader/parlot-read" export --format speedscope --tid "$tid" "$work/trace" \
  -o "$work/quicksort.speedscope.json"
ln -s "$speedscope" "$work/speedscope"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$work" "$port" >/dev/null 2>&1 &
server=$!
sleep 1
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
  --user-data-dir="$work/chromium" --window-size=1280,720 --virtual-time-budget=15000 \
  --screenshot="$PWD/docs/images/speedscope-quicksort.png" \
  "http://127.0.0.1:$port/speedscope/index.html#profileURL=/quicksort.speedscope.json"
ls -l docs/images/dot-quicksort.png docs/images/speedscope-quicksort.png

#!/usr/bin/env bash
# Makes the README's viewer pictures from the bundled quicksort_threads
# example (5 threads): docs/images/speedscope-quicksort.png (speedscope in
# headless Chromium, served from 127.0.0.1), docs/images/dot-quicksort.png
# (Graphviz dot) and docs/images/kcachegrind-quicksort.png (KCachegrind on a
# virtual X display, quicksort selected, Call Graph tab).
# Needs a build (scripts/build.sh) and scripts/install-deps.sh (chromium,
# graphviz, speedscope under build-deps/npm). The KCachegrind picture also
# needs Debian packages that CI does not install (only this script uses them):
#   apt-get install kcachegrind xvfb xauth x11-utils xdotool imagemagick dbus
# (kcachegrind; xvfb-run; xwininfo; xdotool to click; import to grab the
# screen; dbus-run-session, as KDE programs exit without a session bus).
# The clicks are at fixed positions of the 1280x800 window (Debian 12's
# KCachegrind 22.12, default fonts): look at the picture after a change.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=""
for tool in kcachegrind:kcachegrind xvfb-run:xvfb xauth:xauth xwininfo:x11-utils \
  xdotool:xdotool import:imagemagick dbus-run-session:dbus; do
  command -v "${tool%%:*}" >/dev/null || missing="$missing ${tool#*:}"
done
if [ -n "$missing" ]; then
  echo "viewer-pictures.sh: missing tools; install them: apt-get install$missing" >&2
  exit 1
fi
build="${PARLOT_BUILD_DIR:-build}"
speedscope="$PWD/build-deps/npm/node_modules/speedscope/dist/release"
[ -f "$speedscope/index.html" ] || {
  echo "viewer-pictures.sh: no speedscope in $speedscope; run scripts/install-deps.sh" >&2
  exit 1
}
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

# KCachegrind on the whole trace (all threads summed), in a fresh home so no
# first-run tip dialog or saved layout shows up.
"$build/reader/parlot-read" export --format callgrind "$work/trace" -o "$work/quicksort.callgrind"
mkdir -p "$work/home/.config" "$work/home/run"
chmod 700 "$work/home/run"
printf '[TipOfDay]\nRunOnStart=false\n' >"$work/home/.config/kcachegrindrc"
HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" XDG_RUNTIME_DIR="$work/home/run" \
  xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- bash -c '
    set -euo pipefail
    kcachegrind -qwindowgeometry 1280x800+0+0 "$1" >"$2/kcachegrind.log" 2>&1 &
    kc=$!
    trap "kill $kc 2>/dev/null || true" EXIT
    for _ in $(seq 120); do # up to 60 s for the main window (its title names the file)
      if xwininfo -root -tree | grep -q "quicksort.callgrind.*KCachegrind"; then break; fi
      kill -0 "$kc" || { cat "$2/kcachegrind.log" >&2; exit 1; }
      sleep 0.5
    done
    xwininfo -root -tree | grep -q "quicksort.callgrind.*KCachegrind" || { echo "no KCachegrind window" >&2; exit 1; }
    sleep 3
    xdotool mousemove 128 89 click 1 # the flat profile search field
    xdotool type --delay 50 "quicksort"
    sleep 1
    xdotool mousemove 100 138 click 1 # its first (only) row: quicksort
    sleep 1
    xdotool mousemove 521 756 click 1 # the lower pane tab "Call Graph"
    sleep 1
    xdotool mousemove 809 428 mousedown 1 mousemove 809 300 mousemove 809 200 mouseup 1 # taller graph pane
    sleep 3
    import -window root "$2/kcachegrind.png"
  ' _ "$work/quicksort.callgrind" "$work"
convert "$work/kcachegrind.png" -strip docs/images/kcachegrind-quicksort.png
ls -l docs/images/dot-quicksort.png docs/images/speedscope-quicksort.png docs/images/kcachegrind-quicksort.png

#!/usr/bin/env bash
# Installs the Debian packages Parlot needs to build and test, when missing,
# plus any packages named as arguments, and
# the speedscope npm package (pinned) into build-deps/npm for the viewer test.
# `--minimal` installs only what the runtime, the reader and the examples
# need to build (scripts/demo.sh): no test tools, no viewers, no npm.
# Debian 12; run as root (CI is) or with sudo available.
set -euo pipefail
minimal=0
if [ "${1:-}" = --minimal ]; then
  minimal=1
  shift
fi
minimal_packages=(
  build-essential cmake ninja-build pkg-config
  gcc g++ libunwind-dev libdw-dev libelf-dev
  libcli11-dev libfmt-dev nlohmann-json3-dev
)
packages=(
  build-essential cmake ninja-build pkg-config git
  gcc g++ gfortran clang
  libunwind-dev libdw-dev libelf-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev libfmt-dev nlohmann-json3-dev
  openmpi-bin libopenmpi-dev libzstd-dev liblz4-dev
  libotf2-trace-dev otf2-tools  # parlot-read export --format otf2; otf2-print in its test
  valgrind graphviz             # callgrind_annotate and dot -Tsvg in the export consumer tests
  libprotozero-dev protobuf-compiler  # export --format perfetto; protoc --decode in its test
  file  # cpack -G DEB (test/install): finds the ELF files for dpkg-shlibdeps
  chromium libpng-dev  # speedscope_viewer_test: headless browser; reads its screenshot
  python3  # export consumer test: parses the SVG that dot makes of a DOT export (xml.etree)
  uftrace  # libcalls_test: the reference recorder of library calls; bench comparisons
  strace  # parallel_read_test: which files each rank of an mpirun'd parlot-read opens
  hyperfine  # bench/run.sh: whole-program timings (untraced, no-op hooks, traced, uftrace)
  python3-dev python3-pybind11 python3-numpy python3-pandas python3-pytest  # the Python binding and its tests
  "$@"
)
# npm installs speedscope below; Debian's npm when the machine has none.
command -v npm >/dev/null || packages+=(npm)
[ "$minimal" = 0 ] || packages=("${minimal_packages[@]}" "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -ne 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[ "$minimal" = 0 ] || exit 0

# speedscope's static files, served to Chromium by the viewer test
# (CMake's PARLOT_SPEEDSCOPE_DIR points at its dist/release).
speedscope_version=1.25.0
npm_dir="$(cd "$(dirname "$0")/.." && pwd)/build-deps/npm"
installed="$npm_dir/node_modules/speedscope/package.json"
if ! grep -q "\"version\": \"$speedscope_version\"" "$installed" 2>/dev/null; then
  echo "install-deps: npm install speedscope@$speedscope_version into $npm_dir"
  mkdir -p "$npm_dir"
  npm install --prefix "$npm_dir" --no-audit --no-fund --no-save --loglevel=error \
    "speedscope@$speedscope_version"
fi

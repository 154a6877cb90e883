#!/usr/bin/env bash
# Installs the Debian packages Parlot needs to build and test, when missing,
# plus any packages named as arguments (scripts/install-bench-deps.sh).
# Debian 12; run as root (CI is) or with sudo available.
set -euo pipefail
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
  "$@"
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

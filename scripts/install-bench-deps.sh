#!/usr/bin/env bash
# Installs, when missing, the Debian packages the whole-program benchmark
# (bench/whole_program.sh) compares Parlot with or needs to draw its plots:
# uftrace, LTTng (session daemon and the UST cyg-profile-fast library),
# valgrind (callgrind), OpenMPI (mpirun), gnuplot, and dpkg-dev for
# `apt-get source`. Debian 12; run as root or with sudo available.
set -euo pipefail
"$(dirname "$0")/install-deps.sh"
packages=(
  uftrace lttng-tools liblttng-ust-dev valgrind gnuplot-nox
  openmpi-bin libopenmpi-dev dpkg-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-bench-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

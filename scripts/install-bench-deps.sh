#!/usr/bin/env bash
# Installs, when missing, the Debian packages the whole-program benchmark
# (bench/whole_program.sh) compares Parlot with or needs to draw its plots:
# uftrace, LTTng (session daemon and the UST cyg-profile-fast library),
# valgrind (callgrind), gnuplot, and dpkg-dev for `apt-get source`, on top of
# what scripts/install-deps.sh installs (OpenMPI among it). Debian 12; run as
# root or with sudo available.
set -euo pipefail
exec "$(dirname "$0")/install-deps.sh" uftrace lttng-tools liblttng-ust-dev valgrind gnuplot-nox dpkg-dev

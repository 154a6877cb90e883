#!/usr/bin/env bash
# Parlot as a new user gets it (issue 13): installed, then used from the
# installation only, never from the build tree.
#   install_test.sh prefix BUILD_DIR   cmake --install into a fresh prefix
#   install_test.sh deb BUILD_DIR      cpack -G DEB, check its Depends, then
#                                      (as root, when parlot is not installed
#                                      already) dpkg -i, use it, dpkg -r
# Then, from the installation: a CMake project with find_package(Parlot) +
# parlot_instrument, the same program with pkg-config --cflags --libs
# parlot, a gfortran program using the parlot module; each recorded with
# `parlot record` and read with `parlot trace` / `parlot-read`.
# Exit status 0 pass, 1 fail, 77 skipped (ctest SKIP_RETURN_CODE).
set -euo pipefail
mode=$1
build=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
installed_deb=""
cleanup() {
  # dpkg needs ldconfig from sbin, which the user's PATH below leaves out.
  if [ -n "$installed_deb" ] &&
    ! PATH=/usr/sbin:/usr/bin:/sbin:/bin dpkg -P parlot >"$work/dpkg-remove.log" 2>&1; then
    cat "$work/dpkg-remove.log" >&2
    echo "FAIL: dpkg -P parlot" >&2
  fi
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
step() { echo "+ $*" >&2; }
expect_in() {  # expect_in TEXT-FILE STRING
  grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "'$2' not in $1"; }
}

case $mode in
  prefix)
    prefix=$work/prefix
    step cmake --install "$build" --prefix "$prefix"
    cmake --install "$build" --prefix "$prefix" >/dev/null
    libdir=$(cd "$prefix" && ls -d lib*/libparlotrt.so.0 | xargs dirname)
    ;;
  deb)
    step cpack -G DEB
    (cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" >cpack.log 2>&1) ||
      { cat "$work/cpack.log" >&2; fail "cpack"; }
    deb=$(ls "$work"/parlot_*.deb)
    depends=$(dpkg-deb -f "$deb" Depends)
    echo "Depends: $depends" >&2
    for lib in libc6 libdw1 libstdc++6; do
      [[ $depends == *"$lib"* ]] || fail "Depends lacks $lib"
    done
    dpkg-deb -c "$deb" >"$work/contents"
    for f in ./usr/bin/parlot ./usr/bin/parlot-read ./usr/include/parlot/parlot.h \
      ./usr/lib/cmake/Parlot/ParlotConfig.cmake ./usr/lib/pkgconfig/parlot.pc \
      ./usr/lib/pkgconfig/parlot-sleds.pc \
      ./usr/share/man/man1/parlot.1; do
      expect_in "$work/contents" "$f"
    done
    if [ -f "$build/python/parlot/__init__.py" ]; then  # built with the Python package
      expect_in "$work/contents" ./usr/lib/python3/dist-packages/parlot/__init__.py
      grep -q '/usr/lib/python3/dist-packages/parlot/_parlot.*\.so' "$work/contents" ||
        fail "the .deb lacks the Python binding"
      dpkg-deb -f "$deb" Recommends | grep -q python3-pandas || fail "Recommends lacks python3-pandas"
    fi
    if [ "$(id -u)" -ne 0 ]; then
      echo "package built and checked; not root: dpkg -i skipped" >&2
      exit 77
    fi
    if dpkg-query -W -f='${Status}' parlot 2>/dev/null | grep -q "install ok installed"; then
      echo "parlot is installed on this machine already: dpkg -i skipped" >&2
      exit 77
    fi
    step dpkg -i "$deb"
    dpkg -i "$deb" >/dev/null
    installed_deb=1
    prefix=/usr
    libdir=lib
    ;;
  *) fail "usage: $0 prefix|deb BUILD_DIR" ;;
esac

# The user's environment: the installation first, no build tree anywhere.
export PATH="$prefix/bin:/usr/bin:/bin"
unset LD_LIBRARY_PATH LD_PRELOAD PARLOT_RUNTIME PARLOT_DIR CMAKE_PREFIX_PATH PKG_CONFIG_PATH
[ "$(command -v parlot)" = "$prefix/bin/parlot" ] || fail "parlot is not $prefix/bin/parlot"
parlot --version | grep -q "^parlot " || fail "parlot --version"
[ -f "$prefix/share/man/man1/parlot.1" ] && [ -f "$prefix/share/man/man3/parlot.3" ] ||
  fail "man pages"
[ -f "$prefix/share/bash-completion/completions/parlot" ] || fail "bash completion"
readelf -d "$prefix/$libdir/libparlotrt.so" | grep -q 'SONAME.*libparlotrt.so.0' ||
  fail "libparlotrt.so has no SONAME libparlotrt.so.0"

# The recorded program's trace: the pause hides quiet(); leaf() nests.
check_trace() {  # check_trace TRACE-DIR
  parlot trace --no-sites "$1" >"$work/trace.txt"
  expect_in "$work/trace.txt" "main() {"
  expect_in "$work/trace.txt" "  branch() {"
  expect_in "$work/trace.txt" "    leaf();"
  if grep -q quiet "$work/trace.txt"; then fail "a paused call was recorded"; fi
  parlot-read stats "$1" >"$work/stats.txt"
  expect_in "$work/stats.txt" "branch"
}

step "CMake project: find_package(Parlot) + parlot_instrument"
cmake -S "$here/project" -B "$work/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  >"$work/cmake.log" 2>&1 || { cat "$work/cmake.log" >&2; fail "configure"; }
cmake --build "$work/cmake-build" >"$work/cmake.log" 2>&1 ||
  { cat "$work/cmake.log" >&2; fail "build"; }
if ldd "$work/cmake-build/app" | grep -q "$build"; then fail "app links the build tree"; fi
linked=$(ldd "$work/cmake-build/app" | awk '$1 == "libparlotrt.so.0" { print $3 }')
[ -n "$linked" ] && [ "$(readlink -f "$linked")" = "$(readlink -f "$prefix/$libdir/libparlotrt.so.0")" ] ||
  { ldd "$work/cmake-build/app" >&2; fail "app does not link the installed runtime"; }
parlot record -d "$work/t1" -- "$work/cmake-build/app" >"$work/out" 2>"$work/err"
cat "$work/err" >&2
expect_in "$work/out" "sum 14 tracing 1"
expect_in "$work/err" "parlot: trace in $work/t1"
expect_in "$work/err" "parlot: 1 process, 1 thread, 10 events"
check_trace "$work/t1"
if [ -f "$build/python/parlot/__init__.py" ]; then
  step "Python: import parlot from the installation"
  pydir="$prefix/lib/python3/dist-packages"
  ls "$pydir"/parlot/_parlot*.so >/dev/null || fail "the binding is not installed in $pydir"
  PYTHONPATH="$pydir" /usr/bin/python3 -c 'import sys, parlot
assert parlot.__file__.startswith(sys.argv[2]), parlot.__file__
ev = parlot.open(sys.argv[1]).events()
calls = ev[ev["kind"] == "enter"]["function"].astype(str).value_counts()
assert calls["branch"] == 2 and calls["leaf"] == 2 and "quiet" not in calls, calls
' "$work/t1" "$pydir" || fail "import parlot from $pydir"
fi
# Linked with the stub only: untraced when run bare, traced under parlot record.
"$work/cmake-build/app_api" | grep -q "tracing 0" || fail "app_api is traced without parlot"
parlot record -q -d "$work/t2" -- "$work/cmake-build/app_api" | grep -q "tracing 1" ||
  fail "app_api under parlot record"
check_trace "$work/t2"

# AFTER_INLINING: the compiler's cheapest correct mode, traced as before.
# flags_of BUILD-DIR: the compile command of app_inlined.
flags_of() {
  /usr/bin/python3 -c 'import json, sys
print(next(c["command"] for c in json.load(open(sys.argv[1])) if "app_inlined.dir" in c["command"]))' \
    "$1/compile_commands.json"
}
gcc_flags=$(flags_of "$work/cmake-build")
echo "app_inlined (cc): $gcc_flags" >&2
[[ $gcc_flags == *"-finstrument-functions -finstrument-functions-exclude-file-list=/usr/include"* ]] ||
  fail "parlot_instrument(AFTER_INLINING) with gcc lacks -finstrument-functions-exclude-file-list"
[[ $gcc_flags != *"after-inlining"* ]] || fail "gcc was given clang's after-inlining flag"
parlot record -q -d "$work/t5" -- "$work/cmake-build/app_inlined" | grep -q "tracing 1" ||
  fail "app_inlined (gcc) under parlot record"
check_trace "$work/t5"
if command -v clang >/dev/null; then
  step "CMake project with clang: parlot_instrument(AFTER_INLINING)"
  CC=clang cmake -S "$here/project" -B "$work/clang-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    >"$work/cmake.log" 2>&1 || { cat "$work/cmake.log" >&2; fail "configure (clang)"; }
  cmake --build "$work/clang-build" --target app_inlined >"$work/cmake.log" 2>&1 ||
    { cat "$work/cmake.log" >&2; fail "build (clang)"; }
  clang_flags=$(flags_of "$work/clang-build")
  echo "app_inlined (clang): $clang_flags" >&2
  [[ $clang_flags == *"-finstrument-functions-after-inlining"* ]] ||
    fail "parlot_instrument(AFTER_INLINING) with clang lacks -finstrument-functions-after-inlining"
  [[ " $clang_flags " != *" -finstrument-functions "* ]] ||
    fail "clang was also given -finstrument-functions (it would instrument before inlining)"
  parlot record -q -d "$work/t6" -- "$work/clang-build/app_inlined" | grep -q "tracing 1" ||
    fail "app_inlined (clang) under parlot record"
  check_trace "$work/t6"
fi

step "sled build: parlot_instrument(MODE SLEDS), parlot-sleds.pc, parlot flags --mode sleds"
# has_sleds BINARY: the sleds' section is in it and it calls no hooks.
has_sleds() {
  readelf -SW "$1" | grep -q ' __patchable_function_entries ' ||
    { readelf -SW "$1" >&2; fail "$1 has no __patchable_function_entries section"; }
  if readelf -sW "$1" | grep -q __cyg_profile_func_enter; then fail "$1 calls the hooks"; fi
}
sled_flags=$(parlot flags --mode sleds --cflags)
[[ $sled_flags == *-fpatchable-function-entry=* ]] || fail "parlot flags --mode sleds: $sled_flags"
compile=$(/usr/bin/python3 -c 'import json, sys
print(next(c["command"] for c in json.load(open(sys.argv[1])) if "app_sleds.dir" in c["command"]))' \
  "$work/cmake-build/compile_commands.json")
echo "app_sleds: $compile" >&2
[[ " $compile " == *" $sled_flags "* ]] || fail "parlot_instrument(MODE SLEDS) lacks $sled_flags"
[[ $compile != *-finstrument-functions* ]] || fail "parlot_instrument(MODE SLEDS) also adds hooks"
has_sleds "$work/cmake-build/app_sleds"
PARLOT_START=off PARLOT_DIR="$work/t7" PARLOT_QUIET=1 "$work/cmake-build/app_sleds" |
  grep -q "^sum 14 " || fail "app_sleds does not run with the installed runtime"
pc_sleds=$(PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig" pkg-config --cflags parlot-sleds)
[[ " $pc_sleds " == *" $sled_flags "* ]] || fail "pkg-config --cflags parlot-sleds: $pc_sleds"
# shellcheck disable=SC2046
cc -O2 "$here/project/app.c" -o "$work/app_pc_sleds" \
  $(PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig" pkg-config --cflags --libs parlot-sleds)
has_sleds "$work/app_pc_sleds"
# shellcheck disable=SC2046
cc -O2 "$here/project/app.c" -o "$work/app_flags_sleds" -I"$prefix/include" \
  $(parlot flags --mode sleds --with-runtime)
has_sleds "$work/app_flags_sleds"
linked=$(ldd "$work/app_flags_sleds" | awk '$1 == "libparlotrt.so.0" { print $3 }')
[ "$(readlink -f "$linked")" = "$(readlink -f "$prefix/$libdir/libparlotrt.so.0")" ] ||
  { ldd "$work/app_flags_sleds" >&2; fail "parlot flags --with-runtime does not link the installed runtime"; }
PARLOT_START=off PARLOT_DIR="$work/t8" PARLOT_QUIET=1 "$work/app_flags_sleds" | grep -q "^sum 14 " ||
  fail "app_flags_sleds does not run"

step "pkg-config project: cc app.c \$(pkg-config --cflags --libs parlot)"
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
# shellcheck disable=SC2046
cc -O2 "$here/project/app.c" -o "$work/app_pc" $(pkg-config --cflags --libs parlot)
parlot record -d "$work/t3" -- "$work/app_pc" >"$work/out" 2>"$work/err"
expect_in "$work/err" "parlot: 1 process, 1 thread, 10 events"
check_trace "$work/t3"

if command -v gfortran >/dev/null && [ -f "$prefix/include/parlot/parlot.mod" ]; then
  step "gfortran program: use parlot"
  gfortran -g -finstrument-functions -J "$work" "$here/project/kernel.f90" -o "$work/fortran" \
    $(pkg-config --cflags --libs parlot-api) -I"$prefix/include/parlot"
  parlot record -q -d "$work/t4" -- "$work/fortran" | grep -q "fortran 10" || fail "fortran run"
  parlot trace "$work/t4" >"$work/trace.txt"
  expect_in "$work/trace.txt" "kernel::twice"
  expect_in "$work/trace.txt" '@ mark "set-up"'   # trailing blanks dropped
  expect_in "$work/trace.txt" '@ mark "report"'
  [ "$(grep -c 'kernel::twice()' "$work/trace.txt")" -eq 1 ] ||
    { cat "$work/trace.txt" >&2; fail "the paused Fortran call was recorded"; }
fi
echo "installed-prefix test passed ($mode, prefix $prefix)" >&2

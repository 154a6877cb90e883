#!/usr/bin/env bash
# bench/debian_programs/build_variants.sh OUTDIR [LULESH_SOURCE_DIR]
#
# The instrumentation variants of the `inlining` suite (bench/suites/
# inlining.sh): Debian's lua 5.4 and sqlite3 (sources fetched by build.sh
# into OUTDIR/src, which this runs first) and LULESH 2.0 (a C++ proxy
# application; its source tree given as the second argument, serial: no
# MPI, no OpenMP), each compiled with gcc and with clang in three ways:
#
#   OUTDIR/variants/<prog>-<cc>-plain  -g -O2 -fno-omit-frame-pointer
#   OUTDIR/variants/<prog>-<cc>-all    + -finstrument-functions (every call,
#                                        inlined ones included, calls the hooks)
#   OUTDIR/variants/<prog>-<cc>-cheap  clang: + -finstrument-functions-after-inlining
#                                      gcc:   + -finstrument-functions
#                                        -finstrument-functions-exclude-file-list=/usr/include
#   OUTDIR/variants/<prog>-<cc>-sleds  + the sled build's flags
#                                        (-fpatchable-function-entry=N, read from
#                                        include/parlot/build_modes.h)
#
# (the flags parlot_instrument(... AFTER_INLINING) and (MODE SLEDS) give).
# PARLOT_VARIANTS (default "plain all cheap") and PARLOT_COMPILERS (default
# "gcc clang") choose what to build. Idempotent: a binary is built only when
# missing. Two compilations at a time.
set -euo pipefail
if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 OUTDIR [LULESH_SOURCE_DIR]" >&2
  exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
"$here/build.sh" "$1" >&2
OUTDIR="$(cd "$1" && pwd)"
LULESH="${2:-}"
V="$OUTDIR/variants"
mkdir -p "$V"
log() { echo "[build_variants] $*" >&2; }

COMMON=(-g -O2 -fno-omit-frame-pointer)
read -r -a variants <<<"${PARLOT_VARIANTS:-plain all cheap}"
read -r -a compilers <<<"${PARLOT_COMPILERS:-gcc clang}"
# The sled build's flag, from its one definition.
sled_flags=$(sed -n 's/^#define PARLOT_SLED_FLAGS "\(.*\)"$/\1/p' "$here/../../include/parlot/build_modes.h")
[[ -n $sled_flags ]] || { echo "no PARLOT_SLED_FLAGS in include/parlot/build_modes.h" >&2; exit 1; }
# flags_of CC VARIANT: the instrumentation flags of a variant.
flags_of() {
  case "$2" in
    plain) ;;
    all) echo "-finstrument-functions" ;;
    cheap)
      if [[ $1 == clang* ]]; then
        echo "-finstrument-functions-after-inlining"
      else
        echo "-finstrument-functions -finstrument-functions-exclude-file-list=/usr/include"
      fi
      ;;
    sleds) echo "$sled_flags" ;;
  esac
}

pids=()
# build NAME CC VARIANT ARGS...: compiles OUTDIR/variants/NAME-<cc>-VARIANT
# in the background (at most two at a time).
build() {
  local name=$1 cc=$2 variant=$3
  shift 3
  local short=${cc%%+*}
  [[ $short == g ]] && short=gcc
  local out="$V/$name-$short-$variant"
  [[ -x $out ]] && return 0
  if [[ ${#pids[@]} -ge 2 ]]; then
    wait "${pids[0]}"
    pids=("${pids[@]:1}")
  fi
  log "$name $cc $variant"
  # shellcheck disable=SC2046  # the flags are words
  ("$cc" "${COMMON[@]}" $(flags_of "$cc" "$variant") "$@" -o "$out.tmp" && mv "$out.tmp" "$out") &
  pids+=($!)
}

# gcc's plain and fully instrumented lua and sqlite3 are build.sh's (the
# same compiler, flags and sources).
for prog in lua sqlite3; do
  [[ -x $V/$prog-gcc-plain ]] || ln -sf "$OUTDIR/bin/${prog}_plain" "$V/$prog-gcc-plain"
  [[ -x $V/$prog-gcc-all ]] || ln -sf "$OUTDIR/bin/$prog" "$V/$prog-gcc-all"
done
lua_dir="$(find "$OUTDIR/src" -mindepth 1 -maxdepth 1 -type d -name 'lua5.4-*' | sort | tail -n 1)/src"
lua_srcs=()
for f in "$lua_dir"/*.c; do [[ $(basename "$f") == luac.c ]] || lua_srcs+=("$f"); done
amal="$OUTDIR/src/sqlite3-amalgamation"
for variant in "${variants[@]}"; do
  for cc in "${compilers[@]}"; do
    build lua "$cc" "$variant" -std=gnu99 -DLUA_COMPAT_5_3 -DLUA_USE_LINUX \
      -I"$OUTDIR/src/lua-deb-include" "${lua_srcs[@]}" -Wl,-E -lm -ldl
    build sqlite3 "$cc" "$variant" -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -I"$amal" \
      "$amal/shell.c" "$amal/sqlite3.c" -lm
    if [[ -n $LULESH ]]; then
      cxx=g++
      [[ $cc == clang ]] && cxx=clang++
      build lulesh "$cxx" "$variant" -DUSE_MPI=0 -I"$LULESH" "$LULESH"/lulesh.cc \
        "$LULESH"/lulesh-comm.cc "$LULESH"/lulesh-viz.cc "$LULESH"/lulesh-util.cc \
        "$LULESH"/lulesh-init.cc -lm
    fi
  done
done
for p in "${pids[@]}"; do wait "$p"; done
log "variants in $V"

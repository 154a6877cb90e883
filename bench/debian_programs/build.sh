#!/usr/bin/env bash
# bench/debian_programs/build.sh OUTDIR
#
# Builds two real open-source programs from Debian 12 (bookworm) source
# packages, each twice, and writes the workloads to run on them:
#
#   lua5.4   -> OUTDIR/bin/lua      OUTDIR/bin/lua_plain
#   sqlite3  -> OUTDIR/bin/sqlite3  OUTDIR/bin/sqlite3_plain
#
# "Instrumented" binaries are compiled with
#     -g -O2 -fno-omit-frame-pointer -finstrument-functions
# and "plain" ones with the same flags minus -finstrument-functions. Run
# without a tracer, the instrumented binaries call glibc's no-op
# __cyg_profile_func_enter/exit hooks; with Parlot's runtime in LD_PRELOAD
# (or under uftrace) every function entry/exit is traced.
#
# Neither package is built with dpkg-buildpackage (too slow, runs the test
# suites). Instead only what is needed is compiled directly:
#   * lua: every liblua .c file from the source tree's src/ plus lua.c,
#     linked statically into one executable, so every VM function is
#     instrumented (no readline: line editing is irrelevant for scripts).
#   * sqlite3: the amalgamation sqlite3.c + shell.c, generated from the
#     Debian source tree with `configure && make sqlite3.c shell.c` (needs
#     tclsh), compiled into one executable with -DSQLITE_THREADSAFE=0 and
#     without readline/zlib/tcl.
#
# Packages: only a minimal explicit list is installed instead of
# `apt-get build-dep` (which would pull in debhelper, autotools, tcl-dev,
# libreadline-dev, ... that this direct build never uses):
#   dpkg-dev (for `apt-get source` / dpkg-source), gcc, make, libc6-dev,
#   tcl (tclsh, to generate the sqlite amalgamation), xz-utils (unpacking).
# apt is only touched when a tool or a source tree is missing, so reruns do
# not even run `apt-get update`.
#
# Output layout:
#   OUTDIR/src/                Debian source packages (apt-get source)
#   OUTDIR/bin/                the four executables
#   OUTDIR/workloads/bench.lua  Lua workload
#   OUTDIR/workloads/workload.sql  SQL workload (fed on stdin)
#   OUTDIR/workloads.txt       the workload list, format below
#
# workloads.txt format: one workload per line, fields separated by '|':
#   name|instrumented binary|plain binary|arguments...|stdin file or -
# "arguments..." is zero or more '|'-separated command-line arguments; the
# last field is a file to feed on standard input, or '-' for none. All
# paths are absolute. Lines starting with '#' are comments.
#
# Idempotent: sources are downloaded only if OUTDIR/src lacks them and a
# binary is rebuilt only if it is missing (delete OUTDIR/bin to rebuild).
# Workload files are always rewritten (cheap). Must run as root on a
# Debian 12 machine (it may add a deb-src source and install packages).
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi

mkdir -p "$1"
OUTDIR="$(cd "$1" && pwd)"   # absolute, workloads.txt records full paths
SRC="$OUTDIR/src"
BIN="$OUTDIR/bin"
WL="$OUTDIR/workloads"
mkdir -p "$SRC" "$BIN" "$WL"

COMMON_CFLAGS=(-g -O2 -fno-omit-frame-pointer)
INSTR_CFLAGS=("${COMMON_CFLAGS[@]}" -finstrument-functions)
JOBS="$(nproc)"

log() { echo "[debian_programs] $*" >&2; }

export DEBIAN_FRONTEND=noninteractive

# ---------------------------------------------------------------------------
# apt helpers
# ---------------------------------------------------------------------------
APT_UPDATED=0
apt_update_once() {
  if [[ $APT_UPDATED -eq 0 ]]; then
    log "apt-get update"
    apt-get update -qq
    APT_UPDATED=1
  fi
}

# Installs the tools the direct builds need, if any is missing.
ensure_tools() {
  local missing=()
  command -v dpkg-source >/dev/null || missing+=(dpkg-dev)
  command -v gcc >/dev/null || missing+=(gcc)
  command -v make >/dev/null || missing+=(make)
  [[ -e /usr/include/stdio.h ]] || missing+=(libc6-dev)
  command -v tclsh >/dev/null || missing+=(tcl)
  command -v xz >/dev/null || missing+=(xz-utils)
  if [[ ${#missing[@]} -gt 0 ]]; then
    apt_update_once
    log "apt-get install ${missing[*]}"
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# Makes sure `apt-get source` works: if no deb-src entry is known, adds one
# that mirrors the deb entries of debian.sources (same URIs, Suites,
# Components and Signed-By, copied from that file, continuation lines
# included) and refreshes the package lists.
DEB_SRC_FILE=/etc/apt/sources.list.d/parlot-deb-src.sources
ensure_deb_src() {
  local pkg="$1"
  apt_update_once
  if apt-get source --print-uris -qq "$pkg" >/dev/null 2>&1; then
    return
  fi
  if [[ ! -f $DEB_SRC_FILE ]]; then
    log "adding $DEB_SRC_FILE"
    # deb822: stanzas are separated by blank lines (awk paragraph mode).
    awk 'BEGIN { RS = ""; FS = "\n" }
         { out = "Types: deb-src\n"; keep = 0
           for (i = 1; i <= NF; i++) {
             l = $i
             if (l ~ /^(URIs|Suites|Components|Signed-By):/) { keep = 1; out = out l "\n" }
             else if (l ~ /^[ \t]/ && keep) out = out l "\n"   # continuation
             else keep = 0
           }
           printf "%s%s", (NR > 1 ? "\n" : ""), out }' \
      /etc/apt/sources.list.d/debian.sources > "$DEB_SRC_FILE"
  fi
  log "apt-get update (deb-src)"
  apt-get update -qq
  apt-get source --print-uris -qq "$pkg" >/dev/null
}

# Prints the unpacked source directory of package $1 in $SRC, if any.
src_dir() {
  find "$SRC" -mindepth 1 -maxdepth 1 -type d -name "$1-*" | sort | tail -n 1
}

# Downloads and unpacks (patches applied by dpkg-source) package $1.
fetch_source() {
  local pkg="$1"
  if [[ -n "$(src_dir "$pkg")" ]]; then
    return
  fi
  ensure_tools
  ensure_deb_src "$pkg"
  log "apt-get source $pkg"
  # As root, apt warns that the _apt sandbox user cannot write here;
  # downloading as root is intended, so say so.
  (cd "$SRC" && apt-get source -qq -o APT::Sandbox::User=root "$pkg" >/dev/null)
  [[ -n "$(src_dir "$pkg")" ]] || { echo "apt-get source $pkg unpacked nothing" >&2; exit 1; }
}

# ---------------------------------------------------------------------------
# lua5.4: lua interpreter = liblua + lua.c, one static executable.
# ---------------------------------------------------------------------------
build_lua() {
  if [[ -x $BIN/lua && -x $BIN/lua_plain ]]; then
    log "lua: binaries exist, skipping"
    return
  fi
  fetch_source lua5.4
  ensure_tools
  local dir
  dir="$(src_dir lua5.4)/src"
  # liblua is every .c file except the two programs (lua.c, luac.c).
  local srcs=()
  local f
  for f in "$dir"/*.c; do
    case "$(basename "$f")" in
      luac.c) ;;   # the compiler, not needed
      *) srcs+=("$f") ;;   # lua.c (the interpreter) and all of liblua
    esac
  done
  # Upstream's "linux" target: LUA_USE_LINUX (dlopen, mkstemp, ...),
  # LUA_COMPAT_5_3 and -std=gnu99 as in upstream's Makefile and Debian's
  # build, -Wl,-E so C modules could resolve lua_* symbols against the
  # executable.
  # Debian's patched luaconf.h includes "lua5.4-deb-multiarch.h", which
  # debian/rules generates at configure time; generate the same header
  # into a separate include directory (the source tree stays pristine).
  local inc="$SRC/lua-deb-include"
  mkdir -p "$inc"
  {
    echo "#ifndef _LUA_DEB_MULTIARCH_"
    echo "#define _LUA_DEB_MULTIARCH_"
    echo "#define DEB_HOST_MULTIARCH \"$(gcc -print-multiarch)\""
    echo "#endif"
  } >"$inc/lua5.4-deb-multiarch.h"
  local defs=(-std=gnu99 -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -I"$inc")
  # shellcheck disable=SC2054  # -Wl,-E is one argument
  local libs=(-Wl,-E -lm -ldl)
  log "lua: compiling ${#srcs[@]} files (instrumented and plain)"
  # Two builds in parallel, one per core.
  gcc "${INSTR_CFLAGS[@]}" "${defs[@]}" -o "$BIN/lua.tmp" "${srcs[@]}" "${libs[@]}" &
  local pid=$!
  gcc "${COMMON_CFLAGS[@]}" "${defs[@]}" -o "$BIN/lua_plain.tmp" "${srcs[@]}" "${libs[@]}"
  wait "$pid"
  mv "$BIN/lua.tmp" "$BIN/lua"
  mv "$BIN/lua_plain.tmp" "$BIN/lua_plain"
}

# ---------------------------------------------------------------------------
# sqlite3: sqlite3 shell = amalgamation sqlite3.c + shell.c.
# ---------------------------------------------------------------------------
build_sqlite() {
  if [[ -x $BIN/sqlite3 && -x $BIN/sqlite3_plain ]]; then
    log "sqlite3: binaries exist, skipping"
    return
  fi
  fetch_source sqlite3
  ensure_tools
  local dir amal
  dir="$(src_dir sqlite3)"
  amal="$SRC/sqlite3-amalgamation"
  if [[ ! -f $amal/sqlite3.c || ! -f $amal/shell.c ]]; then
    # The source package is the full sqlite source tree, not the
    # amalgamation; generating it needs only configure + a few small
    # generator tools (lemon, mkkeywordhash) + tclsh. Done out of tree so
    # the unpacked source stays pristine.
    log "sqlite3: generating the amalgamation"
    rm -rf "$amal.build"
    mkdir -p "$amal.build"
    (
      cd "$amal.build"
      "$dir/configure" --disable-tcl --disable-readline --disable-editline \
        >configure.log 2>&1 || { cat configure.log >&2; exit 1; }
      make -j "$JOBS" sqlite3.c shell.c >make.log 2>&1 || { tail -n 50 make.log >&2; exit 1; }
    )
    mkdir -p "$amal"
    cp "$amal.build/sqlite3.c" "$amal.build/sqlite3.h" "$amal.build/shell.c" "$amal/"
    rm -rf "$amal.build"
  fi
  # Single-threaded library, no extension loading: keeps the build simple
  # and dependency-free (only libm).
  local defs=(-DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -I"$amal")
  local srcs=("$amal/shell.c" "$amal/sqlite3.c")
  local libs=(-lm)
  log "sqlite3: compiling the amalgamation (instrumented and plain)"
  gcc "${INSTR_CFLAGS[@]}" "${defs[@]}" -o "$BIN/sqlite3.tmp" "${srcs[@]}" "${libs[@]}" &
  local pid=$!
  gcc "${COMMON_CFLAGS[@]}" "${defs[@]}" -o "$BIN/sqlite3_plain.tmp" "${srcs[@]}" "${libs[@]}"
  wait "$pid"
  mv "$BIN/sqlite3.tmp" "$BIN/sqlite3"
  mv "$BIN/sqlite3_plain.tmp" "$BIN/sqlite3_plain"
}

# ---------------------------------------------------------------------------
# Workloads. Deterministic; sized so the PLAIN binary runs ~0.5-1 s on a
# 2-core machine (instrumented + traced runs under other tracers can be
# 10-50x slower).
# ---------------------------------------------------------------------------
write_workloads() {
  cat >"$WL/bench.lua" <<'LUA'
-- Parlot benchmark workload for the Lua 5.4 interpreter: a mix of typical
-- Lua benchmark work. Deterministic; prints one checksum line.
--
-- Usage: lua bench.lua [ROUNDS [coroutines]]
-- ROUNDS (default 15) scales the run time. Coroutines are off by default:
-- every coroutine.yield leaves lua_resume via _longjmp, which uftrace
-- (v0.13) does not hook, so its shadow stack overflows and the recording
-- fails; pass "coroutines" as the second argument to include them (a test
-- of a tracer's longjmp handling rather than a fair comparison).
local N = tonumber(arg and arg[1]) or 15
local with_coroutines = (arg and arg[2]) == "coroutines"

local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end

-- Deterministic pseudo-random numbers (LCG), independent of math.random.
local seed = 12345
local function rand(m)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % m
end

local checksum = 0
local function mix(v) checksum = (checksum * 31 + v) % 1000000007 end

for _ = 1, N do
  -- 1. Recursive calls.
  mix(fib(24))

  -- 2. Table inserts, sort with a Lua comparator, removal.
  local t = {}
  for i = 1, 30000 do t[#t + 1] = rand(1000000) end
  table.sort(t, function(a, b) return a > b end)
  mix(t[1]); mix(t[#t]); mix(t[15000])
  for _ = 1, 1000 do table.remove(t) end
  mix(#t)

  -- 3. Hash tables with string keys.
  local h = {}
  for i = 1, 20000 do h["k" .. (i % 5000)] = (h["k" .. (i % 5000)] or 0) + i end
  local s = 0
  for _, v in pairs(h) do s = s + v end
  mix(s % 1000000007)

  -- 4. String building, formatting, gsub, find.
  local parts = {}
  for i = 1, 5000 do parts[#parts + 1] = string.format("%d:%x", i, i * 7) end
  local str = table.concat(parts, ",")
  local replaced, n = str:gsub("(%d+):(%x+)", function(a, b) return b .. "=" .. a end)
  mix(n); mix(#replaced)
  local count = 0
  for w in replaced:gmatch("[^,]+") do if w:find("ff", 1, true) then count = count + 1 end end
  mix(count)
  mix(#(str:upper():rep(2):sub(10, -10)))

  -- 5. Closures and higher-order functions.
  local function counter()
    local c = 0
    return function(d) c = c + d; return c end
  end
  local function map(f, a) local r = {} for i = 1, #a do r[i] = f(a[i]) end return r end
  local function reduce(f, a, acc) for i = 1, #a do acc = f(acc, a[i]) end return acc end
  local cs = {}
  for i = 1, 200 do cs[i] = counter() end
  local acc = 0
  for r = 1, 50 do for i = 1, #cs do acc = acc + cs[i](r) end end
  mix(acc % 1000000007)
  local arr = {}
  for i = 1, 20000 do arr[i] = i end
  local sq = map(function(x) return x * x % 1000 end, arr)
  mix(reduce(function(a, b) return (a + b) % 1000000007 end, sq, 0))

  -- 6. Objects with metatables (method calls, __index, __add).
  local Vec = {}
  Vec.__index = Vec
  function Vec.new(x, y) return setmetatable({x = x, y = y}, Vec) end
  function Vec.__add(a, b) return Vec.new(a.x + b.x, a.y + b.y) end
  function Vec:dot(o) return self.x * o.x + self.y * o.y end
  local v = Vec.new(0, 0)
  for i = 1, 20000 do v = v + Vec.new(i % 7, i % 11) end
  mix(v:dot(Vec.new(3, 5)))

  -- 7. Coroutines (optional, see above).
  if with_coroutines then
  local gen = coroutine.wrap(function()
    for i = 1, 5000 do coroutine.yield(i * 3) end
  end)
  local cs2 = 0
  for _ = 1, 5000 do cs2 = cs2 + gen() end
  mix(cs2)
  end
end

print(string.format("checksum %d", checksum))
LUA

  cat >"$WL/workload.sql" <<'SQL'
-- Parlot benchmark workload for the sqlite3 shell (run on :memory:).
-- Deterministic: pseudo-random values come from integer arithmetic, every
-- result is ordered.
PRAGMA journal_mode = OFF;

CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT, region INTEGER, score REAL);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER, amount INTEGER, day INTEGER, note TEXT);
CREATE TABLE items(order_id INTEGER, sku INTEGER, qty INTEGER);

BEGIN;
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 20000)
INSERT INTO customers SELECT i, 'cust' || i, i % 17, (i * 7919 % 1000) / 10.0 FROM c;
COMMIT;

BEGIN;
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 150000)
INSERT INTO orders
  SELECT i, (i * 2654435761) % 20000 + 1, (i * 40503) % 10000, i % 365,
         printf('order-%06d-%s', i, hex(i * 31))
  FROM c;
COMMIT;

BEGIN;
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200000)
INSERT INTO items SELECT (i * 7) % 150000 + 1, i % 997, i % 9 + 1 FROM c;
COMMIT;

CREATE INDEX orders_customer ON orders(customer);
CREATE INDEX items_order ON items(order_id);

-- Aggregates and joins.
SELECT count(*), sum(amount), min(day), max(day) FROM orders;

SELECT c.region, count(*) AS n, sum(o.amount) AS total, round(avg(o.amount), 3)
FROM customers c JOIN orders o ON o.customer = c.id
GROUP BY c.region ORDER BY c.region;

SELECT c.id, c.name, sum(i.qty) AS q
FROM customers c JOIN orders o ON o.customer = c.id JOIN items i ON i.order_id = o.id
GROUP BY c.id ORDER BY q DESC, c.id LIMIT 10;

SELECT day, count(*), sum(amount) FROM orders
WHERE note LIKE '%-00%' GROUP BY day ORDER BY sum(amount) DESC, day LIMIT 10;

-- Updates (indexed lookups) and sorting.
BEGIN;
UPDATE orders SET amount = amount + 1 WHERE customer IN (SELECT id FROM customers WHERE region = 3);
UPDATE customers SET score = score * 1.5 WHERE id % 13 = 0;
DELETE FROM items WHERE qty = 9 AND sku % 2 = 0;
COMMIT;

SELECT sum(amount), count(DISTINCT customer) FROM orders;
SELECT sku, sum(qty) FROM items GROUP BY sku ORDER BY sum(qty) DESC, sku LIMIT 5;
SELECT id, note FROM orders ORDER BY note DESC LIMIT 3;
SELECT name, score FROM customers ORDER BY score DESC, id LIMIT 5;
SELECT count(*) FROM (SELECT DISTINCT customer, day FROM orders);

-- Window function and correlated subquery.
SELECT customer, day, amount, running FROM (
  SELECT customer, day, amount,
         sum(amount) OVER (PARTITION BY customer ORDER BY day, id) AS running
  FROM orders)
WHERE customer % 1000 = 7 ORDER BY running DESC, customer, day LIMIT 5;
SELECT c.id, (SELECT count(*) FROM orders o WHERE o.customer = c.id AND o.amount > 5000) AS big
FROM customers c WHERE c.region = 5 ORDER BY big DESC, c.id LIMIT 5;
SELECT group_concat(x, ',') FROM (SELECT upper(substr(name, 1, 5)) AS x FROM customers ORDER BY id DESC LIMIT 5);
SQL

  cat >"$OUTDIR/workloads.txt" <<EOF
# Workloads for bench/debian_programs (written by build.sh). One per line:
#   name|instrumented binary|plain binary|arguments...|stdin file or -
# "arguments..." is zero or more '|'-separated arguments; the last field is
# a file to feed on standard input, or '-' for none.
lua|$BIN/lua|$BIN/lua_plain|$WL/bench.lua|-
sqlite3|$BIN/sqlite3|$BIN/sqlite3_plain|:memory:|$WL/workload.sql
EOF
}

build_lua
build_sqlite
write_workloads
log "done: $OUTDIR/workloads.txt"

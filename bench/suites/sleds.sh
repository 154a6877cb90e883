#!/usr/bin/env bash
# Suite sleds: what each build mode costs with tracing off and on. Debian's
# lua 5.4 and sqlite3 and (when PARLOT_BENCH_LULESH names its source tree)
# LULESH 2.0, serial, built with gcc (bench/debian_programs/build_variants.sh)
# plain, with sleds (`parlot flags --mode sleds`) and with hooks
# (-finstrument-functions), run as
#   plain          the plain build
#   sleds bare     the sled build without the runtime (the NOPs alone)
#   sleds off      the sled build, runtime preloaded, PARLOT_START=off
#   sleds on       the sled build traced (only when the runtime patches sleds)
#   hooks no-op    the hook build, glibc's no-op hooks
#   hooks traced   the hook build traced
# interleaved (bench/lib/interleave.py: each round runs every command once,
# ratios to plain within the round), wall and CPU (user+sys) time. Then the
# events of one traced run of each build and, when the runtime patches
# sleds, what switching costs: parlot_start() (patches every sled of every
# loaded object) and parlot_stop() timed 20 times before main
# (bench/sled_switch_timer.c) in a near-empty run (lua -e '', sqlite3
# 'select 1', lulesh -s 1 -i 1) and in a program of 20,000 functions.
# Works against whatever runtime is in the build directory: whether it
# patches sleds is found out by tracing a small sled-built probe.
# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
set -euo pipefail
tmp="$OUT/tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
PARLOT="$BUILD/frontend/parlot"
need "$RT" "$READER" "$PARLOT"
debian="${PARLOT_BENCH_DEBIAN:-$ROOT/bench-results/debian}"
lulesh="${PARLOT_BENCH_LULESH:-}"
[ "$DRY_RUN" = 0 ] || exit 0
[ -n "$lulesh" ] || note "PARLOT_BENCH_LULESH not set: LULESH skipped"
note "building the plain, sled and hook variants into $debian/variants (once)"
# shellcheck disable=SC2086  # no LULESH: no argument
PARLOT_VARIANTS="plain all sleds" PARLOT_COMPILERS=gcc \
  "$ROOT/bench/debian_programs/build_variants.sh" "$debian" $lulesh >/dev/null
V="$debian/variants"
wl="$debian/workloads"
interleave() { /usr/bin/python3 "$ROOT/bench/lib/interleave.py" "$@"; }

# Does the runtime patch sleds? Trace a sled-built probe and count events.
cat >"$tmp/probe.c" <<'EOF'
__attribute__((noinline)) int probe_leaf(int x) { return x + 1; }
int main(int argc, char** argv) { (void)argv; return probe_leaf(argc) == 2 ? 0 : 1; }
EOF
# shellcheck disable=SC2046  # the flags are words
gcc -O2 "$tmp/probe.c" -o "$tmp/probe" $("$PARLOT" flags --mode sleds --cflags)
rm -rf "$tmp/p"
env PARLOT_QUIET=1 PARLOT_DIR="$tmp/p" LD_PRELOAD="$RT" "$tmp/probe"
patches=0
probe_events=$(events_of "$tmp/p" 2>/dev/null || true)
[ "${probe_events:-0}" -gt 0 ] && patches=1
[ "$patches" = 1 ] || note "the runtime in $BUILD does not patch sleds: no 'sleds on' rows"
if [ "$patches" = 1 ]; then
  gcc -O2 -Wall -Werror -shared -fPIC "$ROOT/bench/sled_switch_timer.c" -o "$tmp/switch_timer.so" \
    -L"$(dirname "$RT")" -Wl,-rpath,"$(dirname "$RT")" -lparlotrt
fi

# name|arguments (hyperfine word-split)|near-empty arguments (patching)
rounds_arg=$([ "$QUICK" = 1 ] && echo 1 || echo 15)
programs=("lua|$wl/bench.lua $rounds_arg|-e ''"
  "sqlite3|:memory: '.read $wl/workload.sql'|:memory: 'select 1;'")
[ -n "$lulesh" ] && programs+=("lulesh|-s $([ "$QUICK" = 1 ] && echo 10 || echo "${PARLOT_BENCH_LULESH_SIZE:-25}") -i 100 -q|-s 1 -i 1 -q")

# switch_row NAME BINARY ARGS: a row of the switching table: parlot_start()
# patches every sled of every loaded object, parlot_stop() unpatches
# (bench/sled_switch_timer.c: 20 times before main; then a near-empty run).
switch_row() {
  local sleds=0 size line
  for size in $(readelf -SW "$2" | awk '$2 == "__patchable_function_entries" { print $6 }'); do
    sleds=$((sleds + 16#$size / 8))
  done
  line=$(eval "env PARLOT_QUIET=1 PARLOT_DIR=$tmp/p PARLOT_START=off PARLOT_SWITCH_REPS=20 \
    LD_PRELOAD='$RT $tmp/switch_timer.so' $2 $3" 2>&1 >/dev/null | grep '^sled_switch_timer:')
  local _ reps on_med on_min off_med off_min
  read -r _ _ reps _ on_med on_min _ off_med off_min <<<"$line"
  patch_rows+=("| $1 | $sleds | $on_med ($on_min) | $off_med ($off_min) | $(awk -v n="$sleds" -v t="$on_med" 'BEGIN { printf "%.1f", n / t }') |")
}

rounds=$(reps)
off_env="PARLOT_QUIET=1 PARLOT_START=off PARLOT_DIR=$tmp/p LD_PRELOAD=$RT"
files=()
patch_rows=()
for p in "${programs[@]}"; do
  IFS='|' read -r name args empty_args <<<"$p"
  b="$V/$name-gcc"
  need "$b-plain" "$b-sleds" "$b-all"
  cmds=(-n plain "$b-plain $args" -n "sleds bare" "$b-sleds $args"
    -n "sleds off" "env $off_env $b-sleds $args")
  [ "$patches" = 1 ] && cmds+=(-n "sleds on" "env $(trace_env "$tmp/p") $b-sleds $args")
  cmds+=(-n "hooks no-op" "$b-all $args" -n "hooks traced" "env $(trace_env "$tmp/p") $b-all $args")
  note "$name: $rounds interleaved rounds"
  interleave run --rounds "$rounds" --out "$OUT/$name.json" --prepare "rm -rf $tmp/p" "${cmds[@]}"
  files+=("$OUT/$name.json")
  # Events of one traced run of each build.
  events="{"
  for v in all sleds; do
    [ "$v" = sleds ] && [ "$patches" = 0 ] && continue
    rm -rf "$tmp/p"
    eval "env $(trace_env "$tmp/p") $b-$v $args" >/dev/null
    label=$([ "$v" = all ] && echo "hooks traced" || echo "sleds on")
    events+="$([ "$events" = "{" ] || echo ,)\"$label\": $(events_of "$tmp/p")"
  done
  labels='"sleds off": "sleds off (PARLOT_START=off)"'
  [ "$patches" = 1 ] || labels='"sleds off": "sleds, runtime preloaded (it does not patch sleds)"'
  echo "{\"events\": $events}, \"labels\": {$labels}}" >"$OUT/$name.meta.json"
  [ "$patches" = 0 ] || switch_row "$name" "$b-sleds" "$empty_args"
done
if [ "$patches" = 1 ]; then
  # Patching speed apart from the fixed cost: 20,000 functions.
  /usr/bin/python3 - >"$tmp/many.c" <<'EOF'
n = 20000
for i in range(n):
    print(f"__attribute__((noinline)) int f{i}(int x) {{ return x + {i}; }}")
print("typedef int (*fn)(int);")
print("static fn const table[] = {" + ",".join(f"f{i}" for i in range(n)) + "};")
print("int main(int argc, char** argv) { (void)argv; int s = 0;")
print("  for (unsigned i = 0; i < sizeof table / sizeof table[0]; ++i) s += table[i](argc);")
print("  return s == 0; }")
EOF
  # shellcheck disable=SC2046  # the flags are words
  gcc -O1 "$tmp/many.c" -o "$tmp/many" $("$PARLOT" flags --mode sleds --cflags)
  switch_row "20,000 functions" "$tmp/many" ""
fi
echo "### Build modes, tracing off and on (gcc; $rounds interleaved rounds; ratios: median of the per-round ratios to plain, min-max in parentheses)"
echo
interleave table --baseline plain "${files[@]}"
if [ "$patches" = 1 ]; then
  echo
  echo "### Switching tracing on and off (parlot_start / parlot_stop before main, 20 times; µs per call, median (min))"
  echo
  echo "| program | sleds in the executable | on: patch every sled, µs | off: unpatch, µs | M sleds/s patched |"
  echo "|---|---|---|---|---|"
  printf '%s\n' "${patch_rows[@]}"
fi

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
# sleds, the patching speed: a near-empty run (lua -e '', sqlite3 'select
# 1', lulesh -s 1 -i 1) with PARLOT_START=off against tracing on, per sled.
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

# name|arguments (hyperfine word-split)|near-empty arguments (patching)
rounds_arg=$([ "$QUICK" = 1 ] && echo 1 || echo 15)
programs=("lua|$wl/bench.lua $rounds_arg|-e ''"
  "sqlite3|:memory: '.read $wl/workload.sql'|:memory: 'select 1;'")
[ -n "$lulesh" ] && programs+=("lulesh|-s $([ "$QUICK" = 1 ] && echo 10 || echo "${PARLOT_BENCH_LULESH_SIZE:-25}") -i 100 -q|-s 1 -i 1 -q")

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
  if [ "$patches" = 1 ]; then
    # Patching: a near-empty run started off against one started on (which
    # also records the few calls of that run: an upper bound).
    size=$(readelf -SW "$b-sleds" | awk '$2 == "__patchable_function_entries" { print $6 }')
    sleds=$((16#${size:-0} / 8))
    interleave run --rounds "$((rounds * 4))" --out "$OUT/$name-patch.json" \
      --prepare "rm -rf $tmp/p" -n off "env $off_env $b-sleds $empty_args" \
      -n on "env $(trace_env "$tmp/p") $b-sleds $empty_args"
    patch_rows+=("$(/usr/bin/python3 - "$OUT/$name-patch.json" "$name" "$sleds" <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1]))["results"]
sleds = int(sys.argv[3])
diff = statistics.median(on - off for on, off in zip(d["on"]["cpu"], d["off"]["cpu"]))
rate = f"{sleds / diff / 1e6:.2f}" if diff > 0 else "-"
print(f"| {sys.argv[2]} | {sleds:,} | {statistics.median(d['off']['cpu']) * 1e3:.2f} | "
      f"{statistics.median(d['on']['cpu']) * 1e3:.2f} | {diff * 1e3:.2f} | {rate} |")
PY
)")
  fi
done
echo "### Build modes, tracing off and on (gcc; $rounds interleaved rounds; ratios: median of the per-round ratios to plain, min-max in parentheses)"
echo
interleave table --baseline plain "${files[@]}"
if [ "$patches" = 1 ]; then
  echo
  echo "### Patching the sleds (CPU ms of a near-empty run, median of $((rounds * 4)) rounds)"
  echo
  echo "| program | sleds | started off | started on | on - off | M sleds/s (upper bound on the time) |"
  echo "|---|---|---|---|---|---|"
  printf '%s\n' "${patch_rows[@]}"
fi

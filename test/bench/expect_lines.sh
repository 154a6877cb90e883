# shellcheck shell=bash disable=SC2154
# Sourced by the tests of test/bench: `expect LINE` checks that the
# report file "$report" has a line containing LINE (a fixed string), and
# otherwise says what is missing and sets fail=1; `finish MESSAGE` then
# exits 1 showing the report if anything was missing, or prints MESSAGE.
fail=0
expect() {
  if ! grep -qF -- "$1" "$report"; then
    echo "missing: $1" >&2
    fail=1
  fi
}
finish() {
  if [ "$fail" != 0 ]; then
    cat "$report" >&2
    exit 1
  fi
  echo "$1"
}

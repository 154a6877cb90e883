# shellcheck shell=bash
# Statistics the bench scripts share; sourced, not run.

# median: the median of the numbers on standard input, one per line (the
# lower middle one of an even count; an empty line when there are none).
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

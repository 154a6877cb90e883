# Compares two groups of configurations of one bench/runtime_ab.sh run
# (issue 12), e.g. codec 2 and raw words, each over several code layouts
# (bench/layout_variants.sh):
#   awk -v A="c0 c1 c2 c3" -v B="nc0 nc1 nc2 nc3" \
#       -f bench/median.awk -f bench/runtime_ab_groups.awk AB_DIR/runs.txt
# Input: runs.txt lines "workload configuration round cpu_s".
# Prints per workload (in order of first appearance): the median CPU s of
# each configuration of A and B, and, over the rounds that ran every one of
# them, the median of mean(A) - mean(B) (s) with the rounds it was lower and
# higher. Every configuration of a round runs in the same minute, so the
# per-round difference takes out the machine's slow drift.
# Prints "  LABEL: config median ..." for the configurations c[1..nc] of
# workload wl ("-" for one that never ran).
function print_medians(wl, label, c, nc,   i, n, r, line) {
  line = "  " label ":"
  for (i = 1; i <= nc; ++i) {
    n = 0
    for (r = 1; r <= rounds; ++r) if ((wl, c[i], r) in v) x[++n] = v[wl, c[i], r]
    line = line sprintf(" %s %s", c[i], n ? sprintf("%.3f", median(x, n)) : "-")
  }
  print line
}
# The mean CPU s of configurations c[1..nc] of workload wl in round r, or
# "" when one of them did not run in it.
function group_mean(wl, r, c, nc,   i, sum) {
  for (i = 1; i <= nc; ++i) {
    if (!((wl, c[i], r) in v)) return ""
    sum += v[wl, c[i], r]
  }
  return sum / nc
}
BEGIN {
  na = split(A, a, " ")
  nb = split(B, b, " ")
  if (na == 0 || nb == 0) {
    print "runtime_ab_groups: set -v A=\"configs\" -v B=\"configs\"" > "/dev/stderr"
    exit 2
  }
}
{
  v[$1, $2, $3] = $4
  if (!($1 in seen)) { seen[$1] = 1; order[++nw] = $1 }
  if ($3 > rounds) rounds = $3
}
END {
  for (k = 1; k <= nw; ++k) {
    wl = order[k]
    printf "%s\n", wl
    print_medians(wl, "A", a, na)
    print_medians(wl, "B", b, nb)
    n = 0; lo = 0; hi = 0
    for (r = 1; r <= rounds; ++r) {
      ma = group_mean(wl, r, a, na)
      mb = group_mean(wl, r, b, nb)
      if (ma == "" || mb == "") continue
      d = ma - mb
      y[++n] = d
      if (d < 0) ++lo
      else if (d > 0) ++hi
    }
    if (n) printf "  mean(A) - mean(B): median %+.3f s over %d rounds (%d lower, %d higher)\n", median(y, n), n, lo, hi
    else print "  no round ran every configuration"
  }
}

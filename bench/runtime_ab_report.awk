# Report of bench/runtime_ab.sh, as Markdown (stdout). Input files:
# events.txt ("workload events"), then runs.txt ("workload configuration
# round cpu_s"). Variables: configs (the configurations in order, space-
# separated), traced (those with a Parlot runtime; the first is the
# reference of the per-round differences). The configuration named `none`,
# when given, is the floor that "added ns per event" is measured from.
# Usage: awk -v configs="none old new" -v traced="old new"
#        -f median.awk -f runtime_ab_report.awk events.txt runs.txt
function commas(n,    s) {
  s = sprintf("%d", n)
  while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", s)
  return s
}
FNR == NR { events[$1] = $2; next }
{
  w = $1; c = $2; r = $3
  cpu[w, c, r] = $4
  if (!((w, c) in n)) n[w, c] = 0
  n[w, c]++
  if (!(w in seen)) { seen[w] = 1; order[++workloads] = w }
  if (r > rounds[w]) rounds[w] = r
}
END {
  nc = split(configs, cfg, " ")
  nt = split(traced, tr, " ")
  ref = tr[1]
  for (k = 1; k <= workloads; ++k) {
    w = order[k]
    printf "### %s (%s events, %d rounds)\n\n", w, commas(events[w]), rounds[w]
    printf "| configuration | median CPU s | range | added ns/event | minus %s, median of the rounds (s) | rounds lower / higher |\n", ref
    print "|---|---|---|---|---|---|"
    floor = ""
    if ((w, "none") in n) {
      m = 0
      for (r = 1; r <= rounds[w]; ++r) if ((w, "none", r) in cpu) v[++m] = cpu[w, "none", r]
      floor = median(v, m)
    }
    for (i = 1; i <= nc; ++i) {
      c = cfg[i]
      m = 0
      lo = ""; hi = ""
      for (r = 1; r <= rounds[w]; ++r) {
        if (!((w, c, r) in cpu)) continue
        x = cpu[w, c, r]
        v[++m] = x
        if (lo == "" || x < lo) lo = x
        if (hi == "" || x > hi) hi = x
      }
      if (m == 0) continue
      med = median(v, m)
      added = "-"
      if (c != "none" && floor != "" && events[w] > 0) added = sprintf("%.2f", (med - floor) * 1e9 / events[w])
      diff = "-"; signs = "-"
      if (c == ref) {
        diff = "(reference)"
      } else if (c != "none") {
        m = 0; below = 0; above = 0
        for (r = 1; r <= rounds[w]; ++r) {
          if (!((w, c, r) in cpu) || !((w, ref, r) in cpu)) continue
          d = cpu[w, c, r] - cpu[w, ref, r]
          v[++m] = d
          if (d < 0) below++
          if (d > 0) above++
        }
        if (m > 0) {
          diff = sprintf("%+.3f", median(v, m))
          signs = below " / " above
        }
      }
      printf "| %s | %.3f | %.3f-%.3f | %s | %s | %s |\n", c, med, lo, hi, added, diff, signs
    }
    print ""
  }
}

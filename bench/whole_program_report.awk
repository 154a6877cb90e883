# Turns bench/whole_program.sh's results.csv into results.md (stdout): the
# paper's Tables 1-4 (ParLoT paper §4) and where each target stands; writes
# the gnuplot data files (slowdown.dat, bandwidth.dat, ratio.dat, bytes.dat)
# into `outdir`. Usage: awk -F, -f whole_program_report.awk -v outdir=DIR
# -v runs=N results.csv
function fmt(x, p) { return x == "" ? "-" : sprintf("%." p "f", x) }
function geomean(list,    n, i, s, a) {
  n = split(list, a, " ")
  if (n == 0) return ""
  s = 0
  for (i = 1; i <= n; ++i) s += log(a[i])
  return exp(s / n)
}
# Verdicts compare the figure as printed, so a shown 10.0x meets ">= 10".
function ge(x, p, limit) { return (sprintf("%." p "f", x) + 0 >= limit) ? "yes" : "no" }
function le(x, p, limit) { return (sprintf("%." p "f", x) + 0 <= limit) ? "yes" : "no" }
function add(list, x) { return x == "" ? list : (list == "" ? x : list " " x) }
function human(b) {
  if (b == "") return "-"
  if (b >= 1e9) return sprintf("%.2f GB", b / 1e9)
  if (b >= 1e6) return sprintf("%.2f MB", b / 1e6)
  if (b >= 1e3) return sprintf("%.1f kB", b / 1e3)
  return b " B"
}
function is_kernel(w) { return w ~ /^(cg|ep|is|mg)(_mpi)?$/ }
NR == 1 { next }
{
  w = $1; c = $4
  if (!(w in seen_w)) { seen_w[w] = 1; W[++nw] = w; kind[w] = $2; cores[w] = $3 }
  if (!(c in seen_c)) { seen_c[c] = 1; C[++nc] = c }
  t[w, c] = $6; su[w, c] = $9; sn[w, c] = $10; by[w, c] = $11; bw[w, c] = $12
  ev[w, c] = $13; ratio[w, c] = $15; lost[w, c] = $16; st[w, c] = $17
  # A failed run (non-zero exit, output differing from the uninstrumented
  # run's) is shown with its status but kept out of means and targets.
  if ($17 != "ok") bad[w, c] = 1
  if (c == "parlot") { events[w] = $13; raw[w] = $14 }
}
END {
  tracer_list = "parlot-discard parlot-nc parlot-codec1 parlot uftrace lttng callgrind"
  nt = split(tracer_list, T, " ")
  print "# Parlot whole-program benchmark"
  print ""
  print "Median of " runs " run(s) per configuration, runs interleaved across configurations. "
  print "Slowdown = median runtime / median runtime of the uninstrumented build (ParLoT paper §4.2). "
  print "Bandwidth = trace bytes / runtime / cores (kB/s per core, 1 kB = 1000 B). "
  print "Compression ratio = raw bytes (16-bit word stream) / trace bytes on disk."
  print ""

  # ---- Table 1: slowdown by tool (paper Table 1, Figs. 2-3) --------------
  print "## Table 1. Slowdown over the uninstrumented build"
  print ""
  hdr = "| workload | cores | uninstr. s | no-op |"; sep = "|---|---|---|---|"
  for (i = 1; i <= nt; ++i) if (T[i] in seen_c) { hdr = hdr " " T[i] " |"; sep = sep "---|" }
  print hdr; print sep
  for (j = 1; j <= nw; ++j) {
    w = W[j]
    line = "| " w " | " cores[w] " | " fmt(t[w, "uninstrumented"], 3) " | " fmt(su[w, "noop"], 2) " |"
    g_noop = add(g_noop, su[w, "noop"])
    for (i = 1; i <= nt; ++i) if (T[i] in seen_c) {
      x = su[w, T[i]]
      note = st[w, T[i]] != "ok" && st[w, T[i]] != "" ? " (" st[w, T[i]] ")" : ""
      if (T[i] == "lttng" && lost[w, T[i]] > 0) note = note " (" lost[w, T[i]] " lost)"
      line = line " " fmt(x, 2) note " |"
      if (x != "" && !bad[w, T[i]]) g[T[i]] = add(g[T[i]], x)
    }
    print line
  }
  line = "| **geometric mean** | | | " fmt(geomean(g_noop), 2) " |"
  for (i = 1; i <= nt; ++i) if (T[i] in seen_c) line = line " **" fmt(geomean(g[T[i]]), 2) "** |"
  print line
  print ""

  # ---- Table 4: Parlot versions over the no-op build (paper Table 4) -----
  print "## Table 4. Parlot versions: slowdown over the instrumented build with no-op hooks"
  print ""
  # ns per event over no-op: (runtime - no-op runtime) x cores / events.
  print "| workload | no-op s | compress to nowhere | Parlot-NC | Parlot codec 1 | Parlot | ns per event over no-op: Parlot-NC | Parlot codec 1 | Parlot |"
  print "|---|---|---|---|---|---|---|---|---|"
  for (j = 1; j <= nw; ++j) {
    w = W[j]
    for (k = 1; k <= 3; ++k) {
      v = k == 1 ? "parlot-nc" : (k == 2 ? "parlot-codec1" : "parlot")
      ns[k] = ""
      if (t[w, v] != "" && t[w, "noop"] != "" && events[w] > 0 && !bad[w, v])
        ns[k] = (t[w, v] - t[w, "noop"]) * 1e9 * cores[w] / events[w]
    }
    print "| " w " | " fmt(t[w, "noop"], 3) " | " fmt(sn[w, "parlot-discard"], 2) " | " fmt(sn[w, "parlot-nc"], 2) " | " fmt(sn[w, "parlot-codec1"], 2) " | " fmt(sn[w, "parlot"], 2) " | " fmt(ns[1], 2) " | " fmt(ns[2], 2) " | " fmt(ns[3], 2) " |"
    for (i = 1; i <= nt; ++i) if (sn[w, T[i]] != "" && !bad[w, T[i]]) h[T[i]] = add(h[T[i]], sn[w, T[i]])
    # Compression against raw words (issue 12): Parlot minus Parlot-NC.
    if (ns[1] != "" && ns[3] != "") {
      x = ns[3] - ns[1]
      if (worst_nc == "" || x > worst_nc) { worst_nc = x; worst_ncw = w }
    }
  }
  print "| **geometric mean** | | " fmt(geomean(h["parlot-discard"]), 2) " | " fmt(geomean(h["parlot-nc"]), 2) " | " fmt(geomean(h["parlot-codec1"]), 2) " | **" fmt(geomean(h["parlot"]), 2) "** | | | |"
  print ""

  # ---- Table 2: bandwidth (paper Table 2, Figs. 4-5) ---------------------
  print "## Table 2. Bandwidth per core (kB/s)"
  print ""
  hdr = "| workload |"; sep = "|---|"
  for (i = 2; i <= nt; ++i) if (T[i] in seen_c) { hdr = hdr " " T[i] " |"; sep = sep "---|" }
  print hdr; print sep
  for (j = 1; j <= nw; ++j) {
    w = W[j]; line = "| " w " |"
    for (i = 2; i <= nt; ++i) if (T[i] in seen_c) {
      line = line " " fmt(bw[w, T[i]], 1) " |"
      if (bw[w, T[i]] != "" && bw[w, T[i]] > 0 && !bad[w, T[i]]) gb[T[i]] = add(gb[T[i]], bw[w, T[i]])
    }
    print line
  }
  line = "| **geometric mean** |"
  for (i = 2; i <= nt; ++i) if (T[i] in seen_c) line = line " **" fmt(geomean(gb[T[i]]), 1) "** |"
  print line
  print ""

  # ---- Table 3: compression ratio and trace sizes (paper Table 3, Figs. 6-7)
  print "## Table 3. Events, compression ratio and trace size"
  print ""
  print "| workload | events | raw bytes | Parlot bytes | Parlot ratio | Parlot codec 1 ratio | Parlot-NC bytes | uftrace bytes | uftrace / Parlot | LTTng bytes | LTTng / Parlot | callgrind bytes |"
  print "|---|---|---|---|---|---|---|---|---|---|---|---|"
  for (j = 1; j <= nw; ++j) {
    w = W[j]
    pb = by[w, "parlot"]
    ur = (pb > 0 && by[w, "uftrace"] != "" && !bad[w, "uftrace"]) ? by[w, "uftrace"] / pb : ""
    lr = (pb > 0 && by[w, "lttng"] != "" && !bad[w, "lttng"]) ? by[w, "lttng"] / pb : ""
    print "| " w " | " events[w] " | " human(raw[w]) " | " human(pb) " | " fmt(ratio[w, "parlot"], 0) " | " fmt(ratio[w, "parlot-codec1"], 0) " | " human(by[w, "parlot-nc"]) " | " human(by[w, "uftrace"]) " | " fmt(ur, 0) " | " human(by[w, "lttng"]) " | " fmt(lr, 0) " | " human(by[w, "callgrind"]) " |"
    if (ratio[w, "parlot"] != "") gr = add(gr, ratio[w, "parlot"])
    if (ur != "") gu = add(gu, ur)
  }
  print "| **geometric mean** | | | | **" fmt(geomean(gr), 0) "** | | | | **" fmt(geomean(gu), 0) "** | | | |"
  print ""

  # ---- Targets ----------------------------------------------------------
  print "## Targets"
  print ""
  for (j = 1; j <= nw; ++j) {
    w = W[j]
    if (is_kernel(w)) {
      x = sn[w, "parlot"]; if (x != "" && (worst_k == "" || x > worst_k)) { worst_k = x; worst_kw = w }
      x = bw[w, "parlot"]; if (x != "" && (worst_b == "" || x > worst_b)) { worst_b = x; worst_bw = w }
      x = ratio[w, "parlot"]; if (x != "" && (worst_r == "" || x < worst_r)) { worst_r = x; worst_rw = w }
      if (ratio[w, "parlot"] != "") kr = add(kr, ratio[w, "parlot"])
      if (bw[w, "parlot"] != "") kb = add(kb, bw[w, "parlot"])
    }
    # Speed against uftrace and LTTng: runtime ratio and added-time ratio.
    for (k = 1; k <= 2; ++k) {
      tool = k == 1 ? "uftrace" : "lttng"
      if (t[w, tool] == "" || t[w, "parlot"] == "" || bad[w, tool] || bad[w, "parlot"]) continue
      rt = t[w, tool] / t[w, "parlot"]
      ad = (t[w, "parlot"] > t[w, "noop"]) ? (t[w, tool] - t[w, "noop"]) / (t[w, "parlot"] - t[w, "noop"]) : ""
      if (min_rt[tool] == "" || rt < min_rt[tool]) { min_rt[tool] = rt; min_rtw[tool] = w }
      if (ad != "" && (min_ad[tool] == "" || ad < min_ad[tool])) { min_ad[tool] = ad; min_adw[tool] = w }
      gt[tool] = add(gt[tool], rt)
      if (ad != "") ga[tool] = add(ga[tool], ad)
    }
    if (by[w, "uftrace"] != "" && by[w, "parlot"] > 0 && !bad[w, "uftrace"]) {
      x = by[w, "uftrace"] / by[w, "parlot"]
      if (min_sz == "" || x < min_sz) { min_sz = x; min_szw = w }
    }
  }
  print "| target | measured | met |"
  print "|---|---|---|"
  if (worst_k != "") print "| NAS-style kernels: Parlot <= 1.5x the no-op build | worst " fmt(worst_k, 2) "x (" worst_kw ") | " le(worst_k, 2, 1.5) " |"
  for (k = 1; k <= 2; ++k) {
    tool = k == 1 ? "uftrace" : "lttng"
    if (min_rt[tool] == "") continue
    print "| >= 10x faster than " tool " (runtime ratio) | worst " fmt(min_rt[tool], 1) "x (" min_rtw[tool] "), geometric mean " fmt(geomean(gt[tool]), 1) "x | " ge(min_rt[tool], 1, 10) " |"
    if (min_ad[tool] != "") print "| >= 10x less added time than " tool " (time over no-op) | worst " fmt(min_ad[tool], 1) "x (" min_adw[tool] "), geometric mean " fmt(geomean(ga[tool]), 1) "x | " ge(min_ad[tool], 1, 10) " |"
  }
  if (worst_nc != "") print "| compression costs no more than raw words (Parlot - Parlot-NC, ns per event) | worst " sprintf("%+.2f", worst_nc) " (" worst_ncw ") | " le(worst_nc, 2, 0) " |"
  if (min_sz != "") print "| traces >= 100x smaller than uftrace's | worst " fmt(min_sz, 0) "x (" min_szw ") | " ge(min_sz, 0, 100) " |"
  if (worst_b != "") print "| NAS-style kernels: bandwidth <= 56 kB/s per core | worst " fmt(worst_b, 1) " (" worst_bw "), geometric mean " fmt(geomean(kb), 1) " | " le(worst_b, 1, 56) " |"
  if (worst_r != "") print "| NAS-style kernels: compression ratio >= 644 | worst " fmt(worst_r, 0) " (" worst_rw "), geometric mean " fmt(geomean(kr), 0) " | " ge(worst_r, 0, 644) " |"
  print ""

  # ---- gnuplot data -------------------------------------------------------
  f1 = outdir "/slowdown.dat"; f2 = outdir "/bandwidth.dat"; f3 = outdir "/ratio.dat"; f4 = outdir "/bytes.dat"
  h1 = "workload noop"; h2 = "workload"; h4 = "workload"
  for (i = 1; i <= nt; ++i) if (T[i] in seen_c) {
    h1 = h1 " " T[i]
    if (i >= 2) { h2 = h2 " " T[i]; h4 = h4 " " T[i] }
  }
  print h1 > f1; print h2 > f2; print "workload parlot parlot-nc" > f3; print h4 > f4
  for (j = 1; j <= nw; ++j) {
    w = W[j]
    l1 = w " " (su[w, "noop"] == "" ? "-" : su[w, "noop"]); l2 = w; l4 = w
    for (i = 1; i <= nt; ++i) if (T[i] in seen_c) {
      l1 = l1 " " (su[w, T[i]] == "" ? "-" : su[w, T[i]])
      if (i >= 2) {
        l2 = l2 " " (bw[w, T[i]] == "" ? "-" : bw[w, T[i]])
        l4 = l4 " " (by[w, T[i]] == "" ? "-" : by[w, T[i]])
      }
    }
    print l1 > f1; print l2 > f2; print l4 > f4
    print w " " (ratio[w, "parlot"] == "" ? "-" : ratio[w, "parlot"]) " " (ratio[w, "parlot-nc"] == "" ? "-" : ratio[w, "parlot-nc"]) > f3
  }
}

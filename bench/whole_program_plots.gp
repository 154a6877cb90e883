# Plots of bench/whole_program.sh in the shape of the ParLoT paper's
# Figs. 2-7: per workload, clustered bars for each configuration. Run in the
# results directory (reads slowdown.dat, bandwidth.dat, ratio.dat, bytes.dat;
# writes slowdown.png, bandwidth.png, ratio.png, bytes.png).
set terminal pngcairo size 1400,600 font ",10" noenhanced
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set key outside right top
set xtics rotate by -30
set datafile missing "-"
set logscale y

set output "slowdown.png"
set title "Slowdown over the uninstrumented build (runtime ratio, log scale; paper Figs. 2-3)"
set ylabel "slowdown (x)"
plot for [i=2:*] "slowdown.dat" using i:xtic(1) title columnheader(i)

set output "bandwidth.png"
set title "Trace bandwidth per core (kB/s, log scale; paper Figs. 4-5)"
set ylabel "kB/s per core"
plot for [i=2:*] "bandwidth.dat" using i:xtic(1) title columnheader(i)

set output "bytes.png"
set title "Trace size on disk (bytes, log scale)"
set ylabel "bytes"
plot for [i=2:*] "bytes.dat" using i:xtic(1) title columnheader(i)

set output "ratio.png"
set title "Parlot compression ratio (raw bytes / trace bytes, log scale; paper Figs. 6-7)"
set ylabel "compression ratio"
plot "ratio.dat" using 2:xtic(1) title "Parlot"

# median(a, n): the median of the n values in a[1..n], sorted in place: the
# middle one, the lower middle for even n (as bench/whole_program.sh).
# Shared by the runtime_ab reports: awk -f bench/median.awk -f <report>.awk
function median(a, n,    i, j, x) {
  for (i = 2; i <= n; ++i) {
    x = a[i]
    for (j = i - 1; j >= 1 && a[j] > x; --j) a[j + 1] = a[j]
    a[j + 1] = x
  }
  return a[int((n + 1) / 2)]
}

/* An uninstrumented shared library for bench/libcall_cost: the cheapest
   function there is, so what a library call costs to trace is not hidden by
   the call's own work. */
int parlot_bench_callee(int x) {
  return x + 1;
}

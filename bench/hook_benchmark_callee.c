/* Instrumented callees for hook_benchmark.cpp. */
#define NOINLINE __attribute__((noinline))
volatile int parlot_bench_sink;

NOINLINE void parlot_bench_leaf(int x) {
  parlot_bench_sink = x;
}

/* A call-dense loop body as in real code: one caller, two callees. */
NOINLINE void parlot_bench_pair(int x) {
  parlot_bench_leaf(x);
  parlot_bench_leaf(x + 1);
}

/* A leaf for the record filter's cost: run with
 * PARLOT_EXCLUDE=parlot_bench_excluded_leaf, its hooks find it excluded. */
NOINLINE void parlot_bench_excluded_leaf(int x) {
  parlot_bench_sink = x;
}

// Cost of an instrumented call (entry + exit hook pair) in ns. Run twice:
//   hook_benchmark                                   (glibc's no-op hooks: the floor)
//   LD_PRELOAD=.../libparlotrt.so hook_benchmark     (Parlot; PARLOT_COMPRESS=0 for NC)
// The difference per call is Parlot's cost per entry+exit pair (2 events).
// BM_ExcludedCall measures the record filter: with
// PARLOT_EXCLUDE=parlot_bench_excluded_leaf its hooks look the function up,
// find it excluded and return; compare with the same case run bare.
#include <benchmark/benchmark.h>

extern "C" void parlot_bench_leaf(int x);
extern "C" void parlot_bench_pair(int x);
extern "C" void parlot_bench_excluded_leaf(int x);

namespace {

void BM_InstrumentedCall(benchmark::State& state) {
  int i = 0;
  for (auto _ : state) parlot_bench_leaf(i++);
  state.SetItemsProcessed(state.iterations());
  state.counters["events_per_call"] = 2;
}
BENCHMARK(BM_InstrumentedCall);

void BM_CallerWithTwoCallees(benchmark::State& state) {
  int i = 0;
  for (auto _ : state) parlot_bench_pair(i++);
  state.SetItemsProcessed(state.iterations() * 3);  // three instrumented calls
}
BENCHMARK(BM_CallerWithTwoCallees);

void BM_ExcludedCall(benchmark::State& state) {
  int i = 0;
  for (auto _ : state) parlot_bench_excluded_leaf(i++);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ExcludedCall);

}  // namespace

BENCHMARK_MAIN();

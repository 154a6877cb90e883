// Cost of an instrumented call (entry + exit hook pair) in ns. Run twice:
//   hook_benchmark                                   (glibc's no-op hooks: the floor)
//   LD_PRELOAD=.../libparlotrt.so hook_benchmark     (Parlot; PARLOT_COMPRESS=0 for NC)
// The difference per call is Parlot's cost per entry+exit pair (2 events).
// BM_ExcludedCall measures the record filter: with
// PARLOT_EXCLUDE='parlot_bench_excluded_*' its hooks find the function is
// the thread's last excluded one and return; BM_AlternatingExcludedCalls
// alternates two excluded functions, so each call looks its function up in
// the ID table. BM_CallPausedForThread and BM_CallPausedForProcess call the
// leaf inside parlot_pause() / parlot_pause_all() (no-ops when the runtime
// is not loaded): what a paused region costs. Compare with the same cases
// run bare.
#include <benchmark/benchmark.h>

extern "C" void parlot_bench_leaf(int x);
extern "C" void parlot_bench_pair(int x);
extern "C" void parlot_bench_excluded_leaf(int x);
extern "C" void parlot_bench_excluded_other(int x);
// The runtime's API (include/parlot/parlot.h), weak: absent in the bare run.
extern "C" void parlot_pause(void) __attribute__((weak));
extern "C" void parlot_resume(void) __attribute__((weak));
extern "C" void parlot_pause_all(void) __attribute__((weak));
extern "C" void parlot_resume_all(void) __attribute__((weak));

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

void BM_AlternatingExcludedCalls(benchmark::State& state) {
  int i = 0;
  for (auto _ : state) {
    parlot_bench_excluded_leaf(i++);
    parlot_bench_excluded_other(i++);
  }
  state.SetItemsProcessed(state.iterations() * 2);  // two instrumented calls
}
BENCHMARK(BM_AlternatingExcludedCalls);

// Calls of the leaf between `pause` and `resume` (skipped when the runtime,
// whose API they are, is not loaded).
void paused_calls(benchmark::State& state, void (*pause)(), void (*resume)()) {
  if (pause != nullptr) pause();
  int i = 0;
  for (auto _ : state) parlot_bench_leaf(i++);
  if (resume != nullptr) resume();
  state.SetItemsProcessed(state.iterations());
}

void BM_CallPausedForThread(benchmark::State& state) {
  paused_calls(state, parlot_pause, parlot_resume);
}
BENCHMARK(BM_CallPausedForThread);

void BM_CallPausedForProcess(benchmark::State& state) {
  paused_calls(state, parlot_pause_all, parlot_resume_all);
}
BENCHMARK(BM_CallPausedForProcess);

}  // namespace

BENCHMARK_MAIN();

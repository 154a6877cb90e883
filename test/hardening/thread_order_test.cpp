// Thread indices follow creation, not first events (docs/FORMAT.md, thread
// indices): thread_order.c makes its threads' first events in another order
// than it creates them (a constructor's thread first, workers in reverse),
// with a thread that makes no event, a C11 thread and one created behind
// the interposer's back; openmp_order.c lets libgomp start a team.
#include <map>
#include <string>

#include "hardening_fixture.h"

namespace parlot::hardening {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// "name{ (n) x step }"
std::string steps_under(const std::string& name, int n) {
  std::string spec = name + "{";
  for (int i = 0; i < n; ++i) spec += " step";
  return tree_text(spec + " }");
}

class ThreadOrder : public HardeningTest {
 protected:
  static constexpr int kWorkers = 4;

  // Runs thread_order into `trace_dir` (workers' first events in `order`:
  // "reverse" or "forward"); returns thread index -> call tree.
  std::map<std::uint64_t, std::string> run_into(const fs::path& trace_dir,
                                                const std::string& order = "reverse") {
    const RunResult r =
        run_traced({prog("thread_order"), std::to_string(kWorkers), order}, trace_dir);
    EXPECT_EQ(r.exit_status, 0) << r.err;
    EXPECT_EQ(r.out, "workers 4\n");
    const RunResult read = parlot_read({"trace", trace_dir.string()});
    EXPECT_EQ(read.exit_status, 0) << read.err;  // no thread file reported missing
    std::map<std::uint64_t, std::string> by_index;
    for (const ThreadText& t : split_threads(read.out)) {
      EXPECT_TRUE(by_index.emplace(t.index, t.body).second) << "index " << t.index << " twice";
    }
    return by_index;
  }

  // The trees thread_order.c's header promises, by index.
  static std::map<std::uint64_t, std::string> expected() {
    std::map<std::uint64_t, std::string> want;
    want[0] = tree_text("main");
    want[1] = tree_text("ctor_thread{ctor_work}");
    std::uint64_t index = 2;
    for (int k = 0; k < kWorkers; ++k) {
      want[index++] = steps_under("worker", k + 1);
      if (k == 1) ++index;  // the thread without events: no file
    }
    want[index++] = steps_under("c11_thread", 1);
    want[index] = steps_under("raw_thread", 2);
    return want;
  }
};

// Five runs: the thread with index k ran the same code in each, although
// the workers' first events come in reverse creation order and the
// constructor's thread makes the process's first event.
TEST_P(ThreadOrder, IndicesFollowCreationOrderInEveryRun) {
  const auto want = expected();
  for (int run = 0; run < 5; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    TempDir trace_dir;
    EXPECT_EQ(run_into(trace_dir.path()), want);
    const auto processes = open_trace_directory(trace_dir.path());
    ASSERT_EQ(processes.size(), 1u);
    EXPECT_EQ(processes[0].metadata.threads, want.size());  // traces started
    EXPECT_TRUE(processes[0].errors.empty());
  }
}

// diff pairs threads by index: two runs whose workers start in opposite
// orders are identical thread by thread (numbered by first event, worker 0
// of one run met worker 3 of the other).
TEST_P(ThreadOrder, DiffOfTwoRunsIsIdentical) {
  TempDir left, right;
  ASSERT_EQ(run_into(left.path(), "reverse").size(), expected().size());
  ASSERT_EQ(run_into(right.path(), "forward").size(), expected().size());
  const RunResult d = parlot_read({"diff", left.path().string(), right.path().string()});
  EXPECT_EQ(d.exit_status, 0) << d.err;
  // Identical pairs are counted on the first line, not listed.
  EXPECT_EQ(d.out, left.path().filename().string() + " vs " + right.path().filename().string() +
                       ": 0 threads differ (0 groups), " + std::to_string(expected().size()) +
                       " identical\n");
}

// A thread forks: in the child, the forking thread is thread 0 and the
// thread the child creates is 1, while the parent keeps its own numbering.
TEST_P(ThreadOrder, ForkChildNumbersItsThreadsAfresh) {
  const RunResult r = run_traced({prog("thread_order"), "fork"}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "fork\n");
  const auto threads = trace_threads();
  std::map<std::pair<std::size_t, std::uint64_t>, std::string> got;
  for (const ThreadText& t : threads) got[{t.process, t.index}] = t.body;
  const std::map<std::pair<std::size_t, std::uint64_t>, std::string> want = {
      {{0, 0}, tree_text("main")},
      {{0, 1}, tree_text("ctor_thread{ctor_work}")},
      {{0, 2}, tree_text("forking_thread{step}")},
      {{1, 0}, tree_text("forking_thread{in_child}")},
      {{1, 1}, tree_text("child_worker{step}")},
  };
  EXPECT_EQ(got, want) << last_read.out;
}

PARLOT_HARDENING_VARIANTS_OF(ThreadOrder);

// libgomp creates team thread k with the process's k-th pthread_create:
// index k is team thread k in every run, in both parallel regions.
class OpenMpOrder : public ::testing::TestWithParam<std::string> {};

TEST_P(OpenMpOrder, TeamThreadKIsIndexK) {
  const std::string program = std::string(PARLOT_HARDENING_BIN_DIR) + "/openmp_order_" + GetParam();
  for (int run = 0; run < 5; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    TempDir trace_dir;
    const RunResult r = run_traced({program, "4"}, trace_dir.path());
    ASSERT_EQ(r.exit_status, 0) << r.err;
    ASSERT_EQ(r.out, "threads 4\n");
    const RunResult read = parlot_read({"trace", trace_dir.path().string()});
    ASSERT_EQ(read.exit_status, 0) << read.err;
    const auto threads = split_threads(read.out);
    ASSERT_EQ(threads.size(), 4u) << read.out;
    for (const ThreadText& t : threads) {
      SCOPED_TRACE("thread #" + std::to_string(t.index));
      // Only team_work and step: the outlined regions (main._omp_fn.0)
      // and main are left out.
      const Events work = strip_frames(parse_text(t.body), [](const std::string& name) {
        return name != "team_work()" && name != "step()";
      });
      std::string spec;
      for (int region = 0; region < 2; ++region) {
        spec += "team_work{";
        for (std::uint64_t i = 0; i <= t.index; ++i) spec += " step";
        spec += " } ";
      }
      EXPECT_EQ(render(work), tree_text(spec)) << t.body;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Hardening, OpenMpOrder,
                         ::testing::Values(std::string("gcc_O0"), std::string("gcc_O2")),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace parlot::hardening

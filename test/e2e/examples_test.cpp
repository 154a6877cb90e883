// The bundled examples under the runtime. Each thread's decoded trace must
// equal, event for event, what an independent trivial recorder
// (oracle_hooks.c) saw in a separate run of the same deterministic program,
// and the trace must name the functions readably.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "e2e_support.h"

namespace parlot::e2e {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

using ThreadLines = std::vector<std::string>;

// The oracle's per-thread event lines, in no particular thread order.
std::vector<ThreadLines> oracle_threads(const std::vector<std::string>& argv) {
  TempDir dir;
  const RunResult r = run(argv, {std::string("LD_PRELOAD=") + PARLOT_ORACLE_PATH,
                                 "PARLOT_ORACLE_DIR=" + dir.path().string()});
  EXPECT_EQ(r.exit_status, 0) << r.err;
  std::vector<ThreadLines> threads;
  for (const auto& f : fs::directory_iterator(dir.path())) {
    std::ifstream in(f.path());
    ThreadLines lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    if (!lines.empty()) threads.push_back(std::move(lines));
  }
  return threads;
}

// Parlot's per-thread events in the oracle's notation.
std::vector<ThreadLines> parlot_threads(const ProcessTrace& process) {
  std::vector<ThreadLines> threads;
  for (const auto& events : read_thread_events(process)) {
    ThreadLines lines;
    for (const std::uint32_t id : events) {
      if (id == 0) {
        lines.push_back("X");
        continue;
      }
      const std::uint64_t address = process.function_addresses.at(id - 1);
      std::string where = "?";
      for (const auto& o : process.load_map) {
        if (!o.contains(address)) continue;
        char buf[64];
        std::snprintf(buf, sizeof buf, "+%lx", static_cast<unsigned long>(address - o.load_bias));
        where = fs::path(o.path).filename().string() + buf;
        break;
      }
      lines.push_back("E " + where);
    }
    threads.push_back(std::move(lines));
  }
  return threads;
}

struct Example {
  std::string name;
  std::vector<std::string> args;
  std::vector<std::string> expected_names;  // must appear in `parlot-read trace`
  std::size_t threads;
};

class ExampleTrace : public ::testing::TestWithParam<Example> {};

TEST_P(ExampleTrace, EveryThreadMatchesTheOracleAndIsNamed) {
  const Example& ex = GetParam();
  const std::string program = examples_dir() + "/" + ex.name;
  if (!fs::exists(program)) GTEST_SKIP() << program << " was not built";
  std::vector<std::string> argv{program};
  argv.insert(argv.end(), ex.args.begin(), ex.args.end());

  TempDir dir;
  const RunResult traced = run_traced(argv, dir.path());
  ASSERT_EQ(traced.exit_status, 0) << traced.err;
  const RunResult plain = run(argv);
  EXPECT_EQ(traced.out, plain.out) << "tracing changed the program's output";

  const auto processes = open_trace_directory(dir.path());
  ASSERT_EQ(processes.size(), 1u);
  auto got = parlot_threads(processes[0]);
  auto want = oracle_threads(argv);
  ASSERT_EQ(got.size(), ex.threads);
  ASSERT_EQ(want.size(), ex.threads);
  // Thread start order is the scheduler's: compare as sorted multisets.
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  for (std::size_t t = 0; t < got.size(); ++t) {
    ASSERT_EQ(got[t].size(), want[t].size()) << ex.name << " thread " << t;
    EXPECT_TRUE(got[t] == want[t]) << ex.name << " thread " << t << " differs from the oracle";
  }
  for (const auto& f : processes[0].thread_files) {
    ThreadEventReader r(f);
    EXPECT_EQ(r.summary().trailer->corrected_exits, 0u) << f;
    EXPECT_EQ(r.summary().trailer->unmatched_exits, 0u) << f;
  }

  const RunResult text = parlot_read({"trace", dir.path().string()});
  ASSERT_EQ(text.exit_status, 0) << text.err;
  for (const auto& name : ex.expected_names) EXPECT_THAT(text.out, HasSubstr(name));
  EXPECT_THAT(text.out, ::testing::Not(HasSubstr("0x"))) << "an address was left unnamed";
}

std::vector<Example> examples() {
  std::vector<Example> v{
      {"quicksort_threads",
       {"2000", "3"},
       {"quicksort() {", "partition()", "insertion_sort();"},
       4},
      {"cpp_features", {"4"}, {"::", "operator", "~"}, 1},
      {"cg", {"30", "2"}, {"conj_grad() {", "sparse_matvec() {", "dot();"}, 1},
      {"ep", {"10"}, {"ep_kernel() {", "batch_seed();", "vranlc();", "gaussian_batch();"}, 1},
      {"is", {"10", "8", "2"}, {"rank_keys() {", "rank_bucket();", "full_verify() {"}, 1},
      {"mg", {"4", "2"}, {"mg3P() {", "rprj3() {", "interp_row();", "psinv_row();"}, 1},
      {"many_functions", {}, {"  f00000();\n", "  f69999();\n"}, 1},
  };
  if (fs::exists(examples_dir() + "/jacobi")) {
    v.push_back({"jacobi", {"10", "3"}, {"stencil::apply_stencil() {"}, 1});
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleTrace, ::testing::ValuesIn(examples()),
                         [](const auto& info) { return info.param.name; });

TEST(ManyFunctions, IdsBeyond65535AreTracedAndSymbolized) {
  const std::string program = examples_dir() + "/many_functions";
  if (!fs::exists(program)) GTEST_SKIP();
  TempDir dir;
  ASSERT_EQ(run_traced({program}, dir.path()).exit_status, 0);
  const auto processes = open_trace_directory(dir.path());
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_EQ(processes[0].function_addresses.size(), 70001u);  // main + 70,000
  const auto events = read_thread_events(processes[0]);
  ASSERT_EQ(events.size(), 1u);
  ASSERT_EQ(events[0].size(), 2u * 70001u);
  EXPECT_EQ(*std::max_element(events[0].begin(), events[0].end()), 70001u);
  const RunResult info = parlot_read({"info", dir.path().string()});
  EXPECT_THAT(info.out, HasSubstr("70001 functions"));
}

}  // namespace
}  // namespace parlot::e2e

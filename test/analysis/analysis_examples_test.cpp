// The analysis views on real traces: every example of examples/ runs under
// libparlotrt.so (default, test-sized arguments); the loop summary of every
// thread must expand back to exactly its decoded stream (NLR is lossless),
// and parlot-read's loops, classes, stacks and diff give the exact output
// the examples' fixed call sequences define.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/loops.h"
#include "parlot/call_stack_tracker.h"
#include "parlot/trace_reader.h"
#include "temp_dir.h"

namespace parlot {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

/// Runs `command` through the shell; returns its stdout and sets `status`.
std::string run(const std::string& command, int* status = nullptr) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return out;
  std::array<char, 4096> buf;
  for (std::size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) out.append(buf.data(), n);
  const int s = pclose(p);
  if (status) *status = WIFEXITED(s) ? WEXITSTATUS(s) : -1;
  return out;
}

/// Traces `program` (with `args`) into `dir`; returns false when it failed.
bool trace(const std::string& program, const std::string& args, const fs::path& dir) {
  int status = -1;
  run("PARLOT_DIR='" + dir.string() + "' PARLOT_QUIET=1 LD_PRELOAD='" PARLOT_RUNTIME_PATH "' '" +
          program + "' " + args + " >/dev/null 2>&1",
      &status);
  return status == 0;
}

std::string read_tool(const std::string& args, int* status = nullptr) {
  return run("'" PARLOT_READ_PATH "' " + args + " 2>&1", status);
}

TEST(AnalysisExamples, LoopSummaryExpandsToTheStreamOnEveryExample) {
  test::TempDir tmp;
  std::vector<std::string> programs = {"quicksort_threads", "cpp_features", "cg", "ep", "is", "mg",
                                       "many_functions"};
  if (fs::exists(fs::path(PARLOT_EXAMPLES_DIR) / "jacobi")) programs.push_back("jacobi");
  for (const auto& name : programs) {
    SCOPED_TRACE(name);
    const fs::path dir = tmp.path() / name;
    ASSERT_TRUE(trace((fs::path(PARLOT_EXAMPLES_DIR) / name).string(), "", dir));
    std::size_t threads = 0;
    for (const auto& process : open_trace_directory(dir)) {
      for (const auto& file : process.thread_files) {
        ThreadEventReader reader(file);
        CallStackTracker tracker(process.function_addresses.size(), file);
        std::vector<analysis::Event> events;
        for (auto b = reader.next_batch(); !b.empty(); b = reader.next_batch()) {
          for (const std::uint32_t id : b) {
            const CallEvent c = tracker.push(id);
            events.push_back({c.kind == CallEvent::Kind::kEnter, c.function_id, c.depth});
          }
        }
        for (const std::size_t k : {1u, 4u, 8u}) {
          analysis::LoopBuilder builder(k);
          for (const auto& e : events) builder.push(e);
          const analysis::LoopSummary s = builder.finish();
          ASSERT_EQ(s.event_count(), events.size()) << file << " K=" << k;
          ASSERT_TRUE(s.expand() == events) << file << " K=" << k;
        }
        ++threads;
      }
    }
    EXPECT_GT(threads, 0u);
  }
}

class AnalysisViews : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new test::TempDir();
    ASSERT_TRUE(trace(std::string(PARLOT_EXAMPLES_DIR) + "/quicksort_threads", "1000 4",
                      tmp_->path() / "qs"));
    ASSERT_TRUE(trace(std::string(PARLOT_EXAMPLES_DIR) + "/quicksort_threads", "1000 4",
                      tmp_->path() / "qs2"));
  }
  static void TearDownTestSuite() { delete tmp_; }
  static std::string qs() { return (tmp_->path() / "qs").string(); }
  static std::string qs2() { return (tmp_->path() / "qs2").string(); }
  static test::TempDir* tmp_;
};
test::TempDir* AnalysisViews::tmp_ = nullptr;

TEST_F(AnalysisViews, LoopsOfTheMainThread) {
  int status = -1;
  const std::string out = read_tool("loops " + qs(), &status);
  EXPECT_EQ(status, 0);
  EXPECT_THAT(out, HasSubstr("process 0 thread 0 (2020 events): main { 2 x [ parse_count ] "
                             "fill_random { 1000 x [ rng_next ] } merge_chunks { 3 x [ "
                             "merge_two ] } checksum is_sorted }\n"));
  // A summary longer than --max-chars is cut (C++ codes: megabytes a line);
  // --all prints it whole.
  const std::string cut = read_tool("loops --max-chars 30 " + qs());
  EXPECT_THAT(cut, HasSubstr("process 0 thread 0 (2020 events): main { 2 x [ parse_count ] "
                             "fill_random { ... (cut at --max-chars; --all for the rest)\n"))
      << cut;
  EXPECT_EQ(read_tool("loops --max-chars 30 --all " + qs()), out);
}

TEST_F(AnalysisViews, FiltersNestCalleesUnderTheNearestKeptCaller) {
  // Dropping fill_random puts rng_next directly under main.
  const std::string out = read_tool("loops --exclude '^fill_random$' " + qs());
  EXPECT_THAT(out, HasSubstr("main { 2 x [ parse_count ] 1000 x [ rng_next ] merge_chunks"));
  const std::string depth = read_tool("loops --max-depth 1 " + qs());
  EXPECT_THAT(depth, HasSubstr("process 0 thread 0 (2 events): main\n"));
  const std::string stats = read_tool("stats --include 'main|rng_next' " + qs());
  EXPECT_THAT(stats, HasSubstr("1000  main -> rng_next\n"));
  const std::string trace_out = read_tool("trace --no-sites --include '^main$|merge' " + qs());
  EXPECT_THAT(trace_out, HasSubstr("main() {\n  merge_chunks() {\n    merge_two();\n"));
}

TEST_F(AnalysisViews, ClassesByEdgesSeparateMainFromTheWorkers) {
  int status = -1;
  const std::string out = read_tool("classes --by edges " + qs(), &status);
  EXPECT_EQ(status, 0) << out;
  // The main thread is a role of its own (thread index 0): not compared
  // with the workers, so not an outlier, its class listed after theirs.
  EXPECT_THAT(out, HasSubstr("2 classes of 5 threads (--by edges)\n"
                             "class A: process 0 threads 1-4 (4 threads)"));
  EXPECT_THAT(out, HasSubstr("class B: process 0 (1 thread), representative process 0 thread 0\n"));
  EXPECT_THAT(out, HasSubstr("class A: process 0 threads 1-4 (4 threads), representative "
                             "process 0 thread 1\n"));
  EXPECT_THAT(out, HasSubstr("first divergence at event 0"));
}

TEST_F(AnalysisViews, StacksOfFinishedThreadsAreEmpty) {
  const std::string out = read_tool("stacks " + qs());
  EXPECT_EQ(out, "5 threads (process 0 threads 0-4)\n  (no open call: process 0 threads 0-4)\n");
  EXPECT_THAT(read_tool("stacks --format dot " + qs()), HasSubstr("digraph stacks {"));
}

TEST_F(AnalysisViews, DiffOfTwoRunsIsIdenticalAndOfTwoThreadsIsNot) {
  // Threads are numbered by creation: worker k (index k + 1) sorts chunk k
  // in both runs, whichever starts first, so every thread pairs with its
  // own kind.
  int status = -1;
  const std::string same = read_tool("diff " + qs() + " " + qs2(), &status);
  EXPECT_EQ(status, 0) << same;
  // Identical pairs are counted, not listed; the runs go by their directories' names.
  EXPECT_EQ(same, fs::path(qs()).filename().string() + " vs " +
                      fs::path(qs2()).filename().string() +
                      ": 0 threads differ (0 groups), 5 identical\n");
  const std::string two =
      read_tool("diff " + qs() + " --left rank=0,thread=1 --right rank=0,thread=2");
  EXPECT_THAT(two, HasSubstr("first divergence at event 4"));
  EXPECT_THAT(two,
              HasSubstr("call stack there: sort_worker > quicksort at quicksort_threads.c:109 > "
                        "partition at quicksort_threads.c:102 > median_of_three at "
                        "quicksort_threads.c:82\n"));
}

// A job stopped by SIGTERM: the runtime closes the frames still open with
// exits of its own (trailer "frames closed at the end"); stacks and classes
// --by stack must show the calls that were open, not an empty stack.
TEST(AnalysisStopped, StacksOfASigtermedRunShowTheOpenCalls) {
  test::TempDir tmp;
  const fs::path dir = tmp.path() / "stopped";
  int status = -1;
  run("PARLOT_DIR='" + dir.string() +
          "' PARLOT_QUIET=1 LD_PRELOAD='" PARLOT_RUNTIME_PATH
          "' timeout -s TERM 1 '" PARLOT_EXAMPLES_DIR
          "/quicksort_threads' 40000000 4 >/dev/null 2>&1",
      &status);
  ASSERT_EQ(status, 124) << "quicksort_threads 40000000 4 finished within 1 s";
  const auto processes = open_trace_directory(dir);
  ASSERT_EQ(processes.size(), 1u);
  std::uint64_t open_frames = 0;
  bool cut = false;  // a thread file without trailer: damage, exit status 1
  for (const auto& f : processes[0].thread_files) {
    ThreadEventReader reader(f);
    if (reader.summary().trailer) {
      open_frames += reader.summary().trailer->closed_at_end;
    } else {
      cut = true;
    }
  }
  // Either the runtime finished the files (closing exits counted in the
  // trailer) or a file was cut by the signal (its stream simply stops):
  // in both cases the calls open at the stop must show.
  ASSERT_TRUE(open_frames > 0 || cut);
  const std::string out = read_tool("stacks '" + dir.string() + "'", &status);
  EXPECT_EQ(status, cut ? 1 : 0) << out;
  EXPECT_THAT(out, HasSubstr("\n  main [1 thread: process 0]\n")) << out;
  EXPECT_THAT(out, ::testing::Not(HasSubstr("(no open call: process 0)"))) << out;
  // Stopped before the workers started: one line per open frame of main.
  if (processes[0].thread_files.size() == 1 && !cut) {
    std::size_t lines = 0;
    for (const char c : out) lines += c == '\n' ? 1 : 0;
    EXPECT_EQ(lines, 1 + open_frames) << out;
  }
}

}  // namespace
}  // namespace parlot

// `parlot-read top` on a job that hangs in a known place (live_fixture:
// main and two threads wait for ever in block_forever): each refresh names
// the frame and a wait that grows; `--iterations 2` exits 0 with nothing
// on stderr; once the job is gone, top prints one last refresh and exits
// by itself. And the reader under it: a thread file read while it grows
// (ThreadEventReader::refresh) gives exactly the events of the whole file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "e2e_support.h"
#include "parlot/trace_reader.h"

extern char** environ;

namespace parlot::e2e {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

/// Per refresh block of `top` output (blocks start "parlot-read top "),
/// thread label -> seconds in block_forever.
std::vector<std::map<std::string, double>> waits(const std::string& out) {
  std::vector<std::map<std::string, double>> blocks;
  std::istringstream in(out);
  const std::regex wait(
      R"(^(process 0(?: thread \d+)?): in block_forever for ([0-9.]+) s  \(.*block_forever\)$)");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("parlot-read top ")) blocks.emplace_back();
    std::smatch m;
    if (!blocks.empty() && std::regex_match(line, m, wait)) blocks.back()[m[1]] = std::stod(m[2]);
  }
  return blocks;
}

class TopOfLiveJob : public ::testing::Test {
 protected:
  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  void start() {
    std::vector<std::string> env = {"PARLOT_DIR=" + dir_.string(), "PARLOT_FLUSH_MS=20",
                                    std::string("LD_PRELOAD=") + PARLOT_RUNTIME_PATH};
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string program = PARLOT_LIVE_FIXTURE;
    char* argv[] = {program.data(), nullptr};
    ASSERT_EQ(::posix_spawn(&pid_, argv[0], nullptr, nullptr, argv, envp.data()), 0);
  }
  TempDir tmp_;
  fs::path dir_ = tmp_.path() / "live";
  pid_t pid_ = -1;
};

TEST_F(TopOfLiveJob, NamesTheFrameEveryThreadHangsInAndAGrowingWait) {
  ASSERT_NO_FATAL_FAILURE(start());
  // Until the idle flusher has written every thread's wait (at most 20 s).
  RunResult r;
  for (int i = 0; i < 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!fs::exists(dir_)) continue;
    r = parlot_read({"top", dir_.string(), "--iterations", "1"});
    const auto w = waits(r.out);
    if (w.size() == 1 && w[0].size() == 3) break;
  }
  ASSERT_EQ(r.exit_status, 0) << r.err;
  r = parlot_read({"top", dir_.string(), "--iterations", "2", "--interval", "0.5"});
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto w = waits(r.out);
  ASSERT_EQ(w.size(), 2u) << r.out;
  ASSERT_EQ(w[0].size(), 3u) << r.out;
  ASSERT_EQ(w[1].size(), 3u) << r.out;
  for (const auto& [thread, first] : w[0]) {
    EXPECT_GE(w[1].at(thread) - first, 0.4) << thread << "\n" << r.out;
  }
  // The second refresh: all of its half second went to block_forever.
  EXPECT_THAT(r.out, HasSubstr("  since the last refresh: block_forever 0."));
  EXPECT_THAT(r.out, HasSubstr("refresh 2; 1 process, 1 running\n"));

  // Gone: one refresh, then top ends by itself.
  ASSERT_EQ(::kill(pid_, SIGKILL), 0);
  ASSERT_EQ(::waitpid(pid_, nullptr, 0), pid_);
  pid_ = -1;
  r = parlot_read({"top", dir_.string(), "--interval", "0.1"});
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("refresh 1; 1 process, 0 running\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("refresh 2")));
  EXPECT_THAT(r.out, HasSubstr(", ended there  (main > block_forever)\n"));
}

TEST(TopOfFinishedJob, PrintsOneRefreshWithEveryThreadFinished) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "qs";
  const RunResult run = run_traced({examples_dir() + "/quicksort_threads", "2000", "3"}, dir);
  ASSERT_EQ(run.exit_status, 0) << run.err;
  const RunResult r = parlot_read({"top", dir.string()});
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("refresh 1; 1 process, 0 running\n"));
  EXPECT_THAT(r.out, ContainsRegex("process 0 thread 0: finished \\([0-9]+ events\\)\n"));
  EXPECT_THAT(r.out, HasSubstr("  since it started: "));
}

// A thread file read while it grows: every prefix (cut anywhere, inside
// blocks too), then the rest appended and refresh()ed, decodes to exactly
// the events and clock samples of the whole file.
TEST(GrowingThreadFile, RefreshGoesOnWhereTheFileEndedWithoutDecodingTwice) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "qs";
  // Small blocks, and a clock sample kept every 7 events: many data and
  // side-record blocks.
  const RunResult run =
      run_traced({examples_dir() + "/quicksort_threads", "100000", "2"}, dir,
                 {"PARLOT_BUFFER_KB=4", "PARLOT_CLOCK_EVENTS=7", "PARLOT_CLOCK_TOLERANCE_NS=0"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  const auto processes = open_trace_directory(dir);
  ASSERT_EQ(processes.size(), 1u);
  const fs::path file = processes[0].thread_files.back();
  const std::string bytes = slurp(file);
  std::vector<std::uint32_t> whole;
  ThreadEventReader full(file);
  for (auto b = full.next_batch(); !b.empty(); b = full.next_batch()) {
    whole.insert(whole.end(), b.begin(), b.end());
  }
  ASSERT_GE(full.summary().blocks, 3u);
  ASSERT_GT(full.summary().side_blocks, 4u);
  std::vector<std::size_t> cuts = {64, bytes.size() - 90, bytes.size() - 1};
  for (std::size_t k = 1; k < 10; ++k) cuts.push_back(k * bytes.size() / 10 + 5);
  for (const std::size_t cut : cuts) {
    SCOPED_TRACE(cut);
    const fs::path growing = tmp.path() / "growing.trace";
    {
      std::ofstream out(growing, std::ios::binary | std::ios::trunc);
      out.write(bytes.data(), static_cast<std::streamsize>(cut));
    }
    ThreadEventReader reader(growing);
    std::vector<std::uint32_t> got;
    for (auto b = reader.next_batch(); !b.empty(); b = reader.next_batch()) {
      got.insert(got.end(), b.begin(), b.end());
    }
    EXPECT_FALSE(reader.refresh());  // nothing new yet
    {
      std::ofstream out(growing, std::ios::binary | std::ios::app);
      out.write(bytes.data() + cut, static_cast<std::streamsize>(bytes.size() - cut));
    }
    EXPECT_TRUE(reader.refresh());
    for (auto b = reader.next_batch(); !b.empty(); b = reader.next_batch()) {
      got.insert(got.end(), b.begin(), b.end());
    }
    EXPECT_EQ(got, whole);
    EXPECT_TRUE(reader.summary().trailer.has_value());
    EXPECT_EQ(reader.summary().clock_samples.size(), full.summary().clock_samples.size());
    EXPECT_EQ(reader.summary().damage, "");
  }
}

}  // namespace
}  // namespace parlot::e2e

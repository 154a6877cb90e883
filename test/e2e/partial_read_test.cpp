// parlot-read shows everything that can be read: a run with a few damaged
// processes and threads prints the rest in every view, with one summary
// line on stderr and exit status 2; a job that is still running reads with
// exit status 0 and nothing on stderr; one killed by SIGKILL says once how
// many threads were cut short, exit status 0.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "e2e_support.h"
#include "parlot/format.h"
#include "parlot/trace_reader.h"

extern char** environ;

namespace parlot::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

/// Lines of `text`, but the notes an export adds ("parlot-read: note: ...").
std::size_t lines_of(const std::string& text) {
  std::size_t n = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t nl = text.find('\n', pos);
    if (text.compare(pos, 19, "parlot-read: note: ") != 0) ++n;
    pos = nl == std::string::npos ? text.size() : nl + 1;
  }
  return n;
}

/// Whether `stacks` output shows main and both threads waiting.
bool all_waiting(const std::string& stacks) {
  return stacks.find("main [1 thread: process 0]\n    block_forever [1 thread") !=
             std::string::npos &&
         stacks.find("block_forever [2 threads: process 0 threads 1-2]") != std::string::npos;
}

/// The only thread file of a process directory.
fs::path thread_file(const fs::path& process_dir) {
  for (const auto& e : fs::directory_iterator(process_dir)) {
    if (e.path().filename().string().starts_with("thread-")) return e.path();
  }
  return {};
}

/// Offset of the first block whose payload is at least 8 bytes (a cut at
/// its middle is inside it).
std::uint64_t first_big_block(const fs::path& file) {
  const std::string bytes = slurp(file);
  for (std::uint64_t off = sizeof(format::TraceFileHeader);
       off + sizeof(format::BlockHeader) <= bytes.size();) {
    format::BlockHeader b{};
    std::memcpy(&b, bytes.data() + off, sizeof b);
    if (b.payload_bytes >= 8) return off;
    off += sizeof b + b.payload_bytes;
  }
  return 0;
}

// fork_tree with 6 children, one at a time: 7 processes of one thread each,
// listed in start order. Four are damaged, each differently.
class DamagedRun : public ::testing::Test {
 protected:
  void SetUp() override {
    const RunResult r = run({PARLOT_FRONTEND_PATH, "record", "-q", "-d", dir_.string(), "--",
                             examples_dir() + "/fork_tree", "6", "20", "--parallel", "1"});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    for (const auto& p : list_trace_directory(dir_)) {
      processes_.push_back(p.directory);
      pids_.push_back(p.metadata.pid);
    }
    ASSERT_EQ(processes_.size(), 7u);
    fs::resize_file(processes_[1] / "process", 0);
    fs::remove(processes_[2] / "loadmap");
    cut_ = thread_file(processes_[3]);
    const std::uint64_t block = first_big_block(cut_);
    ASSERT_GT(block, 0u);
    cut_at_ = block + sizeof(format::BlockHeader) + 4;
    fs::resize_file(cut_, cut_at_);
    garbage_ = thread_file(processes_[4]);
    std::string bytes = slurp(garbage_);
    ASSERT_GT(bytes.size(), 200u);
    for (std::size_t i = 64; i < 200; ++i) bytes[i] = static_cast<char>(i * 37 + 11);
    std::ofstream(garbage_, std::ios::binary | std::ios::trunc) << bytes;
  }

  TempDir tmp_;
  fs::path dir_ = tmp_.path() / "run";
  std::vector<fs::path> processes_;
  std::vector<std::uint64_t> pids_;
  fs::path cut_, garbage_;
  std::uint64_t cut_at_ = 0;
};

TEST_F(DamagedRun, EveryViewShowsTheRestWithOneSummaryLineAndExitsTwo) {
  const std::string d = dir_.string();
  const std::string folded = (tmp_.path() / "out.folded").string();
  struct View {
    std::vector<std::string> args;
    std::string shows;  // something only the intact processes' data gives
  };
  const std::string last_pid = std::to_string(pids_[6]);
  const std::vector<View> views = {
      {{"info", d}, "process " + last_pid + ":"},
      {{"trace", d}, "# process " + last_pid + " "},
      {{"trace", "--format", "jsonl", d}, "\"pid\":" + last_pid + ","},
      {{"stats", d}, "child_work -> step"},
      {{"loops", d}, "child_work { 20 x [ step"},
      {{"classes", d}, "class A: "},
      {{"stacks", d}, "spawn_children ["},
      {{"report", d}, "child_work"},
      {{"diff", d, d}, "identical"},
      {{"export", "-f", "folded", "-o", folded, d}, ""},
  };
  for (const View& v : views) {
    SCOPED_TRACE(v.args[0] + " " + v.args[1]);
    const RunResult r = parlot_read(v.args);
    EXPECT_EQ(r.exit_status, 2) << r.err;
    EXPECT_EQ(lines_of(r.err), 1u) << r.err;
    EXPECT_THAT(r.err, HasSubstr("parlot-read: 1 of 7 processes could not be read, 3 damaged "
                                 "files: "));
    EXPECT_THAT(r.err, HasSubstr((processes_[1] / "process").string() + ": offset 0: empty file"));
    EXPECT_THAT(r.err, HasSubstr((processes_[2] / "loadmap").string() + ": offset 0: missing"));
    EXPECT_THAT(r.err, HasSubstr("; and 1 more\n"));
    EXPECT_THAT(r.out, HasSubstr(v.shows));
  }
  EXPECT_THAT(slurp(folded), HasSubstr("main;spawn_children;child_work;step;compute;mix"));
  // The two damaged thread files, named with their offsets (info names the
  // first three of the four, sorted by path).
  const RunResult info = parlot_read({"info", d});
  EXPECT_THAT(info.err, HasSubstr(cut_.string() + ": offset "));
  // With --pid of the garbage process alone, its error is the one named.
  const RunResult garbage = parlot_read({"stats", "--pid", std::to_string(pids_[4]), d});
  EXPECT_EQ(garbage.exit_status, 2) << garbage.err;
  EXPECT_THAT(garbage.err, HasSubstr(garbage_.string() + ": offset "));
  // Nothing readable: only the empty process file selected.
  const RunResult none = parlot_read({"stats", processes_[1].string()});
  EXPECT_EQ(none.exit_status, 1) << none.err;
  EXPECT_THAT(none.err, HasSubstr("1 of 1 process could not be read"));
}

// A live job: main and two threads wait in block_forever after their calls.
class LiveJob : public ::testing::Test {
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

  /// `stacks` once all three threads' waits are on disk (at most 20 s).
  RunResult stacks_when_flushed() {
    RunResult r;
    for (int i = 0; i < 200; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      std::error_code ec;
      if (!fs::exists(dir_, ec)) continue;
      r = parlot_read({"stacks", dir_.string()});
      if (all_waiting(r.out)) break;
    }
    return r;
  }

  TempDir tmp_;
  fs::path dir_ = tmp_.path() / "live";
  pid_t pid_ = -1;
};

TEST_F(LiveJob, ReadWhileRunningIsNotAnErrorAndKilledSaysCutShortOnce) {
  ASSERT_NO_FATAL_FAILURE(start());
  const RunResult live = stacks_when_flushed();
  ASSERT_TRUE(all_waiting(live.out)) << live.out;
  EXPECT_EQ(live.exit_status, 0) << live.err;
  EXPECT_EQ(live.err, "");
  for (const std::string view : {"info", "stats", "loops", "classes", "trace"}) {
    const RunResult r = parlot_read({view, dir_.string()});
    EXPECT_EQ(r.exit_status, 0) << view << ": " << r.err;
    EXPECT_EQ(r.err, "") << view;
  }
  ASSERT_EQ(::kill(pid_, SIGKILL), 0);
  ASSERT_EQ(::waitpid(pid_, nullptr, 0), pid_);
  pid_ = -1;
  for (const std::string view : {"stacks", "info", "stats", "trace"}) {
    const RunResult r = parlot_read({view, dir_.string()});
    EXPECT_EQ(r.exit_status, 0) << view << ": " << r.err;
    EXPECT_EQ(lines_of(r.err), 1u) << view << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("parlot-read: 3 threads cut short")) << view;
    EXPECT_THAT(r.err, Not(HasSubstr("error"))) << view;
  }
  const RunResult killed = parlot_read({"stacks", dir_.string()});
  EXPECT_TRUE(all_waiting(killed.out)) << killed.out;
}

}  // namespace
}  // namespace parlot::e2e

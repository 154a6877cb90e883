// The user API (include/parlot/parlot.h) under the runtime: paused calls
// are absent, exactly (against the oracle recorder, which marks where the
// program paused and resumed), pause_all covers new threads, parlot_flush()
// puts the data on disk before a SIGKILL, and the stub answers untraced.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "e2e_support.h"

namespace parlot::e2e {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;
using Lines = std::vector<std::string>;

// The oracle's events of the (single-threaded) run, with the calls made
// between its "P" and "R" marks (nesting) dropped.
Lines oracle_unpaused_events(const std::vector<std::string>& argv) {
  TempDir dir;
  const RunResult r = run(argv, {std::string("LD_PRELOAD=") + PARLOT_ORACLE_PATH,
                                 "PARLOT_ORACLE_DIR=" + dir.path().string()});
  EXPECT_EQ(r.exit_status, 0) << r.err;
  Lines lines;
  int paused = 0;
  std::size_t files = 0;
  for (const auto& f : fs::directory_iterator(dir.path())) {
    ++files;
    std::ifstream in(f.path());
    for (std::string line; std::getline(in, line);) {
      if (line == "P") {
        ++paused;
      } else if (line == "R") {
        --paused;
      } else if (paused == 0) {
        lines.push_back(line);
      }
    }
  }
  EXPECT_EQ(files, 1u);
  return lines;
}

// Parlot's events of the only thread in the oracle's notation.
Lines parlot_events(const fs::path& trace_dir) {
  const auto processes = open_trace_directory(trace_dir);
  EXPECT_EQ(processes.size(), 1u);
  const auto& p = processes.at(0);
  Lines lines;
  for (const auto& events : read_thread_events(p)) {
    for (const std::uint32_t id : events) {
      if (id == 0) {
        lines.push_back("X");
        continue;
      }
      const std::uint64_t address = p.function_addresses.at(id - 1);
      std::string where = "?";
      for (const auto& o : p.load_map) {
        if (!o.contains(address)) continue;
        char buf[64];
        std::snprintf(buf, sizeof buf, "+%lx", static_cast<unsigned long>(address - o.load_bias));
        where = fs::path(o.path).filename().string() + buf;
      }
      lines.push_back("E " + where);
    }
  }
  return lines;
}

TEST(UserApi, PausedCallsAreAbsentExactly) {
  TempDir dir;
  const RunResult r = run_traced({PARLOT_API_FIXTURE, "pause"}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "tracing=1\n");
  const Lines want = oracle_unpaused_events({PARLOT_API_FIXTURE, "pause"});
  // main, phase, visible x3: 5 entries and 5 exits survive the pauses.
  ASSERT_EQ(want.size(), 10u);
  EXPECT_EQ(parlot_events(dir.path()), want);
  const RunResult t = parlot_read({"trace", dir.path().string()});
  EXPECT_THAT(t.out, ::testing::Not(HasSubstr("hidden")));
  for (const auto& process : open_trace_directory(dir.path())) {
    ThreadEventReader reader(process.thread_files.at(0));
    EXPECT_EQ(reader.summary().trailer->corrected_exits, 0u);
    EXPECT_EQ(reader.summary().trailer->unmatched_exits, 0u);
  }
}

TEST(UserApi, PauseAllCoversThreadsStartedWhilePaused) {
  TempDir dir;
  const RunResult r = run_traced({PARLOT_API_FIXTURE, "pause_all"}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const RunResult t = parlot_read({"trace", dir.path().string()});
  ASSERT_EQ(t.exit_status, 0) << t.err;
  const auto threads = split_threads(t.out);
  ASSERT_EQ(threads.size(), 1u) << t.out;  // the worker never recorded a call
  EXPECT_EQ(threads[0],
            "main() {\n"
            "  visible();\n"
            "} /* main() */\n");
}

TEST(UserApi, FlushPutsTheEventsOnDiskBeforeAKill) {
  for (const char* compress : {"0", "1"}) {
    SCOPED_TRACE(std::string("PARLOT_COMPRESS=") + compress);
    TempDir flushed, not_flushed;
    const std::vector<std::string> env{"PARLOT_FLUSH_MS=0", "PARLOT_BUFFER_KB=1024",
                                       std::string("PARLOT_COMPRESS=") + compress};
    const RunResult r = run_traced({PARLOT_API_FIXTURE, "flush", "1000"}, flushed.path(), env);
    EXPECT_EQ(r.signal, SIGKILL);
    EXPECT_THAT(r.out, HasSubstr("flush=0\n"));
    run_traced({PARLOT_API_FIXTURE, "noflush", "1000"}, not_flushed.path(), env);
    auto events_on_disk = [](const fs::path& d) {
      const auto processes = open_trace_directory(d);
      EXPECT_EQ(processes.size(), 1u);
      std::uint64_t n = 0;
      for (const auto& e : read_thread_events(processes.at(0))) n += e.size();
      return n;
    };
    // main's entry and 1000 calls of visible (2 events each). Uncompressed,
    // all of them; compressed, all but what a pending match holds.
    const std::uint64_t on_disk = events_on_disk(flushed.path());
    if (std::string(compress) == "0") {
      EXPECT_EQ(on_disk, 2001u);
    } else {
      EXPECT_GT(on_disk, 0u);
      EXPECT_LE(on_disk, 2001u);
    }
    EXPECT_EQ(events_on_disk(not_flushed.path()), 0u);
  }
}

TEST(UserApi, TheStubRunsUntraced) {
  const RunResult r = run({PARLOT_API_FIXTURE, "pause"});
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "tracing=0\n");
  const RunResult f = run({PARLOT_API_FIXTURE, "flush", "10"});
  EXPECT_THAT(f.out, HasSubstr("flush=-1\n"));
}

}  // namespace
}  // namespace parlot::e2e

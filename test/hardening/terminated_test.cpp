// A job ended as batch systems end jobs keeps its trace: SIGTERM (handled by
// the program or not) and then SIGKILL, or SIGKILL alone at any instant.
//
// Before: with a SIGTERM handler of the program's own, nothing was written
// on SIGTERM, so the SIGKILL that follows lost every event since the last
// flush (PARLOT_FLUSH_MS).
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <regex>
#include <sstream>

#include "hardening_fixture.h"

namespace parlot::hardening {
namespace {

namespace fs = std::filesystem;

// Calls of `function` in `parlot-read stats` output ("<calls>  <name>").
std::uint64_t calls_of(const std::string& stats, const std::string& function) {
  std::istringstream in(stats);
  std::string line;
  const std::regex row("^\\s*([0-9,]+)\\s+" + function + "\\s*$");
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, row)) {
      std::string digits = m[1].str();
      std::erase(digits, ',');
      return std::stoull(digits);
    }
  }
  return 0;
}

// The number after "calls before SIGTERM " in the program's output.
std::uint64_t calls_before_sigterm(const std::string& out) {
  const auto at = out.find("calls before SIGTERM ");
  if (at == std::string::npos) return 0;
  return std::strtoull(out.c_str() + at + 21, nullptr, 10);
}

class Terminated : public HardeningTest {
 protected:
  // Runs `terminated MODE 300` traced with a flush period far beyond the
  // run: only the termination signal's handling writes the events.
  RunResult run_killed(const std::string& mode) {
    RunOptions options;
    options.env = {"PARLOT_FLUSH_MS=60000"};
    return run_traced({prog("terminated"), mode, "300"}, dir.path(), options);
  }

  // Every event made before SIGTERM is in the trace, and every thread's
  // open frames say where it was.
  void expect_every_thread_written(const RunResult& r) {
    const std::uint64_t before = calls_before_sigterm(r.out);
    ASSERT_GT(before, 1000u) << r.out << r.err;
    const RunResult stats = parlot_read({"stats", dir.path().string()});
    EXPECT_EQ(calls_of(stats.out, "step") >= before, true)
        << "step() calls in the trace: " << calls_of(stats.out, "step")
        << ", made before SIGTERM: " << before << "\n"
        << stats.out.substr(0, 3000) << stats.err;
    const RunResult stacks = parlot_read({"stacks", dir.path().string()});
    EXPECT_NE(stacks.out.find("blocked_in_read"), std::string::npos) << stacks.out << stacks.err;
    EXPECT_NE(stacks.out.find("wait_for_signal"), std::string::npos) << stacks.out << stacks.err;
  }
};

TEST_P(Terminated, AHandledSigtermWritesEveryThreadBeforeTheHandlerRuns) {
  const RunResult r = run_killed("handled");
  // The program's handler ran and returned (the program went on), then
  // SIGKILL ended it: as untraced.
  EXPECT_EQ(r.signal, SIGKILL) << r.out << r.err;
  EXPECT_NE(r.out.find(" us after SIGTERM\n"), std::string::npos) << r.out << r.err;
  std::printf("%s", r.out.c_str());  // how long the writes took
  expect_every_thread_written(r);
}

TEST_P(Terminated, ADefaultSigtermFinishesTheTraceAndDiesOfIt) {
  const RunResult r = run_killed("default");
  EXPECT_EQ(r.signal, SIGTERM) << r.out << r.err;
  EXPECT_EQ(r.out.find("handled"), std::string::npos);
  expect_every_thread_written(r);
}

PARLOT_HARDENING_VARIANTS_OF(Terminated);

}  // namespace
}  // namespace parlot::hardening

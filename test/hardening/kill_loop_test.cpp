// SIGKILL at any instant leaves a trace that reads: the runtime replaces
// the files it rewrites atomically (a temporary name, then rename(2)) and
// names a process directory only once its first files are whole.
//
// Before: the process end rewrote `process` with O_TRUNC, so a SIGKILL
// inside that rewrite left it empty, and the reader then showed nothing of
// the whole job.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>

#include "hardening_fixture.h"

namespace parlot::hardening {
namespace {

namespace fs = std::filesystem;

// What one SIGKILL left.
enum class KillOutcome {
  kNoTrace,        // killed before the first event: no process directory
  kCutShort,       // killed while tracing
  kInsideRewrite,  // killed inside the end's rewrite of `process`
  kComplete,       // the program ended first
};

// RunOptions for a traced run of the kill loop: the runtime, then the shim
// that makes every write of a `process` file take 60 ms.
RunOptions kill_loop_options(const fs::path& trace_dir) {
  RunOptions options;
  options.env = {std::string("LD_PRELOAD=") + PARLOT_RUNTIME_PATH + ":" + PARLOT_HARDENING_BIN_DIR +
                     "/libslow_process_writes.so",
                 "PARLOT_DIR=" + trace_dir.string()};
  return options;
}

// SIGKILL (timeout -s KILL) at random instants between 40% and 105% of a
// traced run's median length, 8 threads. The process end writes the threads' last blocks, the
// function table, the load map and, last, the process file, whose writes a
// preloaded shim makes take 60 ms, so that many kills land inside that
// rewrite. The trace directory is either absent (killed before the first
// event) or every process in it reads whole, its `process` file never
// empty. 200 runs (PARLOT_KILL_RUNS to change).
TEST(KillLoop, SigkillAtAnyInstantLeavesAReadableTrace) {
  const std::string program_path = program("terminated", "gcc_O2");
  const std::vector<std::string> args{program_path, "short", "8"};
  // The traced run's length, from a few runs.
  std::vector<double> lengths;
  for (int i = 0; i < 5; ++i) {
    TempDir d;
    const auto start = std::chrono::steady_clock::now();
    const RunResult r = run(args, kill_loop_options(d.path()));
    lengths.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    ASSERT_EQ(r.exit_status, 0) << r.err;
  }
  std::sort(lengths.begin(), lengths.end());
  const double median = lengths[lengths.size() / 2];
  const double lo = median * 0.4;
  const double hi = median * 1.05;

  const int runs =
      std::getenv("PARLOT_KILL_RUNS") != nullptr ? std::atoi(std::getenv("PARLOT_KILL_RUNS")) : 200;
  std::mt19937 rng(20261127);
  std::uniform_real_distribution<double> when(lo, hi);
  std::map<KillOutcome, int> outcomes;
  for (int i = 0; i < runs; ++i) {
    TempDir d;
    char delay[32];
    std::snprintf(delay, sizeof delay, "%.4f", when(rng));
    // timeout(1) is not instrumented: it leaves no trace of its own.
    const RunResult r = run({"/usr/bin/timeout", "-s", "KILL", delay, program_path, "short", "8"},
                            kill_loop_options(d.path()));
    const bool complete = r.exit_status == 0;
    EXPECT_TRUE(complete || r.exit_status == 137 || r.signal == SIGKILL)
        << r.exit_status << " " << r.signal << r.err;
    int processes = 0;
    bool inside_rewrite = false;
    for (const auto& e : fs::directory_iterator(d.path())) {
      const std::string name = e.path().filename().string();
      if (name.starts_with(".") || !e.is_directory()) continue;
      ++processes;
      struct stat st;
      ASSERT_EQ(stat((e.path() / "process").c_str(), &st), 0) << "run " << i << " " << delay;
      EXPECT_GT(st.st_size, 0) << "run " << i << " killed after " << delay << " s: empty "
                               << (e.path() / "process");
      for (const auto& f : fs::directory_iterator(e.path())) {
        if (f.path().filename().string().starts_with(".process.")) inside_rewrite = true;
      }
    }
    if (processes == 0) {
      ++outcomes[KillOutcome::kNoTrace];
      continue;
    }
    const RunResult info = parlot_read({"info", d.path().string()});
    EXPECT_EQ(info.exit_status, 0) << "run " << i << " killed after " << delay << " s\n"
                                   << info.out << info.err;
    ++outcomes[complete         ? KillOutcome::kComplete
               : inside_rewrite ? KillOutcome::kInsideRewrite
                                : KillOutcome::kCutShort];
    if (HasFailure()) break;
  }
  // The closing figures: how the runs ended.
  std::printf(
      "kill loop: %d runs, SIGKILL at %.1f-%.1f ms: no trace %d, killed while tracing %d, "
      "killed inside the rewrite of 'process' %d, completed %d\n",
      runs, lo * 1e3, hi * 1e3, outcomes[KillOutcome::kNoTrace], outcomes[KillOutcome::kCutShort],
      outcomes[KillOutcome::kInsideRewrite], outcomes[KillOutcome::kComplete]);
  EXPECT_GT(outcomes[KillOutcome::kInsideRewrite], 0) << "no run was killed inside the rewrite";
}

}  // namespace
}  // namespace parlot::hardening

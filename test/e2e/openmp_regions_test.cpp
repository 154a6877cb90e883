// OpenMP parallel regions as frames (runtime/interposers/
// openmp_interposer.cpp): GCC does not instrument the outlined bodies of
// its parallel regions, so without the interposer a worker thread's calls
// had no enclosing frame. Every thread that runs a region must show it as
// a frame named after the outlined function (main._omp_fn.0), with the
// thread's calls nested under it, in `trace` and in `stacks`, and the
// program must behave as untraced.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "e2e_support.h"

namespace parlot::e2e {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

TEST(OpenMpRegions, EveryThreadRunsTheRegionAsAFrameWithItsCallsInside) {
  TempDir dir;
  const RunResult untraced = run({PARLOT_OPENMP_FIXTURE});
  const RunResult r = run_traced({PARLOT_OPENMP_FIXTURE}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, untraced.out);
  EXPECT_EQ(r.out, "done 34\n");  // 0+1+2+3 + 0+1+...+7
  const RunResult trace = parlot_read({"trace", dir.path().string()});
  ASSERT_EQ(trace.exit_status, 0) << trace.err;
  // The master: the region inside main, work inside the region.
  EXPECT_THAT(trace.out, HasSubstr("main() {\n  main._omp_fn.0() {\n    work();\n  } /* "
                                   "main._omp_fn.0() */\n  main._omp_fn.1"));
  // Every thread ran the first region once, as a frame with work() inside;
  // no work() call is outside a region.
  int region_threads = 0, loop_threads = 0, works = 0;
  for (const std::string& block : split_threads(trace.out)) {
    if (block.empty()) continue;
    if (block.find("main._omp_fn.0() {\n") != std::string::npos) ++region_threads;
    if (block.find("main._omp_fn.1") != std::string::npos) ++loop_threads;
    for (std::size_t at = block.find("work();"); at != std::string::npos;
         at = block.find("work();", at + 1)) {
      ++works;
      const std::size_t line = block.rfind('\n', at) + 1;
      EXPECT_GE(at - line, 2u) << "work() outside a region:\n" << block;
    }
  }
  EXPECT_EQ(region_threads, 4) << trace.out;
  EXPECT_EQ(loop_threads, 4) << trace.out;  // the parallel for's region, on every thread
  EXPECT_EQ(works, 4 + 8) << trace.out;
}

TEST(OpenMpRegions, StacksOfAStuckRegionShowItOnEveryThread) {
  TempDir dir;
  const fs::path out = dir.path() / "out";
  const fs::path traces = dir.path() / "trace";
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    setenv("LD_PRELOAD", PARLOT_RUNTIME_PATH, 1);
    setenv("PARLOT_DIR", traces.c_str(), 1);
    setenv("PARLOT_FLUSH_MS", "100", 1);
    execl(PARLOT_OPENMP_FIXTURE, PARLOT_OPENMP_FIXTURE, "stuck", static_cast<char*>(nullptr));
    _exit(127);
  }
  bool ready = false;
  for (auto end = std::chrono::steady_clock::now() + 60s;
       !ready && std::chrono::steady_clock::now() < end; std::this_thread::sleep_for(50ms)) {
    ready = slurp(out).find("ready") != std::string::npos;
  }
  std::this_thread::sleep_for(300ms);  // every thread into wait_forever
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(ready);
  const RunResult stacks = parlot_read({"stacks", traces.string()});
  EXPECT_THAT(stacks.out, HasSubstr("  main [1 thread: process 0]\n"
                                    "    main._omp_fn.0 [1 thread: process 0]\n"
                                    "      wait_forever [1 thread: process 0]\n"))
      << stacks.out;
  EXPECT_THAT(stacks.out, HasSubstr("  main._omp_fn.0 [3 threads: process 0 threads 1-3]\n"
                                    "    wait_forever [3 threads: process 0 threads 1-3]\n"))
      << stacks.out;
}

}  // namespace
}  // namespace parlot::e2e

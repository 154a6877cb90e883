// The real hooks of libparlotrt driven from several threads at once, in a
// forked child, the trace then read back in the parent. Run under TSan by
// scripts/test.sh. The test code calls __cyg_profile_func_enter/exit itself
// (it is not instrumented), from a real recursion so stack pointers are real.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include <atomic>
#include <cstdlib>
#include <set>
#include <thread>
#include <vector>

#include "parlot/call_stack_tracker.h"
#include "parlot/trace_reader.h"
#include "temp_dir.h"

extern "C" void __cyg_profile_func_enter(void* fn, void* call_site);
extern "C" void __cyg_profile_func_exit(void* fn, void* call_site);

namespace {

// Distinct fake function addresses: IDs are assigned per address; the test
// never symbolizes them.
constexpr int kFunctions = 300;
char g_functions[kFunctions];

std::atomic<bool> g_stop{false};

// One call of fake function `f` with `depth` nested calls below it.
[[gnu::noinline]] void call(int f, int depth, int width) {
  void* fn = &g_functions[f % kFunctions];
  void* site = __builtin_return_address(0);
  __cyg_profile_func_enter(fn, site);
  for (int i = 0; depth > 0 && i < width; ++i) call(f * 7 + i + 1, depth - 1, width);
  __cyg_profile_func_exit(fn, site);
  asm volatile("" ::: "memory");  // no tail call: keep the frame
}

// Runs `body` in a child process with PARLOT_DIR=dir and returns its wait status.
template <class Body>
int in_child(const std::filesystem::path& dir, Body body) {
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("PARLOT_DIR", dir.c_str(), 1);
    body();
    std::exit(0);  // the runtime's destructor ends the trace
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

struct ThreadSummary {
  std::uint64_t index = 0;  // thread index (creation order)
  std::uint64_t events = 0;
  std::uint64_t enters = 0;
  std::uint64_t blocks = 0;  // data blocks in the file
  std::size_t open_calls = 0;
  bool complete = false;
};

std::vector<ThreadSummary> read_threads(const std::filesystem::path& dir) {
  std::vector<ThreadSummary> out;
  for (const auto& process : parlot::open_trace_directory(dir)) {
    for (const auto& file : process.thread_files) {
      parlot::ThreadEventReader reader(file);
      parlot::CallStackTracker tracker(process.function_addresses.size(), file);
      ThreadSummary s;
      s.index = reader.summary().thread_index;
      for (auto b = reader.next_batch(); !b.empty(); b = reader.next_batch()) {
        for (const auto id : b) {
          if (tracker.push(id).kind == parlot::CallEvent::Kind::kEnter) ++s.enters;
        }
      }
      s.events = reader.events_read();
      s.blocks = reader.summary().blocks;
      s.open_calls = tracker.open_calls().size();
      s.complete = reader.summary().trailer.has_value() && tracker.open_calls().empty();
      out.push_back(s);
    }
  }
  return out;
}

TEST(RuntimeThreads, ConcurrentThreadsAndFirstSightsGiveCompleteWellNestedTraces) {
  parlot::test::TempDir dir;
  constexpr int kThreads = 4, kRounds = 200;
  const int status = in_child(dir.path(), [] {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([t] {
        // Every thread meets the same new functions at the same time.
        for (int r = 0; r < kRounds; ++r) call(r + t, 3, 3);
      });
    }
    for (auto& th : threads) th.join();
  });
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const auto threads = read_threads(dir.path());
  ASSERT_EQ(threads.size(), static_cast<std::size_t>(kThreads));
  // std::thread goes through the interposed pthread_create: the workers get
  // distinct creation indices, none 0 (the child's main thread, which made
  // no event). Not exactly 1..kThreads: under TSan its own background thread,
  // restarted in the fork child, takes one (ThreadOrder.* check exact
  // numbering without sanitizers).
  std::set<std::uint64_t> indices;
  for (const auto& s : threads) indices.insert(s.index);
  EXPECT_EQ(indices.size(), static_cast<std::size_t>(kThreads));
  EXPECT_EQ(indices.count(0), 0u);
  for (const auto& s : threads) {
    EXPECT_TRUE(s.complete);
    EXPECT_EQ(s.enters, kRounds * (1 + 3 + 9 + 27u));  // 40 calls per round
    EXPECT_EQ(s.events, 2 * s.enters);
  }
}

TEST(RuntimeThreads, ThreadsStillCallingAtExitAreStoppedAndWrittenOut) {
  parlot::test::TempDir dir;
  const int status = in_child(dir.path(), [] {
    // Each worker counts its rounds (31 calls each); exit() comes once
    // every worker has made at least 10 (not after a fixed time: a thread's
    // start, its trace's model set up, can take long under TSan).
    static std::atomic<int> rounds[3];
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t) {
      threads.emplace_back([t] {
        while (!g_stop.load(std::memory_order_relaxed)) {
          call(t, 4, 2);
          rounds[t].fetch_add(1, std::memory_order_relaxed);
        }
      });
      threads.back().detach();
    }
    for (int waited_ms = 0; waited_ms < 20000; ++waited_ms) {
      bool all = true;
      for (const auto& r : rounds) all = all && r.load(std::memory_order_relaxed) >= 10;
      if (all) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    // exit() with the threads inside hooks: the runtime fences them, waits
    // for each to leave its hook, and ends every stream.
  });
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const auto threads = read_threads(dir.path());
  ASSERT_EQ(threads.size(), 3u);
  for (const auto& s : threads) {
    EXPECT_TRUE(s.complete);
    EXPECT_GT(s.enters, 100u);
  }
}

// Threads that stop making events (a rank hung in MPI, a thread blocked on
// a lock) have their data written by the idle flusher: SIGKILL then loses
// none of it. Each thread makes its calls, then waits without events, one
// frame still open; the parent reads the files while they wait, then kills
// the process. Before the idle flusher, a waiting thread's events stayed in
// memory until its next event: this test then saw none of them.
TEST(RuntimeThreads, IdleThreadsAreWrittenOutSoSigkillLosesNoneOfTheirEvents) {
  parlot::test::TempDir dir;
  constexpr int kThreads = 3, kRounds = 20;
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("PARLOT_DIR", dir.path().c_str(), 1);
    setenv("PARLOT_FLUSH_MS", "20", 1);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([t] {
        void* waiting = &g_functions[kFunctions - 1 - t];
        __cyg_profile_func_enter(waiting, nullptr);  // open while the thread waits
        for (int r = 0; r < kRounds; ++r) call(r + t, 3, 3);
        for (;;) pause();  // no event from here on
      });
    }
    for (;;) pause();
  }
  ASSERT_GT(pid, 0);
  // 1 open call + 40 calls per round, every round's calls closed.
  const std::uint64_t expected = 1 + 2 * kRounds * 40u;
  std::vector<ThreadSummary> seen;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    bool all = false;
    try {
      seen = read_threads(dir.path());
      all = seen.size() == kThreads;
      for (const auto& s : seen) all = all && s.events == expected;
    } catch (const std::exception&) {
      // the directory is not there yet
    }
    if (all || std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  const auto threads = read_threads(dir.path());
  ASSERT_EQ(threads.size(), static_cast<std::size_t>(kThreads));
  for (const auto& s : threads) {
    EXPECT_FALSE(s.complete);  // no trailer: the process was killed
    EXPECT_EQ(s.events, expected);
    EXPECT_EQ(s.enters, 1 + kRounds * 40u);
    EXPECT_EQ(s.open_calls, 1u);  // the waiting frame
  }
}

// Threads that alternate bursts of calls with short waits, while the idle
// flusher runs a round every millisecond: the flusher writes a thread's
// data between two of its hooks again and again, and every stream stays
// exact. Run under TSan too (the handshake is the membarrier fence and the
// claim flag; see runtime/process/idle_flusher.h).
TEST(RuntimeThreads, BurstsAndWaitsUnderAFastIdleFlusherKeepExactTraces) {
  parlot::test::TempDir dir;
  constexpr int kThreads = 3, kBursts = 60;
  const int status = in_child(dir.path(), [] {
    setenv("PARLOT_FLUSH_MS", "2", 1);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([t] {
        for (int b = 0; b < kBursts; ++b) {
          call(b + t, 3, 3);
          // Waits of 0 to 3 ms: some bursts run into a round, some threads
          // are idle through one.
          std::this_thread::sleep_for(std::chrono::microseconds(((b * 7 + t * 3) % 4) * 1000));
        }
      });
    }
    for (auto& th : threads) th.join();
  });
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const auto threads = read_threads(dir.path());
  ASSERT_EQ(threads.size(), static_cast<std::size_t>(kThreads));
  std::uint64_t blocks = 0;
  for (const auto& s : threads) {
    EXPECT_TRUE(s.complete);
    EXPECT_EQ(s.enters, kBursts * 40u);
    EXPECT_EQ(s.events, 2 * s.enters);
    blocks += s.blocks;
  }
  // Each thread's 4,800 events fit one buffer: more than one data block per
  // thread means the flusher wrote them while the threads waited.
  EXPECT_GT(blocks, 3u * kThreads) << "the idle flusher wrote nothing";
}

}  // namespace

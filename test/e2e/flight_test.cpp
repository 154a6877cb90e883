// The flight recorder (PARLOT_MODE=flight): a program that crashes after
// seconds of irregular calls leaves a dump of at most 1 MiB (256 KiB per
// thread) whose window ends in the crashing frames, dies of the same
// signal as untraced; the flight signal and parlot_flight_dump() dump
// while the program runs on; a normal exit dumps; every view reads a
// dump with the right nesting and names, and says what was dropped; the
// rings of threads that wrapped many times still decode; a rank that calls
// MPI_Abort dumps every thread before the abort, the others dump on
// mpirun's SIGTERM.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <regex>

#include "e2e_support.h"
#include "parlot/format.h"
#include "parlot/trace_reader.h"

namespace parlot::e2e {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// Irregular rounds of the fixture: several MiB traced in full.
constexpr const char* kRounds = "300000";

std::uint64_t bytes_under(const fs::path& dir) {
  std::uint64_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) n += e.file_size();
  }
  return n;
}

std::vector<std::string> flight_env(const char* kb = "256") {
  return {"PARLOT_MODE=flight", std::string("PARLOT_FLIGHT_KB=") + kb};
}

// The process directory of dump `n` (flight-<n>), which must hold one.
fs::path dump_process_dir(const fs::path& trace_dir, int n) {
  const fs::path dump = trace_dir / ("flight-" + std::to_string(n));
  for (const auto& e : fs::directory_iterator(dump)) {
    if (e.is_directory()) return e.path();
  }
  ADD_FAILURE() << "no process directory in " << dump;
  return {};
}

// Checks what every flight window of `process_dir` must be: it reads
// whole, starts with the frames open at its start, nests (the tracker
// throws otherwise) and says how many events it dropped.
// `min_open_frames`: the frames open at least at any restart point of a
// thread that dropped history (main -> rounds: 2; a worker that calls
// round_root itself: 1, its start routine).
void expect_windows_read(const fs::path& process_dir, bool dropped_some,
                         std::uint64_t dropped_from_thread = 0, std::size_t min_open_frames = 2) {
  const auto processes = open_trace_directory(process_dir);
  ASSERT_EQ(processes.size(), 1u);
  const auto& process = processes[0];
  ASSERT_FALSE(process.thread_files.empty());
  for (const auto& t : process.thread_files) {
    ThreadEventReader r(t);
    ASSERT_TRUE(r.summary().flight_window.has_value()) << t;
    ASSERT_TRUE(r.summary().trailer.has_value()) << t;
    if (dropped_some && r.summary().thread_index >= dropped_from_thread) {
      EXPECT_GT(r.summary().flight_window->dropped_events, 0u) << t;
      // Dropped in the middle of the rounds: it starts inside their caller.
      EXPECT_GE(r.summary().flight_window->open_frames.size(), min_open_frames) << t;
    }
    const std::vector<std::uint32_t> open = r.summary().flight_window->open_frames;
    std::uint64_t events = 0;
    std::uint64_t depth = 0;
    for (auto batch = r.next_batch(); !batch.empty(); batch = r.next_batch()) {
      for (const std::uint32_t e : batch) {
        ASSERT_TRUE(e != 0 || depth > 0) << t << ": exit at depth 0 at event " << events;
        if (events < open.size()) {
          ASSERT_EQ(e, open[events]) << t << ": the open frames first";
        }
        depth = e != 0 ? depth + 1 : depth - 1;
        ASSERT_LE(e, process.function_addresses.size()) << t;
        ++events;
      }
    }
    EXPECT_EQ(events, r.summary().trailer->events) << t;
  }
}

TEST(Flight, CrashLeavesASmallWindowEndingInTheCrashingFrames) {
  const RunResult untraced = run({PARLOT_FLIGHT_FIXTURE, "crash", kRounds});
  ASSERT_EQ(untraced.signal, SIGSEGV);
  TempDir full;
  const RunResult normal = run_traced({PARLOT_FLIGHT_FIXTURE, "crash", kRounds}, full.path());
  ASSERT_EQ(normal.signal, SIGSEGV) << normal.err;
  const std::uint64_t full_bytes = bytes_under(full.path());
  EXPECT_GT(full_bytes, 2u << 20) << "the full trace is several MiB";

  TempDir dir;
  const RunResult r =
      run_traced({PARLOT_FLIGHT_FIXTURE, "crash", kRounds}, dir.path(), flight_env());
  EXPECT_EQ(r.signal, untraced.signal) << r.err;
  EXPECT_EQ(r.exit_status, untraced.exit_status);
  EXPECT_EQ(r.out, untraced.out);
  const fs::path dump = dir.path() / "flight-1";
  ASSERT_TRUE(fs::is_directory(dump)) << r.err;
  EXPECT_LE(bytes_under(dump), 1u << 20);
  // Nothing else is left: no live directory, no other dump.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path())) names.push_back(e.path().filename());
  EXPECT_THAT(names, ::testing::ElementsAre("flight-1"));
  const fs::path process_dir = dump_process_dir(dir.path(), 1);
  EXPECT_THAT(slurp(process_dir / "crash"), HasSubstr("signal 11\nname SIGSEGV\n"));
  expect_windows_read(process_dir, true);

  const RunResult trace = parlot_read({"trace", dump.string()});
  ASSERT_EQ(trace.exit_status, 0) << trace.err;
  // The window's last calls: crash_outer -> crash_inner, left only by the
  // exits the end of the trace closes.
  const std::regex last(
      R"(\n  crash_outer\(\) \{\n    crash_inner\(\);\n  \} /\* crash_outer\(\) \*/\n\} /\* main\(\) \*/\n#)");
  const std::string tail =
      trace.out.substr(trace.out.size() - std::min<std::size_t>(trace.out.size(), 4000));
  EXPECT_TRUE(std::regex_search(tail, last)) << tail;
  const std::size_t crash = trace.out.rfind("crash_inner");
  ASSERT_NE(crash, std::string::npos);
  EXPECT_EQ(trace.out.find("round_root", crash), std::string::npos) << "nothing after the crash";
  const RunResult info = parlot_read({"info", dump.string()});
  ASSERT_EQ(info.exit_status, 0) << info.err;
  EXPECT_THAT(info.out, HasSubstr("flight window: the history before it was dropped ("));
  EXPECT_THAT(trace.out, HasSubstr("history before the window dropped"));
}

TEST(Flight, NormalExitDumpsEveryViewReads) {
  TempDir dir;
  const RunResult r =
      run_traced({PARLOT_FLIGHT_FIXTURE, "exit", kRounds}, dir.path(), flight_env());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const fs::path dump = dir.path() / "flight-1";
  expect_windows_read(dump_process_dir(dir.path(), 1), true);
  for (const char* view : {"info", "trace", "stats", "stacks"}) {
    const RunResult v = parlot_read({view, dump.string()});
    EXPECT_EQ(v.exit_status, 0) << view << ": " << v.err;
    EXPECT_EQ(v.err, "") << view;
  }
  // The window's frames open at its start are named: every round nests
  // under main -> rounds -> round_root.
  const RunResult trace = parlot_read({"trace", dump.string()});
  EXPECT_TRUE(
      std::regex_search(trace.out.substr(0, 2000),
                        std::regex(R"(\nmain\(\) \{\n  rounds\(\) \{\n    round_root\(\) \{\n)")))
      << trace.out.substr(0, 2000);
}

TEST(Flight, SignalDumpsAndTheProgramRunsOn) {
  TempDir dir;
  const RunResult r =
      run_traced({PARLOT_FLIGHT_FIXTURE, "signal", kRounds}, dir.path(), flight_env());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("done"));
  expect_windows_read(dump_process_dir(dir.path(), 1), true);  // the signal's
  expect_windows_read(dump_process_dir(dir.path(), 2), true);  // the exit's
  const RunResult first = parlot_read({"trace", (dir.path() / "flight-1").string()});
  EXPECT_EQ(first.out.find("marked_end"), std::string::npos) << "dumped before the end";
  const RunResult last = parlot_read({"trace", (dir.path() / "flight-2").string()});
  EXPECT_THAT(last.out, HasSubstr("marked_end"));
}

TEST(Flight, ApiDumpsAndTheProgramRunsOn) {
  TempDir dir;
  const RunResult r = run_traced({PARLOT_FLIGHT_FIXTURE, "api", kRounds}, dir.path(), flight_env());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("dump=0\n"));
  expect_windows_read(dump_process_dir(dir.path(), 1), true);
  const RunResult first = parlot_read({"trace", (dir.path() / "flight-1").string()});
  EXPECT_THAT(first.out, HasSubstr("api_dump"));
  // Where the thread was at the dump: main -> api_dump, named and nested.
  const RunResult stacks = parlot_read({"stacks", (dir.path() / "flight-1").string()});
  EXPECT_EQ(stacks.exit_status, 0) << stacks.err;
  EXPECT_TRUE(std::regex_search(stacks.out, std::regex(R"(main \[1 thread[^\n]*\n +api_dump)")))
      << stacks.out;
  EXPECT_EQ(first.out.find("marked_end"), std::string::npos);
  EXPECT_TRUE(fs::is_directory(dir.path() / "flight-2"));
  // Untraced (no runtime) the stub answers -1.
  EXPECT_THAT(run({PARLOT_FLIGHT_FIXTURE, "api", "10"}).out, HasSubstr("dump=-1\n"));
}

TEST(Flight, RingsThatWrappedManyTimesDecode) {
  TempDir dir;
  // 64 KiB per thread, three threads of 4.5 M events each: about 0.7 MiB
  // compressed, the ring wrapped about ten times (at least five: a window
  // holds 0.3-0.5 M of these irregular events, as they compress). (It was 46 M events
  // per thread, 10 times the work the test needs, 4 s of CPU: on a loaded
  // machine the run could outlast its 120 s.)
  const RunResult r =
      run_traced({PARLOT_FLIGHT_FIXTURE, "threads", "30000"}, dir.path(), flight_env("64"));
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const fs::path process_dir = dump_process_dir(dir.path(), 1);
  const auto processes = open_trace_directory(process_dir);
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_EQ(processes[0].thread_files.size(), 4u);  // main and the three workers
  expect_windows_read(process_dir, true, 1);        // the workers' rings wrapped
  for (const auto& t : processes[0].thread_files) {
    ThreadEventReader reader(t);
    if (reader.summary().thread_index == 0) continue;  // main: no rounds
    ASSERT_TRUE(reader.summary().trailer.has_value()) << t;
    EXPECT_GE(reader.summary().flight_window->dropped_events, 5 * reader.summary().trailer->events)
        << t << ": the ring wrapped at least five times";
  }
  // PARLOT_FLIGHT_KB holds the ring and the block being encoded (a
  // ninth): a window is at most the ring, plus the file's header, final
  // block and trailer.
  const std::size_t block = (64u << 10) / 9 / 8 * 8 + sizeof(format::BlockHeader);
  const std::size_t file_frame = sizeof(format::TraceFileHeader) + 2 * sizeof(format::BlockHeader) +
                                 sizeof(std::uint64_t) + sizeof(format::TrailerPayload);
  for (const auto& t : processes[0].thread_files) {
    EXPECT_LE(fs::file_size(t), (64u << 10) - block + file_frame) << t;
  }
  const RunResult stats = parlot_read({"stats", (dir.path() / "flight-1").string()});
  EXPECT_EQ(stats.exit_status, 0) << stats.err;
}

// A thread's memory in flight mode, from the process's resident memory
// (VmRSS) with 4 threads of irregular calls (about 9·10^7 events each)
// whose 128 KiB rings fill in
// the first half of the run: the ring and the block being encoded are
// PARLOT_FLIGHT_KB (the window files above show the ring's size), and the
// rest is the codec model's touched pages (at most its 1 MiB; dropped at
// every restart point) and the shadow stack; the second half, with full
// rings, adds nothing but that model's ups and downs.
TEST(Flight, ThreadMemoryIsTheConfiguredRingPlusTheModelAndStaysSo) {
  constexpr long kThreads = 4;
  constexpr long kKib = 128;
  TempDir dir;
  const RunResult r =
      run_traced({PARLOT_FLIGHT_FIXTURE, "memory", "600000", "4"}, dir.path(), flight_env("256"));
  ASSERT_EQ(r.exit_status, 0) << r.err;
  long start = 0, mid = 0, end = 0;
  ASSERT_EQ(std::sscanf(r.out.c_str(), "rss start=%ld mid=%ld end=%ld", &start, &mid, &end), 3)
      << r.out;
  // The rings filled: every worker's window dropped history. A worker
  // calls round_root itself: a window can start at a round_root entry,
  // inside memory_worker only.
  expect_windows_read(dump_process_dir(dir.path(), 1), true, 1, 1);
  const long per_thread = (end - start) / kThreads;
  EXPECT_GE(per_thread, kKib) << r.out << ": the ring is touched whole";
  EXPECT_LE(per_thread, kKib + 1024 + 64) << r.out << ": ring and block, model, stack";
  EXPECT_LE((end - mid) / kThreads, 128) << r.out << ": no growth once the rings are full";
}

// The process directory of `dump` whose name starts with `prefix`
// ("rank-1."), or "" when there is none.
fs::path process_dir_named(const fs::path& dump, const std::string& prefix) {
  if (!fs::is_directory(dump)) return {};
  for (const auto& e : fs::directory_iterator(dump)) {
    if (e.is_directory() && e.path().filename().string().rfind(prefix, 0) == 0) return e.path();
  }
  return {};
}

// MPI_Abort on rank 1 of 2, each rank with a busy helper thread: rank 1's
// wrapper dumps every thread before the MPI library's MPI_Abort, so the
// dump (flight-1) ends in main -> abort_outer -> abort_inner -> MPI_Abort
// whatever ends the process next: Open MPI's _exit (a second dump), or,
// with `abort_kill` (mpi_abort_kill.c preloaded after the wrappers), a
// SIGKILL at once, as a launcher that kills the job does. mpirun then
// sends rank 0 SIGTERM, which dumps through the signal path where it
// waits, main -> wait_forever -> MPI_Recv, and kills it as untraced
// (SIGKILL follows after odls_base_sigkill_timeout, 1 s by default: 5 s
// here, so a loaded machine finishes the dump). The job ends as untraced.
void check_mpi_abort(bool abort_kill) {
  const std::string fixture = PARLOT_FLIGHT_MPI_FIXTURE;
  if (fixture.empty() || !fs::exists(fixture)) GTEST_SKIP() << "the MPI fixture was not built";
  if (!fs::exists(PARLOT_MPI_WRAPPERS_PATH)) GTEST_SKIP() << "libparlotmpi.so was not built";
  const std::string mpirun = find_mpirun();
  if (mpirun.empty()) GTEST_SKIP() << "mpirun is not on PATH";
  const std::string kill_lib = abort_kill ? PARLOT_MPI_ABORT_KILL_PATH : "";
  if (abort_kill && !fs::exists(kill_lib)) GTEST_SKIP() << "mpi_abort_kill was not built";
  auto job = [&](const std::vector<std::string>& env) {
    std::vector<std::string> argv{mpirun,
                                  "--allow-run-as-root",
                                  "--oversubscribe",
                                  "--mca",
                                  "odls_base_sigkill_timeout",
                                  "5",
                                  "-np",
                                  "2"};
    for (const auto& e : env) {
      argv.push_back("-x");
      argv.push_back(e);
    }
    argv.push_back(fixture);
    argv.push_back("20000");
    return run(argv);
  };
  const RunResult untraced = job(abort_kill ? std::vector<std::string>{"LD_PRELOAD=" + kill_lib}
                                            : std::vector<std::string>{});
  ASSERT_THAT(untraced.out, HasSubstr("aborting"));
  TempDir dir;
  const RunResult r =
      job({std::string("LD_PRELOAD=") + PARLOT_RUNTIME_PATH + ":" + PARLOT_MPI_WRAPPERS_PATH +
               (abort_kill ? ":" + kill_lib : ""),
           "PARLOT_DIR=" + dir.path().string(), "PARLOT_MODE=flight", "PARLOT_FLIGHT_KB=64"});
  EXPECT_EQ(r.exit_status, untraced.exit_status) << r.err;
  EXPECT_EQ(r.signal, untraced.signal);
  EXPECT_THAT(r.out, HasSubstr("aborting"));

  // Rank 1: both threads, each window wrapped, read whole; the main
  // thread's ends inside MPI_Abort.
  const fs::path aborted = process_dir_named(dir.path() / "flight-1", "rank-1.");
  ASSERT_FALSE(aborted.empty()) << "no dump of rank 1: " << r.err;
  const auto processes = open_trace_directory(aborted);
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_EQ(processes[0].thread_files.size(), 2u) << "main and the helper thread";
  expect_windows_read(aborted, true);
  const RunResult stacks = parlot_read({"stacks", aborted.string()});
  ASSERT_EQ(stacks.exit_status, 0) << stacks.err;
  EXPECT_TRUE(std::regex_search(
      stacks.out,
      std::regex(R"(\n +main \[1 thread[^\n]*\n +abort_outer[^\n]*\n +abort_inner[^\n]*)"
                 R"(\n +MPI_Abort \[1 thread[^\n]*\n)")))
      << stacks.out;
  EXPECT_THAT(stacks.out, HasSubstr("helper_round"));
  const std::string pid =
      aborted.filename().string().substr(aborted.filename().string().find("pid-") + 4);
  const RunResult trace = parlot_read({"trace", aborted.string(), "--tid", pid});
  ASSERT_EQ(trace.exit_status, 0) << trace.err;
  EXPECT_TRUE(std::regex_search(
      trace.out, std::regex(R"(abort_outer\(\) \{\n +abort_inner\(\) \{\n +MPI_Abort\(\) \{\n$)")))
      << trace.out.substr(trace.out.size() - std::min<std::size_t>(trace.out.size(), 2000));
  const RunResult info = parlot_read({"info", aborted.string()});
  ASSERT_EQ(info.exit_status, 0) << info.err;
  EXPECT_THAT(info.out, HasSubstr("flight window: the history before it was dropped ("));

  // Rank 0, ended by mpirun's SIGTERM: its windows, where it waited.
  const fs::path waiting = process_dir_named(dir.path() / "flight-1", "rank-0.");
  ASSERT_FALSE(waiting.empty()) << "no dump of rank 0: " << r.err;
  expect_windows_read(waiting, true);
  const RunResult waited = parlot_read({"stacks", waiting.string()});
  ASSERT_EQ(waited.exit_status, 0) << waited.err;
  EXPECT_TRUE(std::regex_search(
      waited.out, std::regex(R"(\n +main \[1 thread[^\n]*\n +wait_forever[^\n]*\n +MPI_Recv \[)")))
      << waited.out;
  // Open MPI's MPI_Abort returns to its _exit: the process's last dump.
  // Killed at once, rank 1 has only the dump its wrapper made.
  EXPECT_EQ(process_dir_named(dir.path() / "flight-2", "rank-1.").empty(), abort_kill);
}

TEST(Flight, MpiAbortDumpsEveryThreadOfTheRankEndingInMpiAbort) {
  check_mpi_abort(false);
}

TEST(Flight, MpiAbortDumpsBeforeTheAbortSoAKillAtOnceKeepsIt) {
  check_mpi_abort(true);
}

}  // namespace
}  // namespace parlot::e2e

// `parlot record` and the `parlot` front end from the build tree: the trace
// goes where asked, the summary line counts it, the program's exit status
// and fatal signal come through, signals sent to parlot reach the program,
// and every other subcommand is parlot-read's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>

#include "e2e_support.h"

namespace parlot::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
namespace fs = std::filesystem;

RunResult parlot(const std::vector<std::string>& args) {
  std::vector<std::string> argv{PARLOT_FRONTEND_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

std::string fixture() {
  return fixture_paths().at(1);  // gcc -O2
}

TEST(RecordCommand, RecordsIntoTheDirectoryAndSummarises) {
  TempDir dir;
  const fs::path trace = dir.path() / "run";
  const RunResult r = parlot({"record", "-d", trace.string(), "--", fixture(), "basic"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "basic done\n");
  EXPECT_THAT(r.err, HasSubstr("parlot: trace in " + trace.string() + " (pid-"));
  // main + recurse x 4: 10 events; two workers, 4 calls each: 16 events.
  EXPECT_THAT(r.err, HasSubstr("parlot: 1 process, 3 threads, 26 events, 52 raw bytes, "));
  const auto processes = open_trace_directory(trace);
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_EQ(processes[0].thread_files.size(), 3u);
}

TEST(RecordCommand, ProgramOptionsAreNotParlots) {
  TempDir dir;
  // Without "--": everything from the program on is the program's.
  const RunResult r =
      parlot({"record", "-q", "--dir", dir.path().string(), fixture(), "basic", "-d", "x"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "basic done\n");
  EXPECT_EQ(r.err, "");  // -q: no summary
  EXPECT_EQ(open_trace_directory(dir.path()).size(), 1u);
}

TEST(RecordCommand, CountsTheWholeProcessTreeAndOnlyIt) {
  TempDir dir;
  // An earlier run in the same directory is not this recording's.
  ASSERT_EQ(
      parlot({"record", "-q", "-d", dir.path().string(), "--", fixture(), "basic"}).exit_status, 0);
  const RunResult r = parlot({"record", "-d", dir.path().string(), "--", fixture(), "fork"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("parlot: 2 processes, 2 threads, "));
  EXPECT_THAT(r.err, HasSubstr("parlot: trace in " + dir.path().string() + "\n"));
}

TEST(RecordCommand, ScriptsThatStartInstrumentedPrograms) {
  TempDir dir;
  // The shell is not instrumented (no trace of its own); the two programs
  // it starts are its children, so both count.
  const std::string script = fixture() + " basic && " + fixture() + " basic";
  const RunResult r = parlot({"record", "-d", dir.path().string(), "--", "sh", "-c", script});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "basic done\nbasic done\n");
  EXPECT_THAT(r.err, HasSubstr("parlot: 2 processes, 6 threads, 52 events, "));
}

TEST(RecordCommand, ForwardsTheExitStatus) {
  TempDir dir;
  const RunResult r = parlot({"record", "-d", dir.path().string(), "--", fixture(), "exit"});
  EXPECT_EQ(r.exit_status, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("parlot: 1 process, 1 thread, "));
}

TEST(RecordCommand, DiesOfTheProgramsSignal) {
  TempDir dir;
  for (const auto& [mode, sig] :
       {std::pair{"term", SIGTERM}, std::pair{"segv", SIGSEGV}, std::pair{"abort", SIGABRT}}) {
    const RunResult r = parlot({"record", "-d", dir.path().string(), "--", fixture(), mode});
    EXPECT_EQ(r.signal, sig) << mode << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("parlot: 1 process, 1 thread, ")) << mode;
  }
}

TEST(RecordCommand, ForwardsSignalsSentToIt) {
  TempDir dir;
  // The program sleeps 10 s once its trace has started (its thread file
  // exists); parlot gets SIGTERM and must pass it on: the program dies of
  // it, its trace complete, then parlot dies of it too, long before 10 s.
  const std::string d = dir.path().string();
  const std::string script = std::string(PARLOT_FRONTEND_PATH) + " record -d " + d + " -- " +
                             PARLOT_API_FIXTURE + " sleep & p=$!; until ls " + d +
                             "/pid-*/thread-* >/dev/null 2>&1; do sleep 0.01; done; sleep 0.05; "
                             "kill -TERM $p; wait $p; echo status=$?";
  const RunResult r = run({"sh", "-c", script});
  EXPECT_THAT(r.out, HasSubstr("status=143")) << r.err;
  EXPECT_THAT(r.err, HasSubstr("parlot: 1 process, 1 thread, "));
  const auto processes = open_trace_directory(dir.path());
  ASSERT_EQ(processes.size(), 1u);
  ThreadEventReader reader(processes[0].thread_files.at(0));
  EXPECT_TRUE(reader.summary().trailer.has_value()) << "the program's trace was not finished";
}

TEST(RecordCommand, ReportsAProgramThatCannotRun) {
  TempDir dir;
  const RunResult r =
      parlot({"record", "-d", dir.path().string(), "--", (dir.path() / "nothing").string()});
  EXPECT_EQ(r.exit_status, 127);
  EXPECT_THAT(r.err, HasSubstr("cannot run"));
  EXPECT_THAT(r.err, HasSubstr("no trace in"));
}

TEST(RecordCommand, LibcallsRecordsCallsIntoTheCLibrary) {
  TempDir dir;
  const RunResult r =
      parlot({"record", "-q", "--libcalls", "-d", dir.path().string(), "--", fixture(), "basic"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  // The fixture's main joins its two threads.
  const RunResult trace = parlot({"trace", "--no-sites", dir.path().string()});
  ASSERT_EQ(trace.exit_status, 0) << trace.err;
  EXPECT_THAT(trace.out, HasSubstr("  } /* recurse() */\n  pthread_join();\n  pthread_join();\n"));
  // Without the option, none.
  TempDir plain;
  ASSERT_EQ(
      parlot({"record", "-q", "-d", plain.path().string(), "--", fixture(), "basic"}).exit_status,
      0);
  EXPECT_THAT(parlot({"trace", plain.path().string()}).out, Not(HasSubstr("pthread_join")));
}

TEST(RecordCommand, NoCompressWritesTheRawStream) {
  TempDir dir;
  ASSERT_EQ(parlot({"record", "--no-compress", "-d", dir.path().string(), "--", fixture(), "basic"})
                .exit_status,
            0);
  const auto processes = open_trace_directory(dir.path());
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_FALSE(processes[0].metadata.compress);
}

TEST(ParlotFrontEnd, OtherSubcommandsAreParlotReads) {
  TempDir dir;
  ASSERT_EQ(
      parlot({"record", "-q", "-d", dir.path().string(), "--", fixture(), "basic"}).exit_status, 0);
  for (const char* command : {"trace", "stats", "info"}) {
    const RunResult via_parlot = parlot({command, dir.path().string()});
    const RunResult direct = parlot_read_with_sites({command, dir.path().string()});
    EXPECT_EQ(via_parlot.exit_status, 0) << via_parlot.err;
    EXPECT_EQ(via_parlot.out, direct.out) << command;
  }
  EXPECT_EQ(parlot({"trace", (dir.path() / "missing").string()}).exit_status, 1);
}

TEST(ParlotFrontEnd, PrintsItsVersion) {
  const RunResult r = parlot({"--version"});
  EXPECT_EQ(r.exit_status, 0);
  EXPECT_THAT(r.out, StartsWith("parlot 0."));
}

TEST(ParlotFrontEnd, RecordsUnderMpirun) {
  const std::string program = examples_dir() + "/cg_mpi";
  if (!fs::exists(program)) GTEST_SKIP() << program << " was not built (MPI not found)";
  if (std::system("command -v mpirun >/dev/null") != 0) GTEST_SKIP() << "no mpirun";
  TempDir dir;
  const RunResult r =
      run({"mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2", PARLOT_FRONTEND_PATH,
           "record", "-d", dir.path().string(), "--", program, "30", "2"});
  ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
  const auto processes = open_trace_directory(dir.path());
  ASSERT_EQ(processes.size(), 2u);
  EXPECT_EQ(processes[0].metadata.rank, "0");
  EXPECT_EQ(processes[1].metadata.rank, "1");
  // Each rank's parlot summarises its own process.
  std::size_t summaries = 0;
  for (std::size_t at = r.err.find("parlot: 1 process, "); at != std::string::npos;
       at = r.err.find("parlot: 1 process, ", at + 1)) {
    ++summaries;
  }
  EXPECT_EQ(summaries, 2u) << r.err;
  // parlot record preloads the MPI wrappers too: each rank's MPI calls are
  // in its trace, under the function that made them.
  const RunResult stats = parlot({"stats", dir.path().string(), "--by", "program"});
  ASSERT_EQ(stats.exit_status, 0) << stats.err;
  EXPECT_THAT(stats.out, HasSubstr("main -> MPI_Init"));
  EXPECT_THAT(stats.out, HasSubstr("dot -> MPI_Allreduce"));
}

}  // namespace
}  // namespace parlot::e2e

// `parlot record` leaves the program as it is untraced: same output, same
// exit status. A program without MPI must not see MPI functions (the MPI
// wrappers are preloaded only into programs that load an MPI library, or
// with --mpi), and the front end's own summary must not change the exit
// status of a pipeline whose reader has gone (`| head -1` under pipefail),
// while the program keeps the SIGPIPE disposition it was given.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "e2e_support.h"

namespace parlot::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

RunResult parlot(const std::vector<std::string>& args) {
  std::vector<std::string> argv{PARLOT_FRONTEND_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

// Single-quoted for sh.
std::string quoted(const std::string& s) {
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

TEST(RecordUntraced, WeakMpiReferencesStayNullWithoutAnMpiLibrary) {
  const RunResult untraced = run({PARLOT_MPI_WEAK_FIXTURE});
  ASSERT_EQ(untraced.exit_status, 0) << untraced.err;
  ASSERT_EQ(untraced.out, "weak reference: no MPI\ndlsym: no MPI\n");

  TempDir dir;
  const RunResult traced =
      parlot({"record", "-d", dir.path().string(), "--", PARLOT_MPI_WEAK_FIXTURE});
  EXPECT_EQ(traced.exit_status, untraced.exit_status) << traced.err;
  EXPECT_EQ(traced.signal, 0) << traced.err;
  EXPECT_EQ(traced.out, untraced.out);
  EXPECT_THAT(traced.err, HasSubstr("parlot: 1 process, 1 thread, ")) << "no trace was recorded";
}

// The bundled serial examples print the same lines and exit the same way
// under `parlot record` as untraced.
TEST(RecordUntraced, SerialExamplesPrintTheSameAndExitTheSame) {
  const std::vector<std::vector<std::string>> programs = {{"quicksort_threads", "2000", "3"},
                                                          {"cg", "30", "2"},
                                                          {"ep", "10"},
                                                          {"is", "10", "8", "2"},
                                                          {"mg", "4", "2"},
                                                          {"cpp_features", "4"}};
  for (auto command : programs) {
    SCOPED_TRACE(command.front());
    command.front() = examples_dir() + "/" + command.front();
    const RunResult untraced = run(command);
    ASSERT_EQ(untraced.exit_status, 0) << untraced.err;
    TempDir dir;
    std::vector<std::string> args{"record", "-q", "-d", dir.path().string(), "--"};
    args.insert(args.end(), command.begin(), command.end());
    const RunResult traced = parlot(args);
    EXPECT_EQ(traced.exit_status, untraced.exit_status) << traced.err;
    EXPECT_EQ(traced.out, untraced.out);
    EXPECT_EQ(traced.err, untraced.err);
  }
}

// With --mpi the wrappers are preloaded whatever the program: an MPI
// program started by a shell has its MPI calls in the trace; without it,
// the shell links no MPI library and gets none.
TEST(RecordUntraced, MpiOptionPreloadsTheWrappersIntoAnyProgram) {
  const std::string program = examples_dir() + "/cg_mpi";
  if (!fs::exists(program)) GTEST_SKIP() << program << " was not built (MPI not found)";
  if (std::string(PARLOT_MPI_WRAPPERS_PATH).empty()) GTEST_SKIP() << "no MPI wrappers";
  if (!have("mpirun")) GTEST_SKIP() << "no mpirun";
  for (const bool mpi : {false, true}) {
    SCOPED_TRACE(mpi ? "--mpi" : "without --mpi");
    TempDir dir;
    std::vector<std::string> argv{"mpirun", "--allow-run-as-root", "--oversubscribe", "-np",
                                  "1",      PARLOT_FRONTEND_PATH,  "record",          "-q",
                                  "-d",     dir.path().string()};
    if (mpi) argv.push_back("--mpi");
    for (const char* a : {"--", "sh", "-c"}) argv.emplace_back(a);
    argv.push_back(quoted(program) + " 30 2");
    const RunResult r = run(argv);
    ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
    const RunResult stats = parlot({"stats", dir.path().string(), "--by", "program"});
    ASSERT_EQ(stats.exit_status, 0) << stats.err;
    if (mpi) {
      EXPECT_THAT(stats.out, HasSubstr("dot -> MPI_Allreduce"));
    } else {
      EXPECT_THAT(stats.out, Not(HasSubstr("MPI_")));
    }
  }
}

// `PIPELINE`'s exit status under `set -o pipefail`, run by bash.
int pipefail_status(const std::string& pipeline) {
  const RunResult r = run({"bash", "-c", "set -o pipefail; " + pipeline + "; echo status=$?"});
  const auto at = r.out.rfind("status=");
  return at == std::string::npos ? -1000 : std::stoi(r.out.substr(at + 7));
}

// The reader of the pipe (head -1, grep -q) has gone once it saw the
// program's first line; the program then exits 0 without writing more, so
// untraced the pipeline's status is 0. parlot's summary, written after,
// must not kill it with SIGPIPE (141).
TEST(RecordUntraced, ASummaryNobodyReadsDoesNotChangeThePipelineStatus) {
  TempDir dir;
  const std::string program = "sh -c 'echo first; sleep 0.5'";
  const std::string traced =
      quoted(PARLOT_FRONTEND_PATH) + " record -d " + quoted(dir.path().string()) + " -- ";
  for (const std::string reader : {"head -1 >/dev/null", "grep -q first"}) {
    SCOPED_TRACE(reader);
    const int untraced_status = pipefail_status(program + " 2>&1 | " + reader);
    ASSERT_EQ(untraced_status, 0);
    EXPECT_EQ(pipefail_status(traced + program + " 2>&1 | " + reader), untraced_status);
  }
}

// A program that dies of SIGPIPE (yes into head -1) still does under
// parlot, and parlot dies of it too: the pipeline's status is 141 both ways.
TEST(RecordUntraced, AProgramKilledBySigpipeStillIs) {
  TempDir dir;
  const std::string traced =
      quoted(PARLOT_FRONTEND_PATH) + " record -q -d " + quoted(dir.path().string()) + " -- ";
  const int untraced_status = pipefail_status("yes | head -1 >/dev/null");
  ASSERT_EQ(untraced_status, 128 + SIGPIPE);
  EXPECT_EQ(pipefail_status(traced + "yes | head -1 >/dev/null"), untraced_status);
}

// The program starts with the SIGPIPE disposition parlot was given: the
// default, or ignored (`trap '' PIPE` in the shell that started parlot).
TEST(RecordUntraced, TheProgramGetsTheSigpipeDispositionItWasGiven) {
  TempDir dir;
  const std::string show = "grep SigIgn /proc/self/status";
  const std::string traced =
      quoted(PARLOT_FRONTEND_PATH) + " record -q -d " + quoted(dir.path().string()) + " -- ";
  for (const std::string setup : {"", "trap '' PIPE; "}) {
    SCOPED_TRACE(setup);
    const RunResult untraced = run({"bash", "-c", setup + show});
    const RunResult under_parlot = run({"bash", "-c", setup + traced + show});
    ASSERT_EQ(untraced.exit_status, 0) << untraced.err;
    EXPECT_EQ(under_parlot.exit_status, 0) << under_parlot.err;
    EXPECT_EQ(under_parlot.out, untraced.out);
  }
}

}  // namespace
}  // namespace parlot::e2e

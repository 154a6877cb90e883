// parlot-read check on planted MPI usage bugs (mpi_check_fixture.c on 3
// ranks, PARLOT_MPI_ARGS=1): a wrong root, a mismatched collective kind, a
// count mismatch, a send never received, and a deadlock cycle in a job
// stopped with SIGTERM to mpirun; and `trace --rank`. Each finding must name
// the rank(s), the call and where it was made (call path and iteration).
// Skips without MPI.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <thread>

#include "e2e_support.h"

namespace parlot::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

class MpiCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string fixture = PARLOT_MPI_CHECK_FIXTURE;
    if (fixture.empty() || !fs::exists(fixture)) GTEST_SKIP() << "the MPI fixture was not built";
    if (!fs::exists(PARLOT_MPI_WRAPPERS_PATH)) GTEST_SKIP() << "libparlotmpi.so was not built";
    mpirun_ = find_mpirun();
    if (mpirun_.empty()) GTEST_SKIP() << "mpirun is not on PATH";
  }

  // Runs the fixture in `mode` on 3 ranks into `dir`. A job that hangs is
  // stopped with SIGTERM to mpirun once it printed "planted" and the ranks'
  // open stacks (written by the idle flusher) stayed the same for a second.
  void record(const std::string& mode, const fs::path& dir) {
    const fs::path out = tmp_.path() / (mode + ".out");
    const std::vector<std::string> argv{
        mpirun_,
        "--allow-run-as-root",
        "--mca",
        "odls_base_sigkill_timeout",
        "5",
        "--oversubscribe",
        "-np",
        "3",
        "-x",
        std::string("LD_PRELOAD=") + PARLOT_RUNTIME_PATH + ":" + PARLOT_MPI_WRAPPERS_PATH,
        "-x",
        "PARLOT_DIR=" + dir.string(),
        "-x",
        "PARLOT_MPI_ARGS=1",
        "-x",
        "PARLOT_FLUSH_MS=100",
        PARLOT_MPI_CHECK_FIXTURE,
        mode};
    const pid_t pid = spawn(argv, out);
    int status = 0;
    std::string last;
    int still = 0;
    bool stopped = false;
    for (auto end = std::chrono::steady_clock::now() + 90s;; std::this_thread::sleep_for(200ms)) {
      if (waitpid(pid, &status, WNOHANG) == pid) break;
      if (std::chrono::steady_clock::now() > end) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        ADD_FAILURE() << "the job neither ended nor settled: " << slurp(out);
        return;
      }
      if (stopped || slurp(out).find("planted") == std::string::npos) continue;
      const RunResult now = parlot_read({"stacks", dir.string()});
      still = !now.out.empty() && now.out == last ? still + 1 : 0;
      last = now.out;
      if (still == 5) {
        kill(pid, SIGTERM);
        stopped = true;
      }
    }
    output_ = slurp(out);
  }

  RunResult check(const std::string& mode, std::vector<std::string> extra = {}) {
    const fs::path dir = tmp_.path() / mode;
    record(mode, dir);
    std::vector<std::string> args{"check", dir.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return parlot_read(args);
  }

  // check of `mode`: exit status 3, the first finding's line "1. FIRST",
  // and `call` (a line of one of its calls) in the output, which is
  // printed. Returns the result.
  RunResult expect_first_finding(const std::string& mode, const std::string& first,
                                 const std::string& call) {
    const RunResult r = check(mode);
    EXPECT_EQ(r.exit_status, 3) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("\n1. " + first + "\n"));
    EXPECT_THAT(r.out, HasSubstr(call));
    std::printf("%s", r.out.c_str());
    return r;
  }

  std::string mpirun_;
  std::string output_;
  TempDir tmp_;
};

TEST_F(MpiCheck, ACorrectProgramHasNoFindingAndTraceSelectsByRank) {
  const fs::path dir = tmp_.path() / "clean";
  record("clean", dir);
  ASSERT_THAT(output_, HasSubstr("done")) << output_;
  const RunResult r = parlot_read({"check", dir.string()});
  EXPECT_EQ(r.exit_status, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("parlot-read check: no problem found in 3 ranks"));

  const RunResult trace = parlot_read({"trace", dir.string(), "--rank", "1"});
  EXPECT_EQ(trace.exit_status, 0) << trace.err;
  EXPECT_THAT(trace.out, HasSubstr(" rank 1 "));
  EXPECT_THAT(trace.out, Not(HasSubstr(" rank 0 ")));
  EXPECT_THAT(trace.out, Not(HasSubstr(" rank 2 ")));
  EXPECT_THAT(trace.out,
              HasSubstr("MPI_Reduce(bytes=8, comm=0, comm_size=3, root=0, op=MPI_SUM);"));
}

TEST_F(MpiCheck, WrongRootNamesTheRankTheCallAndTheIteration) {
  const RunResult r = check("wrong-root");
  EXPECT_EQ(r.exit_status, 3) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("\n1. rank 1 calls MPI_Reduce with root=1 where ranks 0,2 have "
                               "root=0 (collective 8 on MPI_COMM_WORLD) [rank 1: MPI_Reduce at "
                               "mpi_check_fixture.c:41, iteration 4 of the loop in main]\n"));
  EXPECT_THAT(r.out, HasSubstr("   rank 1 thread 0: MPI_Reduce(bytes=8, comm=0, comm_size=3, "
                               "root=1, op=MPI_SUM) at main > step > reduce_step > MPI_Reduce at "
                               "mpi_check_fixture.c:41, iteration 4 of the loop in main\n"));
  // --no-sites: the location without them.
  const RunResult bare =
      parlot_read({"check", (tmp_.path() / "wrong-root").string(), "--no-sites"});
  EXPECT_THAT(bare.out, HasSubstr("(collective 8 on MPI_COMM_WORLD) [rank 1: MPI_Reduce, "
                                  "iteration 4 of the loop in main]\n"));
  std::printf("%s", r.out.c_str());
}

TEST_F(MpiCheck, WrongRootAsJson) {
  const RunResult r = check("wrong-root", {"--format", "json"});
  EXPECT_EQ(r.exit_status, 3) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j.at("findings").empty());
  const auto& f = j.at("findings")[0];
  EXPECT_EQ(f.at("kind"), "collective_mismatch");
  EXPECT_EQ(f.at("sequence"), 8);
  EXPECT_EQ(f.at("calls")[0].at("rank"), 1);
  EXPECT_EQ(f.at("calls")[0].at("arguments").at("root"), 1);
  EXPECT_EQ(f.at("calls")[0].at("iteration"), 4);
  EXPECT_EQ(f.at("calls")[0].at("loop_in"), "main");
  EXPECT_EQ(f.at("calls")[0].at("site"), "mpi_check_fixture.c:41");
}

TEST_F(MpiCheck, MismatchedCollectiveKind) {
  expect_first_finding("wrong-kind",
                       "rank 1 calls MPI_Bcast where ranks 0,2 call MPI_Reduce (collective 8 on "
                       "MPI_COMM_WORLD) [rank 1: MPI_Bcast at mpi_check_fixture.c:43, iteration 4 "
                       "of the loop in main]",
                       "at main > step > reduce_step > MPI_Bcast at mpi_check_fixture.c:43, "
                       "iteration 4 of the loop in main\n");
}

TEST_F(MpiCheck, CountMismatch) {
  expect_first_finding("wrong-count",
                       "rank 1 calls MPI_Reduce with 16 bytes where ranks 0,2 have 8 bytes "
                       "(collective 8 on MPI_COMM_WORLD) [rank 1: MPI_Reduce at "
                       "mpi_check_fixture.c:45, iteration 4 of the loop in main]",
                       "   rank 1 thread 0: MPI_Reduce(bytes=16, ");
}

TEST_F(MpiCheck, WrongReductionOperation) {
  expect_first_finding("wrong-op",
                       "rank 1 calls MPI_Reduce with op=MPI_MAX where ranks 0,2 have op=MPI_SUM "
                       "(collective 8 on MPI_COMM_WORLD) [rank 1: MPI_Reduce at "
                       "mpi_check_fixture.c:47, iteration 4 of the loop in main]",
                       "   rank 1 thread 0: MPI_Reduce(bytes=8, comm=0, comm_size=3, root=0, "
                       "op=MPI_MAX) at main > step > reduce_step > MPI_Reduce at "
                       "mpi_check_fixture.c:47, iteration 4 of the loop in main\n");
}

TEST_F(MpiCheck, SendNeverReceived) {
  const RunResult r = expect_first_finding(
      "unmatched-send",
      "rank 0 sent a message to rank 1 (tag 99, 4 bytes) that was never received (in MPI_Send) "
      "[rank 0: MPI_Send at mpi_check_fixture.c:64, iteration 4 of the loop in main]",
      "   rank 0 thread 0: MPI_Send(dest=1, tag=99, bytes=4, comm=0, comm_size=3) at main > step "
      "> exchange > MPI_Send at mpi_check_fixture.c:64, iteration 4 of the loop in main\n");
  EXPECT_THAT(r.out, HasSubstr("parlot-read check: 1 problem in 3 ranks"));
}

TEST_F(MpiCheck, DeadlockCycleInAJobStoppedWithSigterm) {
  const RunResult r = check("deadlock");
  EXPECT_EQ(r.exit_status, 3) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("\n1. deadlock: rank 0 waits in MPI_Recv for rank 1, which waits "
                               "in MPI_Recv for rank 0 [rank 0: MPI_Recv at "
                               "mpi_check_fixture.c:58, iteration 4 of the loop in main]\n"
                               "2. rank 2 waits in MPI_Allreduce (collective 9 on "
                               "MPI_COMM_WORLD) for ranks 0-1, which are in MPI_Recv [rank 2: "
                               "MPI_Allreduce at mpi_check_fixture.c:72, iteration 5 of the loop "
                               "in main]\n"));
  EXPECT_THAT(r.out, HasSubstr("   rank 1 thread 0: MPI_Recv(source=0, tag=7, "));
  // trace shows the arguments of the receive that never returned.
  const RunResult trace =
      parlot_read({"trace", (tmp_.path() / "deadlock").string(), "--rank", "1"});
  EXPECT_THAT(trace.out,
              HasSubstr("      MPI_Recv(source=0, tag=7, bytes=4, comm=0, comm_size=3);\n"));
  std::printf("%s", r.out.c_str());
}

}  // namespace
}  // namespace parlot::e2e

// The MPI variants of the NAS-style kernels (examples/<kernel>_mpi) run by
// mpirun on two ranks with the runtime preloaded: the program must print
// the serial program's line, and each rank must leave its own process
// directory, labelled with its rank, whose main thread traced the kernel.
// OpenMPI's own helper threads are not instrumented and are not checked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <ostream>
#include <sstream>

#include "e2e_support.h"

namespace parlot::e2e {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

struct MpiExample {
  std::string name;  // the serial program; the MPI one is name + "_mpi"
  std::vector<std::string> args;
  std::vector<std::string> expected_names;  // in every rank's main thread trace
};

void PrintTo(const MpiExample& ex, std::ostream* os) {
  *os << ex.name << "_mpi";
  for (const auto& a : ex.args) *os << " " << a;
}

class MpiExamples : public ::testing::TestWithParam<MpiExample> {};

TEST_P(MpiExamples, TwoRanksEachLeaveATrace) {
  const MpiExample& ex = GetParam();
  const std::string program = examples_dir() + "/" + ex.name + "_mpi";
  if (!fs::exists(program)) GTEST_SKIP() << program << " was not built (MPI not found)";
  const std::string mpirun = find_mpirun();
  if (mpirun.empty()) GTEST_SKIP() << "mpirun is not on PATH";

  std::vector<std::string> serial{examples_dir() + "/" + ex.name};
  serial.insert(serial.end(), ex.args.begin(), ex.args.end());
  const RunResult expected = run(serial);
  ASSERT_EQ(expected.exit_status, 0) << expected.err;

  TempDir dir;
  std::vector<std::string> argv{mpirun,
                                "--allow-run-as-root",
                                "--oversubscribe",
                                "-np",
                                "2",
                                "-x",
                                std::string("LD_PRELOAD=") + PARLOT_RUNTIME_PATH,
                                "-x",
                                "PARLOT_DIR=" + dir.path().string(),
                                program};
  argv.insert(argv.end(), ex.args.begin(), ex.args.end());
  const RunResult mpi = run(argv);
  ASSERT_EQ(mpi.exit_status, 0) << mpi.out << mpi.err;
  EXPECT_EQ(mpi.out, expected.out) << "the MPI program's line differs from the serial one's";

  const auto processes = open_trace_directory(dir.path());
  ASSERT_EQ(processes.size(), 2u) << "expected one process directory per rank";
  for (std::size_t rank = 0; rank < processes.size(); ++rank) {
    const ProcessTrace& p = processes[rank];  // sorted by rank
    SCOPED_TRACE(p.directory.string());
    EXPECT_EQ(p.metadata.rank, std::to_string(rank));
    EXPECT_FALSE(p.crash.has_value());

    // The main thread's file (tid == pid); helper threads may add others.
    std::optional<fs::path> main_thread;
    for (const auto& f : p.thread_files) {
      ThreadEventReader r(f);
      if (r.summary().tid == p.metadata.pid) main_thread = f;
    }
    ASSERT_TRUE(main_thread.has_value()) << "no trace of the main thread";
    ThreadEventReader r(*main_thread);
    ASSERT_TRUE(r.summary().trailer.has_value()) << r.summary().damage;
    EXPECT_GT(r.summary().trailer->events, 0u);
    EXPECT_EQ(r.summary().trailer->unmatched_exits, 0u);

    const std::string pid = std::to_string(p.metadata.pid);
    const RunResult text = parlot_read({"trace", p.directory.string(), "--pid", pid, "--tid", pid});
    ASSERT_EQ(text.exit_status, 0) << text.err;
    EXPECT_THAT(text.out, HasSubstr("main() {"));
    for (const auto& name : ex.expected_names) EXPECT_THAT(text.out, HasSubstr(name));
    EXPECT_THAT(text.out, ::testing::Not(HasSubstr("0x"))) << "an address was left unnamed";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, MpiExamples,
    ::testing::Values(
        MpiExample{"cg", {"30", "2"}, {"conj_grad() {", "sparse_matvec() {", "gather_vector();"}},
        MpiExample{"ep", {"10"}, {"ep_kernel() {", "vranlc();", "gaussian_batch();"}},
        MpiExample{"is", {"10", "8", "3"}, {"rank_keys() {", "exchange_keys();", "rank_bucket();"}},
        MpiExample{"mg", {"8", "2"}, {"mg3P() {", "rprj3() {", "comm3() {", "norm2u3() {"}}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace parlot::e2e

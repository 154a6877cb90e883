// Communicator IDs (PARLOT_MPI_ARGS=1) of communicators created at the same
// time by several threads of each rank (MPI_THREAD_MULTIPLE): on every
// rank, the communicators alive together have distinct IDs, and every rank
// gives each communicator the same ID (here every communicator spans all
// ranks, so every rank must see the same set of IDs).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "e2e_support.h"

namespace parlot::e2e {
namespace {

namespace fs = std::filesystem;

constexpr int kThreads = 4;
constexpr int kRounds = 16;

// The IDs of the communicators every MPI_Comm_dup of a process made
// ("new_comm" of the call's entry event), over all its threads.
std::vector<long long> duplicated_ids(const ProcessTrace& p) {
  const RunResult t = parlot_read({"trace", p.directory.string(), "--format", "jsonl"});
  EXPECT_EQ(t.exit_status, 0) << t.err;
  std::vector<long long> ids;
  std::istringstream in(t.out);
  for (std::string line; std::getline(in, line);) {
    const auto e = nlohmann::json::parse(line);
    if (e.at("kind") != "enter" || e.at("function") != "MPI_Comm_dup") continue;
    const auto mpi = e.value("mpi", nlohmann::json::object());
    EXPECT_TRUE(mpi.contains("new_comm")) << line;
    if (mpi.contains("new_comm")) ids.push_back(mpi.at("new_comm").get<long long>());
  }
  return ids;
}

class ConcurrentCommunicators : public ::testing::TestWithParam<int> {};

TEST_P(ConcurrentCommunicators, LiveCommunicatorsHaveDistinctIdsEqualOnEveryRank) {
  const int ranks = GetParam();
  const std::string program = PARLOT_MPI_COMM_THREADS_FIXTURE_PATH;
  if (program.empty() || !fs::exists(program)) GTEST_SKIP() << "the MPI fixture was not built";
  if (!fs::exists(PARLOT_MPI_WRAPPERS_PATH)) GTEST_SKIP() << "libparlotmpi.so was not built";
  const std::string mpirun = find_mpirun();
  if (mpirun.empty()) GTEST_SKIP() << "mpirun is not on PATH";

  TempDir traces;
  const RunResult r =
      run({mpirun, "--allow-run-as-root", "--oversubscribe", "-np", std::to_string(ranks), "-x",
           std::string("LD_PRELOAD=") + PARLOT_RUNTIME_PATH + ":" + PARLOT_MPI_WRAPPERS_PATH, "-x",
           "PARLOT_DIR=" + traces.path().string(), "-x", "PARLOT_MPI_ARGS=1", program,
           std::to_string(kThreads), std::to_string(kRounds)});
  if (r.exit_status == 77) GTEST_SKIP() << "no MPI_THREAD_MULTIPLE";
  ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "4 threads x 16 duplicates\n");

  const auto processes = open_trace_directory(traces.path());
  ASSERT_EQ(processes.size(), static_cast<std::size_t>(ranks));
  std::vector<long long> first;
  for (const ProcessTrace& p : processes) {
    SCOPED_TRACE("rank " + p.metadata.rank);
    std::vector<long long> ids = duplicated_ids(p);
    // The main thread's duplicates of MPI_COMM_WORLD and every worker's:
    // all alive until the end.
    ASSERT_EQ(ids.size(), static_cast<std::size_t>(kThreads + kThreads * kRounds));
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end())
        << "two live communicators share an ID: " << ::testing::PrintToString(ids);
    for (const long long id : ids) EXPECT_GE(id, 2);  // 0 and 1 are WORLD and SELF
    if (first.empty()) {
      first = ids;
    } else {
      EXPECT_EQ(ids, first) << "the ranks disagree on the communicators' IDs";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, ConcurrentCommunicators, ::testing::Values(2, 4),
                         [](const auto& info) { return "np" + std::to_string(info.param); });

}  // namespace
}  // namespace parlot::e2e

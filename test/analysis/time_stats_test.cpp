// Unit tests of the time statistics (analysis/time_stats.h) and of the
// categories of function names (analysis/time_category.h) on hand-written
// timed streams.
#include <gtest/gtest.h>

#include "analysis/time_category.h"
#include "analysis/time_stats.h"

namespace parlot::analysis {
namespace {

TEST(TimeCategory, MpiCallsSplitIntoWaitingAndCommunicationInEverySpelling) {
  for (const char* wait : {"MPI_Recv", "MPI_Wait", "MPI_Waitall", "MPI_Barrier", "MPI_Allreduce",
                           "PMPI_Bcast", "mpi_recv_", "MPI_WAITALL", "mpi_allreduce__", "MPI_Init",
                           "MPI_Finalize", "MPI_Sendrecv", "MPI_Test"}) {
    EXPECT_EQ(classify_function(wait), TimeCategory::kMpiWait) << wait;
  }
  for (const char* comm : {"MPI_Send", "MPI_Isend", "MPI_Irecv", "MPI_Iallreduce", "mpi_isend_",
                           "MPI_Comm_rank", "MPI_Put"}) {
    EXPECT_EQ(classify_function(comm), TimeCategory::kMpiCommunication) << comm;
  }
  EXPECT_EQ(classify_function("MPI_File_write_at"), TimeCategory::kIo);
  // Any other MPI name is communication (MPI_Type_commit, a newer call).
  EXPECT_EQ(classify_function("MPI_Recvx"), TimeCategory::kMpiCommunication);
}

TEST(TimeCategory, IoCallsByNameAndEverythingElseIsComputation) {
  for (const char* io : {"read", "write", "fread", "fwrite@GLIBC_2.2.5", "printf", "fsync",
                         "_gfortran_st_write", "pwrite64"}) {
    EXPECT_EQ(classify_function(io), TimeCategory::kIo) << io;
  }
  for (const char* other :
       {"main", "memcpy", "readme", "ns::read", "MPI", "mpi", "recv", "write_results", ""}) {
    EXPECT_EQ(classify_function(other), TimeCategory::kComputation) << other;
  }
}

// main [0, 100): compute [10, 40) with a leaf MPI_Recv [20, 35); MPI_Send
// [50, 52); fwrite from 60, still open at the end (100). Self: main
// 100-30-2-40 = 28, compute 15, MPI_Recv 15, MPI_Send 2, fwrite 40.
TEST(TimeStats, ExclusiveTimeGoesToTheInnermostCallAndItsCategory) {
  TimeStats stats;
  const auto main_key = stats.key("main"), compute = stats.key("compute"),
             recv = stats.key("MPI_Recv"), send = stats.key("MPI_Send"),
             fwrite = stats.key("fwrite");
  EXPECT_EQ(stats.key("compute"), compute);  // interned
  ThreadTimeBuilder b;
  b.enter(main_key, TimeCategory::kComputation, 0);
  b.enter(compute, TimeCategory::kComputation, 10);
  b.enter(recv, TimeCategory::kMpiWait, 20);
  b.exit(35);
  b.exit(40);
  b.enter(send, TimeCategory::kMpiCommunication, 50);
  b.exit(52);
  b.enter(fwrite, TimeCategory::kIo, 60);
  // fwrite and main still open: closed at the end.
  const TimeProfile p = b.finish(100);
  EXPECT_EQ(p.total(), 100u);
  EXPECT_EQ(p.category[0], 28u + 15u);
  EXPECT_EQ(p.category[1], 2u);
  EXPECT_EQ(p.category[2], 15u);
  EXPECT_EQ(p.category[3], 40u);  // fwrite open from 60 to the end
  EXPECT_EQ(p.functions[main_key].inclusive, 100u);
  EXPECT_EQ(p.functions[main_key].exclusive, 100u - 30 - 2 - 40);
  EXPECT_EQ(p.functions[compute].inclusive, 30u);
  EXPECT_EQ(p.functions[compute].exclusive, 15u);
  EXPECT_EQ(p.functions[recv].calls, 1u);
}

TEST(TimeStats, RecursionCountsInclusiveTimeOncePerOutermostCall) {
  TimeStats stats;
  const auto f = stats.key("f");
  ThreadTimeBuilder b;
  b.enter(f, TimeCategory::kComputation, 0);
  b.enter(f, TimeCategory::kComputation, 10);
  b.exit(20);
  b.exit(30);
  const TimeProfile p = b.finish(30);
  EXPECT_EQ(p.functions[f].calls, 2u);
  EXPECT_EQ(p.functions[f].inclusive, 30u);
  EXPECT_EQ(p.functions[f].exclusive, 30u);
}

// Three ranks: work takes 10, 40, 10; only ranks 0 and 2 call idle.
TEST(TimeStats, ImbalanceNamesTheSlowestMemberAndAveragesOverCallers) {
  TimeStats stats;
  const auto work = stats.key("work"), idle = stats.key("idle");
  const std::uint64_t work_time[] = {10, 40, 10};
  for (int r = 0; r < 3; ++r) {
    stats.begin_process("rank " + std::to_string(r));
    ThreadTimeBuilder b;
    b.enter(work, TimeCategory::kComputation, 0);
    b.exit(work_time[r]);
    if (r != 1) {
      b.enter(idle, TimeCategory::kMpiWait, 100);
      b.exit(100 + 7 * (r + 1));
    }
    stats.add_thread("rank " + std::to_string(r) + " thread 0", b.finish(200));
  }
  std::vector<const TimeProfile*> ranks;
  for (const auto& p : stats.processes()) ranks.push_back(&p.total);
  const auto im = TimeStats::imbalance(ranks);
  ASSERT_EQ(im.size(), 2u);
  EXPECT_EQ(im[0].function, work);  // largest excess first
  EXPECT_EQ(im[0].max, 40u);
  EXPECT_DOUBLE_EQ(im[0].mean, 20.0);
  EXPECT_DOUBLE_EQ(im[0].ratio(), 2.0);
  EXPECT_EQ(im[0].slowest, 1u);
  EXPECT_EQ(im[0].members, 3u);
  EXPECT_EQ(im[1].function, idle);
  EXPECT_EQ(im[1].members, 2u);
  EXPECT_EQ(im[1].slowest, 2u);
  EXPECT_DOUBLE_EQ(im[1].mean, 14.0);
  EXPECT_EQ(stats.program().functions[work].exclusive, 60u);
  EXPECT_EQ(stats.program().category[2], 7u + 21u);
}

}  // namespace
}  // namespace parlot::analysis

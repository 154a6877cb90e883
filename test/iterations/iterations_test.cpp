// `parlot-read iterations` and `reduce` on iterations_mpi_fixture.c: four
// ranks, 60 steps of computation then MPI_Allreduce, rank 1's computation
// 50 ms longer in step 40. The first line that stands out must name
// iteration 40, rank 1 and compute (not the three ranks that waited), and a
// reduced trace must be smaller, read by every view, and still hold it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "e2e_support.h"

namespace parlot::e2e {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

/// The first line after "# iterations that stand out", or "".
std::string first_standout(const std::string& text) {
  const auto lines = lines_of(text);
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    if (lines[i].rfind("# iterations that stand out", 0) == 0) return lines[i + 1];
  }
  return "";
}

std::uint64_t bytes_of(const fs::path& dir) {
  std::uint64_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) n += e.file_size();
  }
  return n;
}

class IterationsCommand : public ::testing::Test {
 protected:
  // One traced run of the fixture for every test.
  static void SetUpTestSuite() {
    const std::string fixture = PARLOT_ITER_MPI_FIXTURE;
    const std::string mpirun = find_mpirun();
    if (fixture.empty() || mpirun.empty()) return;
    dir_ = std::make_unique<TempDir>();
    trace_ = dir_->path() / "trace";
    const RunResult r =
        run({mpirun, "--allow-run-as-root", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1",
             "-np", "4", "-x",
             std::string("LD_PRELOAD=") + PARLOT_RUNTIME_PATH + ":" + PARLOT_MPI_WRAPPERS_PATH,
             "-x", "PARLOT_DIR=" + trace_.string(), fixture});
    ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
    ASSERT_THAT(r.out, HasSubstr("slow iteration 40 rank 1"));
  }
  static void TearDownTestSuite() { dir_.reset(); }
  void SetUp() override {
    if (!dir_) GTEST_SKIP() << "MPI or mpirun not found: no MPI fixture";
  }

  static fs::path reduce(const std::string& metric, const std::vector<std::string>& extra = {}) {
    const fs::path out = dir_->path() / ("reduced-" + metric);
    std::vector<std::string> args = {"reduce",     trace_.string(), "-o",
                                     out.string(), "--metric",      metric};
    args.insert(args.end(), extra.begin(), extra.end());
    const RunResult r = parlot_read(args);
    EXPECT_EQ(r.exit_status, 0) << r.out << r.err;
    return out;
  }

  static std::unique_ptr<TempDir> dir_;
  static fs::path trace_;
};

std::unique_ptr<TempDir> IterationsCommand::dir_;
fs::path IterationsCommand::trace_;

TEST_F(IterationsCommand, TheFirstLineNamesTheSlowIterationItsRankAndCompute) {
  const RunResult r = parlot_read({"iterations", trace_.string()});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("4 of 4 ranks have iterations (loop of step_compute)"));
  const std::string first = first_standout(r.out);
  EXPECT_THAT(first, StartsWith("iteration 40: ")) << r.out;
  EXPECT_THAT(first, HasSubstr(": rank 1 compute +")) << r.out;
  EXPECT_THAT(first, HasSubstr("in step_compute")) << r.out;
  EXPECT_THAT(first, HasSubstr("ranks 0, 2, 3 waited")) << r.out;
  EXPECT_THAT(first, HasSubstr("in MPI_Allreduce")) << r.out;
}

TEST_F(IterationsCommand, CsvHasOneRowPerIterationWithTheSlowRankInRow40) {
  const RunResult r = parlot_read({"iterations", trace_.string(), "--format", "csv"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 61u) << r.out;
  EXPECT_EQ(lines[0], "iteration,units,min_ns,median_ns,max_ns,slowest");
  for (std::size_t k = 0; k < 60; ++k) {
    EXPECT_THAT(lines[k + 1], StartsWith(std::to_string(k) + ",4,"));
  }
  // Row 40: every rank took at least the 50 ms; rank 1 is the slowest or
  // within a hair of it (the others leave the allreduce after it).
  std::istringstream row(lines[41]);
  std::string iteration, units, min, median, max;
  std::getline(row, iteration, ',');
  std::getline(row, units, ',');
  std::getline(row, min, ',');
  std::getline(row, median, ',');
  std::getline(row, max, ',');
  EXPECT_GE(std::stoull(min), 50'000'000u) << lines[41];
}

TEST_F(IterationsCommand, LoopOptionChoosesTheIterations) {
  const RunResult r = parlot_read({"iterations", trace_.string(), "--loop", "exchange"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("(calls of exchange)"));
  // Iterations now start at the exchange: rank 1's slow computation falls
  // in iteration 39 (exchange 39, then step 40's computation), the others'
  // wait for it in iteration 40.
  EXPECT_THAT(r.out, ::testing::ContainsRegex("\niteration 39: [^\n]*: rank 1 compute \\+"))
      << r.out;
  const RunResult bad = parlot_read({"iterations", trace_.string(), "--loop", "no_such"});
  EXPECT_NE(bad.exit_status, 0);
  EXPECT_THAT(bad.err, HasSubstr("no function named 'no_such'"));
}

TEST_F(IterationsCommand, ReducedTraceIsSmallerReadByEveryViewAndKeepsTheOutlier) {
  const fs::path out = reduce("avgwave");
  EXPECT_LT(bytes_of(out), bytes_of(trace_));
  const RunResult it = parlot_read({"iterations", out.string()});
  ASSERT_EQ(it.exit_status, 0) << it.err;
  EXPECT_THAT(it.out, HasSubstr("(reduced: avgwave)"));
  const std::string first = first_standout(it.out);
  EXPECT_THAT(first, StartsWith("iteration 40: ")) << it.out;
  EXPECT_THAT(first, HasSubstr(": rank 1 compute +")) << it.out;
  // Every original iteration is shown again.
  const RunResult csv = parlot_read({"iterations", out.string(), "--format", "csv"});
  EXPECT_EQ(lines_of(csv.out).size(), 61u) << csv.out;
  const RunResult report = parlot_read({"report", out.string()});
  ASSERT_EQ(report.exit_status, 0) << report.err;
  EXPECT_THAT(report.out, HasSubstr("step_compute"));
  const RunResult info = parlot_read({"info", out.string()});
  EXPECT_EQ(info.exit_status, 0) << info.err;
  const RunResult trace = parlot_read({"trace", out.string()});
  EXPECT_EQ(trace.exit_status, 0) << trace.err;
  const fs::path chrome = dir_->path() / "reduced.json";
  const RunResult exported =
      parlot_read({"export", out.string(), "--format", "chrome", "-o", chrome.string()});
  EXPECT_EQ(exported.exit_status, 0) << exported.err;
  EXPECT_GT(fs::file_size(chrome), 0u);
  // The reduced file names each kept segment and what it stands for.
  bool found = false;
  for (const auto& e : fs::directory_iterator(out)) {
    found = found || fs::exists(e.path() / "reduced");
  }
  EXPECT_TRUE(found);
}

TEST_F(IterationsCommand, EveryDistanceMetricKeepsTheOutlier) {
  for (const std::string metric :
       {"reldiff", "absdiff", "manhattan", "euclidean", "chebyshev", "haarwave"}) {
    const fs::path out = reduce(metric);
    const RunResult it = parlot_read({"iterations", out.string()});
    ASSERT_EQ(it.exit_status, 0) << metric << it.err;
    EXPECT_THAT(first_standout(it.out), StartsWith("iteration 40: ")) << metric << it.out;
  }
}

TEST_F(IterationsCommand, EvaluatePrintsTheFourCriteria) {
  const fs::path out = dir_->path() / "evaluated";
  const RunResult r = parlot_read(
      {"reduce", trace_.string(), "-o", out.string(), "--metric", "euclidean", "--evaluate"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\nsize: "));
  EXPECT_THAT(r.out, HasSubstr("\ndegree of matching: "));
  EXPECT_THAT(r.out, HasSubstr("\napproximation distance: "));
  EXPECT_THAT(r.out, HasSubstr("trends retained: slowest iteration yes, first standout yes"));
  // An existing, non-empty output is refused, and so is a reduced input.
  const RunResult again = parlot_read({"reduce", trace_.string(), "-o", out.string()});
  EXPECT_NE(again.exit_status, 0);
  const RunResult twice =
      parlot_read({"reduce", out.string(), "-o", (dir_->path() / "twice").string()});
  EXPECT_NE(twice.exit_status, 0);
  EXPECT_THAT(twice.err, HasSubstr("is already reduced"));
}

TEST_F(IterationsCommand, ADamagedReducedFileIsAnErrorNamingItsFileAndOffset) {
  const fs::path out = dir_->path() / "damaged";
  ASSERT_EQ(parlot_read({"reduce", trace_.string(), "-o", out.string()}).exit_status, 0);
  fs::path file;
  for (const auto& e : fs::directory_iterator(out)) {
    if (fs::exists(e.path() / "reduced")) file = e.path() / "reduced";
  }
  ASSERT_FALSE(file.empty());
  const std::string good = slurp(file);
  for (const std::string bad : {"segment 0 9 3 0-5\n", "segment 0 1 2 5-3\n",
                                "segment 0 1 2 99999999999999\n", "segment 0 x 2 1\n"}) {
    {
      std::ofstream f(file, std::ios::trunc);
      f << "parlot-reduced 1\nmetric avgwave 0.2\n" << bad;
    }
    const RunResult r = parlot_read({"iterations", out.string()});
    EXPECT_NE(r.exit_status, 0) << bad;
    EXPECT_THAT(r.err, HasSubstr(file.string() + ": offset 36")) << bad << r.err;
  }
  std::ofstream(file, std::ios::trunc) << good;
  EXPECT_EQ(parlot_read({"iterations", out.string()}).exit_status, 0);
}

// Rank 0 folds its loop from another call than the others (fixture
// argument "rotate"): every rank still gets the same iterations, in
// `iterations` and in `reduce`, whose output keeping every iteration reads
// back as the original.
TEST_F(IterationsCommand, EveryRankIsSegmentedAtTheFirstRanksLoopHead) {
  const fs::path trace = dir_->path() / "rotated";
  const RunResult rec =
      run({find_mpirun(), "--allow-run-as-root", "--oversubscribe", "--mca", "mpi_yield_when_idle",
           "1", "-np", "4", "-x",
           std::string("LD_PRELOAD=") + PARLOT_RUNTIME_PATH + ":" + PARLOT_MPI_WRAPPERS_PATH, "-x",
           "PARLOT_DIR=" + trace.string(), PARLOT_ITER_MPI_FIXTURE, "rotate"});
  ASSERT_EQ(rec.exit_status, 0) << rec.out << rec.err;
  const RunResult it = parlot_read({"iterations", trace.string()});
  ASSERT_EQ(it.exit_status, 0) << it.err;
  EXPECT_THAT(it.out, HasSubstr("# 4 of 4 ranks have iterations (loop of tally);")) << it.out;
  const RunResult csv = parlot_read({"iterations", trace.string(), "--format", "csv"});
  const fs::path out = dir_->path() / "rotated-kept";
  const RunResult red = parlot_read(
      {"reduce", trace.string(), "-o", out.string(), "--metric", "absdiff", "--threshold", "0"});
  ASSERT_EQ(red.exit_status, 0) << red.err;
  const RunResult back = parlot_read({"iterations", out.string(), "--format", "csv"});
  EXPECT_EQ(back.out, csv.out);
}

}  // namespace
}  // namespace parlot::e2e

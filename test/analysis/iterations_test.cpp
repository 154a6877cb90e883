// Iterations (analysis/iterations.h) and their reduction
// (analysis/reduction.h) on hand-made timed threads whose times are known.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/iterations.h"
#include "analysis/reduction.h"

namespace parlot::analysis {
namespace {

/// Builds a timed thread call by call; IDs are the name keys + 1.
class ThreadBuilder {
 public:
  ThreadBuilder(NameIndex& names, std::string name) : names_(names) { t_.name = std::move(name); }
  ThreadBuilder& enter(const std::string& f, std::uint64_t at) {
    const std::uint32_t key = names_.key(f);
    t_.events.push_back({key + 1, key, at});
    return *this;
  }
  ThreadBuilder& exit(std::uint64_t at) {
    t_.events.push_back({0, 0, at});
    return *this;
  }
  /// A leaf call of `f` from `at` for `length`.
  ThreadBuilder& call(const std::string& f, std::uint64_t at, std::uint64_t length) {
    return enter(f, at).exit(at + length);
  }
  ThreadBuilder& mark(std::uint64_t at) {
    t_.marks.push_back({t_.events.size(), at, "step"});
    return *this;
  }
  TimedThread done(std::uint64_t end) {
    t_.end_time = end;
    return t_;
  }

 private:
  NameIndex& names_;
  TimedThread t_;
};

/// main { init; n x [ step { work } ; MPI_Allreduce ] ; finalize }: each
/// iteration 100 long (work 60, allreduce 40), except `slow` whose work is
/// `extra` longer and `wait` longer allreduce.
TimedThread loop_thread(NameIndex& names, const std::string& name, int n, int slow,
                        std::uint64_t extra, std::uint64_t wait_extra) {
  ThreadBuilder b(names, name);
  std::uint64_t t = 0;
  b.enter("main", t).call("init", t, 10);
  t += 10;
  for (int i = 0; i < n; ++i) {
    const std::uint64_t work = 60 + (i == slow ? extra : 0);
    const std::uint64_t wait = 40 + (i == slow ? wait_extra : 0);
    b.enter("step", t).call("work", t, work).exit(t + work);
    t += work;
    b.call("MPI_Allreduce", t, wait);
    t += wait;
  }
  b.call("finalize", t, 5);
  t += 5;
  b.exit(t);
  return b.done(t);
}

TEST(Iterations, TheOutermostRepeatingLoopGivesTheIterations) {
  NameIndex names;
  const TimedThread t = loop_thread(names, "rank 0", 6, -1, 0, 0);
  const Segmentation s = find_iterations(t, names, {});
  EXPECT_EQ(s.how, "loop of step");
  ASSERT_EQ(s.segments.size(), 6u);
  for (std::size_t k = 0; k < 6; ++k) {
    EXPECT_EQ(s.segments[k].begin, 10 + 100 * k) << k;
    EXPECT_EQ(s.segments[k].finish, 110 + 100 * k) << k;
    EXPECT_EQ(s.segments[k].end - s.segments[k].first, 6u) << k;  // step{work}, allreduce
  }
  // The last iteration stops before finalize (not one of the loop's calls).
  EXPECT_EQ(t.events[s.segments[5].end].key, *names.find("finalize"));
}

TEST(Iterations, MarksAndAChosenFunctionGiveTheIterations) {
  NameIndex names;
  ThreadBuilder b(names, "t");
  b.enter("main", 0);
  for (std::uint64_t i = 0; i < 4; ++i)
    b.mark(10 * i).call("a", 10 * i, 5).call("b", 10 * i + 5, 5);
  const TimedThread t = b.exit(40).done(40);
  const Segmentation marks = find_iterations(t, names, {});
  EXPECT_EQ(marks.how, "marks");
  ASSERT_EQ(marks.segments.size(), 3u);  // between consecutive marks
  EXPECT_EQ(marks.segments[1].begin, 10u);
  EXPECT_EQ(marks.segments[1].finish, 20u);
  IterationChoice choice;
  choice.loop = *names.find("b");
  const Segmentation by_b = find_iterations(t, names, choice);
  EXPECT_EQ(by_b.how, "calls of b");
  ASSERT_EQ(by_b.segments.size(), 4u);
  EXPECT_EQ(by_b.segments[0].begin, 5u);
  EXPECT_EQ(by_b.segments[3].finish, 40u);  // to main's exit
}

TEST(Iterations, NoLoopNoIterations) {
  NameIndex names;
  ThreadBuilder b(names, "t");
  const TimedThread t = b.enter("main", 0).call("a", 1, 1).call("b", 2, 1).exit(4).done(4);
  EXPECT_TRUE(find_iterations(t, names, {}).segments.empty());
}

TEST(Iterations, SegmentTimesSplitByCategoryAndFunction) {
  NameIndex names;
  const TimedThread t = loop_thread(names, "rank 0", 3, 1, 30, 0);
  const auto seg = find_iterations(t, names, {}).segments;
  const auto times = time_segments(t, names, seg);
  ASSERT_EQ(times.size(), 3u);
  EXPECT_EQ(times[0].duration, 100u);
  EXPECT_EQ(times[1].duration, 130u);
  EXPECT_EQ(times[1].category[static_cast<int>(TimeCategory::kComputation)], 90u);
  EXPECT_EQ(times[1].category[static_cast<int>(TimeCategory::kMpiWait)], 40u);
  EXPECT_EQ(times[1].function_time(*names.find("work")), 90u);
  EXPECT_EQ(times[1].function_time(*names.find("MPI_Allreduce")), 40u);
  EXPECT_EQ(times[1].work(), 90u);
}

TEST(Iterations, TheStandoutIsTheRankWhoseWorkGrewNotTheWaiters) {
  NameIndex names;
  IterationTable table;
  for (int u = 0; u < 4; ++u) {
    // Rank 1 works 50 longer in iteration 6; the others wait 50 longer.
    const TimedThread t =
        loop_thread(names, "rank " + std::to_string(u), 10, 6, u == 1 ? 50 : 0, u == 1 ? 0 : 50);
    table.units.push_back(t.name);
    table.times.push_back(time_segments(t, names, find_iterations(t, names, {}).segments));
  }
  const auto standouts = find_standouts(table, names, 0);
  ASSERT_EQ(standouts.size(), 1u);
  const Standout& s = standouts[0];
  EXPECT_EQ(s.iteration, 6u);
  EXPECT_EQ(s.time, 150u);
  EXPECT_DOUBLE_EQ(s.median, 100);
  EXPECT_EQ(s.unit, 1u);
  EXPECT_EQ(s.category, TimeCategory::kComputation);
  ASSERT_TRUE(s.function);
  EXPECT_EQ(names.name(*s.function), "work");
  EXPECT_DOUBLE_EQ(s.function_excess, 50);
  EXPECT_EQ(s.waiters, (std::vector<std::size_t>{0, 2, 3}));
  EXPECT_DOUBLE_EQ(s.wait_excess, 50);
  ASSERT_TRUE(s.wait_function);
  EXPECT_EQ(names.name(*s.wait_function), "MPI_Allreduce");
  const auto rows = spread(table);
  ASSERT_EQ(rows.size(), 10u);
  EXPECT_EQ(rows[6].min, 150u);
  EXPECT_EQ(rows[0].max, 100u);
  EXPECT_EQ(rows[6].units, 4u);
}

TEST(Reduction, DistanceMetricKeepsTheOutlierAndMatchesTheRest) {
  NameIndex names;
  const TimedThread t = loop_thread(names, "rank 0", 8, 5, 300, 0);
  const auto seg = find_iterations(t, names, {}).segments;
  const ThreadReduction r = reduce_segments(t, seg, Metric::kEuclidean, 0.2);
  EXPECT_EQ(r.kept, 2u);
  EXPECT_EQ(r.signatures, 1u);
  for (std::size_t s = 0; s < seg.size(); ++s) {
    EXPECT_EQ(r.representative[s], s == 5 ? 5u : 0u) << s;
  }
  EXPECT_EQ(r.errors.size(), 8u * 7u);             // 6 events + the end per segment
  EXPECT_DOUBLE_EQ(percentile(r.errors, 1.0), 0);  // the others are identical
}

TEST(Reduction, IterKKeepsTheFirstKAndIterAvgAverages) {
  NameIndex names;
  const TimedThread t = loop_thread(names, "rank 0", 6, 5, 60, 0);
  const auto seg = find_iterations(t, names, {}).segments;
  const ThreadReduction k = reduce_segments(t, seg, Metric::kIterK, 2);
  EXPECT_EQ(k.kept, 2u);
  EXPECT_EQ(k.representative[5], 1u);  // the last one kept stands for the rest
  // The slow iteration's end (160) is recreated as 100: error 60.
  EXPECT_DOUBLE_EQ(percentile(k.errors, 1.0), 60);
  const ThreadReduction avg = reduce_segments(t, seg, Metric::kIterAvg, 0);
  EXPECT_EQ(avg.kept, 1u);
  EXPECT_DOUBLE_EQ(avg.written[0].back(), 110);  // (5 x 100 + 160) / 6
}

TEST(Reduction, PercentileIsTheNearestRank) {
  EXPECT_DOUBLE_EQ(percentile({5, 1, 4, 2, 3, 6, 7, 8, 9, 10}, 0.9), 9);
  EXPECT_DOUBLE_EQ(percentile({}, 0.9), 0);
  EXPECT_DOUBLE_EQ(percentile({3}, 0.9), 3);
}

}  // namespace
}  // namespace parlot::analysis

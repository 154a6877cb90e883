// Unit tests of cause first (analysis/cause.h, analysis/parting.h) on
// hand-written streams of four ranks: a rank that skips an exchange while
// the others hang in it, one rank with an extra iteration, root-only code
// (a role, not a divergence), a hang's victims that stop before the culprit
// in event order, and the walk over loop summaries against the events.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/cause.h"
#include "analysis/parting.h"
#include "stream_support.h"

namespace parlot::analysis {
namespace {

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

/// One main thread per rank, each a stream() tree (an unclosed '(' leaves
/// the call open: the thread stopped inside it).
struct Ranks {
  NameTable names;
  std::vector<LoopSummary> summaries;
  explicit Ranks(const std::vector<std::string>& trees) {
    for (const auto& t : trees) summaries.push_back(summarise(stream(t, &names)));
  }
  CauseReport report() const {
    std::vector<ThreadLoops> loops;
    for (std::size_t r = 0; r < summaries.size(); ++r) loops.push_back({{r, 0, 0}, &summaries[r]});
    return find_causes(loops);
  }
  std::string text() const {
    return describe_causes(report(), names,
                           [](ThreadId id) { return "rank " + std::to_string(id.rank); });
  }
};

// m: main, i: init, e: exchange (s: send, w: wait), r: reduce (a: allreduce),
// p: root-only print, f: finalize.
const std::string kIteration = "e(sw)r(a)";

TEST(Cause, RankThatSkipsAnExchangeComesFirstAtItsIteration) {
  // Rank 2 skips the exchange of iteration 6 and blocks in the reduce; its
  // partners block in the exchange, at three different places; rank 0 also
  // prints (root-only code).
  const std::string start = "m(i" + repeat(kIteration, 5);
  const Ranks ranks(
      {"m(pi" + repeat(kIteration, 5) + "e(sws(", start + "e(sw(", start + "r(a(", start + "e(s("});
  const CauseReport report = ranks.report();
  ASSERT_EQ(report.outliers.size(), 4u);
  const Outlier& first = report.outliers.front();
  EXPECT_EQ(first.thread.rank, 2u);
  EXPECT_EQ(first.parting.iterations(), std::vector<std::uint64_t>{6});
  EXPECT_EQ(first.parting.mine.kind, PartingStep::Kind::kCall);
  EXPECT_EQ(ranks.names.name(first.parting.mine.function), "r");
  EXPECT_EQ(ranks.names.name(first.parting.theirs.function), "e");
  // Before the parting: m, i, then five iterations of 10 events; p left out.
  EXPECT_EQ(first.parting.events, 1u + 2 + 5 * 10);
  const std::string text = ranks.text();
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "earliest divergence: rank 2 at iteration 6 of the loop in m, after 53 common events");
  EXPECT_NE(text.find("  call path: m > [iteration 6] > r\n"), std::string::npos) << text;
  EXPECT_NE(text.find("role code left out (called by at most half of a role's threads): p (1 of "
                      "4 main threads)"),
            std::string::npos)
      << text;
  // The victims follow; the one that stopped first (rank 3, inside the first
  // send) is not ahead of the culprit though it parts from rank 1 earlier in
  // events than rank 2 parts from anyone at the exchange's end.
  EXPECT_LE(text.find("\n", text.find("earliest")) + 1, text.find("then: rank"));
}

// Each rank sets up a different number of neighbours (x calls inside s,
// which every rank completes: LULESH's corner ranks): a difference of the
// ranks' places, not the parting; rank 2 skipping its exchange still comes
// first, at its iteration, and its events count its own setup.
TEST(Cause, DifferencesInsideCompletedCallsDoNotHideTheCulprit) {
  const std::string loop = repeat(kIteration, 5);
  const Ranks ranks({"m(s(xx)" + loop + "e(sws(", "m(s(x)" + loop + "e(sw(",
                     "m(s(xxx)" + loop + "r(a(", "m(s(xxxx)" + loop + "e(s("});
  const CauseReport report = ranks.report();
  ASSERT_FALSE(report.outliers.empty());
  const Outlier& first = report.outliers.front();
  EXPECT_EQ(first.thread.rank, 2u) << ranks.text();
  EXPECT_EQ(first.parting.within, 0u);
  EXPECT_EQ(first.parting.iterations(), std::vector<std::uint64_t>{6});
  EXPECT_EQ(ranks.names.name(first.parting.mine.function), "r");
  // m, s with three x calls, five iterations of 10 events.
  EXPECT_EQ(first.parting.events, 1u + 2 + 3 * 2 + 5 * 10);
  // Alone, the setup difference is reported, marked as inside s.
  const Ranks setup({"m(s(xx)" + loop + ")", "m(s(x)" + loop + ")", "m(s(x)" + loop + ")",
                     "m(s(x)" + loop + ")"});
  const std::string text = setup.text();
  EXPECT_EQ(text.substr(0, text.find('\n')), "earliest divergence: rank 0 after 4 common events");
  EXPECT_NE(text.find(", inside s, which both complete\n"), std::string::npos) << text;
}

TEST(Cause, ExtraIterationOnOneRankIsTheOnlyOutlier) {
  const std::string body = repeat(kIteration, 10);
  const Ranks ranks({"m(i" + body + "f)", "m(i" + body + kIteration + "f)", "m(i" + body + "f)",
                     "m(i" + body + "f)"});
  const CauseReport report = ranks.report();
  ASSERT_EQ(report.outliers.size(), 1u);
  const Outlier& o = report.outliers.front();
  EXPECT_EQ(o.thread.rank, 1u);
  EXPECT_EQ(o.parting.iterations(), std::vector<std::uint64_t>{11});
  EXPECT_EQ(ranks.names.name(o.parting.mine.function), "e");
  EXPECT_EQ(ranks.names.name(o.parting.theirs.function), "f");
  EXPECT_EQ(o.parted, 3u);
  const std::string text = ranks.text();
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "earliest divergence: rank 1 at iteration 11 of 11 of the loop in m, after 103 common "
            "events")
      << text;
}

TEST(Cause, RootOnlyCodeIsARoleNotADivergence) {
  const std::string body = repeat(kIteration, 4);
  const Ranks ranks({"m(p(x)i" + repeat("e(sw)r(a)p", 4) + "f)", "m(i" + body + "f)",
                     "m(i" + body + "f)", "m(i" + body + "f)"});
  const CauseReport report = ranks.report();
  EXPECT_TRUE(report.outliers.empty());
  ASSERT_EQ(report.role_code.size(), 2u);  // p and x, which only p calls
  EXPECT_EQ(ranks.text().substr(0, ranks.text().find('\n')),
            "no divergence: each of the 4 threads behaves as its role's majority");
}

TEST(Cause, AHangsVictimsAreOrderedAfterTheCulpritOfTheirIteration) {
  // A ring: each iteration receives (r: v) then sends (s: d). Rank 2 skips
  // its send of iteration 6; rank 3 stops in its receive of iteration 6 (in
  // events, before the point where rank 2 parts), ranks 0 and 1 go on a
  // little before they stop.
  const std::string it = "r(v)s(d)";
  const std::string start = "m(" + repeat(it, 5);
  const Ranks ranks({start + "r(v)s(d(", start + "r(v)s(d(", start + "r(v)r(v(", start + "r(v("});
  const CauseReport report = ranks.report();
  ASSERT_FALSE(report.outliers.empty());
  EXPECT_EQ(report.outliers.front().thread.rank, 2u) << ranks.text();
  EXPECT_EQ(report.outliers.front().parting.iterations(), std::vector<std::uint64_t>{6});
  EXPECT_EQ(ranks.names.name(report.outliers.front().parting.mine.function), "r");
}

// The walk over two summaries finds the first differing event that the
// event-by-event comparison finds, on random trees sharing a prefix.
TEST(Parting, EventsBeforeThePartingMatchTheEventStreams) {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    const std::string prefix = "m(" + repeat(random_tree(rng, 6), 1 + round % 7);
    const std::string a = prefix + random_tree(rng, 5) + ")";
    const std::string b = prefix + random_tree(rng, 5) + ")";
    NameTable names;
    const auto ea = stream(a, &names), eb = stream(b, &names);
    std::size_t common = 0;
    while (common < ea.size() && common < eb.size() && ea[common] == eb[common]) ++common;
    const LoopSummary sa = summarise(ea), sb = summarise(eb);
    const RoleCode none;
    FilteredSummary fa(sa, none), fb(sb, none);
    const Parting p = part(fa, fb);
    // The first difference: inside a call both complete, or for good.
    const Parting& first = p.within_completed.empty() ? p : p.within_completed.front();
    if (ea == eb) {
      EXPECT_TRUE(first.identical) << a << " / " << b;
      continue;
    }
    ASSERT_FALSE(first.identical) << a << " / " << b;
    EXPECT_EQ(first.events, common) << a << " / " << b;
  }
}

}  // namespace
}  // namespace parlot::analysis

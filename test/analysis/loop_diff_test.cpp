// Unit tests of the loop-level diff (diffNLR): exact diff lines for equal
// summaries, one iteration fewer, a different loop body and an inserted
// call; the edit script against a dynamic-programming LCS on random
// sequences; a recursion 300,000 calls deep.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <random>
#include <string>
#include <vector>

#include "analysis/divergence.h"
#include "analysis/loop_diff.h"
#include "stream_support.h"

namespace parlot::analysis {
namespace {

std::string loop_diff(const std::string& left, const std::string& right, std::size_t context = 2,
                      std::size_t max_edits = 2000) {
  NameTable names;
  const LoopSummary a = summarise(stream(left, &names));
  const LoopSummary b = summarise(stream(right, &names));
  LoopDiffOptions o;
  o.context = context;
  o.max_edits = max_edits;
  return describe_loop_diff(diff_loops(a, b, names, o));
}

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST(LoopDiff, EqualSummariesGiveNoLine) {
  const std::string t = "m(" + repeat("s(xc)", 1000) + "f)";
  EXPECT_EQ(loop_diff(t, t), "(loop summaries are equal)\n");
  NameTable names;
  const LoopSummary a = summarise(stream(t, &names));
  EXPECT_TRUE(diff_loops(a, a, names).empty());
}

TEST(LoopDiff, OneIterationFewerShowsBothCounts) {
  EXPECT_EQ(loop_diff("m(" + repeat("s(xc)", 1000) + "f)", "m(" + repeat("s(xc)", 999) + "f)"),
            "  m {\n"
            "<   1000 x [ s { x c } ]\n"
            ">   999 x [ s { x c } ]\n"
            "    f\n"
            "  }\n");
}

TEST(LoopDiff, ADifferentBodyIsDiffedInsideTheLoop) {
  EXPECT_EQ(loop_diff("m(" + repeat("s(xc)", 1000) + "f)", "m(" + repeat("s(xd)", 1000) + "f)"),
            "  m {\n"
            "    1000 x [\n"
            "      s {\n"
            "        x\n"
            "<       c\n"
            ">       d\n"
            "      }\n"
            "    ]\n"
            "    f\n"
            "  }\n");
}

TEST(LoopDiff, AnInsertedCallWithContext) {
  EXPECT_EQ(loop_diff("m(abcdefgh)", "m(abcdyefgh)"),
            "  m {\n"
            "    ... 2 common items (4 events)\n"
            "    c\n"
            "    d\n"
            ">   y\n"
            "    e\n"
            "    f\n"
            "    ... 2 common items (4 events)\n"
            "  }\n");
  EXPECT_EQ(loop_diff("m(abcdefgh)", "m(abcdyefgh)", 0),
            "  m {\n"
            "    ... 4 common items (8 events)\n"
            ">   y\n"
            "    ... 4 common items (8 events)\n"
            "  }\n");
}

TEST(LoopDiff, DifferentCountsAndBodyShowBothHeaders) {
  EXPECT_EQ(loop_diff(repeat("s(xc)", 5), repeat("s(xd)", 4)),
            "< 5 x [\n"
            "> 4 x [\n"
            "    s {\n"
            "      x\n"
            "<     c\n"
            ">     d\n"
            "    }\n"
            "  ]\n");
}

TEST(LoopDiff, AnOpenCallOnOneSide) {
  // The left thread was stopped inside w (no exit), the right one finished.
  EXPECT_EQ(loop_diff("m(aw(", "m(aw(b)z)"),
            "  m {\n"
            "    a\n"
            "    w {\n"
            ">     b\n"
            "<   ...\n"
            ">   }\n"
            ">   z\n"
            "< ...\n"
            "> }\n");
}

TEST(LoopDiff, BeyondTheEditBoundTheMiddleIsReplaced) {
  // 3 edits needed, 1 allowed: common prefix and suffix, the rest replaced.
  EXPECT_EQ(loop_diff("m(abcd)", "m(abxyd)", 2, 1),
            "  m {\n"
            "    a\n"
            "    b\n"
            "<   c\n"
            ">   x\n"
            ">   y\n"
            "    d\n"
            "  }\n");
}

// Robustness: any two trees diff without failing; the diff is empty exactly
// when the streams are equal, and every line nests at most one level deeper
// than the line before it.
TEST(LoopDiff, RandomTreesDiffIsEmptyIffStreamsAreEqual) {
  std::mt19937 rng(11);
  for (int round = 0; round < 300; ++round) {
    NameTable names;
    const std::string x = random_tree(rng, 200);
    // Half the time a small edit of x: one character dropped or repeated.
    std::string y = x;
    if (round % 2 == 0) {
      y = random_tree(rng, 200);
    } else if (const std::size_t at = rng() % x.size(); std::isalpha(x[at])) {
      y.insert(at, 1, static_cast<char>('a' + rng() % 3));
    }
    const auto ex = stream(x, &names), ey = stream(y, &names);
    for (const std::size_t k : {1u, 4u, 8u}) {
      const auto lines = diff_loops(summarise(ex, k), summarise(ey, k), names);
      ASSERT_EQ(lines.empty(), ex == ey) << x << " vs " << y << " K=" << k;
      for (std::size_t i = 1; i < lines.size(); ++i) {
        ASSERT_LE(lines[i].depth, lines[i - 1].depth + 1) << x << " vs " << y;
      }
    }
  }
}

/// Length of the longest common subsequence, by dynamic programming.
std::size_t lcs_length(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b) {
  std::vector<std::vector<std::size_t>> t(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      t[i][j] = a[i - 1] == b[j - 1] ? t[i - 1][j - 1] + 1 : std::max(t[i - 1][j], t[i][j - 1]);
    }
  }
  return t[a.size()][b.size()];
}

// A recursion 300,000 calls deep (as a stack overflow leaves), three times,
// against the same whose every pass calls a leaf at the bottom: the summary,
// its expansion and hashes, the diff and the divergence take no native
// stack (the recursive versions overflowed it at 200,000), and the texts
// fold the run of frames instead of growing with the depth squared.
TEST(LoopDiff, ADeepRecursionTakesNoStackAndItsTextIsFolded) {
  constexpr int kDepth = 300000;
  const std::string left = "m(" + repeat(repeat("r(", kDepth) + repeat(")", kDepth), 3) + ")";
  const std::string right =
      "m(" + repeat(repeat("r(", kDepth) + "x" + repeat(")", kDepth), 3) + ")";
  NameTable names;
  const auto left_events = stream(left, &names);
  const auto right_events = stream(right, &names);
  const LoopSummary a = summarise(left_events);
  const LoopSummary b = summarise(right_events);
  EXPECT_EQ(a.event_count(), left_events.size());
  EXPECT_EQ(b.event_count(), right_events.size());
  EXPECT_TRUE(a.expand() == left_events);
  EXPECT_TRUE(b.expand() == right_events);
  EXPECT_NE(a.structure_hash(), b.structure_hash());
  EXPECT_EQ(a.structure_hash(), summarise(stream(left, &names)).structure_hash());

  const std::vector<LoopDiffLine> lines = diff_loops(a, b, names);
  ASSERT_FALSE(lines.empty());
  const auto deepest = std::max_element(
      lines.begin(), lines.end(), [](const auto& p, const auto& q) { return p.depth < q.depth; });
  EXPECT_EQ(deepest->side, '>');
  EXPECT_EQ(deepest->text, "x");
  EXPECT_EQ(deepest->depth, kDepth + 2u);  // m, the loop, r x kDepth
  const std::string text = describe_loop_diff(lines);
  EXPECT_NE(text.find(fmt::format("... {} more levels of \"r {{\"", kDepth - 2)), std::string::npos)
      << text.substr(0, 2000);
  EXPECT_NE(text.find(fmt::format("[depth {}] x\n", kDepth + 2)), std::string::npos)
      << text.substr(0, 2000);
  EXPECT_LT(text.size(), 20000u);

  VectorSource l(left_events), r(right_events);
  const Divergence d = first_divergence(l, r, 2);
  ASSERT_FALSE(d.identical);
  EXPECT_EQ(d.stack.size(), kDepth + 1u);
  const std::string where = describe_divergence(d, names, "L", "R");
  EXPECT_NE(where.find(fmt::format("call stack there: m > r x {}\n", kDepth)), std::string::npos)
      << where.substr(0, 2000);
  EXPECT_LT(where.size(), 20000u);
}

TEST(ShortestEditScript, MinimalAndValidOnRandomSequences) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 300; ++round) {
    std::vector<std::uint64_t> a(rng() % 30), b(rng() % 30);
    const std::uint64_t alphabet = 1 + rng() % 4;
    for (auto& x : a) x = rng() % alphabet;
    for (auto& x : b) x = rng() % alphabet;
    std::vector<std::uint8_t> ops;
    ASSERT_TRUE(shortest_edit_script(a, b, 1000, ops));
    std::vector<std::uint64_t> kept_a, rebuilt;
    std::size_t i = 0, j = 0, edits = 0;
    for (const std::uint8_t op : ops) {
      if (op == 0) {
        ASSERT_LT(i, a.size());
        ASSERT_LT(j, b.size());
        ASSERT_EQ(a[i], b[j]);
        rebuilt.push_back(b[j]);
        ++i, ++j;
      } else if (op == 1) {
        ++i, ++edits;
      } else {
        rebuilt.push_back(b[j++]);
        ++edits;
      }
    }
    EXPECT_EQ(i, a.size());
    EXPECT_EQ(rebuilt, b);
    EXPECT_EQ(edits, a.size() + b.size() - 2 * lcs_length(a, b)) << "round " << round;
  }
  std::vector<std::uint8_t> ops;
  EXPECT_FALSE(shortest_edit_script({1, 2, 3, 4}, {5, 6, 7, 8}, 3, ops));
  EXPECT_TRUE(ops.empty());
}

}  // namespace
}  // namespace parlot::analysis

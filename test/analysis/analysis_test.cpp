// Unit tests of parlot::analysis on small hand-written event streams: the
// filter stage, nested loop recognition (exact summaries and expansion),
// equivalence classes, thread ranges, the stack prefix tree and the first
// divergence. No files: the analyses consume streams.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "analysis/call_counts.h"
#include "analysis/classes.h"
#include "analysis/divergence.h"
#include "analysis/filter.h"
#include "analysis/loops.h"
#include "analysis/stack_tree.h"
#include "analysis/thread_set.h"
#include "stream_support.h"

namespace parlot::analysis {
namespace {

TEST(Loops, NestedLoopsAreFoldedExactly) {
  NameTable names;
  std::string step = "s(xxxc)";
  std::string tree = "m(";
  for (int i = 0; i < 1000; ++i) tree += step;
  tree += "f)";
  const auto events = stream(tree, &names);
  const LoopSummary s = summarise(events);
  EXPECT_EQ(s.to_string(names), "m { 1000 x [ s { 3 x [ x ] c } ] f }");
  EXPECT_EQ(s.expand(), events);
  EXPECT_EQ(s.event_count(), events.size());
}

TEST(Loops, MultiItemBodiesAndLoopsOfLoops) {
  NameTable names;
  const auto events = stream("m(abababcabababcabababcz)", &names);
  const LoopSummary s = summarise(events);
  EXPECT_EQ(s.to_string(names), "m { 3 x [ 3 x [ a b ] c ] z }");
  EXPECT_EQ(s.expand(), events);
}

TEST(Loops, BodiesLongerThanMaxBodyAreNotFolded) {
  NameTable names;
  const auto events = stream("abcabc", &names);
  EXPECT_EQ(summarise(events, 2).to_string(names), "a b c a b c");
  EXPECT_EQ(summarise(events, 3).to_string(names), "2 x [ a b c ]");
  EXPECT_EQ(summarise(events, 2).expand(), events);
}

TEST(Loops, OpenCallsAtTheEndStayOpen) {
  NameTable names;
  auto events = stream("m(s(xx", &names);  // no closing: the thread was cut
  events.resize(events.size());
  const LoopSummary s = summarise(events);
  EXPECT_EQ(s.to_string(names), "m { s { 2 x [ x ] ... ...");
  EXPECT_EQ(s.expand(), events);
}

TEST(Loops, ExpansionPropertyOnRandomTrees) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    const std::string tree = random_tree(rng, 300);
    const auto events = stream(tree);
    for (std::size_t k : {1u, 2u, 5u, 8u}) {
      const LoopSummary s = summarise(events, k);
      ASSERT_EQ(s.expand(), events) << tree << " K=" << k;
      ASSERT_EQ(s.event_count(), events.size());
    }
  }
}

TEST(Loops, StructureHashIgnoresIterationCounts) {
  const auto a = summarise(stream("m(s(xxxc)s(xxxc)f)"));
  const auto b = summarise(stream("m(s(xxxxxc)s(xxxxxc)s(xxxxxc)f)"));
  const auto c = summarise(stream("m(s(xxxc)s(xxxc)g)"));
  EXPECT_EQ(a.structure_hash(), b.structure_hash());
  EXPECT_NE(a.structure_hash(), c.structure_hash());
}

TEST(Filter, DroppedFunctionsCalleesNestUnderTheNearestKeptCaller) {
  // Function IDs: 1 main, 2 helper (dropped), 3 work.
  FilterStage f({true, true, false, true}, 0);
  const std::vector<std::uint32_t> ids = {1, 2, 3, 0, 0, 3, 0, 0};
  CallStackTracker tracker(3, "test");
  std::vector<CallEvent> out;
  for (const auto id : ids) {
    CallEvent e;
    if (f.push(tracker.push(id), e)) out.push_back(e);
  }
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(out[1].function_id, 3u);
  EXPECT_EQ(out[1].depth, 1u);
  EXPECT_EQ(out[1].caller_id, 1u);  // helper skipped
  EXPECT_EQ(out[2].kind, CallEvent::Kind::kExit);
  EXPECT_EQ(out[2].depth, 1u);
  EXPECT_EQ(out[5].kind, CallEvent::Kind::kExit);
  EXPECT_EQ(out[5].function_id, 1u);
  EXPECT_EQ(out[5].depth, 0u);
}

TEST(Filter, MaxDepthDropsDeeperFrames) {
  FilterStage f({}, 2);
  CallStackTracker tracker(0, "test");
  std::vector<std::uint32_t> kept;
  for (const auto id : {1u, 2u, 3u, 0u, 0u, 0u}) {
    CallEvent e;
    if (f.push(tracker.push(id), e) && e.kind == CallEvent::Kind::kEnter)
      kept.push_back(e.function_id);
  }
  EXPECT_EQ(kept, (std::vector<std::uint32_t>{1, 2}));
}

TEST(Filter, MatcherIncludeExcludeModule) {
  FunctionFilter f;
  f.include = {"^MPI_", "exchange"};
  f.exclude = {"Waitall"};
  f.module = "libmpi";
  const FunctionMatcher m(f);
  EXPECT_TRUE(m.keeps("MPI_Send", "/usr/lib/libmpi.so.40"));
  EXPECT_FALSE(m.keeps("MPI_Waitall", "/usr/lib/libmpi.so.40"));
  EXPECT_FALSE(m.keeps("compute", "/usr/lib/libmpi.so.40"));
  EXPECT_FALSE(m.keeps("MPI_Send", "/usr/bin/app"));
}

TEST(ThreadSetTest, CompactRanges) {
  ThreadSet s;
  for (std::uint64_t r = 0; r < 1024; ++r) {
    if (r != 512) s.insert({r, 0});
  }
  EXPECT_EQ(s.to_string(), "ranks 0-511,513-1023");
  EXPECT_EQ(s.size(), 1023u);
  ThreadSet t;
  t.insert({512, 0});
  EXPECT_EQ(t.to_string(), "rank 512");
  ThreadSet u;
  for (std::uint64_t th = 0; th < 8; ++th) u.insert({3, th});
  u.insert({4, 0});
  u.insert({4, 2});
  EXPECT_EQ(u.to_string(false), "process 3 threads 0-7; process 4 threads 0,2");
}

// The threads of a rank's other processes (fork children, which record
// their parent's rank) are members of their own, never merged with the
// rank's threads of the same index.
TEST(ThreadSetTest, ForkChildrenOfARankAreTheirOwnMembers) {
  ThreadSet s;
  for (std::uint64_t r = 0; r < 4; ++r) s.insert({r, 0});
  s.insert({0, 0, 1});
  s.insert({1, 0, 1});
  EXPECT_EQ(s.size(), 6u);
  EXPECT_TRUE(s.contains({0, 0, 1}));
  EXPECT_FALSE(s.contains({2, 0, 1}));
  EXPECT_EQ(s.to_string(), "ranks 0-1 + fork 1; ranks 2-3");
  EXPECT_EQ((ThreadId{0, 0, 0}), s.first());
  ThreadSet only_children;
  only_children.insert({3, 0, 1});
  only_children.insert({3, 1, 1});
  only_children.insert({5, 0, 2});
  EXPECT_EQ(only_children.first(), (ThreadId{3, 0, 1}));
  EXPECT_EQ(only_children.to_string(), "rank 3 fork 1 threads 0-1; rank 5 fork 2");
  ThreadSet both;
  both.insert({7, 0});
  both.insert({7, 1});
  both.insert({7, 2, 1});
  EXPECT_EQ(both.to_string(), "rank 7 threads 0-1 + fork 1 thread 2");
  ThreadSet two_children;
  two_children.insert({2, 0, 1});
  two_children.insert({2, 0, 2});
  EXPECT_EQ(two_children.to_string(), "rank 2 fork 1 + fork 2");
  // Ordered by rank, then fork, then thread.
  EXPECT_LT((ThreadId{0, 5, 0}), (ThreadId{0, 0, 1}));
  EXPECT_LT((ThreadId{0, 9, 9}), (ThreadId{1, 0, 0}));
}

// `n` raw events (function IDs 1..`functions`, 0 = exit) of a random
// well-nested stream: an exit or an entry with equal odds, never an exit
// with no open call.
std::vector<std::uint32_t> random_nested_ids(int n, std::uint32_t functions, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint32_t> ids;
  std::size_t depth = 0;
  for (int i = 0; i < n; ++i) {
    const bool exit = depth != 0 && rng() % 2 == 0;
    ids.push_back(exit ? 0 : 1 + rng() % functions);
    depth = exit ? depth - 1 : depth + 1;
  }
  return ids;
}

TEST(ClassesTest, OutliersFirstLargestIsA) {
  Classes left, right;
  for (std::uint64_t r = 0; r < 8; ++r) (r < 4 ? left : right).add({r, 0}, r == 5 ? 2 : 1);
  left.merge(right);
  const auto ordered = left.ordered();
  ASSERT_EQ(ordered.size(), 2u);
  EXPECT_EQ(ordered[0].members.to_string(), "rank 5");
  EXPECT_EQ(ordered[0].label, 'B');
  EXPECT_EQ(ordered[1].members.to_string(), "ranks 0-4,6-7");
  EXPECT_EQ(ordered[1].label, 'A');
}

TEST(ClassesTest, FingerprintsByTraceEdgesStack) {
  auto hash = [](ClassBy by, const std::string& tree) {
    FingerprintBuilder b(by);
    for (const Event& e : stream(tree)) b.push(e);
    return b.finish();
  };
  EXPECT_EQ(hash(ClassBy::kTrace, "m(ab)"), hash(ClassBy::kTrace, "m(ab)"));
  EXPECT_NE(hash(ClassBy::kTrace, "m(ab)"), hash(ClassBy::kTrace, "m(ba)"));
  EXPECT_EQ(hash(ClassBy::kEdges, "m(ab)"), hash(ClassBy::kEdges, "m(baab)"));
  EXPECT_NE(hash(ClassBy::kEdges, "m(ab)"), hash(ClassBy::kEdges, "m(a(b))"));
  EXPECT_EQ(hash(ClassBy::kStack, "m(a(b)c("), hash(ClassBy::kStack, "m(c("));
  EXPECT_NE(hash(ClassBy::kStack, "m(a("), hash(ClassBy::kStack, "m(c("));
  EXPECT_EQ(hash(ClassBy::kLoops, "m(aaa)"), hash(ClassBy::kLoops, "m(aaaaa)"));
}

// FingerprintBuilder::push(calls, key_of), the batch loop of classes, gives
// every key the hash that push() of the Events the calls stand for gives,
// also split into batches at odd places.
TEST(ClassesTest, FingerprintOfCallsIsThatOfTheirEvents) {
  const std::vector<std::uint32_t> ids = random_nested_ids(20000, 12, 11);
  CallStackTracker tracker(12, "calls");
  std::vector<CallEvent> calls;
  for (const std::uint32_t id : ids) calls.push_back(tracker.push(id));
  auto key_of = [](std::uint32_t id) { return function_key("f" + std::to_string(id)); };
  for (const ClassBy by : {ClassBy::kTrace, ClassBy::kEdges, ClassBy::kStack, ClassBy::kLoops}) {
    FingerprintBuilder one(by), batched(by);
    for (const CallEvent& c : calls) {
      one.push(Event{c.kind == CallEvent::Kind::kEnter, key_of(c.function_id), c.depth});
    }
    for (std::size_t at = 0; at < calls.size(); at += 333) {
      batched.push(std::span<const CallEvent>(calls).subspan(
                       at, std::min<std::size_t>(333, calls.size() - at)),
                   key_of);
    }
    EXPECT_EQ(batched.events(), calls.size());
    EXPECT_EQ(batched.finish(), one.finish()) << static_cast<int>(by);
  }
  // And the trace key tells a stream with one other callee apart.
  FingerprintBuilder other(ClassBy::kTrace), same(ClassBy::kTrace);
  same.push(calls, key_of);
  std::size_t entry = 777;
  while (calls[entry].kind != CallEvent::Kind::kEnter) ++entry;
  calls[entry].function_id = calls[entry].function_id % 12 + 1;
  other.push(calls, key_of);
  EXPECT_NE(other.finish(), same.finish());
}

TEST(StackTreeTest, MergedStacksWithRanges) {
  NameTable names;
  StackTree a, b;
  const auto s1 = stream("m(w(", &names);
  OpenStack st;
  for (const Event& e : s1) st.push(e);
  for (std::uint64_t r = 0; r < 3; ++r) a.add({r, 0}, st.frames());
  OpenStack other;
  for (const Event& e : stream("m(b(", &names)) other.push(e);
  b.add({3, 0}, other.frames());
  a.merge(b);
  EXPECT_EQ(a.to_text(names),
            "4 threads (ranks 0-3)\n"
            "  m [4 threads: ranks 0-3]\n"
            "    b [1 thread: rank 3]\n"
            "    w [3 threads: ranks 0-2]\n");
  EXPECT_NE(a.to_dot(names).find("digraph"), std::string::npos);
}

// classes --by loops on a thread that died of a stack overflow: the loop
// summary's structure hash recursed once per nesting level (a crash).
TEST(ClassesTest, LoopsKeyOfAStackOverflowDepthTakesNoNativeStack) {
  constexpr std::uint32_t kDepth = 300000;
  auto deep = [&](std::uint32_t closed) {
    std::vector<Event> events;
    for (std::uint32_t d = 0; d < kDepth; ++d) events.push_back({true, function_key("r"), d});
    for (std::uint32_t k = 0; k < closed; ++k) {
      events.push_back({false, function_key("r"), kDepth - 1 - k});
    }
    FingerprintBuilder fp(ClassBy::kLoops);
    fp.push(std::span<const Event>(events));
    return fp.finish();
  };
  const std::uint64_t open = deep(0);
  EXPECT_EQ(open, deep(0));
  EXPECT_NE(open, deep(1));
}

// parlot-read loops on the same thread: to_string() recursed per level too.
TEST(Loops, TextOfAStackOverflowDepthTakesNoNativeStack) {
  constexpr std::uint32_t kDepth = 300000;
  NameTable names;
  names.add(function_key("r"), "r");
  LoopBuilder b(8);
  for (std::uint32_t d = 0; d < kDepth; ++d) b.push({true, function_key("r"), d});
  b.push({false, function_key("r"), kDepth - 1});  // the innermost call returned
  const std::string text = b.finish().to_string(names);
  std::string expected;
  for (std::uint32_t d = 0; d + 1 < kDepth; ++d) expected += "r { ";
  expected += "r";
  for (std::uint32_t d = 0; d + 1 < kDepth; ++d) expected += " ...";
  EXPECT_EQ(text, expected);
}

// A thread that died of a stack overflow leaves 10^5-10^6 open frames. The
// tree used to recurse once per frame in to_text, to_dot, merge and the
// node destructor (a crash of parlot-read stacks on exactly the trace it
// is for) and to indent two spaces per frame (10^11 bytes of text here).
TEST(StackTreeTest, StackOverflowDepthIsWalkedWithoutRecursionAndFolded) {
  constexpr std::size_t kDepth = 300000;
  NameTable names;
  names.add(function_key("main"), "main");
  names.add(function_key("r"), "r");
  std::vector<FunctionKey> deep(kDepth, function_key("r"));
  deep[0] = function_key("main");
  StackTree a, b;
  a.add({0, 0}, deep);
  b.add({1, 0}, deep);
  b.add({2, 0}, {function_key("main"), function_key("r")});
  a.merge(b);

  // The chain of r frames for ranks 0-1 (text depths 3 .. kDepth) folds:
  // first, a count, last (indented as indent.h does below its limit).
  EXPECT_EQ(
      a.to_text(names),
      "3 threads (ranks 0-2)\n  main [3 threads: ranks 0-2]\n"
      "    r [3 threads: ranks 0-2] (stack ends here for rank 2)\n"
      "      r [2 threads: ranks 0-1]\n" +
          fmt::format("        ... {} more levels of r [2 threads: ranks 0-1]\n", kDepth - 4) +
          std::string(2 * StackTree::kMaxIndentDepth, ' ') + "[depth " + std::to_string(kDepth) +
          "] r [2 threads: ranks 0-1]\n");
  // Shorter chains than kFoldedRun print every frame.
  StackTree shallow;
  shallow.add({0, 0},
              {function_key("main"), function_key("r"), function_key("r"), function_key("r")});
  EXPECT_EQ(shallow.to_text(names),
            "1 thread (rank 0)\n  main [1 thread: rank 0]\n    r [1 thread: rank 0]\n"
            "      r [1 thread: rank 0]\n        r [1 thread: rank 0]\n");

  const std::string dot = a.to_dot(names);
  std::size_t edges = 0;
  for (std::size_t pos = 0; (pos = dot.find(" -> ", pos)) != std::string::npos; ++pos) ++edges;
  EXPECT_EQ(edges, kDepth);  // one per node below the root
  EXPECT_NE(dot.find("  n0 -> n1 [label=\"3\"];\n  n1 [label=\"main\\n3: ranks 0-2\"];\n"),
            std::string::npos);
  // a and b are destroyed here: 300,000 nested nodes each.
}

TEST(DivergenceTest, FirstDifferingEventWithStackAndCounts) {
  NameTable names;
  VectorSource left(stream("m(s(xx)s(xx)f)", &names));
  VectorSource right(stream("m(s(xx)s(x)f)", &names));
  const Divergence d = first_divergence(left, right, 2);
  EXPECT_FALSE(d.identical);
  EXPECT_EQ(d.position, 10u);  // left enters a 2nd x in the 2nd s, right leaves s
  EXPECT_EQ(d.stack, (std::vector<FunctionKey>{function_key("m"), function_key("s")}));
  ASSERT_EQ(d.left.size(), 2u);
  EXPECT_TRUE(d.left[0].enter);
  EXPECT_EQ(d.left[0].function, function_key("x"));
  EXPECT_FALSE(d.right[0].enter);
  EXPECT_EQ(d.right[0].function, function_key("s"));
  EXPECT_EQ(d.left_calls.at(function_key("x")), 4u);
  EXPECT_EQ(d.right_calls.at(function_key("x")), 3u);
  const std::string text = describe_divergence(d, names, "L", "R");
  EXPECT_NE(text.find("first divergence at event 10"), std::string::npos) << text;
  EXPECT_NE(text.find("call stack there: m > s"), std::string::npos) << text;
  EXPECT_NE(text.find("-1  x"), std::string::npos) << text;
  VectorSource same1(stream("m(a)")), same2(stream("m(a)"));
  EXPECT_TRUE(first_divergence(same1, same2, 2).identical);
}

TEST(DivergenceTest, MarksAreShownInTheContextAndNeverDecide) {
  NameTable names;
  // Events: 0 m( 1 s( 2 x( 3 ) 4 ) 5 a( ... ; marks differ between sides.
  VectorSource left(stream("m(s(x)a)", &names),
                    {{0, "\"start\""}, {2, "\"in s\""}, {9, "\"end\""}});
  VectorSource right(stream("m(s(x)b)", &names), {{4, "\"before exit\""}});
  const Divergence d = first_divergence(left, right, 3);
  EXPECT_EQ(d.position, 5u);  // a( vs b(: the marks do not make a divergence
  ASSERT_EQ(d.before.size(), 3u);
  EXPECT_EQ(d.before[0].marks_before, (std::vector<std::string>{"\"in s\""}));  // before x(
  EXPECT_EQ(d.left_end_marks, (std::vector<std::string>{"\"end\""}));
  const std::string text = describe_divergence(d, names, "L", "R");
  EXPECT_NE(text.find("        @ mark \"in s\"\n        enter x\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  < @ mark \"end\"\n"), std::string::npos) << text;
  // Right's mark sits before s's exit (event 4), inside s: on the right's
  // side only, so the common context shows left's marks.
  EXPECT_EQ(text.find("before exit"), std::string::npos) << text;
}

// CallCounts gives the edge counts a map keyed by (caller, callee) gives, on
// a random call stream with several callers per callee (the dense last-caller
// slot keeps missing), IDs beyond the dense table (the hash table alone) and
// enough distinct edges to grow its table several times.
TEST(CallCounts, CountsEveryEdgeAsAMapDoes) {
  std::mt19937 rng(21);
  CallCounts counts(200);  // IDs 1..200 dense; up to 400 occur
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> expected;
  std::vector<std::uint32_t> stack;
  for (int i = 0; i < 200000; ++i) {
    if (!stack.empty() && rng() % 2 == 0) {
      stack.pop_back();
      continue;
    }
    const std::uint32_t callee = 1 + rng() % (i < 100000 ? 20 : 400);
    const std::uint32_t caller = stack.empty() ? 0 : stack.back();
    counts.add(caller, callee);
    ++expected[{caller, callee}];
    stack.push_back(callee);
  }
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> got;
  for (const auto& e : counts.edges()) {
    EXPECT_TRUE(got.emplace(std::make_pair(e.caller, e.callee), e.calls).second)
        << "edge listed twice: " << e.caller << " -> " << e.callee;
  }
  EXPECT_GT(expected.size(), 1000u);
  EXPECT_EQ(got, expected);
}

// `track(tracker, ids, n)` (a batch call of the tracker) raises the error
// push() raises, at the same event index: an exit with no open call
// ({1, 0, 0, 2}: event 2) and an unknown function ID ({1, 2, 10}, 9
// functions: event 2).
template <class Track>
void expect_batch_errors(Track track) {
  CallStackTracker bad(9, "bad");
  const std::uint32_t unbalanced[] = {1, 0, 0, 2};
  try {
    track(bad, unbalanced, 4);
    FAIL() << "no error";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.offset(), 2u);
  }
  CallStackTracker unknown(9, "unknown");
  const std::uint32_t beyond[] = {1, 2, 10};
  try {
    track(unknown, beyond, 3);
    FAIL() << "no error";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.offset(), 2u);
  }
}

// CallStackTracker::push_all and push() give the events a plain stack gives,
// and the same error at the same event index for an exit with no open call
// and an unknown function ID.
TEST(CallStackTracker, PushAllIsPushInABatch) {
  const std::vector<std::uint32_t> ids = random_nested_ids(50000, 9, 5);
  CallStackTracker one(9, "one"), batched(9, "batched");
  std::vector<CallEvent> out(ids.size());
  for (std::size_t at = 0; at < ids.size(); at += 777) {
    batched.push_all(ids.data() + at, std::min<std::size_t>(777, ids.size() - at), out.data() + at);
  }
  // Both against a stack kept here: the entered or left function, the depth
  // of its frame, its caller (0 at depth 0).
  std::vector<std::uint32_t> open;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    CallEvent want{};
    if (ids[i] == 0) {
      want = {CallEvent::Kind::kExit, open.back(), static_cast<std::uint32_t>(open.size() - 1),
              open.size() < 2 ? 0u : open[open.size() - 2]};
      open.pop_back();
    } else {
      want = {CallEvent::Kind::kEnter, ids[i], static_cast<std::uint32_t>(open.size()),
              open.empty() ? 0u : open.back()};
      open.push_back(ids[i]);
    }
    const CallEvent e = one.push(ids[i]);
    for (const CallEvent& got : {e, out[i]}) {
      ASSERT_TRUE(got.kind == want.kind && got.function_id == want.function_id &&
                  got.depth == want.depth && got.caller_id == want.caller_id)
          << "event " << i;
    }
  }
  EXPECT_GT(open.size(), 0u);
  EXPECT_TRUE(std::ranges::equal(one.open_calls(), open));
  EXPECT_TRUE(std::ranges::equal(batched.open_calls(), open));

  expect_batch_errors([](CallStackTracker& t, const std::uint32_t* ids, std::size_t n) {
    CallEvent sink[4];
    t.push_all(ids, n, sink);
  });
}

// CallStackTracker::for_each_entry gives each entry's caller and callee as
// push() does, in batches that split calls, leaves the same open calls, and
// raises the same errors at the same event index.
TEST(CallStackTracker, ForEachEntryIsTheEntriesOfPush) {
  const std::vector<std::uint32_t> ids = random_nested_ids(50000, 9, 5);
  CallStackTracker one(9, "one"), batched(9, "batched");
  std::vector<std::pair<std::uint32_t, std::uint32_t>> want, got;
  for (const std::uint32_t id : ids) {
    const CallEvent e = one.push(id);
    if (e.kind == CallEvent::Kind::kEnter) want.emplace_back(e.caller_id, e.function_id);
  }
  for (std::size_t at = 0; at < ids.size(); at += 777) {
    batched.for_each_entry(
        ids.data() + at, std::min<std::size_t>(777, ids.size() - at),
        [&](std::uint32_t caller, std::uint32_t callee) { got.emplace_back(caller, callee); });
  }
  EXPECT_GT(want.size(), 10000u);
  EXPECT_EQ(got, want);
  EXPECT_GT(one.open_calls().size(), 0u);
  EXPECT_TRUE(std::ranges::equal(batched.open_calls(), one.open_calls()));

  expect_batch_errors([](CallStackTracker& t, const std::uint32_t* ids, std::size_t n) {
    t.for_each_entry(ids, n, [](std::uint32_t, std::uint32_t) {});
  });
}

}  // namespace
}  // namespace parlot::analysis

#include "export/call_tree.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace parlot::exporter {
namespace {

class MapFunctions final : public FunctionSource {
 public:
  explicit MapFunctions(std::map<std::uint32_t, std::string> names) : names_(std::move(names)) {}
  const FunctionInfo& function(std::uint32_t id) override {
    auto [it, added] = infos_.try_emplace(id);
    if (added) it->second = {names_.at(id), "f.c", 0};  // same file and line: merged by name
    return it->second;
  }

 private:
  std::map<std::uint32_t, std::string> names_;
  std::map<std::uint32_t, FunctionInfo> infos_;
};

// main { a { b } b } at event indices 0..7.
ThreadCallTree example_thread() {
  ThreadCallTree t;
  t.enter(1, 0);  // main
  t.enter(2, 1);  // a
  t.enter(3, 2);  // b
  t.exit(3);
  t.exit(4);
  t.enter(3, 5);  // b
  t.exit(6);
  t.exit(7);
  return t;
}

TEST(ThreadCallTree, CostsOnTheLogicalClock) {
  const ThreadCallTree t = example_thread();
  const auto& n = t.nodes();
  ASSERT_EQ(n.size(), 5u);  // root, main, main;a, main;a;b, main;b
  EXPECT_EQ(n[1].function, 1u);
  EXPECT_EQ(n[1].cost.calls, 1u);
  EXPECT_EQ(n[1].cost.inclusive, 7u);
  EXPECT_EQ(n[1].cost.exclusive, 7u - 3u - 1u);
  EXPECT_EQ(n[2].cost.inclusive, 3u);
  EXPECT_EQ(n[2].cost.exclusive, 2u);
  EXPECT_EQ(n[3].parent, 2u);
  EXPECT_EQ(n[3].cost.inclusive, 1u);
  EXPECT_EQ(n[4].parent, 1u);
  EXPECT_EQ(n[4].function, 3u);
}

TEST(ThreadCallTree, CloseAllEndsOpenCalls) {
  ThreadCallTree t;
  t.enter(1, 0);
  t.enter(2, 1);
  t.close_all(10);
  EXPECT_EQ(t.nodes()[1].cost.inclusive, 10u);
  EXPECT_EQ(t.nodes()[2].cost.inclusive, 9u);
  EXPECT_EQ(t.nodes()[1].cost.calls, 1u);
  t.exit(11);  // nothing open: ignored
  EXPECT_EQ(t.nodes()[1].cost.calls, 1u);
}

TEST(CallTree, MergesThreadsByNameAndTotalsRecursionOnce) {
  MapFunctions p1({{1, "main"}, {2, "a"}, {3, "b"}});
  MapFunctions p2({{7, "main"}, {9, "b"}});  // another process: other IDs
  CallTree tree;
  tree.merge(example_thread(), p1);
  ThreadCallTree other;
  other.enter(7, 0);
  other.enter(9, 1);
  other.enter(9, 2);  // b recursing
  other.exit(3);
  other.exit(4);
  other.exit(5);
  tree.merge(other, p2);
  const auto& f = tree.functions();
  ASSERT_EQ(f.size(), 3u);  // main, a, b: the same in both processes
  const auto totals = tree.function_totals();
  EXPECT_EQ(f[0].name, "main");
  EXPECT_EQ(totals[0].calls, 2u);
  EXPECT_EQ(totals[0].inclusive, 7u + 5u);
  EXPECT_EQ(totals[0].max_depth, 1u);
  // b: 2 calls in process 1, 2 (one recursive) in process 2, whose
  // inclusive cost counts for the outermost call only.
  EXPECT_EQ(f[2].name, "b");
  EXPECT_EQ(totals[2].calls, 4u);
  EXPECT_EQ(totals[2].inclusive, 1u + 1u + 3u);
  EXPECT_EQ(totals[2].exclusive, 1u + 1u + 2u + 1u);
  EXPECT_EQ(totals[2].max_depth, 3u);
  const auto arcs = tree.arcs();
  std::map<std::pair<std::string, std::string>, std::uint64_t> calls;
  for (const auto& a : arcs) calls[{f[a.caller].name, f[a.callee].name}] += a.cost.calls;
  EXPECT_EQ((calls[{"main", "a"}]), 1u);
  EXPECT_EQ((calls[{"main", "b"}]), 2u);  // once in each process
  EXPECT_EQ((calls[{"a", "b"}]), 1u);
  EXPECT_EQ((calls[{"b", "b"}]), 1u);
}

}  // namespace
}  // namespace parlot::exporter

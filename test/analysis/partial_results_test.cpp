// Unit tests of the partial results mpirun'd members send to the leader
// (analysis/partial_results.h): exact round trips, and clean errors (never
// a crash or an allocation by an untrusted count) on bytes cut short, left
// over, malformed or out of range. Regressions of the parse that lived in
// the command files (a count of 2^62 frames was resized to as is).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "analysis/partial_results.h"
#include "analysis/summary_bytes.h"

namespace parlot::analysis {
namespace {

StacksPartial some_stacks() {
  StacksPartial p;
  p.status = 1;
  p.threads.push_back({{0, 0}, {function_key("main"), function_key("wait")}});
  p.threads.push_back({{3, 1, 2}, {}});
  p.threads.push_back({{1ull << 40, ~0ull, ~0ull}, {~0ull, 1}});
  p.names = {{function_key("main"), "main"}, {function_key("wait"), "wait \"for\" {it}"}};
  return p;
}

ClassesPartial some_classes() {
  ClassesPartial p;
  p.status = 2;
  p.threads.push_back({0, {0, 0}, 0x1234567890abcdefull, {1, 2, ~0ull}});
  p.threads.push_back({4, {7, 2, 1}, ~0ull, {}});
  return p;
}

StatsPartial some_stats() {
  StatsPartial p;
  p.units.push_back({0, 0, 100, 0, {}});
  NamedCallStats& s = p.units.back().stats;
  s.calls = {{"main", 1}, {"f", 1ull << 50}};
  s.edges = {{{"<thread>", "main"}, 1}, {{"main", "f"}, 1ull << 50}};
  s.marks = 3;
  p.units.push_back({4, 2, 101, 5, {}});
  return p;
}

TEST(PartialResults, RoundTripExactly) {
  EXPECT_EQ(read_stacks_partial(write_stacks_partial(some_stacks())), some_stacks());
  EXPECT_EQ(read_classes_partial(write_classes_partial(some_classes()), 5), some_classes());
  EXPECT_EQ(read_stats_partial(write_stats_partial(some_stats()), 5), some_stats());
  EXPECT_EQ(read_stacks_partial(write_stacks_partial({})), StacksPartial{});
}

TEST(PartialResults, EveryCutShortCopyAndTrailingByteIsAnError) {
  const std::string parts[] = {write_stacks_partial(some_stacks()),
                               write_classes_partial(some_classes()),
                               write_stats_partial(some_stats())};
  for (int kind = 0; kind < 3; ++kind) {
    const std::string& bytes = parts[kind];
    auto read = [&](std::string_view b) {
      if (kind == 0) read_stacks_partial(b);
      if (kind == 1) read_classes_partial(b, 5);
      if (kind == 2) read_stats_partial(b, 5);
    };
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      EXPECT_THROW(read(bytes.substr(0, n)), std::runtime_error) << "kind " << kind << " cut " << n;
    }
    EXPECT_THROW(read(bytes + '\0'), std::runtime_error) << "kind " << kind;
    EXPECT_NO_THROW(read(bytes));
  }
}

// A member that says "2^62 threads" or "2^62 frames" in a few bytes: the
// old parse resized a vector to that count (std::length_error or the OOM
// killer, never a clean message).
TEST(PartialResults, HugeCountsAreErrorsNotAllocations) {
  auto huge = [](std::initializer_list<std::uint64_t> numbers) {
    SummaryWriter out;
    for (const auto v : numbers) out.number(v);
    return out.take();
  };
  const std::uint64_t h = 1ull << 62;
  EXPECT_THROW(read_stacks_partial(huge({0, h})), std::runtime_error);
  EXPECT_THROW(read_stacks_partial(huge({0, 1, 0, 0, 0, h, 1, 2, 3})), std::runtime_error);
  EXPECT_THROW(read_stacks_partial(huge({0, 0, h})), std::runtime_error);
  EXPECT_THROW(read_classes_partial(huge({0, h}), 1), std::runtime_error);
  EXPECT_THROW(read_classes_partial(huge({0, 1, 0, 0, 0, 0, 9, h, 1}), 1), std::runtime_error);
  EXPECT_THROW(read_stats_partial(huge({0, h}), 1), std::runtime_error);
  EXPECT_THROW(read_stats_partial(huge({0, 1, 0, 0, 0, 0, 0, h, 0}), 1), std::runtime_error);
  EXPECT_THROW(read_stats_partial(huge({0, 1, 0, 0, 0, 0, 0, 0, h}), 1), std::runtime_error);
  // A string longer than the bytes left.
  EXPECT_THROW(read_stacks_partial(huge({0, 0, 1, 5, h})), std::runtime_error);
}

TEST(PartialResults, OutOfRangeValuesAreErrors) {
  // A process index beyond the run's processes (stats indexes processes()
  // with it).
  EXPECT_THROW(read_classes_partial(write_classes_partial(some_classes()), 4), std::runtime_error);
  EXPECT_THROW(read_stats_partial(write_stats_partial(some_stats()), 4), std::runtime_error);
  StacksPartial p;
  p.status = 256;
  EXPECT_THROW(read_stacks_partial(write_stacks_partial(p)), std::runtime_error);
  // A varint of more than 64 bits: ten bytes, the last above 1.
  const std::string too_wide = std::string(9, '\xff') + '\x02';
  EXPECT_THROW(SummaryReader(too_wide).number(), std::runtime_error);
  const std::string widest = std::string(9, '\xff') + '\x01';
  EXPECT_EQ(SummaryReader(widest).number(), ~0ull);
  EXPECT_THROW(SummaryReader(std::string(11, '\x80')).number(), std::runtime_error);
}

}  // namespace
}  // namespace parlot::analysis

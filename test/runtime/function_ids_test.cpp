// Lock-free function-ID table (runtime/hot_path/function_ids.h).
#include "hot_path/function_ids.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>
#include <vector>

namespace {

using parlot::runtime::FunctionIds;

TEST(FunctionIds, FirstSightAssignsTheNextIdAndRepeatsReturnIt) {
  FunctionIds ids;
  ASSERT_TRUE(ids.init(1024));
  EXPECT_EQ(ids.lookup(0x401000), 1u);
  EXPECT_EQ(ids.lookup(0x401010), 2u);
  EXPECT_EQ(ids.lookup(0x401000), 1u);
  EXPECT_EQ(ids.count(), 2u);
  EXPECT_EQ(ids.address_of(2), 0x401010u);
}

// The record filter is asked once per function; excluded functions take
// no ID and are known as excluded afterwards.
TEST(FunctionIds, ExcludedFunctionsTakeNoId) {
  FunctionIds ids;
  ASSERT_TRUE(ids.init(1024));
  static int asked = 0;
  asked = 0;
  ids.records = [](std::uintptr_t a) {
    ++asked;
    return a != 0x402000;
  };
  EXPECT_EQ(ids.lookup(0x401000), 1u);
  EXPECT_EQ(ids.lookup(0x402000), FunctionIds::kExcluded);
  EXPECT_EQ(ids.lookup(0x403000), 2u);
  EXPECT_EQ(ids.lookup(0x402000), FunctionIds::kExcluded);
  EXPECT_EQ(asked, 3);
  EXPECT_EQ(ids.count(), 2u);
  EXPECT_TRUE(ids.is_excluded(0x402000));
  EXPECT_FALSE(ids.is_excluded(0x401000));
  EXPECT_FALSE(ids.is_excluded(0x404000));  // never seen
  EXPECT_TRUE(FunctionIds::is_recorded(1));
  EXPECT_FALSE(FunctionIds::is_recorded(0));
  EXPECT_FALSE(FunctionIds::is_recorded(FunctionIds::kExcluded));
}

TEST(FunctionIds, MoreThan65535Functions) {
  FunctionIds ids;
  ASSERT_TRUE(ids.init(200000));
  for (std::uintptr_t i = 0; i < 150000; ++i) {
    ASSERT_EQ(ids.lookup(0x400000 + i * 16), i + 1);
  }
  for (std::uintptr_t i = 0; i < 150000; i += 999) {
    EXPECT_EQ(ids.lookup(0x400000 + i * 16), i + 1);
    EXPECT_EQ(ids.address_of(static_cast<std::uint32_t>(i + 1)), 0x400000 + i * 16);
  }
}

// address_by_id: the entry hook's check of a predicted ID. "ID" 0 (an exit)
// has address 0, which is no function's; every ID up to the capacity reads
// inside the table, the last included.
TEST(FunctionIds, AddressByIdIsZeroForExitsAndTheAddressOfEveryId) {
  FunctionIds ids;
  ASSERT_TRUE(ids.init(1024));
  EXPECT_EQ(ids.address_by_id(0), 0u);
  for (std::uintptr_t i = 0; i < 1024; ++i) ASSERT_EQ(ids.lookup(0x1000 + i * 8), i + 1);
  EXPECT_EQ(ids.address_by_id(0), 0u);
  for (std::uint32_t id = 1; id <= 1024; ++id) {
    ASSERT_EQ(ids.address_by_id(id), ids.address_of(id));
    ASSERT_EQ(ids.address_by_id(id), 0x1000 + (id - 1) * 8u);
  }
}

TEST(FunctionIds, FullTableReturnsZero) {
  FunctionIds ids;
  ASSERT_TRUE(ids.init(1024));
  for (std::uintptr_t i = 0; i < 1024; ++i) ASSERT_NE(ids.lookup(0x1000 + i * 8), 0u);
  EXPECT_EQ(ids.lookup(0x999999), 0u);
  EXPECT_EQ(ids.count(), 1024u);
  EXPECT_EQ(ids.lookup(0x1000), 1u);  // known functions still resolve
}

TEST(FunctionIds, ConcurrentFirstSightsGetOneIdPerAddress) {
  FunctionIds ids;
  ASSERT_TRUE(ids.init(1 << 16));
  constexpr int kThreads = 4;
  constexpr std::uintptr_t kAddresses = 20000;
  std::vector<std::vector<std::uint32_t>> seen(kThreads, std::vector<std::uint32_t>(kAddresses));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Every thread visits all addresses, in a different order (the
      // multipliers are coprime with kAddresses, so each is a permutation).
      static constexpr std::uintptr_t kMultiplier[kThreads] = {1, 3, 7, 9};
      for (std::uintptr_t k = 0; k < kAddresses; ++k) {
        const std::uintptr_t i = (k * kMultiplier[t] + t * 7919) % kAddresses;
        seen[t][i] = ids.lookup(0x10000 + i * 32);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::set<std::uint32_t> distinct;
  for (std::uintptr_t i = 0; i < kAddresses; ++i) {
    for (int t = 1; t < kThreads; ++t) ASSERT_EQ(seen[t][i], seen[0][i]) << i;
    distinct.insert(seen[0][i]);
    EXPECT_EQ(ids.address_of(seen[0][i]), 0x10000 + i * 32);
  }
  EXPECT_EQ(distinct.size(), kAddresses);
  EXPECT_EQ(*distinct.begin(), 1u);
  EXPECT_EQ(*distinct.rbegin(), kAddresses);
}

}  // namespace

// The flight recorder's ring (runtime/hot_path/flight_ring.h): whole
// blocks in order, the oldest dropped first, blocks that wrap around the
// mapping's end read back whole, and exactly the configured capacity.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "hot_path/flight_ring.h"

namespace parlot::runtime {
namespace {

// The blocks in the ring, oldest first: (kind, payload).
std::vector<std::pair<std::uint64_t, std::vector<std::uint8_t>>> blocks_of(const FlightRing& r) {
  std::vector<std::pair<std::uint64_t, std::vector<std::uint8_t>>> out;
  for (FlightRing::Position p = 0; p < r.used(); p = r.next(p)) {
    const format::BlockHeader h = r.header_at(p);
    std::vector<std::uint8_t> payload(h.payload_bytes);
    r.copy_payload(p, 0, payload.data(), payload.size());
    out.emplace_back(h.sequence, payload);
  }
  return out;
}

TEST(FlightRing, KeepsTheNewestWholeBlocksThroughManyWraps) {
  FlightRing r;
  ASSERT_TRUE(r.map(1000));
  EXPECT_EQ(r.capacity(), 1000u);
  std::uint8_t counter = 0;
  std::vector<std::vector<std::uint8_t>> pushed;
  for (int i = 0; i < 500; ++i) {
    // Sizes that do not divide the capacity: blocks straddle its end.
    std::vector<std::uint8_t> payload(37 + (i * 13) % 90);
    for (auto& b : payload) b = counter++;
    format::BlockHeader h{format::kBlockMagic, static_cast<std::uint32_t>(payload.size()), 0};
    ASSERT_TRUE(r.push(h, i % 3 == 0 ? RingBlock::kRestart : RingBlock::kData, payload.data(),
                       payload.size()));
    pushed.push_back(payload);
    ASSERT_LE(r.used(), r.capacity());
    const auto blocks = blocks_of(r);
    ASSERT_FALSE(blocks.empty());
    // The newest blocks, in order, ending with the one just pushed; the
    // one before the oldest kept would not have fit.
    for (std::size_t k = 0; k < blocks.size(); ++k) {
      const std::size_t j = pushed.size() - blocks.size() + k;
      ASSERT_EQ(blocks[k].second, pushed[j]) << "push " << i << ", block " << k;
      ASSERT_EQ(blocks[k].first, j % 3 == 0 ? 2u : 0u);
    }
    if (blocks.size() < pushed.size()) {
      const std::size_t dropped = pushed[pushed.size() - blocks.size() - 1].size() + 16;
      EXPECT_GT(r.used() + dropped, r.capacity()) << "a block was dropped that fitted";
    }
  }
}

TEST(FlightRing, RefusesABlockBiggerThanItself) {
  FlightRing r;
  ASSERT_TRUE(r.map(256));
  std::vector<std::uint8_t> big(300);
  format::BlockHeader h{format::kBlockMagic, 300, 0};
  EXPECT_FALSE(r.push(h, RingBlock::kData, big.data(), big.size()));
  EXPECT_EQ(r.used(), 0u);
  r.unmap();
}

}  // namespace
}  // namespace parlot::runtime

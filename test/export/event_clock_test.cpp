#include "export/event_clock.h"

#include <gtest/gtest.h>

#include <vector>

namespace parlot::exporter {
namespace {

TEST(EventClock, InterpolatesBetweenSamplesAndClampsOutside) {
  const std::vector<ClockSample> samples{{10, 1000}, {20, 2000}, {20, 2500}, {30, 2600}};
  EventClock clock(samples);
  EXPECT_EQ(clock.time(0), 1000u);  // before the first sample
  EXPECT_EQ(clock.time(10), 1000u);
  EXPECT_EQ(clock.time(15), 1500u);
  EXPECT_EQ(clock.time(20), 2500u);  // two samples at one index: the later
  EXPECT_EQ(clock.time(25), 2550u);
  EXPECT_EQ(clock.time(30), 2600u);
  EXPECT_EQ(clock.time(99), 2600u);  // after the last
  EXPECT_EQ(clock.time(12), 1200u);  // going back works too
}

TEST(EventClock, NoSamplesIsZero) {
  EventClock clock({});
  EXPECT_EQ(clock.time(5), 0u);
}

}  // namespace
}  // namespace parlot::exporter

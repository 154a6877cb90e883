// Side records (format version 2, PAUX blocks) in hand-made thread files:
// clock samples are read, unknown kinds skipped, damage reported with the
// file and offset.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <vector>

#include "parlot/format.h"
#include "parlot/trace_reader.h"
#include "side_record_files.h"
#include "temp_dir.h"

namespace parlot {
namespace {

using test::append;
using test::append_record;
using test::file_with;
using test::write;
using ::testing::HasSubstr;

std::vector<std::uint8_t> clock_data(std::uint64_t base, std::vector<std::uint8_t> varints) {
  std::vector<std::uint8_t> d;
  append(d, base);
  d.insert(d.end(), varints.begin(), varints.end());
  return d;
}

TEST(SideRecords, ClockSamplesReadAndUnknownKindsSkipped) {
  std::vector<std::uint8_t> side;
  append_record(side, 77, 5, {1, 2, 3});  // a future kind
  // Samples (10, 1000), (+1024 -> 1034, +300 -> 1300), (+0, +200 -> 1500).
  append_record(side, 1, 10, clock_data(1000, {0x80, 0x08, 0xac, 0x02, 0x00, 0xc8, 0x01}));
  test::TempDir dir;
  ThreadEventReader reader(write(dir, file_with(side)));
  const auto& s = reader.summary();
  EXPECT_EQ(s.version, 2);
  EXPECT_EQ(s.side_blocks, 1u);
  ASSERT_EQ(s.clock_samples.size(), 3u);
  EXPECT_EQ(s.clock_samples[1].event_index, 1034u);
  EXPECT_EQ(s.clock_samples[1].ns, 1300u);
  EXPECT_EQ(s.clock_samples[2].event_index, 1034u);
  EXPECT_EQ(s.clock_samples[2].ns, 1500u);
  EXPECT_TRUE(reader.next_batch().empty());  // no events; the PAUX block is not event data
  ASSERT_TRUE(s.trailer);
}

TEST(SideRecords, DamageNamesTheFileAndOffset) {
  const std::uint64_t payload_at = sizeof(format::TraceFileHeader) + sizeof(format::BlockHeader);
  test::TempDir dir;
  {  // a record longer than its block
    std::vector<std::uint8_t> side;
    append_record(side, 1, 0, clock_data(1, {}));
    side.resize(side.size() - 2);
    try {
      ThreadEventReader reader(write(dir, file_with(side)));
      ADD_FAILURE() << "no error";
    } catch (const FormatError& e) {
      EXPECT_EQ(e.offset(), payload_at);
      EXPECT_THAT(e.what(), HasSubstr("side record longer than its block"));
    }
  }
  {  // a varint cut short
    std::vector<std::uint8_t> side;
    append_record(side, 1, 0, clock_data(1, {0x05, 0x80}));
    EXPECT_THROW(ThreadEventReader(write(dir, file_with(side))), FormatError);
  }
  {  // time going back
    std::vector<std::uint8_t> side;
    append_record(side, 1, 0, clock_data(100, {}));
    append_record(side, 1, 5, clock_data(50, {}));
    EXPECT_THROW(ThreadEventReader(write(dir, file_with(side))), FormatError);
  }
  {  // PAUX in a version-1 file is not a known block
    std::vector<std::uint8_t> side;
    append_record(side, 1, 0, clock_data(1, {}));
    auto b = file_with(side);
    b[8] = 1;
    try {
      ThreadEventReader reader(write(dir, b));
      ADD_FAILURE() << "no error";
    } catch (const FormatError& e) {
      EXPECT_EQ(e.offset(), sizeof(format::TraceFileHeader));
      EXPECT_THAT(e.what(), HasSubstr("bad block magic"));
    }
  }
}

}  // namespace
}  // namespace parlot

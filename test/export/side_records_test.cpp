// Side records (format version 2, PAUX blocks) in hand-made thread files:
// clock samples and marks are read, unknown kinds skipped, damage reported
// with the file and offset.
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

std::vector<std::uint8_t> bytes_of(const std::string& s) {
  return {s.begin(), s.end()};
}

TEST(SideRecords, MarksAreReadSortedStablyWithAnyBytes) {
  std::vector<std::uint8_t> side;
  const std::string odd("\0\x1b[2J\xff\"", 7);  // NUL, ESC, invalid UTF-8, quote
  append_record(side, 2, 7, bytes_of("late"));
  append_record(side, 2, 3, bytes_of("first at 3"));
  append_record(side, 1, 0, clock_data(10, {}));  // interleaved with other kinds
  append_record(side, 2, 3, bytes_of("second at 3"));
  append_record(side, 2, 3, {});                                     // an empty label
  append_record(side, 2, ~std::uint64_t{0}, bytes_of(odd));          // beyond any event
  append_record(side, 2, 0, std::vector<std::uint8_t>(65535, 'x'));  // the largest label
  test::TempDir dir;
  ThreadEventReader reader(write(dir, file_with(side)));
  const auto& marks = reader.summary().marks;
  ASSERT_EQ(marks.size(), 6u);
  EXPECT_EQ(marks[0].event_index, 0u);
  EXPECT_EQ(marks[0].label, std::string(65535, 'x'));
  EXPECT_EQ(marks[1].label, "first at 3");
  EXPECT_EQ(marks[2].label, "second at 3");
  EXPECT_EQ(marks[3].label, "");
  EXPECT_EQ(marks[3].event_index, 3u);
  EXPECT_EQ(marks[4].label, "late");
  EXPECT_EQ(marks[5].label, odd);
  EXPECT_EQ(marks[5].event_index, ~std::uint64_t{0});
  EXPECT_EQ(reader.summary().clock_samples.size(), 1u);
}

TEST(SideRecords, AMarkLongerThanItsBlockIsAnError) {
  const std::uint64_t payload_at = sizeof(format::TraceFileHeader) + sizeof(format::BlockHeader);
  test::TempDir dir;
  std::vector<std::uint8_t> side;
  append_record(side, 2, 0, bytes_of("fine"));
  append_record(side, 2, 1, bytes_of("cut short"));
  side.resize(side.size() - 3);  // data_bytes now reaches beyond the block
  try {
    ThreadEventReader reader(write(dir, file_with(side)));
    ADD_FAILURE() << "no error";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.offset(), payload_at + sizeof(format::AuxRecordHeader) + 4);  // the second record
    EXPECT_THAT(e.what(), HasSubstr("side record longer than its block"));
    EXPECT_EQ(e.file().filename(), "thread-0-1.trace");
  }
  // Only a header's worth of the record left.
  std::vector<std::uint8_t> header_cut;
  append_record(header_cut, 2, 0, bytes_of("x"));
  header_cut.resize(10);
  EXPECT_THROW(ThreadEventReader(write(dir, file_with(header_cut))), FormatError);
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

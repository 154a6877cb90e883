// Kind-6 side records (call sites, PARLOT_CALL_SITES) in hand-made thread
// files: decoded entry by entry into ThreadTraceSummary::call_sites, given
// to every entry of their (caller, callee) pair by CallSites, and every
// kind of damage reported with the file and the byte offset.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "parlot/call_sites.h"
#include "parlot/format.h"
#include "parlot/trace_reader.h"
#include "side_record_files.h"
#include "temp_dir.h"

namespace parlot {
namespace {

using test::cat;
using test::varint;
using test::zigzag;
using ::testing::HasSubstr;

constexpr std::uint8_t kSiteKind = static_cast<std::uint8_t>(format::AuxKind::kCallSites);

TEST(CallSiteRecords, EntriesDecodeToEventsAndAddresses) {
  // Two records: sites of entries 1, 2, 5 (deltas from the previous site,
  // the first from 0), then of entry 9 in a record of its own.
  const std::int64_t a = 0x555555554123, b = 0x555555554100, c = 0x7ffff7a01234;
  std::vector<std::uint8_t> side;
  test::append_record(
      side, kSiteKind, 1,
      cat({varint(0), zigzag(a), varint(1), zigzag(b - a), varint(3), zigzag(c - b)}));
  test::append_record(side, kSiteKind, 9, cat({varint(0), zigzag(0x1234)}));
  test::TempDir dir;
  ThreadEventReader reader(test::write(dir, test::file_with(side)));
  const auto& sites = reader.summary().call_sites;
  ASSERT_EQ(sites.size(), 4u);
  EXPECT_EQ(sites[0].event_index, 1u);
  EXPECT_EQ(sites[0].address, static_cast<std::uint64_t>(a));
  EXPECT_EQ(sites[1].event_index, 2u);
  EXPECT_EQ(sites[1].address, static_cast<std::uint64_t>(b));
  EXPECT_EQ(sites[2].event_index, 5u);
  EXPECT_EQ(sites[2].address, static_cast<std::uint64_t>(c));
  EXPECT_EQ(sites[3].event_index, 9u);
  EXPECT_EQ(sites[3].address, 0x1234u);
}

TEST(CallSites, EachEntryGetsTheLastSiteOfItsContext) {
  // main (1) loops over f() from site 100, then g() (3) from 300; the
  // context is (caller, callee, site of the caller's previous callee), so
  // f after g is a context of its own (record at 5), later iterations
  // need none; then f is called from 200 after g (record at 13), which
  // makes g's context new too (record at 15); and f calls g, a context no
  // record ever gave a site.
  const std::vector<CallSite> records{{0, 50}, {1, 100}, {3, 300}, {5, 100}, {13, 200}, {15, 300}};
  CallSites s(records);
  EXPECT_EQ(s.at_entry(0, 0, 1), 50u);
  for (std::uint64_t i = 1; i <= 9; i += 4) {
    EXPECT_EQ(s.at_entry(i, 1, 2), 100u) << i;
    s.at_exit();
    EXPECT_EQ(s.at_entry(i + 2, 1, 3), 300u) << i;
    EXPECT_EQ(s.last(), 300u);
    s.at_exit();
  }
  EXPECT_EQ(s.at_entry(13, 1, 2), 200u);
  s.at_exit();
  EXPECT_EQ(s.at_entry(15, 1, 3), 300u);
  s.at_exit();
  EXPECT_EQ(s.at_entry(17, 1, 2), 200u);
  EXPECT_EQ(s.at_entry(18, 2, 3), 0u);
}

TEST(CallSites, AnInlinedCalleeHasNoSiteButARecursionHasItsOwn) {
  // f (2) called from 100 runs the hook of g (3), inlined into it, with
  // f's own site 100: unknown. f called by f from 120, and again by that
  // f from 120: a recursion keeps its site.
  const std::vector<CallSite> records{{0, 50}, {1, 100}, {2, 100}, {4, 120}, {5, 120}};
  CallSites s(records);
  EXPECT_EQ(s.at_entry(0, 0, 1), 50u);
  EXPECT_EQ(s.at_entry(1, 1, 2), 100u);
  EXPECT_EQ(s.at_entry(2, 2, 3), 0u);
  s.at_exit();
  EXPECT_EQ(s.at_entry(4, 2, 2), 120u);
  EXPECT_EQ(s.at_entry(5, 2, 2), 120u);
}

TEST(CallSites, RecordsOfEventsNotPassedAreSkipped) {
  // A record about event 2 (an exit, in a damaged file) is passed over.
  const std::vector<CallSite> records{{2, 70}, {3, 80}};
  CallSites s(records);
  EXPECT_EQ(s.at_entry(3, 1, 2), 80u);
  s.at_exit();
  EXPECT_EQ(s.at_entry(5, 1, 4), 0u);
}

TEST(CallSites, WithoutRecordsEverySiteIsUnknown) {
  CallSites s({});
  EXPECT_FALSE(s.any());
  EXPECT_EQ(s.at_entry(0, 0, 1), 0u);
}

struct Damage {
  const char* what;
  std::vector<std::uint8_t> data;
  std::uint64_t offset_in_data;  // where the reader must say the damage is
  const char* message;
};

void PrintTo(const Damage& d, std::ostream* os) {
  *os << d.what;
}

class CallSiteRecordDamage : public ::testing::TestWithParam<Damage> {};

TEST_P(CallSiteRecordDamage, IsAnErrorNamingTheFileAndOffset) {
  const Damage& d = GetParam();
  std::vector<std::uint8_t> side;
  test::append_record(side, kSiteKind, 4, d.data);
  test::TempDir dir;
  const auto path = test::write(dir, test::file_with(side));
  try {
    ThreadEventReader reader(path);
    ADD_FAILURE() << "no error for " << d.what;
  } catch (const FormatError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.offset(),
              test::kFirstRecordOffset + sizeof(format::AuxRecordHeader) + d.offset_in_data);
    EXPECT_THAT(e.what(), HasSubstr(d.message));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Corrupt, CallSiteRecordDamage,
    ::testing::Values(Damage{"empty record", {}, 0, "without a site"},
                      Damage{"site missing", varint(0), 0, "cut short"},
                      Damage{"second entry cut short", cat({varint(0), zigzag(0x1000), varint(2)}),
                             3, "cut short"},
                      Damage{"varint longer than 10 bytes",
                             cat({varint(0), std::vector<std::uint8_t>(11, 0x80)}), 0, "cut short"},
                      Damage{"entry event beyond 2^64",
                             cat({varint(0), zigzag(1), varint(~std::uint64_t{0}), zigzag(1)}), 2,
                             "out of range"}));

TEST(CallSiteRecords, SitesGoingBackInEventsAreAnError) {
  // The second record's first entry (event 3) comes before the first's (7).
  std::vector<std::uint8_t> side;
  test::append_record(side, kSiteKind, 7, cat({varint(0), zigzag(0x1000)}));
  const std::uint64_t second = side.size();
  test::append_record(side, kSiteKind, 3, cat({varint(0), zigzag(0x1000)}));
  test::TempDir dir;
  const auto path = test::write(dir, test::file_with(side));
  try {
    ThreadEventReader reader(path);
    ADD_FAILURE() << "no error";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.offset(), test::kFirstRecordOffset + second + sizeof(format::AuxRecordHeader));
    EXPECT_THAT(e.what(), HasSubstr("go back"));
  }
}

TEST(CallSiteRecords, ARecordCutByItsBlockIsAnError) {
  // The header claims more data than the block holds.
  std::vector<std::uint8_t> side;
  test::append_record(side, kSiteKind, 0, cat({varint(0), zigzag(0x1000)}));
  side.pop_back();
  test::TempDir dir;
  const auto path = test::write(dir, test::file_with(side));
  try {
    ThreadEventReader reader(path);
    ADD_FAILURE() << "no error";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.offset(), test::kFirstRecordOffset);
    EXPECT_THAT(e.what(), HasSubstr("longer than its block"));
  }
}

}  // namespace
}  // namespace parlot

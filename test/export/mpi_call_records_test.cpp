// Kind-3 side records (the arguments of an MPI call, PARLOT_MPI_ARGS=1) in
// hand-made thread files: decoded field by field, ordered by entry event,
// and every kind of damage reported with the file and the byte offset.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

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
using F = format::MpiField;

constexpr std::uint8_t kMpiKind = static_cast<std::uint8_t>(format::AuxKind::kMpiCall);
constexpr std::uint8_t kMpiBatchKind = static_cast<std::uint8_t>(format::AuxKind::kMpiCalls);

std::uint32_t bit(F f) {
  return 1u << static_cast<unsigned>(f);
}

TEST(MpiCallRecords, FieldsDecodedAndOrderedByEntryEvent) {
  // MPI_Waitall on 2 requests at event 9, written before MPI_Send's at 4
  // (a call's record may come after those of calls nested in it).
  const auto waitall = cat({varint(bit(F::kCompleted) | bit(F::kRequests)), varint(2), zigzag(0),
                            zigzag(1), zigzag(7), zigzag(800),             //
                            zigzag(1), zigzag(-2), zigzag(-1), zigzag(0),  //
                            zigzag(2)});
  const auto send = cat(
      {varint(bit(F::kDest) | bit(F::kTag) | bit(F::kBytes) | bit(F::kComm) | bit(F::kCommSize)),
       zigzag(1), zigzag(7), zigzag(800), zigzag(0), zigzag(2)});
  // A field this reader does not know (bit 20) is one varint.
  const auto future = cat({varint((1u << 20) | bit(F::kRoot)), zigzag(3), zigzag(-5)});
  std::vector<std::uint8_t> side;
  test::append_record(side, kMpiKind, 9, waitall);
  test::append_record(side, kMpiKind, 4, send);
  test::append_record(side, kMpiKind, 12, future);
  test::TempDir dir;
  ThreadEventReader reader(test::write(dir, test::file_with(side)));
  const auto& s = reader.summary();
  ASSERT_EQ(s.mpi_calls.size(), 3u);
  EXPECT_EQ(s.mpi_calls[0].event_index, 4u);
  EXPECT_EQ(s.mpi_calls[1].event_index, 9u);

  const MpiCallArguments* a = s.mpi_call_at(4);
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(a->has(F::kDest));
  EXPECT_FALSE(a->has(F::kSource));
  EXPECT_EQ(a->get(F::kDest), 1);
  EXPECT_EQ(a->get(F::kTag), 7);
  EXPECT_EQ(a->get(F::kBytes), 800);
  EXPECT_EQ(a->get(F::kComm), 0);
  EXPECT_EQ(a->get(F::kCommSize), 2);

  const MpiCallArguments* w = s.mpi_call_at(9);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->get(F::kRequests), 2);
  ASSERT_EQ(w->completed.size(), 2u);
  EXPECT_EQ(w->completed[0].source, 1);
  EXPECT_EQ(w->completed[0].bytes, 800);
  EXPECT_EQ(w->completed[1].index, 1);
  EXPECT_EQ(w->completed[1].source, -2);
  EXPECT_EQ(w->completed[1].tag, -1);

  const MpiCallArguments* f = s.mpi_call_at(12);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->get(F::kRoot), 3);
  EXPECT_EQ(f->value[20], -5);
  EXPECT_EQ(mpi_field_name(20), "field20");
  EXPECT_EQ(mpi_field_name(static_cast<unsigned>(F::kStatusBytes)), "status_bytes");

  EXPECT_EQ(s.mpi_call_at(5), nullptr);
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

class MpiCallRecordDamage : public ::testing::TestWithParam<Damage> {};

// A file whose one side record, of `kind` about event `index`, holds
// `d.data`: the reader must throw naming the file and d's offset.
void expect_damage_reported(std::uint8_t kind, std::uint64_t index, const Damage& d) {
  std::vector<std::uint8_t> side;
  test::append_record(side, kind, index, d.data);
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

TEST_P(MpiCallRecordDamage, IsAnErrorNamingTheFileAndOffset) {
  expect_damage_reported(kMpiKind, 0, GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Corrupt, MpiCallRecordDamage,
    ::testing::Values(
        Damage{"empty", {}, 0, "presence mask cut short"},
        Damage{"mask too wide", cat({varint(1ull << 32)}), 5, "more than 32 bits"},
        Damage{"varint too long", std::vector<std::uint8_t>(11, 0x81), 10, "cut short"},
        Damage{"field cut short", cat({varint(bit(F::kDest) | bit(F::kTag)), zigzag(1)}), 2,
               "field tag cut short"},
        Damage{"completions beyond the record",
               cat({varint(bit(F::kCompleted)), varint(3), zigzag(0), zigzag(1), zigzag(2),
                    zigzag(3)}),
               4, "exceeds the record"},
        Damage{"completion cut short",
               cat({varint(bit(F::kCompleted)), varint(1), zigzag(0), zigzag(1), zigzag(2),
                    std::vector<std::uint8_t>{0x80, 0x80, 0x80, 0x80}}),
               11, "completion cut short"},
        Damage{"bytes left over", cat({varint(bit(F::kDest)), zigzag(1), {0, 0}}), 2,
               "2 bytes left over"}),
    [](const auto& info) {
      std::string n = info.param.what;
      for (char& c : n) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      return n;
    });

// Kind 4: several calls in one record, each framed by its entry-event
// delta (negative for a call written after the calls nested in it) and its
// byte count; a kind-3 record in the same block still reads.
TEST(MpiCallRecords, BatchedCallsDecodeWithTheirOwnEntryEvents) {
  const auto send = cat({varint(bit(F::kDest) | bit(F::kTag)), zigzag(1), zigzag(7)});
  const auto recv = cat({varint(bit(F::kSource)), zigzag(-1)});
  const auto bcast = cat({varint(bit(F::kRoot)), zigzag(0)});
  // Entries at 10 (send), 30 (recv), 20 (bcast, written after the recv).
  const auto batch = cat({zigzag(0), varint(send.size()), send,   //
                          zigzag(20), varint(recv.size()), recv,  //
                          zigzag(-10), varint(bcast.size()), bcast});
  std::vector<std::uint8_t> side;
  test::append_record(side, kMpiBatchKind, 10, batch);
  test::append_record(side, kMpiKind, 40, bcast);
  test::TempDir dir;
  ThreadEventReader reader(test::write(dir, test::file_with(side)));
  const auto& s = reader.summary();
  ASSERT_EQ(s.mpi_calls.size(), 4u);
  EXPECT_EQ(s.mpi_calls[0].event_index, 10u);
  EXPECT_EQ(s.mpi_calls[1].event_index, 20u);
  EXPECT_EQ(s.mpi_calls[2].event_index, 30u);
  EXPECT_EQ(s.mpi_calls[3].event_index, 40u);
  ASSERT_NE(s.mpi_call_at(10), nullptr);
  EXPECT_EQ(s.mpi_call_at(10)->get(F::kTag), 7);
  ASSERT_NE(s.mpi_call_at(20), nullptr);
  EXPECT_EQ(s.mpi_call_at(20)->get(F::kRoot), 0);
  ASSERT_NE(s.mpi_call_at(30), nullptr);
  EXPECT_EQ(s.mpi_call_at(30)->get(F::kSource), -1);
}

class MpiCallBatchDamage : public ::testing::TestWithParam<Damage> {};

TEST_P(MpiCallBatchDamage, IsAnErrorNamingTheFileAndOffset) {
  expect_damage_reported(kMpiBatchKind, 5, GetParam());
}

const std::vector<std::uint8_t> kOneField = cat({varint(bit(F::kDest)), zigzag(1)});

INSTANTIATE_TEST_SUITE_P(
    Corrupt, MpiCallBatchDamage,
    ::testing::Values(Damage{"empty", {}, 0, "without a call"},
                      Damage{"framing cut short", cat({zigzag(0)}), 0, "entry cut short"},
                      Damage{"second framing cut short",
                             cat({zigzag(0), varint(kOneField.size()), kOneField, zigzag(3)}), 4,
                             "entry cut short"},
                      Damage{"count beyond the record", cat({zigzag(0), varint(9), kOneField}), 0,
                             "longer than its record"},
                      Damage{"entry below event 0",
                             cat({zigzag(-6), varint(kOneField.size()), kOneField}), 0,
                             "out of range"},
                      Damage{"bad call inside",
                             cat({zigzag(0), varint(kOneField.size()), kOneField, zigzag(1),
                                  varint(2), varint(bit(F::kDest) | bit(F::kTag)), zigzag(1)}),
                             8, "field tag cut short"}),
    [](const auto& info) {
      std::string n = info.param.what;
      for (char& c : n) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      return n;
    });

}  // namespace
}  // namespace parlot

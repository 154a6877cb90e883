// Clock samples cannot be altered silently: every side-record (PAUX) block
// of a thread file ends with a CRC32C of its records (docs/FORMAT.md, "Kind
// 5, block checksum"), so a byte overwritten anywhere in such a block is an
// error naming the file and an offset inside the block, in the library
// and in `parlot-read export`; never an export with exit 0 and other times.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "e2e_support.h"
#include "parlot/format.h"
#include "parlot/trace_reader.h"

namespace parlot::e2e {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

struct Block {
  std::uint64_t offset = 0;  // of its header
  std::uint64_t end = 0;     // past its payload
};

std::vector<Block> side_blocks(const std::string& bytes) {
  std::vector<Block> out;
  for (std::uint64_t off = sizeof(format::TraceFileHeader);
       off + sizeof(format::BlockHeader) <= bytes.size();) {
    format::BlockHeader b{};
    std::memcpy(&b, bytes.data() + off, sizeof b);
    const std::uint64_t end = off + sizeof b + b.payload_bytes;
    if (b.magic == format::kAuxBlockMagic) out.push_back({off, end});
    off = end;
  }
  return out;
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

/// Opens `file` (side records are read and checked when a thread file is
/// opened; `decode` also decodes its events): `clean` when it opened with
/// its trailer and decoded, else what was reported and where.
struct Outcome {
  bool clean = false;
  fs::path file;
  std::uint64_t offset = 0;
  std::string what;
};
Outcome read_fully(const fs::path& file, bool decode) {
  Outcome o;
  try {
    ThreadEventReader reader(file);
    while (decode && !reader.next_batch().empty()) {
    }
    const auto& s = reader.summary();
    if (s.trailer) {
      o.clean = true;
    } else {
      o.file = file;
      o.offset = s.damage_offset;
      o.what = s.damage;
    }
  } catch (const FormatError& e) {
    o.file = e.file();
    o.offset = e.offset();
    o.what = e.what();
  }
  return o;
}

class SideRecordIntegrity : public ::testing::Test {
 protected:
  void SetUp() override {
    // Many samples kept (every 64 events, no filtering): several PAUX blocks.
    const RunResult r = run_traced({examples_dir() + "/quicksort_threads", "200000", "2"}, dir_,
                                   {"PARLOT_CLOCK_EVENTS=64", "PARLOT_CLOCK_TOLERANCE_NS=0"});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    const auto processes = open_trace_directory(dir_);
    ASSERT_EQ(processes.size(), 1u);
    process_ = processes[0].directory;
    for (const auto& f : processes[0].thread_files) {
      if (fs::file_size(f) > (fs::exists(file_) ? fs::file_size(file_) : 0)) file_ = f;
    }
    bytes_ = slurp(file_);
    format::TraceFileHeader h{};
    std::memcpy(&h, bytes_.data(), sizeof h);
    ASSERT_EQ(h.flags & format::kTraceFlagAuxChecksums, format::kTraceFlagAuxChecksums);
    blocks_ = side_blocks(bytes_);
    ASSERT_GE(blocks_.size(), 3u);
  }

  TempDir tmp_;
  fs::path dir_ = tmp_.path() / "trace";
  fs::path process_, file_;
  std::string bytes_;
  std::vector<Block> blocks_;
};

TEST_F(SideRecordIntegrity, EveryOverwrittenByteOfASideRecordBlockIsReported) {
  ASSERT_TRUE(read_fully(file_, true).clean);
  const fs::path work = tmp_.path() / "work.trace";
  std::uint64_t positions = 0, total = 0;
  for (const Block& b : blocks_) total += b.end - b.offset;
  const std::uint64_t stride = std::max<std::uint64_t>(1, total / 4000);  // every byte if small
  for (const Block& b : blocks_) {
    for (std::uint64_t p = b.offset; p < b.end; p += stride) {
      for (const std::uint8_t flip : {0x01, 0xff}) {
        std::string bytes = bytes_;
        bytes[p] = static_cast<char>(static_cast<std::uint8_t>(bytes[p]) ^ flip);
        write_file(work, bytes);
        const Outcome o = read_fully(work, false);
        ++positions;
        ASSERT_FALSE(o.clean) << "byte " << p << " ^ " << int{flip} << " (block at " << b.offset
                              << ") read as intact";
        EXPECT_EQ(o.file, work) << o.what;
        EXPECT_GE(o.offset, b.offset) << "byte " << p << ": " << o.what;
        EXPECT_LT(o.offset, b.end) << "byte " << p << ": " << o.what;
      }
    }
  }
  EXPECT_GT(positions, 1000u);
  std::printf("%llu overwrites in %zu side-record blocks (%llu bytes), every one reported\n",
              static_cast<unsigned long long>(positions), blocks_.size(),
              static_cast<unsigned long long>(total));
}

TEST_F(SideRecordIntegrity, AnOverwrittenClockSampleFailsTheExportInsteadOfShiftingTimes) {
  const fs::path out = tmp_.path() / "out.json";
  const RunResult intact =
      parlot_read({"export", "-f", "chrome", "-o", out.string(), dir_.string()});
  ASSERT_EQ(intact.exit_status, 0) << intact.err;
  // Positions spread over every block, inside the records (the payload).
  int tried = 0;
  for (const Block& b : blocks_) {
    const std::uint64_t first = b.offset + sizeof(format::BlockHeader);
    for (std::uint64_t k = 0; k < 4; ++k) {
      const std::uint64_t p = first + (b.end - first) * k / 4 + k;
      if (p >= b.end) continue;
      std::string bytes = bytes_;
      bytes[p] = static_cast<char>(static_cast<std::uint8_t>(bytes[p]) + 1);
      write_file(file_, bytes);
      const RunResult r =
          parlot_read({"export", "-f", "chrome", "-o", out.string(), dir_.string()});
      ++tried;
      EXPECT_EQ(r.exit_status, 2) << "byte " << p << ": " << r.err;
      EXPECT_THAT(r.err, HasSubstr(file_.string() + ": offset ")) << "byte " << p;
    }
  }
  write_file(file_, bytes_);
  EXPECT_GT(tried, 12);
}

}  // namespace
}  // namespace parlot::e2e

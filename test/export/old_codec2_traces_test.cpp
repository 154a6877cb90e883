// Codec-2 traces made by builds of older format versions decode to exactly
// the events those builds read from them: each thread's event count and
// FNV-1a 64 of its event values, as that build's reader computed them.
// - test/data/v2_quicksort_trace.tar.gz: version 2 (length model 1), made
//   before the format went to version 3;
// - test/data/v3_quicksort_trace.tar.gz: version 3 (length model 2, every
//   match position in the context table), made before version 4;
// - test/data/v4_quicksort_trace.tar.gz: version 4 (the table tail, no
//   long context), made before version 5.
// All are `quicksort_threads 30000 2` (3 threads), a deterministic run:
// the same events, which the version-2 build read from its own file.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "parlot/format.h"
#include "parlot/trace_reader.h"
#include "temp_dir.h"

namespace parlot {
namespace {

struct Expected {
  std::uint64_t events;
  std::uint64_t fnv;
};

// The quicksort run's 3 threads, in the order open_trace_directory lists them.
constexpr Expected kQuicksortThreads[] = {
    {60016, 0xc43088a9d64f26c1ull}, {92470, 0x24bd782e54122b34ull}, {91436, 0x0c8c8c52c6356757ull}};

// Unpacks `tarball` (a directory `qs`) and checks that each thread file is
// of format version `version`, codec 2, and decodes to kQuicksortThreads.
void expect_quicksort_events(const char* tarball, std::uint16_t version) {
  test::TempDir dir;
  const std::string command = std::string("tar xzf ") + tarball + " -C " + dir.path().string();
  ASSERT_EQ(std::system(command.c_str()), 0);
  const auto processes = open_trace_directory(dir.path() / "qs");
  ASSERT_EQ(processes.size(), 1u);
  ASSERT_EQ(processes[0].thread_files.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    ThreadEventReader reader(processes[0].thread_files[i]);
    EXPECT_EQ(reader.summary().version, version);
    EXPECT_EQ(reader.summary().codec, format::Codec::kLzRank);
    std::uint64_t events = 0, h = 0xcbf29ce484222325ull;
    for (auto b = reader.next_batch(); !b.empty(); b = reader.next_batch()) {
      for (const std::uint32_t v : b) h = (h ^ v) * 0x100000001b3ull;
      events += b.size();
    }
    EXPECT_EQ(events, kQuicksortThreads[i].events) << i;
    EXPECT_EQ(h, kQuicksortThreads[i].fnv) << i;
    ASSERT_TRUE(reader.summary().trailer);
    EXPECT_EQ(reader.summary().trailer->events, kQuicksortThreads[i].events);
  }
}

TEST(VersionTwo, OldCodec2TraceDecodesToExactlyItsEvents) {
  expect_quicksort_events(PARLOT_V2_TRACE, 2);
}

TEST(VersionThree, OldCodec2TraceDecodesToExactlyItsEvents) {
  expect_quicksort_events(PARLOT_V3_TRACE, 3);
}

TEST(VersionFour, OldCodec2TraceDecodesToExactlyItsEvents) {
  expect_quicksort_events(PARLOT_V4_TRACE, 4);
}

}  // namespace
}  // namespace parlot

// A version-3 trace (codec 2, length model 2, every match position in the
// context table) made by the build before the format went to version 4
// decodes to exactly the events that build read from it: each thread's
// event count and FNV-1a 64 of its event values, as that build's reader
// computed them (and as the version-2 build read from the same run).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "parlot/format.h"
#include "parlot/trace_reader.h"
#include "temp_dir.h"

namespace parlot {
namespace {

TEST(VersionThree, OldCodec2TraceDecodesToExactlyItsEvents) {
  test::TempDir dir;
  const std::string command = "tar xzf " PARLOT_V3_TRACE " -C " + dir.path().string();
  ASSERT_EQ(std::system(command.c_str()), 0);
  const auto processes = open_trace_directory(dir.path() / "qs");
  ASSERT_EQ(processes.size(), 1u);
  ASSERT_EQ(processes[0].thread_files.size(), 3u);
  struct Expected {
    std::uint64_t events;
    std::uint64_t fnv;
  };
  // The same run as the version-2 fixture's (the program is deterministic):
  // the same events, which the version-2 build read from its own file.
  const Expected expected[] = {{60016, 0xc43088a9d64f26c1ull},
                               {92470, 0x24bd782e54122b34ull},
                               {91436, 0x0c8c8c52c6356757ull}};
  for (std::size_t i = 0; i < 3; ++i) {
    ThreadEventReader reader(processes[0].thread_files[i]);
    EXPECT_EQ(reader.summary().version, 3);
    EXPECT_EQ(reader.summary().codec, format::Codec::kLzRank);
    std::uint64_t events = 0, h = 0xcbf29ce484222325ull;
    for (auto b = reader.next_batch(); !b.empty(); b = reader.next_batch()) {
      for (const std::uint32_t v : b) h = (h ^ v) * 0x100000001b3ull;
      events += b.size();
    }
    EXPECT_EQ(events, expected[i].events) << i;
    EXPECT_EQ(h, expected[i].fnv) << i;
    ASSERT_TRUE(reader.summary().trailer);
    EXPECT_EQ(reader.summary().trailer->events, expected[i].events);
  }
}

}  // namespace
}  // namespace parlot

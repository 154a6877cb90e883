// A version-1 trace (no side records) made by the build before the format
// went to version 2 reads unchanged, and exports say they use the logical
// clock.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>

#include "parlot/trace_reader.h"
#include "temp_dir.h"

namespace parlot {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string run(const std::string& command, int& status) {
  std::FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  status = WEXITSTATUS(pclose(pipe));
  return out;
}

TEST(VersionOne, OldTraceReadsWithItsEventCountsAndExportsOnTheLogicalClock) {
  test::TempDir dir;
  int status = 0;
  run("tar xzf " PARLOT_V1_TRACE " -C " + dir.path().string(), status);
  ASSERT_EQ(status, 0);
  const auto processes = open_trace_directory(dir.path() / "qs");
  ASSERT_EQ(processes.size(), 1u);
  ASSERT_EQ(processes[0].thread_files.size(), 5u);
  const std::vector<std::uint64_t> expected{2016, 778, 722, 826, 832};  // parlot-read info
  for (std::size_t i = 0; i < 5; ++i) {
    ThreadEventReader reader(processes[0].thread_files[i]);
    EXPECT_EQ(reader.summary().version, 1);
    EXPECT_TRUE(reader.summary().clock_samples.empty());
    EXPECT_EQ(reader.summary().side_blocks, 0u);
    std::uint64_t events = 0;
    for (auto b = reader.next_batch(); !b.empty(); b = reader.next_batch()) events += b.size();
    EXPECT_EQ(events, expected[i]);
    ASSERT_TRUE(reader.summary().trailer);
    EXPECT_EQ(reader.summary().trailer->events, expected[i]);
  }
  const std::string out = (dir.path() / "x.json").string();
  const std::string log = run(std::string(PARLOT_READ_PATH) + " export -f chrome " +
                                  (dir.path() / "qs").string() + " -o " + out,
                              status);
  EXPECT_EQ(status, 0) << log;
  EXPECT_THAT(log, HasSubstr("logical clock"));
  EXPECT_TRUE(fs::file_size(out) > 1000);
}

}  // namespace
}  // namespace parlot

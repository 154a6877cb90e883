// runtime/io/proc_maps.h: mappings and object paths from /proc/self/maps.
#include "io/proc_maps.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace parlot::runtime {
namespace {

std::string executable() {
  return std::filesystem::read_symlink("/proc/self/exe").string();
}

TEST(ProcMaps, FindsTheMappingOfACodeAddressWithItsAbsolutePath) {
  const auto code = reinterpret_cast<std::uintptr_t>(&executable);
  Mapping m;
  char path[PATH_MAX];
  ASSERT_TRUE(find_mapping(code, m, path, sizeof path));
  EXPECT_LE(m.start, code);
  EXPECT_GT(m.end, code);
  EXPECT_LE(m.prev_end, m.start);
  EXPECT_EQ(std::string(path), executable());
}

TEST(ProcMaps, AnAnonymousMappingHasNoPathAndAnUnmappedAddressNoMapping) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* p = mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  // A hole in the middle: its neighbours are two mappings.
  ASSERT_EQ(munmap(static_cast<char*>(p) + page, page), 0);
  const auto base = reinterpret_cast<std::uintptr_t>(p);
  Mapping m;
  char path[64] = "x";
  errno = 1234;
  ASSERT_TRUE(find_mapping(base + 2 * page + 8, m, path, sizeof path));
  EXPECT_EQ(errno, 1234);  // kept
  EXPECT_EQ(m.start, base + 2 * page);
  EXPECT_EQ(m.prev_end, base + page);
  EXPECT_STREQ(path, "");
  EXPECT_FALSE(find_mapping(base + page + 8, m));
  munmap(p, page);
  munmap(static_cast<char*>(p) + 2 * page, page);
}

TEST(ProcMaps, ARelativeObjectNameTakesTheMappedFilesAbsolutePath) {
  const auto code = reinterpret_cast<std::uintptr_t>(&executable);
  char out[PATH_MAX];
  ASSERT_TRUE(absolute_object_path("bin/whatever", code, out, sizeof out));
  EXPECT_EQ(std::string(out), executable());
  ASSERT_TRUE(absolute_object_path("/an/absolute/name", code, out, sizeof out));
  EXPECT_STREQ(out, "/an/absolute/name");
}

TEST(ProcMaps, WithoutAMappedFileARelativeNameIsJoinedToTheCurrentDirectory) {
  char out[PATH_MAX];
  ASSERT_TRUE(absolute_object_path("./lib/x.so", 0, out, sizeof out));
  EXPECT_EQ(std::string(out), (std::filesystem::current_path() / "lib/x.so").string());
  char tiny[8];
  EXPECT_FALSE(absolute_object_path("./lib/x.so", 0, tiny, sizeof tiny));
  EXPECT_STREQ(tiny, "");
}

}  // namespace
}  // namespace parlot::runtime

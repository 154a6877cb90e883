// runtime/io/proc_maps.h: mappings and object paths from /proc/self/maps.
#include "io/proc_maps.h"

#include <sys/auxv.h>
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

// Regression: the vdso (link-map name "linux-vdso.so.1", mapping "[vdso]")
// was given the current directory's path, so every load map named a
// "/<cwd>/linux-vdso.so.1" that does not exist. A mapping the kernel shows
// without a file has no absolute path.
TEST(ProcMaps, AMappingWithoutAFileGivesARelativeNameNoPath) {
  const auto vdso = static_cast<std::uintptr_t>(getauxval(AT_SYSINFO_EHDR));
  if (vdso == 0) GTEST_SKIP() << "no vdso";
  char out[PATH_MAX] = "x";
  EXPECT_FALSE(absolute_object_path("linux-vdso.so.1", vdso, out, sizeof out));
  EXPECT_STREQ(out, "");
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* p = mmap(nullptr, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  EXPECT_FALSE(absolute_object_path("x.so", reinterpret_cast<std::uintptr_t>(p), out, sizeof out));
  munmap(p, page);
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

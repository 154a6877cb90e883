// The "libcalls" file (docs/FORMAT.md): parsed as written, and untrusted:
// cut at every byte or with a malformed line, it parses or raises a
// FormatError naming the file and an offset in the bad line, never more.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "parlot/trace_reader.h"

namespace parlot {
namespace {

namespace fs = std::filesystem;

const std::string kFile =
    "parlot-libcalls 1\n"
    "patched 12 2\n"
    "left glob_dat 3\n"
    "left audit_future_reason 1\n"
    "stub 7f0000001010 7f00000a0000 memcpy GLIBC_2.14 /lib/libc.so.6\n"
    "stub 7f0000001000 7f00000a0000 memmove GLIBC_2.2.5 /lib/libc.so.6\n"
    "stub 7f0000001020 7f00000b0000 memcpy GLIBC_2.2.5 /lib/libc.so.6\n"
    "stub 7f0000001030 7f00000c0000 _ZSt9terminatev - /lib/my\\x20dir/libstdc++.so.6\n"
    "future line kind\n";

class LibraryCallsFile : public ::testing::Test {
 protected:
  fs::path write(const std::string& text) {
    std::ofstream(path_, std::ios::binary) << text;
    return path_;
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_ = [] {
    char name[] = "/tmp/parlot-libcalls-XXXXXX";
    return fs::path(mkdtemp(name));
  }();
  fs::path path_ = dir_ / "libcalls";
};

TEST_F(LibraryCallsFile, ReadsCountsAndNames) {
  const LibraryCalls c = read_library_calls(write(kFile));
  EXPECT_EQ(c.patched, 12u);
  EXPECT_EQ(c.objects, 2u);
  ASSERT_EQ(c.left.size(), 2u);
  EXPECT_EQ(c.left[0], (std::pair<std::string, std::uint64_t>{"glob_dat", 3}));
  EXPECT_EQ(c.left[1].first, "audit_future_reason");
  ASSERT_EQ(c.functions.size(), 4u);
  // Two versions of memcpy: both show theirs; memmove has one.
  EXPECT_EQ(c.find(0x7f0000001010)->display, "memcpy@GLIBC_2.14");
  EXPECT_EQ(c.find(0x7f0000001020)->display, "memcpy@GLIBC_2.2.5");
  EXPECT_EQ(c.find(0x7f0000001000)->display, "memmove");
  EXPECT_EQ(c.find(0x7f0000001000)->version, "GLIBC_2.2.5");
  const LibraryCalls::Function* t = c.find(0x7f0000001030);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->name, "_ZSt9terminatev");
  EXPECT_EQ(t->version, "");
  EXPECT_EQ(t->library, "/lib/my dir/libstdc++.so.6");
  EXPECT_EQ(c.find(0x7f0000001008), nullptr);
}

TEST_F(LibraryCallsFile, CutAtEveryByteParsesOrNamesTheFileAndOffset) {
  std::size_t errors = 0;
  for (std::size_t n = 0; n < kFile.size(); ++n) {
    write(kFile.substr(0, n));
    try {
      const LibraryCalls c = read_library_calls(path_);
      EXPECT_LE(c.functions.size(), 4u);
    } catch (const FormatError& e) {
      ++errors;
      EXPECT_EQ(e.file(), path_);
      EXPECT_LE(e.offset(), n);
    }
  }
  EXPECT_GT(errors, 0u);  // the magic line cut short, at least
}

TEST_F(LibraryCallsFile, MalformedLinesAreErrorsAtTheirOffset) {
  const std::string head = "parlot-libcalls 1\n";
  for (const std::string bad :
       {"patched 12\n", "patched x 2\n", "left glob_dat\n", "stub 7f00 7f00 memcpy GLIBC_2.14\n",
        "stub zz 7f00 memcpy - /lib/libc.so.6\n", "stub 7f00 7f00 mem\\q - /lib/libc.so.6\n"}) {
    SCOPED_TRACE(bad);
    write(head + bad);
    try {
      read_library_calls(path_);
      ADD_FAILURE() << "no error";
    } catch (const FormatError& e) {
      EXPECT_EQ(e.file(), path_);
      EXPECT_GE(e.offset(), head.size());  // within the bad line
      EXPECT_LT(e.offset(), head.size() + bad.size());
    }
  }
}

}  // namespace
}  // namespace parlot

// The front end's probes of a program before it runs: which dynamic loader
// runs it, whether a library defines a symbol, whether the program loads
// an MPI library, where execvp finds it. Damaged, truncated or foreign
// files are "no", never a crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <link.h>

#include <fstream>
#include <string>

#include "elf_probe.h"
#include "mpi_detection.h"
#include "temp_dir.h"

namespace parlot::frontend {
namespace {

namespace fs = std::filesystem;
using parlot::test::TempDir;

// The path of the loaded object whose path contains `part` ("" if none).
fs::path loaded_object(const std::string& part) {
  struct Search {
    std::string part;
    fs::path found;
  } search{part, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        auto* s = static_cast<Search*>(out);
        const std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (name.find(s->part) == std::string::npos) return 0;
        s->found = name;
        return 1;
      },
      &search);
  return search.found;
}

// The C library (defines printf).
fs::path libc_path() {
  return loaded_object("/libc.so");
}

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

fs::path write(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

TEST(ElfProbe, FindsTheInterpreterOfADynamicProgram) {
  const auto interp = elf_interpreter("/proc/self/exe");
  ASSERT_TRUE(interp.has_value());
  EXPECT_EQ(interp->front(), '/');
  EXPECT_TRUE(fs::exists(*interp)) << *interp;
  // A plain shared library has none.
  const fs::path libstdcxx = loaded_object("/libstdc++.so");
  ASSERT_FALSE(libstdcxx.empty());
  EXPECT_FALSE(elf_interpreter(libstdcxx).has_value());
}

TEST(ElfProbe, FindsDefinedDynamicSymbolsOnly) {
  const fs::path libc = libc_path();
  ASSERT_FALSE(libc.empty());
  EXPECT_TRUE(elf_defines_dynamic_symbol(libc, "printf"));
  EXPECT_FALSE(elf_defines_dynamic_symbol(libc, "PMPI_Init"));
  EXPECT_FALSE(elf_defines_dynamic_symbol(libc, "printf_no_such_symbol"));
  // This test program refers to printf-family symbols but defines none.
  EXPECT_FALSE(elf_defines_dynamic_symbol("/proc/self/exe", "dl_iterate_phdr"));
}

TEST(ElfProbe, DamagedOrForeignFilesAreNo) {
  TempDir dir;
  const std::string libc = bytes_of(libc_path());
  const std::string self = bytes_of("/proc/self/exe");
  ASSERT_GT(libc.size(), 4096u);
  const std::vector<fs::path> files = {
      write(dir.path() / "empty", ""),
      write(dir.path() / "script", "#!/bin/sh\necho hi\n"),
      write(dir.path() / "header_only", self.substr(0, 64)),
      write(dir.path() / "libc_head", libc.substr(0, 4096)),
      write(dir.path() / "self_head", self.substr(0, 200)),
      dir.path() / "missing",
      dir.path(),  // a directory
  };
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    EXPECT_FALSE(elf_interpreter(f).has_value());
    EXPECT_FALSE(elf_defines_dynamic_symbol(f, "printf"));
    EXPECT_FALSE(program_loads_mpi(f));
  }
  // Program and section header offsets and counts pointing past the end.
  std::string bad = self.substr(0, 4096);
  auto* h = reinterpret_cast<ElfW(Ehdr)*>(bad.data());
  h->e_phoff = ~ElfW(Off){0} - 8;
  h->e_shoff = ~ElfW(Off){0} - 8;
  EXPECT_FALSE(elf_interpreter(write(dir.path() / "bad_offsets", bad)).has_value());
  h->e_phoff = 64;
  h->e_phnum = 0xffff;
  h->e_shnum = 0xffff;
  h->e_shoff = 64;
  const fs::path counts = write(dir.path() / "bad_counts", bad);
  EXPECT_FALSE(elf_defines_dynamic_symbol(counts, "printf"));
  (void)elf_interpreter(counts);  // may find the real PT_INTERP; must not crash
}

TEST(MpiDetection, AProgramWithoutMpiLoadsNone) {
  EXPECT_FALSE(program_loads_mpi("/proc/self/exe"));
  const auto sh = find_program("sh");
  ASSERT_TRUE(sh.has_value());
  EXPECT_FALSE(program_loads_mpi(*sh));
}

TEST(MpiDetection, FindsProgramsAsExecvpDoes) {
  const auto sh = find_program("sh");
  ASSERT_TRUE(sh.has_value());
  EXPECT_EQ(sh->filename(), "sh");
  EXPECT_FALSE(find_program("parlot-no-such-program-here").has_value());
  EXPECT_FALSE(find_program("").has_value());
  EXPECT_EQ(find_program("/proc/self/exe"), fs::path("/proc/self/exe"));
  TempDir dir;
  EXPECT_FALSE(find_program((dir.path() / "missing").string()).has_value());
  // Not executable: not run.
  const fs::path plain = write(dir.path() / "plain", "#!/bin/sh\n");
  EXPECT_FALSE(find_program(plain.string()).has_value());
}

}  // namespace
}  // namespace parlot::frontend

// Shared by the libFuzzer targets: the reader's parsers take file paths, so
// each input is written to an anonymous in-memory file (memfd) and handed to
// them as /proc/self/fd/<N>. Nothing touches the disk and the library needs
// no in-memory entry point.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace parlot::fuzz {

/// Stops the run with a message: libFuzzer reports it as a crash (deadly
/// signal) and saves the input. Used for violated invariants.
[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
  std::abort();
}

#define PARLOT_FUZZ_CHECK(cond)               \
  do {                                        \
    if (!(cond)) ::parlot::fuzz::fail(#cond); \
  } while (0)

/// One memfd per process, rewritten for every input.
class MemFile {
 public:
  MemFile() {
    fd_ = memfd_create("parlot-fuzz-input", MFD_CLOEXEC);
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  /// Replaces the file's contents with `data` and returns its path.
  const std::filesystem::path& write(const std::uint8_t* data, std::size_t size) {
    if (ftruncate(fd_, 0) != 0) fail("ftruncate on the memfd");
    std::size_t done = 0;
    while (done < size) {
      const ssize_t w = pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (w <= 0) fail("pwrite on the memfd");
      done += static_cast<std::size_t>(w);
    }
    return path_;
  }

 private:
  int fd_ = -1;
  std::filesystem::path path_;
};

/// The process's input file (created on first use, never closed).
inline MemFile& input_file() {
  static MemFile* file = new MemFile;  // never destroyed: no exit-time ordering issues
  return *file;
}

}  // namespace parlot::fuzz

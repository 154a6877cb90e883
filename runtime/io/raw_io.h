// Async-signal-safe output helpers for the runtime: no stdio, no malloc.
#pragma once

#include <cstddef>
#include <cstdint>

struct iovec;

namespace parlot::runtime {

/// Writes all `n` bytes, retrying on EINTR and short writes. SIGXFSZ is
/// blocked meanwhile (a file over RLIMIT_FSIZE gives EFBIG, not a dead
/// program). Returns 0 on success, else the errno of the failing write.
int write_all(int fd, const void* data, std::size_t n);

/// Writes the `count` parts at `parts` (`total` bytes in all) with one
/// writev(2), SIGXFSZ blocked meanwhile, retried only on EINTR: the bytes
/// go to the file as one write, never split in two (a node file's record,
/// node_file.h). Returns 0, EIO for a short write, or the errno.
int write_record(int fd, const iovec* parts, int count, std::size_t total);

/// A line or small file built in a fixed buffer. Appends past the capacity
/// are cut (the text is marked truncated, never overflowed).
class TextBuilder {
 public:
  TextBuilder(char* buffer, std::size_t capacity) : buf_(buffer), cap_(capacity) {}
  TextBuilder& str(const char* s);
  TextBuilder& str(const char* s, std::size_t n);
  /// Appends `s` with backslash escapes for '\\', '\n', '\r', '\t' and
  /// bytes < 0x20 as \xNN, so the value fits on one line (docs/FORMAT.md).
  TextBuilder& escaped(const char* s, std::size_t n);
  TextBuilder& ch(char c);
  TextBuilder& u64(std::uint64_t v);
  TextBuilder& i64(std::int64_t v);
  TextBuilder& hex(std::uint64_t v);
  const char* data() const { return buf_; }
  std::size_t size() const { return n_; }
  bool truncated() const { return truncated_; }
  /// NUL-terminates and returns the text.
  const char* c_str();

 private:
  char* buf_;
  std::size_t cap_;
  std::size_t n_ = 0;
  bool truncated_ = false;
};

/// Prints "parlot: <message>" and a newline on stderr with one write(2).
void log_line(const char* message);

}  // namespace parlot::runtime

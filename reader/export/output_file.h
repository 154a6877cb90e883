// A file written through a 1 MiB buffer; write errors become exceptions
// naming the file (disk full is found at the latest by close()).
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <string_view>

namespace parlot::exporter {

class OutputFile {
 public:
  /// Creates or truncates `path` ("-" = standard output). Throws
  /// std::runtime_error naming the path when it cannot be opened.
  explicit OutputFile(std::string path);
  /// Removes the file unless close() succeeded: a failed export leaves no
  /// partial file.
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(std::string_view bytes) {
    buffer_.append(bytes);
    if (buffer_.size() >= kFlushBytes) flush();
  }
  template <class... Args>
  void print(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(std::back_inserter(buffer_), format, std::forward<Args>(args)...);
    if (buffer_.size() >= kFlushBytes) flush();
  }
  /// Writes the buffer out. Throws std::runtime_error on a write error.
  void flush();
  /// Flushes and closes. Throws std::runtime_error on a write error.
  void close();

  const std::string& path() const { return path_; }

 private:
  static constexpr std::size_t kFlushBytes = 1 << 20;
  std::string path_;
  std::FILE* file_ = nullptr;
  bool closed_ = false;  // close() succeeded
  fmt::memory_buffer buffer_;
};

/// `text` as a JSON string literal, quotes included.
std::string json_string(std::string_view text);

}  // namespace parlot::exporter

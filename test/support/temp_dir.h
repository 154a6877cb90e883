// Test support shared by the suites: a temporary directory that cleans up.
#pragma once

#include <filesystem>

namespace parlot::test {

/// A fresh directory made by mkdtemp under the temp directory, removed with
/// everything in it on destruction. Throws std::runtime_error if it cannot
/// be made.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace parlot::test

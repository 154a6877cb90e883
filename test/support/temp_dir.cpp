#include "temp_dir.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace parlot::test {

TempDir::TempDir() {
  std::string templ = (std::filesystem::temp_directory_path() / "parlot-test-XXXXXX").string();
  if (mkdtemp(templ.data()) == nullptr) {
    throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
  }
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ec;
  // Trace directories are mode 0700 and files may have been made read-only
  // by a test; the owner (or root) removes them all the same.
  std::filesystem::remove_all(path_, ec);
}

}  // namespace parlot::test

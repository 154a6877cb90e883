#include "install_paths.h"

#include <cstdlib>
#include <system_error>

namespace parlot::frontend {
namespace {

std::optional<std::filesystem::path> first_existing(
    std::initializer_list<std::filesystem::path> candidates) {
  for (const auto& p : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(p, ec)) return std::filesystem::weakly_canonical(p, ec);
  }
  return std::nullopt;
}

}  // namespace

std::filesystem::path own_directory() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::current_path() : exe.parent_path();
}

std::optional<std::filesystem::path> find_runtime() {
  if (const char* r = std::getenv("PARLOT_RUNTIME"); r != nullptr && *r != '\0') {
    return first_existing({std::filesystem::absolute(r)});
  }
  const auto bin = own_directory();
  return first_existing({bin / PARLOT_LIBDIR_FROM_BINDIR / PARLOT_RUNTIME_NAME,
                         bin / ".." / "runtime" / PARLOT_RUNTIME_NAME});
}

std::optional<std::filesystem::path> find_parlot_read() {
  const auto bin = own_directory();
  return first_existing({bin / "parlot-read", bin / ".." / "reader" / "parlot-read"});
}

}  // namespace parlot::frontend

#include "build_flags.h"

#include <parlot/build_modes.h>

#include <sstream>
#include <stdexcept>

namespace parlot::frontend {
namespace {

// Appends the blank-separated words of `flags` to `out`.
void append_words(std::vector<std::string>& out, std::string_view flags) {
  std::istringstream in{std::string(flags)};
  for (std::string word; in >> word;) out.push_back(word);
}

}  // namespace

BuildFlags build_flags(const FlagRequest& request) {
  BuildFlags flags;
  if (request.mode == BuildMode::sleds) {
    if (request.after_inlining) {
      throw std::invalid_argument(
          "--after-inlining is for --mode hooks (sleds are only in the functions left after "
          "inlining anyway)");
    }
    append_words(flags.compile, PARLOT_SLED_FLAGS);
  } else if (!request.after_inlining) {
    append_words(flags.compile, PARLOT_HOOK_FLAGS);
  } else if (request.compiler == CompilerFamily::clang) {
    append_words(flags.compile, PARLOT_HOOK_FLAGS_CLANG_AFTER_INLINING);
  } else {
    append_words(flags.compile, PARLOT_HOOK_FLAGS_GCC_AFTER_INLINING);
  }
  flags.compile.emplace_back("-g");
  if (request.runtime_dir) {
    const std::string dir = request.runtime_dir->string();
    flags.link = {"-L" + dir, "-Wl,-rpath," + dir, "-lparlotrt"};
  }
  return flags;
}

std::optional<BuildMode> parse_build_mode(std::string_view name) {
  if (name == "hooks") return BuildMode::hooks;
  if (name == "sleds") return BuildMode::sleds;
  return std::nullopt;
}

std::optional<CompilerFamily> parse_compiler(std::string_view name) {
  if (const auto slash = name.rfind('/'); slash != std::string_view::npos) {
    name.remove_prefix(slash + 1);
  }
  // A version suffix: clang-14, gcc-12.
  if (const auto dash = name.find('-'); dash != std::string_view::npos) {
    name = name.substr(0, dash);
  }
  if (name == "gcc" || name == "g++" || name == "gfortran" || name == "cc" || name == "c++") {
    return CompilerFamily::gcc;
  }
  if (name == "clang" || name == "clang++" || name == "flang") return CompilerFamily::clang;
  return std::nullopt;
}

std::string join_flags(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += (s.empty() ? "" : " ") + a;
  return s;
}

}  // namespace parlot::frontend

// The compile and link flags of Parlot's build modes (hooks, sleds) for a
// compiler, as `parlot flags` prints them. The flags themselves are defined
// once, in include/parlot/build_modes.h.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parlot::frontend {

/// How a program is instrumented. hooks: -finstrument-functions (the
/// compiler calls the hooks in every function, traced or not); sleds:
/// patchable function entries the runtime patches only while tracing is on.
enum class BuildMode { hooks, sleds };

/// The compiler family, which decides the cheaper hook build's flags.
enum class CompilerFamily { gcc, clang };

/// What to print flags for.
struct FlagRequest {
  BuildMode mode = BuildMode::hooks;
  CompilerFamily compiler = CompilerFamily::gcc;
  /// Hooks only: the build that instruments only the calls left after
  /// inlining (clang), or leaves the system headers' functions out (gcc).
  bool after_inlining = false;
  /// The directory holding libparlotrt.so to link with; nullopt: link
  /// nothing (the runtime is preloaded by `parlot record`).
  std::optional<std::filesystem::path> runtime_dir;
};

/// Compile and link flags, one argument per element.
struct BuildFlags {
  std::vector<std::string> compile;
  std::vector<std::string> link;
};

/// The flags of `request`: compile flags are the mode's instrumentation
/// flags and -g; link flags are -L, -rpath and -lparlotrt for
/// `runtime_dir`, or none. Throws std::invalid_argument for after_inlining
/// with BuildMode::sleds (sleds are only in the functions left after
/// inlining anyway).
BuildFlags build_flags(const FlagRequest& request);

/// `mode` by name: "hooks" or "sleds"; nullopt for anything else.
std::optional<BuildMode> parse_build_mode(std::string_view name);

/// `compiler` by name: "gcc", "g++", "gfortran", "cc", "c++" (gcc) or "clang",
/// "clang++", "flang" (clang), also with a version suffix ("clang-14") or a
/// directory ("/usr/bin/gcc"); nullopt for anything else.
std::optional<CompilerFamily> parse_compiler(std::string_view name);

/// `args` joined by single blanks (empty string for none).
std::string join_flags(const std::vector<std::string>& args);

}  // namespace parlot::frontend

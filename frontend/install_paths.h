// Where the parlot front end finds the runtime and parlot-read: next to its
// own executable, in the install layout or the build tree.
#pragma once

#include <filesystem>
#include <optional>

namespace parlot::frontend {

/// Directory of the running executable (/proc/self/exe, symlinks resolved).
std::filesystem::path own_directory();

/// The runtime to preload: $PARLOT_RUNTIME when set, else
/// <bindir>/<libdir from bindir>/libparlotrt.so.<major> (install layout),
/// else <bindir>/../runtime/libparlotrt.so.<major> (build tree). nullopt
/// when none of these exists.
std::optional<std::filesystem::path> find_runtime();

/// parlot-read: <bindir>/parlot-read (install layout), else
/// <bindir>/../reader/parlot-read (build tree). nullopt when neither exists.
std::optional<std::filesystem::path> find_parlot_read();

}  // namespace parlot::frontend

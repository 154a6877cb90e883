// `parlot flags`: prints the compile and link flags of a build mode.
#pragma once

#include <CLI/CLI.hpp>

namespace parlot::frontend {

/// Adds the `flags` subcommand to `app`: `parlot flags [--mode hooks|sleds]
/// [--cc gcc|clang] [--after-inlining] [--with-runtime] [--cflags] [--libs]
/// [-v]`. When it runs it prints the flags on stdout (one line; with -v
/// labelled lines and what a traced and an untraced run need) and exits 0,
/// or prints an error on stderr and exits 2 (a bad combination, or
/// --with-runtime when no runtime is found next to parlot).
void add_flags_command(CLI::App& app);

}  // namespace parlot::frontend

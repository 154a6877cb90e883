// `parlot record`: runs a program under the Parlot runtime and reports
// where its trace went.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace parlot::frontend {

/// Adds the `record` subcommand to `app`; when it runs, it records
/// `command` (PROGRAM ARGS) and its result (the recorded program's exit
/// status, or death by its signal) ends the process.
void add_record_command(CLI::App& app, const std::vector<std::string>& command);

/// For `parlot record [OPTIONS] [--] PROGRAM ARGS`: returns PROGRAM ARGS
/// (everything after `--`, or from the first argument that is neither an
/// option nor an option's value) and shortens `argc` to the options, so
/// PROGRAM's own options are never parsed as parlot's.
std::vector<std::string> split_program_command(int& argc, char** argv);

}  // namespace parlot::frontend

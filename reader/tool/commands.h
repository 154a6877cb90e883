// parlot-read subcommands, one file each (info, trace, stats, export, report,
// loops, classes, stacks, diff, top, iterations, reduce, check). Each
// registers itself on the CLI11 app; its callback runs the command and
// stores the process exit status: 0 = done, 1 = damaged or unreadable input
// (the message names the file and offset).
#pragma once

#include <CLI/CLI.hpp>

namespace parlot::tool {

void add_info_command(CLI::App& app, int& exit_status);
void add_trace_command(CLI::App& app, int& exit_status);
void add_stats_command(CLI::App& app, int& exit_status);
void add_export_command(CLI::App& app, int& exit_status);
void add_report_command(CLI::App& app, int& exit_status);
void add_loops_command(CLI::App& app, int& exit_status);
void add_classes_command(CLI::App& app, int& exit_status);
void add_stacks_command(CLI::App& app, int& exit_status);
void add_diff_command(CLI::App& app, int& exit_status);
void add_top_command(CLI::App& app, int& exit_status);
void add_iterations_command(CLI::App& app, int& exit_status);
void add_reduce_command(CLI::App& app, int& exit_status);
/// `check` stores 3 when it found a problem (main returns it).
void add_check_command(CLI::App& app, int& exit_status);

}  // namespace parlot::tool

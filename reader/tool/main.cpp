// parlot-read: decodes Parlot traces and prints named call traces and call
// statistics. Exit status: 0 done, 1 damaged or unreadable input, 2 usage.
#include <fmt/core.h>

#include <unistd.h>

#include <cstring>

#include "commands.h"
#include "parlot/trace_reader.h"
#include "progress.h"
#include "visible_text.h"

int main(int argc, char** argv) {
  CLI::App app{"parlot-read: read Parlot whole-program call traces"};
  app.require_subcommand(1);
  int exit_status = 0;
  parlot::tool::add_info_command(app, exit_status);
  parlot::tool::add_trace_command(app, exit_status);
  parlot::tool::add_stats_command(app, exit_status);
  parlot::tool::add_export_command(app, exit_status);
  parlot::tool::add_report_command(app, exit_status);
  parlot::tool::add_loops_command(app, exit_status);
  parlot::tool::add_classes_command(app, exit_status);
  parlot::tool::add_stacks_command(app, exit_status);
  parlot::tool::add_diff_command(app, exit_status);
  // `trace` streams its output: a progress bar would cut through it on the
  // same terminal.
  const bool streams_to_terminal =
      argc > 1 && std::strcmp(argv[1], "trace") == 0 && ::isatty(STDOUT_FILENO) == 1;
  try {
    // Erased before any error below is printed.
    const auto progress =
        streams_to_terminal ? nullptr : parlot::tool::ProgressDisplay::for_stderr();
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const parlot::FormatError& e) {
    std::fflush(stdout);
    fmt::print(stderr, "parlot-read: error: {}\n", parlot::tool::visible_text(e.what()));
    return 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "parlot-read: error: {}\n", parlot::tool::visible_text(e.what()));
    return 1;
  }
  return exit_status;
}

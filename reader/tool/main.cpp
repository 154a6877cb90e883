// parlot-read: decodes Parlot traces and prints named call traces and call
// statistics. Exit status: 0 everything shown (a trace still being written
// and one cut short by a kill included), 2 shown but some input was damaged
// or unreadable (one summary line on stderr names it), 1 nothing readable,
// a refused command or a usage error, 3 `check` found a problem.
#include <fmt/core.h>

#include <unistd.h>

#include <cstring>

#include "commands.h"
#include "damage_log.h"
#include "parlot/trace_reader.h"
#include "progress.h"
#include "reader_team.h"
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
  parlot::tool::add_top_command(app, exit_status);
  parlot::tool::add_iterations_command(app, exit_status);
  parlot::tool::add_reduce_command(app, exit_status);
  parlot::tool::add_check_command(app, exit_status);
  // `trace` streams its output: a progress bar would cut through it on the
  // same terminal.
  const bool streams_to_terminal =
      argc > 1 && (std::strcmp(argv[1], "trace") == 0 || std::strcmp(argv[1], "top") == 0) &&
      ::isatty(STDOUT_FILENO) == 1;
  try {
    // Erased before any error below is printed.
    const auto progress =
        streams_to_terminal ? nullptr : parlot::tool::ProgressDisplay::for_stderr();
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "parlot-read: error: {}\n", parlot::tool::visible_text(e.what()));
    return 1;
  }
  std::fflush(stdout);
  // The other members of an mpirun'd team sent what they could not read to
  // the leader, which tells it once.
  if (parlot::tool::ReaderTeam::is_follower()) return 0;
  const auto& damage = parlot::tool::DamageLog::get();
  const std::string summary = damage.summary();
  if (!summary.empty()) {
    fmt::print(stderr, "{}\n", parlot::tool::visible_text(summary.substr(0, summary.size() - 1)));
  }
  // A command's own status is 1 when it refused to run (a too large
  // export), 3 when `check` found a problem; damage is the log's to tell.
  return exit_status == 1 || exit_status == 3 ? exit_status : damage.exit_status();
}

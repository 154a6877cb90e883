// parlot-read loops: each thread's call stream summarised by nested loop
// recognition, e.g. "main { 1000 x [ step { 3 x [ exchange ] } ] }".
// Under mpirun the ranks split the processes and rank 0 prints in order.
#include <fmt/format.h>

#include <optional>

#include "analysis/loops.h"
#include "commands.h"
#include "ordered_output.h"
#include "parallel.h"
#include "reader_team.h"
#include "simplified_names.h"
#include "trace_input.h"

namespace parlot::tool {
namespace {

struct LoopsOptions {
  ViewOptions view;
  std::size_t max_body = 8;
  bool simplify = true;          ///< shorter C++ names
  std::size_t max_chars = 4096;  ///< characters of one thread's summary (0: no cap)
};

// Under mpirun each rank opens its share of the processes (round robin)
// and summarises their threads; the leader prints the lines in process
// order (print_in_order).
int run_loops(const LoopsOptions& o) {
  ReaderTeam& team = ReaderTeam::get();
  std::optional<TraceInput> owned;
  std::vector<std::string> lines;
  if (!all_succeed(team, [&] {
        owned.emplace(o.view, [&](std::size_t i, std::uint64_t) { return team.owns(i); });
        TraceInput& input = *owned;
        const auto& threads = input.threads();
        const analysis::NameTable names = simplified_names(input.names(), o.simplify);
        lines.resize(threads.size());
        parallel_for(threads.size(), input.jobs(), [&](std::size_t i) {
          input.read_thread(threads[i], [&](ThreadStream& stream) {
            analysis::LoopBuilder builder(o.max_body);
            std::uint64_t events = 0;
            for (analysis::Event e; stream.next(e); ++events) builder.push(e);
            const analysis::LoopSummary summary = builder.finish();
            bool cut = false;
            const std::string text = o.max_chars == 0 ? summary.to_string(names)
                                                      : summary.to_string(names, o.max_chars, &cut);
            lines[i] = fmt::format("{} ({} events): {}{}\n", input.label(threads[i].id), events,
                                   text, cut ? " (cut at --max-chars; --all for the rest)" : "");
          });
        });
      })) {
    return 0;
  }
  const TraceInput& input = *owned;
  std::vector<unsigned> owner(input.processes().size());
  for (std::size_t i = 0; i < owner.size(); ++i) owner[i] = i % team.size();
  // This member's threads are listed process by process, in order.
  std::size_t next = 0;
  return print_in_order(team, owner, [&](std::size_t process, ItemWriter& out) {
    for (; next < lines.size() && input.threads()[next].process == process; ++next) {
      out.write(lines[next]);
      std::string().swap(lines[next]);
    }
    return 0;
  });
}

}  // namespace

void add_loops_command(CLI::App& app, int& exit_status) {
  auto options = std::make_shared<LoopsOptions>();
  CLI::App* cmd =
      app.add_subcommand("loops", "Each thread's calls summarised as nested loops (NLR)");
  cmd->add_option("dir", options->view.dir, "Trace directory")->required();
  add_view_options(cmd, options->view);
  cmd->add_option("--max-body", options->max_body, "Longest loop body recognised (items)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--max-chars", options->max_chars,
                  "Characters of one thread's summary before it is cut (default 4096; 0: no cap)");
  cmd->add_flag_callback(
      "--all", [options] { options->max_chars = 0; }, "Every thread's whole summary");
  cmd->add_flag("--simplify,!--no-simplify", options->simplify,
                "Shorter C++ names (template arguments as <>; on by default)");
  cmd->callback([options, &exit_status] { exit_status = run_loops(*options); });
}

}  // namespace parlot::tool

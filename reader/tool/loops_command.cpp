// parlot-read loops: each thread's call stream summarised by nested loop
// recognition, e.g. "main { 1000 x [ step { 3 x [ exchange ] } ] }".
#include <fmt/format.h>

#include "analysis/loops.h"
#include "commands.h"
#include "parallel.h"
#include "trace_input.h"

namespace parlot::tool {
namespace {

struct LoopsOptions {
  ViewOptions view;
  std::size_t max_body = 8;
};

int run_loops(const LoopsOptions& o) {
  TraceInput input(o.view);
  const auto& threads = input.threads();
  std::vector<std::string> lines(threads.size());
  parallel_for(threads.size(), input.jobs(), [&](std::size_t i) {
    auto stream = input.open(threads[i]);
    analysis::LoopBuilder builder(o.max_body);
    std::uint64_t events = 0;
    for (analysis::Event e; stream->next(e); ++events) builder.push(e);
    input.finished(*stream);
    const analysis::LoopSummary summary = builder.finish();
    lines[i] = fmt::format("{} ({} events): {}\n", input.label(threads[i].id), events,
                           summary.to_string(input.names()));
  });
  for (const auto& line : lines) fmt::print("{}", line);
  return input.status();
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
  cmd->callback([options, &exit_status] { exit_status = run_loops(*options); });
}

}  // namespace parlot::tool

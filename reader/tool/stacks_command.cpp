// parlot-read stacks: the open call stack of every thread at the end of its
// trace, merged into a STAT-like prefix tree with thread ranges at every
// node (text, or Graphviz DOT with --format dot).
#include <fmt/core.h>

#include "analysis/stack_tree.h"
#include "commands.h"
#include "parallel.h"
#include "trace_input.h"

namespace parlot::tool {
namespace {

struct StacksOptions {
  ViewOptions view;
  std::string format = "text";
};

int run_stacks(const StacksOptions& o) {
  TraceInput input(o.view);
  const auto& threads = input.threads();
  std::vector<std::vector<analysis::FunctionKey>> stacks(threads.size());
  parallel_for(threads.size(), input.jobs(), [&](std::size_t i) {
    auto stream = input.open(threads[i]);
    analysis::OpenStack stack;
    for (analysis::Event e; stream->next(e);) stack.push(e);
    input.finished(*stream);
    stacks[i] = stack.frames();
  });
  analysis::StackTree tree;
  for (std::size_t i = 0; i < threads.size(); ++i) tree.add(threads[i].id, stacks[i]);
  fmt::print("{}", o.format == "dot" ? tree.to_dot(input.names(), input.ranked())
                                     : tree.to_text(input.names(), input.ranked()));
  return input.status();
}

}  // namespace

void add_stacks_command(CLI::App& app, int& exit_status) {
  auto options = std::make_shared<StacksOptions>();
  CLI::App* cmd = app.add_subcommand(
      "stacks", "Prefix tree of every thread's open call stack at the end of its trace");
  cmd->add_option("dir", options->view.dir, "Trace directory")->required();
  add_view_options(cmd, options->view);
  cmd->add_option("--format", options->format, "text or dot (Graphviz)")
      ->check(CLI::IsMember({"text", "dot"}));
  cmd->callback([options, &exit_status] { exit_status = run_stacks(*options); });
}

}  // namespace parlot::tool

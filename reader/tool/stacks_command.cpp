// parlot-read stacks: the open call stack of every thread at the end of its
// trace, merged into a STAT-like prefix tree with thread ranges at every
// node (text, or Graphviz DOT with --format dot). Under mpirun the ranks
// split the process directories and rank 0 merges their stacks.
#include <fmt/core.h>

#include <optional>
#include <set>

#include "analysis/partial_results.h"
#include "analysis/stack_tree.h"
#include "commands.h"
#include "parallel.h"
#include "reader_team.h"
#include "trace_input.h"

namespace parlot::tool {
namespace {

struct StacksOptions {
  ViewOptions view;
  std::string format = "text";
};

// One member's share: each owned thread's id and open stack, then the
// names of the functions on those stacks.
std::string stacks_partial(TraceInput& input) {
  const auto& threads = input.threads();
  std::vector<std::vector<analysis::FunctionKey>> stacks(threads.size());
  std::vector<char> read(threads.size(), 0);  // 0: damaged, left out
  parallel_for(threads.size(), input.jobs(), [&](std::size_t i) {
    read[i] = input.read_thread(threads[i], [&](ThreadStream& stream) {
      analysis::OpenStack stack;
      for (analysis::Event e; stream.next(e);) stack.push(e);
      stacks[i] = stack.frames();
    });
  });
  analysis::StacksPartial out;
  out.status = input.status();
  std::set<analysis::FunctionKey> keys;
  for (std::size_t i = 0; i < threads.size(); ++i) {
    if (!read[i]) continue;
    out.threads.push_back({threads[i].id, std::move(stacks[i])});
    keys.insert(out.threads.back().stack.begin(), out.threads.back().stack.end());
  }
  for (const auto key : keys) out.names.emplace_back(key, input.names().name(key));
  return analysis::write_stacks_partial(out);
}

int run_stacks(const StacksOptions& o) {
  ReaderTeam& team = ReaderTeam::get();
  std::optional<TraceInput> input;
  const auto partials = gather_partials(team, [&] {
    input.emplace(o.view, [&](std::size_t i, std::uint64_t) { return team.owns(i); });
    return stacks_partial(*input);
  });
  if (!team.leader()) return 0;
  analysis::StackTree tree;
  analysis::NameTable names;
  for (const auto& part : partials) {
    const analysis::StacksPartial p = analysis::read_stacks_partial(part);
    for (const auto& t : p.threads) tree.add(t.id, t.stack);
    for (const auto& [key, name] : p.names) names.add(key, name);
  }
  fmt::print("{}", o.format == "dot" ? tree.to_dot(names, input->ranked())
                                     : tree.to_text(names, input->ranked()));
  return 0;
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

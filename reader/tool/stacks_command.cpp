// parlot-read stacks: the open call stack of every thread at the end of its
// trace, merged into a STAT-like prefix tree with thread ranges at every
// node (text, or Graphviz DOT with --format dot). Under mpirun the ranks
// split the process directories and rank 0 merges their stacks.
#include <fmt/core.h>

#include <map>
#include <memory>
#include <optional>

#include "analysis/partial_results.h"
#include "analysis/stack_tree.h"
#include "call_site_text.h"
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

// An open frame: its function and the call site it was entered from
// (return address, run-time; 0 = unknown or not shown).
struct OpenFrame {
  analysis::FunctionKey function = 0;
  std::uint64_t site = 0;
};

// One member's share: each owned thread's id and open stack, then the
// names of the frames on those stacks. A frame with a call site is keyed
// by its name with the site ("f at a.c:12"), so the tree splits frames of
// one function called from different lines.
std::string stacks_partial(TraceInput& input, bool sites) {
  const auto& threads = input.threads();
  std::vector<std::vector<OpenFrame>> stacks(threads.size());
  std::vector<char> read(threads.size(), 0);  // 0: damaged, left out
  input.track_sites(sites);
  parallel_for(threads.size(), input.jobs(), [&](std::size_t i) {
    const ProcessFunctions& functions = input.functions(threads[i].process);
    read[i] = input.read_thread(threads[i], [&](ThreadStream& stream) {
      std::vector<OpenFrame>& stack = stacks[i];
      for (CallEvent c; stream.next_call(c);) {
        if (c.kind == CallEvent::Kind::kEnter) {
          stack.push_back({functions.key_of(c.function_id), stream.last_site()});
        } else if (!stack.empty()) {
          stack.pop_back();
        }
      }
    });
  });
  analysis::StacksPartial out;
  out.status = input.status();
  std::map<analysis::FunctionKey, std::string> names;
  // One symbolizer per process with sites on its stacks (serial: a
  // Symbolizer is not thread-safe).
  std::map<std::size_t, std::unique_ptr<Symbolizer>> symbolizers;
  for (std::size_t i = 0; i < threads.size(); ++i) {
    if (!read[i]) continue;
    std::vector<analysis::FunctionKey> keys;
    for (const OpenFrame& f : stacks[i]) {
      std::string name = input.names().name(f.function);
      analysis::FunctionKey key = f.function;
      if (f.site != 0) {
        auto& s = symbolizers[threads[i].process];
        if (!s)
          s = std::make_unique<Symbolizer>(input.processes()[threads[i].process].load_map,
                                           [](const std::string&) {});  // warned when named
        if (const std::string site = call_site_text(*s, f.site); !site.empty()) {
          name = frame_with_site(name, site);
          key = analysis::function_key(name);
        }
      }
      names.try_emplace(key, std::move(name));
      keys.push_back(key);
    }
    out.threads.push_back({threads[i].id, std::move(keys)});
  }
  for (auto& [key, name] : names) out.names.emplace_back(key, std::move(name));
  return analysis::write_stacks_partial(out);
}

int run_stacks(const StacksOptions& o) {
  ReaderTeam& team = ReaderTeam::get();
  std::optional<TraceInput> input;
  const auto partials = gather_partials(team, [&] {
    input.emplace(o.view, [&](std::size_t i, std::uint64_t) { return team.owns(i); });
    return stacks_partial(*input, o.view.sites);
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

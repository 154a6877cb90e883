// parlot-read diff: where two runs (threads matched by rank and thread
// index), or two threads of one run (--left rank=0 --right rank=3), part:
// the first divergent event with context and the call stack there, and the
// per-function call-count deltas, and the loop-level diff of the two loop
// summaries (diffNLR), built in the same pass over the events. Under
// mpirun the ranks split the pairs of two runs and rank 0 prints them in
// order; two threads of one run are compared on rank 0 alone.
#include <fmt/core.h>

#include <charconv>
#include <optional>

#include "analysis/divergence.h"
#include "analysis/loop_diff.h"
#include "analysis/loops.h"
#include "commands.h"
#include "ordered_output.h"
#include "prefetch_source.h"
#include "reader_team.h"
#include "trace_input.h"

namespace parlot::tool {
namespace {

struct DiffOptions {
  ViewOptions left;
  std::string right_dir;
  std::string left_thread, right_thread;  // "rank=R[,fork=K][,thread=T]"
  std::size_t context = 3;
  bool loops = true;
  std::size_t max_body = 8;
};

/// describe_divergence(), then (when the streams differ and `o.loops`) the
/// loop-level diff, indented under "  loop-level diff (NLR, < left only,
/// > right only):".
std::string compare(analysis::EventSource& left, analysis::EventSource& right,
                    const analysis::NameTable& names, const std::string& left_label,
                    const std::string& right_label, const DiffOptions& o) {
  // Each side decoded (and loop-summarised) on its own thread.
  PrefetchSource l(left, o.loops ? o.max_body : 0), r(right, o.loops ? o.max_body : 0);
  const auto d = analysis::first_divergence(l, r, o.context);
  std::string out = analysis::describe_divergence(d, names, left_label, right_label);
  if (!o.loops || d.identical) return out;
  analysis::LoopDiffOptions lo;
  lo.context = o.context;
  const auto lines = analysis::diff_loops(l.loop_summary(), r.loop_summary(), names, lo);
  out += "  loop-level diff (NLR; < left only, > right only):\n";
  const std::string text = analysis::describe_loop_diff(lines);
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t nl = text.find('\n', pos);
    out += "  " + text.substr(pos, nl - pos + 1);
    pos = nl == std::string::npos ? text.size() : nl + 1;
  }
  return out;
}

analysis::ThreadId parse_thread(const std::string& spec) {
  analysis::ThreadId id;
  std::size_t pos = 0;
  while (pos < spec.size()) {
    const std::size_t comma = std::min(spec.find(',', pos), spec.size());
    const std::string part = spec.substr(pos, comma - pos);
    const std::size_t eq = part.find('=');
    std::uint64_t v = 0;
    const std::string key = part.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : part.substr(eq + 1);
    if (eq == std::string::npos ||
        std::from_chars(value.data(), value.data() + value.size(), v).ptr !=
            value.data() + value.size() ||
        value.empty()) {
      throw CLI::ValidationError("thread",
                                 "expected rank=R[,fork=K][,thread=T], got '" + spec + "'");
    }
    if (key == "rank" || key == "process") {
      id.rank = v;
    } else if (key == "thread") {
      id.thread = v;
    } else if (key == "fork") {
      id.fork = v;
    } else {
      throw CLI::ValidationError("thread", "unknown key '" + key + "' in '" + spec + "'");
    }
    pos = comma + 1;
  }
  return id;
}

// Two runs, threads matched by rank and thread index. The pairs are split
// by rank (rank mod team size: a member opens the processes of both runs
// with its ranks, so each pair is on one member); the leader prints them in
// the serial order (print_in_order): the left run's threads, each with its
// pair's report or "only in LEFT", then the right run's threads that have
// no pair.
int diff_runs(ReaderTeam& team, const DiffOptions& o) {
  ViewOptions rv = o.left;
  rv.dir = o.right_dir;
  const auto owns = [&](std::size_t, std::uint64_t rank) {
    return rank % team.size() == team.rank();
  };
  std::optional<TraceInput> left, right;
  if (!all_succeed(team, [&] {
        left.emplace(o.left, owns);
        right.emplace(rv, owns);
      })) {
    return 0;
  }
  analysis::NameTable names = left->names();
  names.merge(right->names());
  // Items: the left run's processes, then the right run's.
  const std::size_t left_processes = left->processes().size();
  std::vector<unsigned> owner(left_processes + right->processes().size());
  for (std::size_t i = 0; i < owner.size(); ++i) {
    const std::uint64_t rank =
        i < left_processes ? left->rank_of(i) : right->rank_of(i - left_processes);
    owner[i] = static_cast<unsigned>(rank % team.size());
  }
  return print_in_order(team, owner, [&](std::size_t item, ItemWriter& out) {
    if (item < left_processes) {
      for (const auto& t : left->threads()) {
        if (t.process != item) continue;
        const auto* other = right->find(t.id);
        if (other == nullptr) {
          out.write(fmt::format("{}: only in {}\n", left->label(t.id), o.left.dir));
          continue;
        }
        std::string text;
        try {
          auto sa = left->open(t);
          auto sb = right->open(*other);
          text = compare(*sa, *sb, names, "left", "right", o);
          left->finished(*sa);
          right->finished(*sb);
        } catch (const FormatError& e) {
          report_error(e);
          text = "not compared (damaged input)\n";
        }
        out.write(fmt::format("{}: {}", left->label(t.id), text));
      }
    } else {
      for (const auto& t : right->threads()) {
        if (t.process != item - left_processes || left->find(t.id) != nullptr) continue;
        out.write(fmt::format("{}: only in {}\n", right->label(t.id), rv.dir));
      }
    }
    return 0;
  });
}

int run_diff(const DiffOptions& o) {
  ReaderTeam& team = ReaderTeam::get();
  if (o.right_dir.empty()) {
    if (o.left_thread.empty() || o.right_thread.empty()) {
      throw CLI::ValidationError("diff", "give RIGHT, or --left and --right");
    }
    // Two threads of one run: compared on the leader alone.
    if (!team.leader()) return 0;
    TraceInput left(o.left);
    const auto a = parse_thread(o.left_thread), b = parse_thread(o.right_thread);
    const auto* ta = left.find(a);
    const auto* tb = left.find(b);
    if (ta == nullptr || tb == nullptr) {
      throw CLI::ValidationError("diff", "no thread " + (ta ? o.right_thread : o.left_thread));
    }
    std::string text;
    try {
      auto sa = left.open(*ta);
      auto sb = left.open(*tb);
      text = compare(*sa, *sb, left.names(), left.label(a), left.label(b), o);
      left.finished(*sa);
      left.finished(*sb);
    } catch (const FormatError& e) {
      report_error(e);
      text = "not compared (damaged input)\n";
    }
    fmt::print("{} vs {}: {}", left.label(a), left.label(b), text);
    return 0;
  }
  return diff_runs(team, o);
}

}  // namespace

void add_diff_command(CLI::App& app, int& exit_status) {
  auto options = std::make_shared<DiffOptions>();
  CLI::App* cmd = app.add_subcommand(
      "diff", "First divergence and call-count deltas of two runs or two threads");
  cmd->add_option("left", options->left.dir, "Trace directory (LEFT)")->required();
  cmd->add_option("right", options->right_dir,
                  "Trace directory (RIGHT); threads matched by "
                  "rank and thread index");
  add_view_options(cmd, options->left);
  cmd->add_option(
      "--left", options->left_thread,
      "Thread of LEFT: rank=R[,fork=K][,thread=T] (under mpirun: compared on rank 0 alone)");
  cmd->add_option("--right", options->right_thread,
                  "Thread of LEFT to compare: rank=R[,fork=K][,thread=T]");
  cmd->add_option("--context", options->context,
                  "Events of context around the divergence (items around each change in the "
                  "loop-level diff)");
  cmd->add_flag("!--no-loops", options->loops, "Leave out the loop-level diff (diffNLR)");
  cmd->add_option("--max-body", options->max_body, "Longest loop body recognised (items)")
      ->check(CLI::Range(1, 64));
  cmd->callback([options, &exit_status] { exit_status = run_diff(*options); });
}

}  // namespace parlot::tool

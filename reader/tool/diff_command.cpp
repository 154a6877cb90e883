// parlot-read diff: where two runs (threads matched by rank and thread
// index), or two threads of one run (--left rank=0 --right rank=3), part:
// the first divergent event with context and the call stack there, and the
// per-function call-count deltas, and the loop-level diff of the two loop
// summaries (diffNLR), built in the same pass over the events.
#include <fmt/core.h>

#include <charconv>

#include "analysis/divergence.h"
#include "analysis/loop_diff.h"
#include "analysis/loops.h"
#include "commands.h"
#include "prefetch_source.h"
#include "trace_input.h"

namespace parlot::tool {
namespace {

struct DiffOptions {
  ViewOptions left;
  std::string right_dir;
  std::string left_thread, right_thread;  // "rank=R[,thread=T]"
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
      throw CLI::ValidationError("thread", "expected rank=R[,thread=T], got '" + spec + "'");
    }
    if (key == "rank" || key == "process") {
      id.rank = v;
    } else if (key == "thread") {
      id.thread = v;
    } else {
      throw CLI::ValidationError("thread", "unknown key '" + key + "' in '" + spec + "'");
    }
    pos = comma + 1;
  }
  return id;
}

int run_diff(const DiffOptions& o) {
  TraceInput left(o.left);
  if (o.right_dir.empty()) {
    if (o.left_thread.empty() || o.right_thread.empty()) {
      throw CLI::ValidationError("diff", "give RIGHT, or --left and --right");
    }
    const auto a = parse_thread(o.left_thread), b = parse_thread(o.right_thread);
    const auto* ta = left.find(a);
    const auto* tb = left.find(b);
    if (ta == nullptr || tb == nullptr) {
      throw CLI::ValidationError("diff", "no thread " + (ta ? o.right_thread : o.left_thread));
    }
    auto sa = left.open(*ta);
    auto sb = left.open(*tb);
    const std::string text = compare(*sa, *sb, left.names(), left.label(a), left.label(b), o);
    left.finished(*sa);
    left.finished(*sb);
    fmt::print("{} vs {}: {}", left.label(a), left.label(b), text);
    return left.status();
  }
  ViewOptions rv = o.left;
  rv.dir = o.right_dir;
  TraceInput right(rv);
  analysis::NameTable names = left.names();
  names.merge(right.names());
  int status = 0;
  for (const auto& t : left.threads()) {
    const auto* other = right.find(t.id);
    if (other == nullptr) {
      fmt::print("{}: only in {}\n", left.label(t.id), o.left.dir);
      continue;
    }
    auto sa = left.open(t);
    auto sb = right.open(*other);
    const std::string text = compare(*sa, *sb, names, "left", "right", o);
    left.finished(*sa);
    right.finished(*sb);
    fmt::print("{}: {}", left.label(t.id), text);
  }
  for (const auto& t : right.threads()) {
    if (left.find(t.id) == nullptr) fmt::print("{}: only in {}\n", right.label(t.id), rv.dir);
  }
  return status | left.status() | right.status();
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
  cmd->add_option("--left", options->left_thread, "Thread of LEFT: rank=R[,thread=T]");
  cmd->add_option("--right", options->right_thread, "Thread of LEFT to compare: rank=R[,thread=T]");
  cmd->add_option("--context", options->context,
                  "Events of context around the divergence (items around each change in the "
                  "loop-level diff)");
  cmd->add_flag("!--no-loops", options->loops, "Leave out the loop-level diff (diffNLR)");
  cmd->add_option("--max-body", options->max_body, "Longest loop body recognised (items)")
      ->check(CLI::Range(1, 64));
  cmd->callback([options, &exit_status] { exit_status = run_diff(*options); });
}

}  // namespace parlot::tool

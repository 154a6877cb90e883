// parlot-read diff: where two runs (threads matched by rank and thread
// index), or two threads of one run (--left rank=0 --right rank=3), part:
// the first divergent event with context and the call stack there, and the
// per-function call-count deltas, and the loop-level diff of the two loop
// summaries (diffNLR), built in the same pass over the events. Under
// mpirun the ranks split the pairs of two runs and rank 0 prints them in
// order; two threads of one run are compared on rank 0 alone.
#include <fmt/core.h>

#include <charconv>
#include <filesystem>
#include <optional>

#include "analysis/divergence.h"
#include "analysis/loop_diff.h"
#include "analysis/loops.h"
#include "commands.h"
#include "prefetch_source.h"
#include "ranked_diff.h"
#include "reader_team.h"
#include "simplified_names.h"
#include "sites_at.h"
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
  bool simplify = true;   ///< shorter C++ names
  bool all = false;       ///< no cap on the output's lines
  RankedDiffOptions cap;  ///< the caps without --all
};

/// describe_divergence() (the divergence into `*divergence` when given; call sites through
/// `site_text`), then (when the streams differ and `o.loops`) the loop-level diff, indented under
/// "  loop-level diff (NLR, < left only, > right only):".
std::string compare(analysis::EventSource& left, analysis::EventSource& right,
                    const analysis::NameTable& names, const std::string& left_label,
                    const std::string& right_label, const DiffOptions& o,
                    const analysis::SiteText& site_text,
                    analysis::Divergence* divergence = nullptr) {
  // Each side decoded (and loop-summarised) on its own thread.
  PrefetchSource l(left, o.loops ? o.max_body : 0), r(right, o.loops ? o.max_body : 0);
  const auto d = analysis::first_divergence(l, r, o.context);
  if (divergence != nullptr) *divergence = d;
  std::string out = analysis::describe_divergence(d, names, left_label, right_label, site_text);
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

/// The name a run goes by in the output: its directory's last component,
/// or the whole path as given when both runs end in the same name.
std::string run_label(const std::string& dir, const std::string& other) {
  auto base = [](const std::string& d) {
    const std::filesystem::path p = std::filesystem::path(d).lexically_normal();
    const std::string name = (p.has_filename() ? p : p.parent_path()).filename().string();
    return name.empty() ? d : name;
  };
  return base(dir) == base(other) ? dir : base(dir);
}

// Two runs, threads matched by rank and thread index. The pairs are split
// by rank (rank mod team size: a member opens the processes of both runs
// with its ranks, so each pair is on one member); each member compares its
// pairs and the leader gathers the reports, groups, ranks and prints them
// (ranked_diff.h).
int diff_runs(ReaderTeam& team, const DiffOptions& o) {
  ViewOptions rv = o.left;
  rv.dir = o.right_dir;
  const std::string left_label = run_label(o.left.dir, rv.dir);
  const std::string right_label = run_label(rv.dir, o.left.dir);
  const auto owns = [&](std::size_t, std::uint64_t rank) {
    return rank % team.size() == team.rank();
  };
  std::optional<TraceInput> left, right;
  const auto partials = gather_partials(team, [&] {
    left.emplace(o.left, owns);
    right.emplace(rv, owns);
    left->track_sites(o.left.sites);
    right->track_sites(o.left.sites);
    SiteNamer left_sites(*left), right_sites(*right);
    analysis::NameTable names = left->names();
    names.merge(right->names());
    names = simplified_names(names, o.simplify);
    std::vector<PairDiff> pairs;
    for (const auto& t : left->threads()) {
      PairDiff p;
      p.id = t.id;
      p.label = left->label(t.id);
      const auto* other = right->find(t.id);
      if (other == nullptr) {
        p.identical = false;
        p.one_sided = true;
        p.text = fmt::format("only in {}\n", left_label);
        pairs.push_back(std::move(p));
        continue;
      }
      try {
        auto sa = left->open(t);
        auto sb = right->open(*other);
        analysis::Divergence d;
        const auto site_text = [&](bool l, std::uint64_t site) {
          return l ? left_sites.text(t.process, site) : right_sites.text(other->process, site);
        };
        p.text = compare(*sa, *sb, names, left_label, right_label, o, site_text, &d);
        p.identical = d.identical;
        p.position = d.position;
        p.size = d.left_events > d.right_events ? d.left_events - d.right_events
                                                : d.right_events - d.left_events;
        left->finished(*sa);
        right->finished(*sb);
      } catch (const FormatError& e) {
        report_error(e);
        p.identical = false;
        p.text = "not compared (damaged input)\n";
      }
      pairs.push_back(std::move(p));
    }
    for (const auto& t : right->threads()) {
      if (left->find(t.id) != nullptr) continue;
      PairDiff p;
      p.id = t.id;
      p.label = right->label(t.id);
      p.identical = false;
      p.one_sided = true;
      p.text = fmt::format("only in {}\n", right_label);
      pairs.push_back(std::move(p));
    }
    return write_pair_diffs(pairs);
  });
  if (!team.leader()) return 0;
  std::vector<PairDiff> pairs;
  for (const auto& part : partials) {
    auto some = read_pair_diffs(part);
    for (auto& p : some) pairs.push_back(std::move(p));
  }
  fmt::print("{}", ranked_diff_text(std::move(pairs), left_label, right_label, left->ranked(),
                                    o.all ? RankedDiffOptions{0, 0} : o.cap));
  return 0;  // damage: the exit status main() gives from the damage log
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
      auto sa = left.open(*ta, o.left.sites);
      auto sb = left.open(*tb, o.left.sites);
      SiteNamer sites(left);
      const auto site_text = [&](bool l, std::uint64_t site) {
        return sites.text(l ? ta->process : tb->process, site);
      };
      text = compare(*sa, *sb, simplified_names(left.names(), o.simplify), left.label(a),
                     left.label(b), o, site_text);
      left.finished(*sa);
      left.finished(*sb);
    } catch (const FormatError& e) {
      report_error(e);
      text = "not compared (damaged input)\n";
    }
    PairDiff pair;
    pair.id = a;
    pair.label = fmt::format("{} vs {}", left.label(a), left.label(b));
    pair.identical = false;
    pair.text = std::move(text);
    const std::string out = ranked_diff_text({pair}, left.label(a), left.label(b), left.ranked(),
                                             o.all ? RankedDiffOptions{0, 0} : o.cap);
    // The pair alone: its report without the count line.
    fmt::print("{}", out.substr(out.find('\n') + 1));
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
  cmd->add_flag("--simplify,!--no-simplify", options->simplify,
                "Shorter C++ names (template arguments as <>; on by default)");
  cmd->add_flag("--all", options->all,
                "Print every difference (by default the output stops after about 80 lines, "
                "40 per group of threads, with \"... N more\")");
  cmd->add_option("--max-lines", options->cap.max_lines,
                  "Lines of output before \"... N more differences (use --all)\" (0: no cap)");
  cmd->add_option("--max-body", options->max_body, "Longest loop body recognised (items)")
      ->check(CLI::Range(1, 64));
  cmd->callback([options, &exit_status] { exit_status = run_diff(*options); });
}

}  // namespace parlot::tool

// parlot-read classes: threads grouped into equivalence classes (identical
// streams, loop structure, edge sets or final stacks), outliers first, each
// with what distinguishes it from the largest class; --similarity ranks the
// threads least like the others (Jaccard over caller -> callee edges).
// Under mpirun the ranks split the process directories; rank 0 gathers the
// class hashes (and edge sets) and prints.
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_set>

#include "analysis/cause.h"
#include "analysis/classes.h"
#include "analysis/divergence.h"
#include "analysis/loops.h"
#include "analysis/partial_results.h"
#include "commands.h"
#include "parallel.h"
#include "reader_team.h"
#include "simplified_names.h"
#include "sites_at.h"
#include "trace_input.h"

namespace parlot::tool {
namespace {

struct ClassesOptions {
  ViewOptions view;
  std::string by = "trace";
  std::size_t max_body = 8;
  std::size_t context = 3;
  bool similarity = false;
  bool cause = true;     ///< the cause-first lines (loop summaries of every thread)
  bool simplify = true;  ///< shorter C++ names
};

// One owned thread's result: its class hash and, for --similarity, its
// caller -> callee edge hashes (sorted).
using ThreadClass = analysis::ClassesPartial::Thread;

void print_similarity(const TraceInput& input, const std::vector<ThreadClass>& threads) {
  const std::size_t n = threads.size();
  std::vector<std::unordered_set<std::uint64_t>> edges(n);
  for (std::size_t i = 0; i < n; ++i)
    edges[i].insert(threads[i].edges.begin(), threads[i].edges.end());
  std::vector<double> mean(n, 1.0);
  for (std::size_t i = 0; i < n && n > 1; ++i) {
    double sum = 0;
    for (std::size_t j = 0; j < n; ++j) {
      if (i != j) sum += analysis::jaccard(edges[i], edges[j]);
    }
    mean[i] = sum / static_cast<double>(n - 1);
  }
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return mean[a] < mean[b]; });
  fmt::print("\nmost dissimilar (mean Jaccard similarity of caller -> callee edges):\n");
  for (std::size_t k = 0; k < n && k < 10; ++k) {
    fmt::print("  {:.3f}  {}\n", mean[order[k]], input.label(threads[order[k]].id));
  }
}

// One member's share: every owned thread's class hash (and edge set).
// With `summaries` (a team of one, cause first), each thread's loop summary
// is built in the same pass, into (*summaries)[i] for threads()[i].
std::string classes_partial(TraceInput& input, const ClassesOptions& o,
                            std::vector<analysis::LoopSummary>* summaries = nullptr) {
  const analysis::ClassBy by = analysis::parse_class_by(o.by);
  const auto& threads = input.threads();
  std::vector<ThreadClass> results(threads.size());
  if (summaries != nullptr) summaries->assign(threads.size(), {});
  // One thread's fingerprint (and edges) into results[i].
  auto classify = [&](ThreadStream& stream, std::size_t i) {
    analysis::FingerprintBuilder fp(by, o.max_body);
    analysis::OpenStack stack;
    std::unordered_set<std::uint64_t> edges;
    std::optional<analysis::LoopBuilder> loops;
    if (summaries != nullptr) loops.emplace(o.max_body);
    // Without --similarity, the loop is the fingerprint alone (the common
    // case, 10^8-10^9 events a thread), a batch at a time.
    if (!o.similarity) {
      const ProcessFunctions& functions = input.functions(threads[i].process);
      auto key_of = [&](std::uint32_t id) { return functions.key_of(id); };
      for (auto calls = stream.next_calls(); !calls.empty(); calls = stream.next_calls()) {
        fp.push(calls, key_of);
        if (!loops) continue;
        for (const CallEvent& c : calls) {
          loops->push({c.kind == CallEvent::Kind::kEnter, key_of(c.function_id), c.depth});
        }
      }
    }
    for (analysis::Event e; o.similarity && stream.next(e);) {
      if (loops) loops->push(e);
      fp.push(e);
      if (e.enter) {
        edges.insert(analysis::FingerprintBuilder::edge_hash(
            stack.frames().empty() ? 0 : stack.frames().back(), e.function));
      }
      stack.push(e);
    }
    results[i].hash = fp.finish();
    if (loops) (*summaries)[i] = loops->finish();
    results[i].edges.assign(edges.begin(), edges.end());
    std::sort(results[i].edges.begin(), results[i].edges.end());
  };
  std::vector<char> read(threads.size(), 0);  // 0: damaged, left out
  parallel_for(threads.size(), input.jobs(), [&](std::size_t i) {
    read[i] = input.read_thread(threads[i], [&](ThreadStream& s) { classify(s, i); });
  });

  analysis::ClassesPartial out;
  out.status = input.status();
  for (std::size_t i = 0; i < threads.size(); ++i) {
    if (!read[i]) continue;
    results[i].process = threads[i].process;
    results[i].id = threads[i].id;
    out.threads.push_back(std::move(results[i]));
  }
  return analysis::write_classes_partial(out);
}

// The call sites of the first outlier's shown parting (its path and the
// calls it and its reference make there), each thread read again up to
// the parting only. Left empty where a thread cannot be read.
void add_sites(TraceInput& input, analysis::Outlier& o) {
  const TraceInput::Thread* mine = input.find_or_load(o.thread);
  const TraceInput::Thread* theirs = input.find_or_load(o.reference);
  try {
    if (mine != nullptr) {
      const SitesAt at = sites_at(input, *mine, o.parting.mine_index);
      // The path's call frames are the calls open there, outermost first.
      std::vector<std::uint64_t> sites;
      std::size_t open = 0;
      for (const analysis::PathFrame& f : o.parting.path) {
        sites.push_back(!f.loop && open < at.open.size() ? at.open[open] : 0);
        open += f.loop ? 0 : 1;
      }
      sites.push_back(o.parting.mine.kind == analysis::PartingStep::Kind::kCall ? at.at : 0);
      o.path_sites = site_texts(input, mine->process, sites);
      o.mine_site = o.path_sites.back();
      o.path_sites.pop_back();
    }
    if (theirs != nullptr && o.parting.theirs.kind == analysis::PartingStep::Kind::kCall) {
      const SitesAt at = sites_at(input, *theirs, o.parting.theirs_index);
      o.theirs_site = site_texts(input, theirs->process, {at.at}).front();
    }
  } catch (const FormatError& e) {
    report_error(e);  // read once already: a file that changed since
  }
}

// Loop summaries of every thread (`built`: from the classes pass, in
// input.threads()' order; else read again, on the leader: under mpirun
// the members send class hashes only), then the cause report, with the
// first outlier's call sites when `sites`.
analysis::CauseReport find_causes_of(TraceInput& input, const std::vector<ThreadClass>& threads,
                                     std::size_t max_body,
                                     std::vector<analysis::LoopSummary>* built, bool sites) {
  std::vector<const TraceInput::Thread*> found(threads.size(), nullptr);
  for (std::size_t i = 0; i < threads.size(); ++i) found[i] = input.find_or_load(threads[i].id);
  std::vector<analysis::LoopSummary> summaries(threads.size());
  std::vector<char> read(threads.size(), 0);
  if (built != nullptr) {
    // The threads that were read, by their place in input.threads().
    std::map<analysis::ThreadId, std::size_t> place;
    for (std::size_t k = 0; k < input.threads().size() && k < built->size(); ++k) {
      place.emplace(input.threads()[k].id, k);
    }
    for (std::size_t i = 0; i < threads.size(); ++i) {
      const auto it = place.find(threads[i].id);
      if (found[i] == nullptr || it == place.end()) continue;
      summaries[i] = std::move((*built)[it->second]);
      read[i] = 1;
    }
  } else {
    parallel_for(threads.size(), input.jobs(), [&](std::size_t i) {
      if (found[i] == nullptr) return;
      read[i] = input.read_thread(*found[i], [&](ThreadStream& stream) {
        analysis::LoopBuilder builder(max_body);
        for (analysis::Event e; stream.next(e);) builder.push(e);
        summaries[i] = builder.finish();
      });
    });
  }
  std::vector<analysis::ThreadLoops> loops;
  for (std::size_t i = 0; i < threads.size(); ++i) {
    if (read[i]) loops.push_back({threads[i].id, &summaries[i]});
  }
  analysis::CauseReport report = analysis::find_causes(loops);
  if (sites && !report.outliers.empty()) add_sites(input, report.outliers.front());
  return report;
}

// Classes in the order their earliest members part (the outliers' order),
// then the classes without an outlier, as Classes::ordered() lists them.
std::vector<analysis::Classes::Class> order_by_parting(
    std::vector<analysis::Classes::Class> classes, const analysis::CauseReport& cause) {
  auto rank = [&](const analysis::Classes::Class& c) {
    for (std::size_t i = 0; i < cause.outliers.size(); ++i) {
      if (c.members.contains(cause.outliers[i].thread)) return i;
    }
    return cause.outliers.size();
  };
  std::stable_sort(classes.begin(), classes.end(),
                   [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  return classes;
}

int run_classes(const ClassesOptions& o) {
  ReaderTeam& team = ReaderTeam::get();
  std::optional<TraceInput> owned;
  // A team of one builds the loop summaries in its one pass.
  std::vector<analysis::LoopSummary> summaries;
  const bool one_pass = o.cause && team.size() == 1;
  const auto partials = gather_partials(team, [&] {
    owned.emplace(o.view, [&](std::size_t i, std::uint64_t) { return team.owns(i); });
    return classes_partial(*owned, o, one_pass ? &summaries : nullptr);
  });
  if (!team.leader()) return 0;
  TraceInput& input = *owned;
  std::vector<ThreadClass> threads;
  for (const auto& part : partials) {
    analysis::ClassesPartial p = analysis::read_classes_partial(part, input.processes().size());
    for (auto& t : p.threads) threads.push_back(std::move(t));
  }
  // The serial order: by process, each process's threads as listed.
  std::stable_sort(threads.begin(), threads.end(), [](const ThreadClass& a, const ThreadClass& b) {
    return a.process < b.process;
  });
  analysis::Classes classes;
  for (const auto& t : threads) classes.add(t.id, t.hash);
  // Cause first: each thread against its role's majority, on loop summaries.
  analysis::CauseReport cause;
  if (o.cause) {
    cause =
        find_causes_of(input, threads, o.max_body, one_pass ? &summaries : nullptr, o.view.sites);
  }
  // After find_causes_of(): the names of the processes it loaded too.
  const analysis::NameTable names = simplified_names(input.names(), o.simplify);
  if (o.cause) {
    fmt::print("{}\n", analysis::describe_causes(
                           cause, names, [&](analysis::ThreadId id) { return input.label(id); }));
  }
  const auto ordered = order_by_parting(classes.ordered(), cause);
  SiteNamer site_namer(input);
  std::size_t members = 0;
  for (const auto& c : ordered) members += c.members.size();
  fmt::print("{} class{} of {} thread{} (--by {})\n", ordered.size(),
             ordered.size() == 1 ? "" : "es", members, members == 1 ? "" : "s", o.by);
  const analysis::Classes::Class* largest = nullptr;
  for (const auto& c : ordered) {
    if (c.label == 'A') largest = &c;
  }
  for (const auto& c : ordered) {
    // The representative: the member that parts earliest; compared with
    // the thread whose behaviour its role's majority shares (else class A's).
    analysis::ThreadId representative = c.members.first();
    std::optional<analysis::ThreadId> reference;
    for (const auto& out : cause.outliers) {
      if (c.members.contains(out.thread)) {
        representative = out.thread;
        reference = out.reference;
        break;
      }
    }
    fmt::print("class {}: {} ({} thread{}), representative {}\n", c.label,
               c.members.to_string(input.ranked()), c.members.size(),
               c.members.size() == 1 ? "" : "s", input.label(representative));
    if (!reference) {
      if (largest == nullptr || &c == largest) continue;
      reference = largest->members.first();
    }
    char reference_label = '?';
    for (const auto& other : ordered) {
      if (other.members.contains(*reference)) reference_label = other.label;
    }
    analysis::Divergence d;
    const TraceInput::Thread* left_thread = input.find_or_load(*reference);
    const TraceInput::Thread* right_thread = input.find_or_load(representative);
    try {
      auto left = input.open(*left_thread, o.view.sites);
      auto right = input.open(*right_thread, o.view.sites);
      d = analysis::first_divergence(*left, *right, o.context);
    } catch (const FormatError& e) {
      // Both were read once already: a file that changed since.
      report_error(e);
      fmt::print("  versus class {}: not compared (damaged input)\n", reference_label);
      continue;
    }
    std::string text = analysis::describe_divergence(
        d, names, fmt::format("class {} {}", reference_label, input.label(*reference)),
        fmt::format("class {} {}", c.label, input.label(representative)),
        [&](bool left, std::uint64_t site) {
          return site_namer.text(left ? left_thread->process : right_thread->process, site);
        });
    std::string indented;
    for (std::size_t pos = 0; pos < text.size();) {
      const std::size_t nl = text.find('\n', pos);
      indented += "  " + text.substr(pos, nl - pos + 1);
      pos = nl == std::string::npos ? text.size() : nl + 1;
    }
    fmt::print("  versus class {}: {}", reference_label, indented.substr(2));
  }
  if (o.similarity) print_similarity(input, threads);
  return 0;
}

}  // namespace

void add_classes_command(CLI::App& app, int& exit_status) {
  auto options = std::make_shared<ClassesOptions>();
  CLI::App* cmd =
      app.add_subcommand("classes", "Group threads into equivalence classes; outliers first");
  cmd->add_option("dir", options->view.dir, "Trace directory")->required();
  add_view_options(cmd, options->view);
  cmd->add_option("--by", options->by,
                  "trace (identical streams), loops (loop structure), edges (caller -> callee "
                  "set) or stack (final open stack)")
      ->check(CLI::IsMember({"trace", "loops", "edges", "stack"}));
  cmd->add_option("--max-body", options->max_body, "Longest loop body for --by loops")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--context", options->context, "Events of context around a divergence");
  cmd->add_flag("!--no-cause", options->cause,
                "Leave out the cause-first lines (each thread against its role's majority)");
  cmd->add_flag("--simplify,!--no-simplify", options->simplify,
                "Shorter C++ names (template arguments as <>; on by default)");
  cmd->add_flag("--similarity", options->similarity,
                "Rank threads by mean Jaccard similarity of their edge sets");
  cmd->callback([options, &exit_status] { exit_status = run_classes(*options); });
}

}  // namespace parlot::tool

// parlot-read check: MPI usage checks after the fact over the recorded MPI
// call arguments (PARLOT_MPI_ARGS=1; analysis/mpi_check.h): the problems
// first, one line each (at most 10 lines), then each one's calls with
// their call path and loop iteration. Exit status 3 when it found any.
#include <fmt/format.h>

#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>

#include "analysis/loops.h"
#include "analysis/mpi_check.h"
#include "call_location_text.h"
#include "commands.h"
#include "mpi_arguments_text.h"
#include "parallel.h"
#include "reader_team.h"
#include "sites_at.h"
#include "trace_input.h"

namespace parlot::tool {
namespace {

struct CheckOptions {
  ViewOptions view;
  std::string format = "text";
};

constexpr int kFoundProblems = 3;
constexpr std::size_t kTopLines = 10;

// The function's name without a parameter list ("MPI_Send()" -> "MPI_Send").
std::string bare_name(std::string name) {
  if (const auto paren = name.find('('); paren != std::string::npos) name.resize(paren);
  return name;
}

// A thread's recorded calls by entry event: those that returned (their
// whole record), and those that never did with the arguments they
// recorded before (kind 8: a hung receive or wait).
std::vector<MpiCallArguments> calls_with_arguments(const ThreadTraceSummary& s) {
  std::vector<MpiCallArguments> out;
  out.reserve(s.mpi_calls.size());
  auto done = s.mpi_calls.begin();
  for (const MpiCallArguments& begun : s.mpi_calls_begun) {
    for (; done != s.mpi_calls.end() && done->event_index <= begun.event_index; ++done) {
      out.push_back(*done);
    }
    if (out.empty() || out.back().event_index != begun.event_index) out.push_back(begun);
  }
  out.insert(out.end(), done, s.mpi_calls.end());
  return out;
}

// Every selected rank's recorded MPI calls, with their places (and their
// call sites when `sites`: tracked in the same pass).
std::vector<analysis::RankCalls> gather_calls(TraceInput& input, bool sites) {
  const auto& threads = input.threads();
  struct ThreadCalls {
    std::vector<analysis::MpiCallSite> calls;
    std::vector<std::uint64_t> sites;  // of calls[k], run-time addresses
    std::vector<analysis::FunctionKey> open;
  };
  input.track_sites(sites);
  std::vector<ThreadCalls> per_thread(threads.size());
  parallel_for(threads.size(), input.jobs(), [&](std::size_t i) {
    const auto& t = threads[i];
    if (t.id.fork != 0) return;  // a rank's fork children make no MPI calls of the rank
    input.read_thread(t, [&](ThreadStream& stream) {
      const std::vector<MpiCallArguments> recorded = calls_with_arguments(stream.summary());
      std::vector<std::uint64_t> entries;
      entries.reserve(recorded.size());
      for (const auto& a : recorded) entries.push_back(a.event_index);
      // The call sites of the recorded entries, in the pass that builds the summary.
      std::vector<std::uint64_t> entry_sites(entries.size(), 0);
      analysis::LoopBuilder builder;
      std::size_t next = 0;
      for (analysis::Event e; stream.next(e);) {
        builder.push(e);
        if (!e.enter || next == entries.size()) continue;
        const std::uint64_t at = stream.last_index();
        while (next < entries.size() && entries[next] < at) ++next;
        if (next < entries.size() && entries[next] == at) entry_sites[next++] = stream.last_site();
      }
      const analysis::LoopSummary summary = builder.finish();
      const auto places = analysis::call_places(summary, entries);
      auto& out = per_thread[i];
      for (std::size_t k = 0; k < recorded.size(); ++k) {
        if (places[k].path.empty()) continue;  // not an entry event the stream holds
        out.calls.push_back({t.id.rank,
                             t.id.thread,
                             bare_name(input.names().name(places[k].path.back())),
                             recorded[k],
                             places[k],
                             {}});
        out.sites.push_back(entry_sites[k]);
      }
      out.open = analysis::open_calls_at_end(summary);
    });
  });
  std::map<std::uint64_t, analysis::RankCalls> ranks;
  SiteNamer namer(input);
  for (std::size_t i = 0; i < threads.size(); ++i) {
    if (threads[i].id.fork != 0) continue;
    auto& r = ranks[threads[i].id.rank];
    r.rank = threads[i].id.rank;
    auto& mine = per_thread[i];
    for (std::size_t k = 0; k < mine.calls.size(); ++k) {
      mine.calls[k].site = namer.text(threads[i].process, mine.sites[k]);
    }
    std::move(mine.calls.begin(), mine.calls.end(), std::back_inserter(r.calls));
    if (r.open_call.empty() && !mine.open.empty()) {
      r.open_call = bare_name(input.names().name(mine.open.back()));
    }
  }
  std::vector<analysis::RankCalls> out;
  for (auto& [rank, calls] : ranks) out.push_back(std::move(calls));
  return out;
}

std::string call_line(const analysis::MpiCallSite& c, const analysis::NameTable& names) {
  return fmt::format("rank {} thread {}: {} at {}", c.rank, c.thread,
                     mpi_call_text(c.function + "()", c.args), call_location_text(c, names));
}

std::string notes_text(const analysis::MpiCheckResult& r) {
  std::string out;
  if (r.unmapped_p2p != 0) {
    out += fmt::format(
        "note: {} point-to-point calls on communicators whose ranks are not the job's (not "
        "MPI_COMM_WORLD or a duplicate of it) were not matched\n",
        r.unmapped_p2p);
  }
  if (r.ambiguous_comms != 0) {
    out += fmt::format(
        "note: the collectives of {} communicator IDs shared by disjoint communicators were "
        "not compared\n",
        r.ambiguous_comms);
  }
  return out;
}

void print_text(const analysis::MpiCheckResult& r, std::size_t ranks,
                const analysis::NameTable& names) {
  const auto& found = r.findings;
  if (found.empty()) {
    fmt::print("parlot-read check: no problem found in {} ranks ({} MPI calls checked)\n", ranks,
               r.calls);
    fmt::print("{}", notes_text(r));
    return;
  }
  fmt::print("parlot-read check: {} problem{} in {} ranks ({} MPI calls checked)\n", found.size(),
             found.size() == 1 ? "" : "s", ranks, r.calls);
  const std::size_t shown = found.size() <= kTopLines - 1 ? found.size() : kTopLines - 2;
  // Each with where its first call was made: the rank, the call, its site, the iteration.
  for (std::size_t i = 0; i < shown; ++i) {
    fmt::print("{}. {}{}\n", i + 1, found[i].summary,
               found[i].calls.empty()
                   ? std::string()
                   : " [" + call_brief_text(found[i].calls.front(), names) + "]");
  }
  if (shown < found.size()) fmt::print("... and {} more below\n", found.size() - shown);
  fmt::print("\n");
  for (std::size_t i = 0; i < found.size(); ++i) {
    const auto& f = found[i];
    const std::string kind = analysis::finding_kind_name(f.kind);
    if (f.summary.rfind(kind + ":", 0) == 0) {
      fmt::print("{}. {}\n", i + 1, f.summary);
    } else {
      fmt::print("{}. {}: {}\n", i + 1, kind, f.summary);
    }
    for (const auto& c : f.calls) fmt::print("   {}\n", call_line(c, names));
  }
  fmt::print("{}", notes_text(r));
}

void print_json(const analysis::MpiCheckResult& r, std::size_t ranks,
                const analysis::NameTable& names) {
  nlohmann::json out;
  out["ranks"] = ranks;
  out["calls"] = r.calls;
  out["unmapped_p2p"] = r.unmapped_p2p;
  out["ambiguous_comms"] = r.ambiguous_comms;
  out["findings"] = nlohmann::json::array();
  for (const auto& f : r.findings) {
    nlohmann::json j;
    j["kind"] = analysis::finding_kind_name(f.kind);
    j["summary"] = f.summary;
    j["ranks"] = f.ranks;
    if (f.comm >= 0) j["comm"] = f.comm;
    if (f.sequence != 0) j["sequence"] = f.sequence;
    j["calls"] = nlohmann::json::array();
    for (const auto& c : f.calls) {
      nlohmann::json call;
      call["rank"] = c.rank;
      call["thread"] = c.thread;
      call["function"] = c.function;
      call["arguments"] = nlohmann::json::parse(mpi_arguments_json(c.args));
      call["event"] = c.args.event_index;
      call["returned"] = !c.place.open;
      nlohmann::json path = nlohmann::json::array();
      for (const auto key : c.place.path) path.push_back(names.name(key));
      call["path"] = path;
      if (c.place.iteration != 0) {
        call["iteration"] = c.place.iteration;
        call["loop_in"] = c.place.loop_owner == 0 ? "" : names.name(c.place.loop_owner);
      }
      if (!c.site.empty()) call["site"] = c.site;
      call["location"] = call_location_text(c, names);
      j["calls"].push_back(std::move(call));
    }
    out["findings"].push_back(std::move(j));
  }
  fmt::print("{}\n", out.dump(2));
}

int run_check(const CheckOptions& o) {
  // The checks need every rank at once: an mpirun'd team leaves it to its
  // leader, which reads everything.
  ReaderTeam& team = ReaderTeam::get();
  if (!team.leader()) return 0;
  TraceInput input(o.view);
  const std::vector<analysis::RankCalls> ranks = gather_calls(input, o.view.sites);
  const analysis::MpiCheckResult result = analysis::check_mpi(ranks);
  if (result.calls == 0) {
    throw std::runtime_error(o.view.dir +
                             " holds no MPI call arguments (record with PARLOT_MPI_ARGS=1)");
  }
  if (o.format == "json") {
    print_json(result, ranks.size(), input.names());
  } else {
    print_text(result, ranks.size(), input.names());
  }
  return result.findings.empty() ? 0 : kFoundProblems;
}

}  // namespace

void add_check_command(CLI::App& app, int& exit_status) {
  auto options = std::make_shared<CheckOptions>();
  CLI::App* cmd = app.add_subcommand(
      "check",
      "MPI usage checks (PARLOT_MPI_ARGS=1): mismatched collectives, unmatched messages, "
      "who waits for whom in a hung job");
  cmd->add_option("dir", options->view.dir, "Trace directory")->required();
  cmd->add_option("--jobs,-j", options->view.jobs, "Decoding threads (0: one per hardware thread)");
  add_sites_option(cmd, options->view.sites);
  cmd->add_option("--format", options->format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->callback([options, &exit_status] { exit_status = run_check(*options); });
}

}  // namespace parlot::tool

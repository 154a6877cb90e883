#include "cause.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

namespace parlot::analysis {
namespace {

bool main_role(const ThreadId& t) {
  return t.thread == 0;
}

/// The functions each summary calls (once per summary).
std::vector<FunctionKey> functions_of(const LoopSummary& s) {
  std::vector<FunctionKey> out;
  out.reserve(s.calls().size());
  for (const auto& c : s.calls()) out.push_back(c.function);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

/// Earlier parting first: the loops' iterations, then going on before
/// stopping, then common events (an identical parting is last).
bool earlier(const Parting& a, const Parting& b) {
  if (a.identical != b.identical) return b.identical;
  const auto ia = a.iterations(), ib = b.iterations();
  if (ia != ib) return ia < ib;
  if (a.mine.stops() != b.mine.stops()) return b.mine.stops();
  return a.events < b.events;
}

/// The majority rule (cause.h) over one thread's `partings` with its
/// peers (Parting, index into `ids`): the outlier it is, or none.
std::optional<Outlier> majority_parting(ThreadId thread,
                                        std::vector<std::pair<Parting, std::size_t>> partings,
                                        const std::vector<ThreadId>& ids) {
  const std::size_t k = partings.size();
  std::sort(partings.begin(), partings.end(), [](const auto& a, const auto& b) {
    if (a.first.identical != b.first.identical) return b.first.identical;
    return a.first.events < b.first.events;
  });
  // Where a majority of the peers still running has parted from it:
  // walking its partings in order, a peer that stopped where it went on
  // (a hang's victim waiting) leaves the vote there; the others part.
  const Parting* at = nullptr;
  std::size_t alive = k, parted = 0;
  for (const auto& [q, unused] : partings) {
    if (q.identical) break;
    if (q.theirs.stops() && !q.mine.stops()) {
      --alive;
    } else {
      ++parted;
    }
    if (2 * parted > alive) {
      at = &q;
      break;
    }
  }
  // Every peer stopped before it: the plain majority of its partings.
  if (at == nullptr && alive == 0) at = &partings[k / 2].first;
  if (at == nullptr || at->identical) return std::nullopt;
  // The running peers parted from it there (ties included).
  parted = 0;
  for (const auto& [q, unused] : partings) {
    parted += !q.identical && q.events <= at->events && !(q.theirs.stops() && !q.mine.stops());
  }
  // Shown: the majority's parting, unless there it merely goes on where
  // the peer stopped; then its earliest parting in which it does
  // something else (else the majority's).
  std::size_t majority = 0, shown = 0;
  while (&partings[majority].first != at) ++majority;
  shown = majority;
  if (at->theirs.stops() && !at->mine.stops()) {
    for (std::size_t n = 0; n < k; ++n) {
      const Parting& q = partings[n].first;
      if (!q.identical && !(q.theirs.stops() && !q.mine.stops())) {
        shown = n;
        break;
      }
    }
  }
  Outlier o;
  o.thread = thread;
  o.reference = ids[partings[shown].second];
  o.parting = partings[shown].first;
  o.peers = alive;
  o.parted = parted;
  o.majority = *at;
  o.majority_reference = ids[partings[majority].second];
  return o;
}

}  // namespace

CauseReport find_causes(const std::vector<ThreadLoops>& threads, std::size_t max_peers) {
  CauseReport report;
  report.threads = threads.size();
  std::vector<Outlier> completed;  // outliers only inside calls they complete
  for (const bool main : {true, false}) {
    std::vector<const ThreadLoops*> role;
    for (const ThreadLoops& t : threads) {
      if (main_role(t.id) == main && t.summary != nullptr) role.push_back(&t);
    }
    std::sort(role.begin(), role.end(),
              [](const ThreadLoops* a, const ThreadLoops* b) { return a->id < b->id; });
    if (role.size() < 2) continue;
    // Role code: functions called by at most half of the role's threads.
    std::unordered_map<FunctionKey, std::size_t> callers;
    for (const ThreadLoops* t : role) {
      for (const FunctionKey f : functions_of(*t->summary)) ++callers[f];
    }
    RoleCode code;
    for (const auto& [f, n] : callers) {
      if (2 * n <= role.size()) {
        code.insert(f);
        report.role_code.push_back({f, main, n, role.size()});
      }
    }
    std::vector<ThreadId> ids;
    for (const ThreadLoops* t : role) ids.push_back(t->id);
    std::vector<FilteredSummary> filtered;
    filtered.reserve(role.size());
    for (const ThreadLoops* t : role) filtered.emplace_back(*t->summary, code);
    const std::size_t k = std::min(role.size() - 1, std::max<std::size_t>(1, max_peers));
    for (std::size_t i = 0; i < role.size(); ++i) {
      // k peers, evenly spaced over the others.
      std::vector<std::pair<Parting, std::size_t>> partings;
      for (std::size_t n = 0; n < k; ++n) {
        const std::size_t j = (i + 1 + n * (role.size() - 1) / k) % role.size();
        Parting p = part(filtered[i], filtered[j]);
        report.unresolved += p.unresolved ? 1 : 0;
        partings.emplace_back(std::move(p), j);
      }
      // For good first; else the first difference, inside completed calls too.
      std::vector<std::pair<Parting, std::size_t>> first;
      for (const auto& [q, j] : partings) {
        first.emplace_back(q.within_completed.empty() ? q : q.within_completed.front(), j);
      }
      if (auto o = majority_parting(role[i]->id, std::move(partings), ids)) {
        report.outliers.push_back(std::move(*o));
      } else if (auto w = majority_parting(role[i]->id, std::move(first), ids)) {
        completed.push_back(std::move(*w));
      }
    }
  }
  auto order = [](std::vector<Outlier>& v) {
    std::stable_sort(v.begin(), v.end(), [](const Outlier& a, const Outlier& b) {
      if (earlier(a.majority, b.majority)) return true;
      if (earlier(b.majority, a.majority)) return false;
      return a.thread < b.thread;
    });
  };
  order(report.outliers);
  order(completed);
  report.outliers.insert(report.outliers.end(), completed.begin(), completed.end());
  std::sort(report.role_code.begin(), report.role_code.end(),
            [](const RoleFunction& a, const RoleFunction& b) {
              return std::tie(a.callers, a.main_threads, a.function) <
                     std::tie(b.callers, b.main_threads, b.function);
            });
  return report;
}

std::string frame_text(const PathFrame& frame, const NameTable& names, const std::string& site) {
  if (frame.loop) return fmt::format("[iteration {}]", frame.iteration);
  const std::string name = names.name(frame.function);
  return site.empty() ? name : name + " at " + site;
}

std::string iteration_text(const std::vector<PathFrame>& path, const NameTable& names) {
  std::string out;
  FunctionKey in = 0;  // the function the frames are in (0: the top level)
  for (const PathFrame& f : path) {
    if (!f.loop) {
      in = f.function;
      continue;
    }
    const std::string where = in == 0 ? "at the top level" : "in " + names.name(in);
    std::string text = f.count == 0 ? fmt::format("iteration {} of the loop {}", f.iteration, where)
                                    : fmt::format("iteration {} of {} of the loop {}", f.iteration,
                                                  f.count, where);
    out = out.empty() ? text : text + ", in " + out;
  }
  return out;
}

std::string step_text(const PartingStep& step, const NameTable& names, const std::string& site) {
  switch (step.kind) {
    case PartingStep::Kind::kCall:
      return "calls " + names.name(step.function) + (site.empty() ? "" : " at " + site);
    case PartingStep::Kind::kReturn:
      return step.function == 0 ? "returns" : "returns from " + names.name(step.function);
    case PartingStep::Kind::kStop:
      return "stops inside " + names.name(step.function);
    case PartingStep::Kind::kEnd:
      break;
  }
  return "ends";
}

/// ", inside f, which both complete" for a parting inside a completed call.
std::string within_text(const Parting& p, const NameTable& names) {
  return p.within == 0 ? std::string()
                       : ", inside " + names.name(p.within) + ", which both complete";
}

std::string describe_causes(const CauseReport& report, const NameTable& names,
                            const std::function<std::string(ThreadId)>& label,
                            std::size_t max_lines) {
  max_lines = std::max<std::size_t>(max_lines, 4);
  std::vector<std::string> lines;
  // " at iteration 6 of the loop in main, after N common events"
  auto where = [&](const Parting& p) {
    const std::string it = iteration_text(p.path, names);
    return (it.empty() ? std::string() : " at " + it + ",") +
           fmt::format(" after {} common events", p.events);
  };
  auto path_text = [&](const Outlier& o) {
    std::string out;
    for (std::size_t i = 0; i < o.parting.path.size(); ++i) {
      const std::string site = i < o.path_sites.size() ? o.path_sites[i] : std::string();
      out += (out.empty() ? "" : " > ") + frame_text(o.parting.path[i], names, site);
    }
    if (o.parting.mine.kind == PartingStep::Kind::kCall) {
      out += (out.empty() ? "" : " > ") +
             frame_text({false, o.parting.mine.function, 0, 0}, names, o.mine_site);
    }
    return out.empty() ? std::string("(top level)") : out;
  };
  if (report.outliers.empty()) {
    lines.push_back(
        fmt::format("no divergence: each of the {} thread{} behaves as its role's majority",
                    report.threads, report.threads == 1 ? "" : "s"));
  } else {
    const Outlier& first = report.outliers.front();
    lines.push_back(
        fmt::format("earliest divergence: {}{}", label(first.thread), where(first.parting)));
    lines.push_back(
        fmt::format("  {} {} where the majority ({} of {} peers part from it there; "
                    "e.g. {}) {}{}",
                    label(first.thread), step_text(first.parting.mine, names, first.mine_site),
                    first.parted, first.peers, label(first.reference),
                    step_text(first.parting.theirs, names, first.theirs_site),
                    within_text(first.parting, names)));
    lines.push_back("  call path: " + path_text(first));
    const std::size_t room = max_lines - lines.size() - (report.role_code.empty() ? 0 : 1);
    const std::size_t rest = report.outliers.size() - 1;
    const std::size_t shown = rest <= room ? rest : (room == 0 ? 0 : room - 1);
    for (std::size_t i = 1; i <= shown; ++i) {
      const Outlier& o = report.outliers[i];
      lines.push_back(fmt::format("then: {}{}: {} where {} {}{}", label(o.thread),
                                  where(o.majority), step_text(o.majority.mine, names),
                                  label(o.majority_reference), step_text(o.majority.theirs, names),
                                  within_text(o.majority, names)));
    }
    if (shown < rest && room > 0) {
      lines.push_back(fmt::format("... {} more thread{} part{} later", rest - shown,
                                  rest - shown == 1 ? "" : "s", rest - shown == 1 ? "s" : ""));
    }
  }
  if (!report.role_code.empty() && lines.size() < max_lines) {
    std::string text = "role code left out (called by at most half of a role's threads):";
    std::size_t n = 0;
    for (const RoleFunction& r : report.role_code) {
      if (n == 4) {
        text += fmt::format(" and {} more", report.role_code.size() - n);
        break;
      }
      text += fmt::format("{} {} ({} of {} {} threads)", n == 0 ? "" : ",", names.name(r.function),
                          r.callers, r.threads, r.main_threads ? "main" : "other");
      ++n;
    }
    lines.push_back(std::move(text));
  }
  if (report.unresolved > 0 && lines.size() < max_lines) {
    lines.push_back(fmt::format("({} comparison{} too long to finish, counted as equal)",
                                report.unresolved, report.unresolved == 1 ? "" : "s"));
  }
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace parlot::analysis

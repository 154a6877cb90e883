#include "mpi_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "parlot/mpi_op.h"
#include "thread_set.h"

namespace parlot::analysis {
namespace {

using F = format::MpiField;

// Which arguments of a collective every member must pass alike.
struct CollectiveRule {
  const char* name;
  bool root;
  F bytes;  // kComm: none compared
};

constexpr CollectiveRule kCollectives[] = {
    {"MPI_Barrier", false, F::kComm},
    {"MPI_Ibarrier", false, F::kComm},
    {"MPI_Bcast", true, F::kBytes},
    {"MPI_Ibcast", true, F::kBytes},
    {"MPI_Reduce", true, F::kBytes},
    {"MPI_Ireduce", true, F::kBytes},
    {"MPI_Allreduce", false, F::kBytes},
    {"MPI_Iallreduce", false, F::kBytes},
    {"MPI_Scan", false, F::kBytes},
    {"MPI_Exscan", false, F::kBytes},
    {"MPI_Reduce_scatter_block", false, F::kRecvBytes},
    {"MPI_Gather", true, F::kBytes},
    {"MPI_Gatherv", true, F::kComm},
    {"MPI_Scatter", true, F::kRecvBytes},
    {"MPI_Scatterv", true, F::kComm},
    {"MPI_Allgather", false, F::kBytes},
    {"MPI_Allgatherv", false, F::kComm},
    {"MPI_Alltoall", false, F::kBytes},
    {"MPI_Alltoallv", false, F::kComm},
};

const CollectiveRule* collective_rule(const std::string& name) {
  for (const auto& r : kCollectives) {
    if (name == r.name) return &r;
  }
  return nullptr;
}

bool is_one_of(const std::string& name, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return name == n; });
}

bool is_send(const std::string& f) {
  return is_one_of(f, {"MPI_Send", "MPI_Bsend", "MPI_Ssend", "MPI_Rsend", "MPI_Isend", "MPI_Ibsend",
                       "MPI_Issend", "MPI_Irsend", "MPI_Sendrecv", "MPI_Sendrecv_replace"});
}
bool is_receive(const std::string& f) {
  return is_one_of(f, {"MPI_Recv", "MPI_Irecv", "MPI_Sendrecv", "MPI_Sendrecv_replace"});
}
bool is_nonblocking_p2p(const std::string& f) {
  return is_one_of(f, {"MPI_Isend", "MPI_Ibsend", "MPI_Issend", "MPI_Irsend", "MPI_Irecv"});
}
bool is_wait(const std::string& f) {
  return is_one_of(f, {"MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome"});
}
bool is_completion(const std::string& f) {
  return is_wait(f) || is_one_of(f, {"MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome"});
}

std::string comm_name(std::int64_t comm) {
  if (comm == 0) return "MPI_COMM_WORLD";
  if (comm == 1) return "MPI_COMM_SELF";
  return fmt::format("communicator {}", comm);
}

std::string ranks_text(const std::set<std::uint64_t>& ranks) {
  return fmt::format("{} {}", ranks.size() == 1 ? "rank" : "ranks", compact_ranges(ranks));
}

std::optional<std::int64_t> field(const MpiCallSite& c, F f) {
  if (!c.args.has(f)) return std::nullopt;
  return c.args.get(f);
}

// The communicators whose ranks are the job's ranks, per rank:
// MPI_COMM_WORLD and its duplicates (and theirs).
std::set<std::int64_t> world_like(const RankCalls& r) {
  std::set<std::int64_t> ids{0};
  for (const auto& c : r.calls) {
    if (!is_one_of(c.function, {"MPI_Comm_dup", "MPI_Comm_dup_with_info"})) continue;
    const auto comm = field(c, F::kComm), made = field(c, F::kNewComm);
    if (comm && made && ids.count(*comm) != 0) ids.insert(*made);
  }
  return ids;
}

// What one compared collective looks like: its kind and compared fields.
struct Signature {
  std::string function;
  std::optional<std::int64_t> root, bytes, op;
  bool operator<(const Signature& o) const {
    return std::tie(function, root, op, bytes) < std::tie(o.function, o.root, o.op, o.bytes);
  }
};

Signature signature_of(const MpiCallSite& c) {
  Signature s{c.function, {}, {}, {}};
  if (const CollectiveRule* r = collective_rule(c.function)) {
    if (r->root) s.root = field(c, F::kRoot);
    if (r->bytes != F::kComm) s.bytes = field(c, r->bytes);
    // Recorded for the reductions only.
    if (c.args.has(static_cast<F>(kMpiOpField))) s.op = c.args.get(static_cast<F>(kMpiOpField));
  }
  return s;
}

// How `odd` differs from `usual`, as "calls MPI_Bcast where ranks 0-2 call
// MPI_Reduce" / "calls MPI_Reduce with root=1 where ranks 0-2 have root=0".
std::string difference_text(const Signature& odd, const Signature& usual,
                            const std::string& usual_ranks) {
  if (odd.function != usual.function) {
    return fmt::format("calls {} where {} call {}", odd.function, usual_ranks, usual.function);
  }
  auto value = [](const std::optional<std::int64_t>& v) {
    return v ? std::to_string(*v) : std::string("(none)");
  };
  if (odd.root != usual.root) {
    return fmt::format("calls {} with root={} where {} have root={}", odd.function, value(odd.root),
                       usual_ranks, value(usual.root));
  }
  if (odd.op != usual.op) {
    auto op = [](const std::optional<std::int64_t>& v) {
      return v ? mpi_op_name(*v) : std::string("(none)");
    };
    return fmt::format("calls {} with op={} where {} have op={}", odd.function, op(odd.op),
                       usual_ranks, op(usual.op));
  }
  return fmt::format("calls {} with {} bytes where {} have {} bytes", odd.function,
                     value(odd.bytes), usual_ranks, value(usual.bytes));
}

struct Collectives {
  // (comm, comm_size) -> rank -> that rank's collectives on it, in order.
  std::map<std::pair<std::int64_t, std::int64_t>,
           std::map<std::uint64_t, std::vector<const MpiCallSite*>>>
      by_comm;
};

Collectives collect_collectives(const std::vector<RankCalls>& ranks) {
  Collectives out;
  for (const auto& r : ranks) {
    for (const auto& c : r.calls) {
      if (collective_rule(c.function) == nullptr) continue;
      const auto comm = field(c, F::kComm), size = field(c, F::kCommSize);
      if (!comm || *comm == 1 || (size && *size <= 1)) continue;
      out.by_comm[{*comm, size.value_or(0)}][r.rank].push_back(&c);
    }
  }
  return out;
}

// Both sides compared: the first position where the members' collectives
// differ, per communicator.
void check_collectives(const Collectives& all, bool hung, MpiCheckResult& result) {
  for (const auto& [key, members] : all.by_comm) {
    const auto [comm, size] = key;
    if (size > 0 && members.size() > static_cast<std::size_t>(size)) {
      ++result.ambiguous_comms;
      continue;
    }
    std::size_t longest = 0, shortest = SIZE_MAX;
    for (const auto& [rank, calls] : members) {
      longest = std::max(longest, calls.size());
      shortest = std::min(shortest, calls.size());
    }
    bool mismatch = false;
    for (std::size_t k = 0; k < longest && !mismatch; ++k) {
      std::map<Signature, std::set<std::uint64_t>> groups;
      for (const auto& [rank, calls] : members) {
        if (k < calls.size()) groups[signature_of(*calls[k])].insert(rank);
      }
      if (groups.size() < 2) continue;
      mismatch = true;
      // The usual group: the largest, ties to the one with the lowest rank.
      auto usual = groups.begin();
      for (auto g = groups.begin(); g != groups.end(); ++g) {
        if (g->second.size() > usual->second.size() ||
            (g->second.size() == usual->second.size() &&
             *g->second.begin() < *usual->second.begin())) {
          usual = g;
        }
      }
      MpiFinding f;
      f.kind = MpiFinding::Kind::kCollectiveMismatch;
      f.comm = comm;
      f.sequence = k + 1;
      std::vector<std::string> parts;
      for (auto g = groups.begin(); g != groups.end(); ++g) {
        if (g == usual) continue;
        parts.push_back(
            fmt::format("{} {}", ranks_text(g->second),
                        difference_text(g->first, usual->first, ranks_text(usual->second))));
        for (const auto rank : g->second) {
          f.ranks.push_back(rank);
          f.calls.push_back(*members.at(rank)[k]);
        }
      }
      // One call of the usual group to compare with.
      f.calls.push_back(*members.at(*usual->second.begin())[k]);
      std::string joined;
      for (const auto& p : parts) joined += (joined.empty() ? "" : "; ") + p;
      f.summary = fmt::format("{} (collective {} on {})", joined, k + 1, comm_name(comm));
      result.findings.push_back(std::move(f));
    }
    // Different counts with nothing hung: a rank skipped or added one.
    if (!mismatch && !hung && longest != shortest) {
      std::set<std::uint64_t> fewer, more;
      for (const auto& [rank, calls] : members) {
        (calls.size() == longest ? more : fewer).insert(rank);
      }
      MpiFinding f;
      f.kind = MpiFinding::Kind::kCollectiveCount;
      f.comm = comm;
      f.sequence = shortest + 1;
      f.ranks.assign(fewer.begin(), fewer.end());
      const auto& first_more = members.at(*more.begin());
      f.calls.push_back(*first_more[shortest]);
      f.summary = fmt::format(
          "{} made {} collectives on {} where {} made {}: the first missing "
          "is {} (collective {})",
          ranks_text(fewer), shortest, comm_name(comm), ranks_text(more), longest,
          first_more[shortest]->function, shortest + 1);
      result.findings.push_back(std::move(f));
    }
  }
}

// ---- Wait-for graph ----

struct Blocked {
  const MpiCallSite* call = nullptr;
  std::set<std::uint64_t> waits_for;  // job ranks
  bool any = false;                   // waits for any one of them (else all)
  bool members_known = true;
  std::string also;  // " (collective 6 on MPI_COMM_WORLD)"
};

class WaitForGraph {
 public:
  WaitForGraph(const std::vector<RankCalls>& ranks, const Collectives& collectives)
      : ranks_(ranks) {
    for (const auto& r : ranks) {
      by_rank_[r.rank] = &r;
      world_[r.rank] = world_like(r);
    }
    // Each blocked rank's call, then what it waits for.
    for (const auto& r : ranks) {
      for (auto it = r.calls.rbegin(); it != r.calls.rend(); ++it) {
        if (it->place.open) {
          blocked_[r.rank].call = &*it;
          break;
        }
      }
    }
    for (auto& [rank, b] : blocked_) wire(rank, b, collectives);
  }

  bool empty() const { return blocked_.empty(); }
  const std::map<std::uint64_t, Blocked>& blocked() const { return blocked_; }

  // "which is in MPI_Allreduce", "which has finished", ...
  std::string state_of(std::uint64_t rank) const {
    if (const auto b = blocked_.find(rank); b != blocked_.end()) {
      return "is in " + b->second.call->function;
    }
    const auto r = by_rank_.find(rank);
    if (r == by_rank_.end()) return "left no trace";
    const std::string& open = r->second->open_call;
    if (open.empty()) return "has finished";
    if (open.rfind("MPI_", 0) == 0 || open.rfind("PMPI_", 0) == 0) return "is in " + open;
    return "is in " + open + " (not in MPI)";
  }

  // "rank 3 waits in MPI_Sendrecv for rank 2, which is in MPI_Allreduce".
  std::string wait_text(std::uint64_t rank) const {
    const Blocked& b = blocked_.at(rank);
    std::string out = fmt::format("rank {} waits in {}{}", rank, b.call->function, b.also);
    if (!b.members_known) return out + " for members that cannot be named";
    if (b.waits_for.empty()) {
      return collective_rule(b.call->function) != nullptr ? out + ", which every member has reached"
                                                          : out;
    }
    std::map<std::string, std::set<std::uint64_t>> by_state;
    for (const auto t : b.waits_for) by_state[state_of(t)].insert(t);
    std::string targets;
    for (const auto& [state, ts] : by_state) {
      if (!targets.empty()) targets += b.any ? ", or " : ", and ";
      targets += fmt::format("{}, which {}", ranks_text(ts), ts.size() > 1 ? plural(state) : state);
    }
    return fmt::format("{} for {}{}", out, b.any && b.waits_for.size() > 1 ? "any of " : "",
                       targets);
  }

  // Edges that make a deadlock: every target of an "any" wait blocked too.
  std::vector<std::uint64_t> successors(std::uint64_t rank) const {
    const Blocked& b = blocked_.at(rank);
    std::vector<std::uint64_t> out;
    for (const auto t : b.waits_for) {
      if (blocked_.count(t) != 0) {
        out.push_back(t);
      } else if (b.any) {
        return {};
      }
    }
    return out;
  }

 private:
  static std::string plural(const std::string& state) {
    if (state.rfind("is ", 0) == 0) return "are " + state.substr(3);
    if (state.rfind("has ", 0) == 0) return "have " + state.substr(4);
    return state;
  }

  // Job ranks of communicator `comm` as `rank` sees it, or nullopt.
  std::optional<std::set<std::uint64_t>> members(std::uint64_t rank, const MpiCallSite& c,
                                                 const Collectives& collectives) const {
    const auto comm = field(c, F::kComm), size = field(c, F::kCommSize);
    if (!comm) return std::nullopt;
    std::set<std::uint64_t> out;
    if (world_.at(rank).count(*comm) != 0 && size) {
      for (std::int64_t i = 0; i < *size; ++i) out.insert(static_cast<std::uint64_t>(i));
      return out;
    }
    const auto it = collectives.by_comm.find({*comm, size.value_or(0)});
    if (it == collectives.by_comm.end() || !size ||
        it->second.size() != static_cast<std::size_t>(*size)) {
      return std::nullopt;
    }
    for (const auto& [r, calls] : it->second) out.insert(r);
    return out;
  }

  // A peer rank argument (dest, source) of `c` as a job rank, or nullopt
  // (a wildcard, MPI_PROC_NULL, a communicator that cannot be mapped).
  std::optional<std::uint64_t> peer(std::uint64_t rank, const MpiCallSite& c, F f) const {
    const auto comm = field(c, F::kComm), v = field(c, f);
    if (!comm || !v || *v < 0 || world_.at(rank).count(*comm) == 0) return std::nullopt;
    return static_cast<std::uint64_t>(*v);
  }

  void wire(std::uint64_t rank, Blocked& b, const Collectives& collectives) {
    const MpiCallSite& c = *b.call;
    const std::string& f = c.function;
    auto add_peer = [&](const MpiCallSite& call, F which) {
      if (const auto p = peer(rank, call, which)) {
        b.waits_for.insert(*p);
      } else if (which == F::kSource && field(call, F::kSource).value_or(0) < 0) {
        // A wildcard: any member.
        if (const auto m = members(rank, call, collectives)) {
          for (const auto r : *m) {
            if (r != rank) b.waits_for.insert(r);
          }
          b.any = true;
        } else {
          b.members_known = false;
        }
      } else {
        b.members_known = false;
      }
    };
    if (is_one_of(f, {"MPI_Recv", "MPI_Probe"})) {
      add_peer(c, F::kSource);
    } else if (is_one_of(f, {"MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend"})) {
      add_peer(c, F::kDest);
    } else if (is_one_of(f, {"MPI_Sendrecv", "MPI_Sendrecv_replace"})) {
      add_peer(c, F::kDest);
      add_peer(c, F::kSource);
      b.any = false;
    } else if (is_wait(f)) {
      // The peers of the nonblocking calls posted just before it: as many
      // as it was handed requests (a heuristic: request handles are not
      // recorded).
      const auto& calls = by_rank_.at(rank)->calls;
      std::int64_t wanted = field(c, F::kRequests).value_or(1);
      const auto at = static_cast<std::size_t>(&c - calls.data());
      for (std::size_t i = at; i-- > 0 && wanted > 0;) {
        if (calls[i].thread != c.thread) continue;
        if (is_completion(calls[i].function)) break;
        if (!is_nonblocking_p2p(calls[i].function)) continue;
        add_peer(calls[i], calls[i].function == "MPI_Irecv" ? F::kSource : F::kDest);
        --wanted;
      }
      b.any = is_one_of(f, {"MPI_Waitany", "MPI_Waitsome"});
    } else if (collective_rule(f) != nullptr) {
      // Every member that has not reached this collective.
      const auto m = members(rank, c, collectives);
      const auto comm = field(c, F::kComm), size = field(c, F::kCommSize);
      const auto seq = sequence(rank, c, collectives);
      b.also = fmt::format(" (collective {} on {})", seq, comm_name(comm.value_or(-1)));
      if (!m) {
        b.members_known = false;
        return;
      }
      // (A collective of a communicator of one rank is not in `collectives`.)
      const auto group = collectives.by_comm.find({*comm, size.value_or(0)});
      for (const auto r : *m) {
        if (r == rank || group == collectives.by_comm.end()) continue;
        const auto it = group->second.find(r);
        // A member that reached this collective (in it, or past it) is
        // not waited for.
        const bool there = it != group->second.end() && it->second.size() >= seq;
        if (!there) b.waits_for.insert(r);
      }
    }
    b.waits_for.erase(rank);
  }

  static std::size_t sequence(std::uint64_t rank, const MpiCallSite& c,
                              const Collectives& collectives) {
    const auto comm = field(c, F::kComm), size = field(c, F::kCommSize);
    if (!comm) return 0;
    const auto it = collectives.by_comm.find({*comm, size.value_or(0)});
    if (it == collectives.by_comm.end()) return 0;
    const auto& mine = it->second.find(rank);
    if (mine == it->second.end()) return 0;
    const auto pos = std::find(mine->second.begin(), mine->second.end(), &c);
    return static_cast<std::size_t>(pos - mine->second.begin()) + 1;
  }

  const std::vector<RankCalls>& ranks_;
  std::map<std::uint64_t, const RankCalls*> by_rank_;
  std::map<std::uint64_t, std::set<std::int64_t>> world_;
  std::map<std::uint64_t, Blocked> blocked_;
};

// Cycles of the graph, each once (by its set of ranks), at most `most`.
std::vector<std::vector<std::uint64_t>> find_cycles(const WaitForGraph& g, std::size_t most) {
  std::vector<std::vector<std::uint64_t>> cycles;
  std::set<std::set<std::uint64_t>> seen;
  std::map<std::uint64_t, int> color;  // 0 new, 1 on the path, 2 done
  for (const auto& [start, b] : g.blocked()) {
    if (color[start] != 0) continue;
    struct Frame {
      std::uint64_t rank;
      std::vector<std::uint64_t> next;
      std::size_t at = 0;
    };
    std::vector<Frame> path{{start, g.successors(start)}};
    color[start] = 1;
    while (!path.empty() && cycles.size() < most) {
      Frame& top = path.back();
      if (top.at == top.next.size()) {
        color[top.rank] = 2;
        path.pop_back();
        continue;
      }
      const std::uint64_t t = top.next[top.at++];
      if (color[t] == 1) {  // back to the path: a cycle
        std::vector<std::uint64_t> cycle;
        auto from =
            std::find_if(path.begin(), path.end(), [&](const Frame& f) { return f.rank == t; });
        for (; from != path.end(); ++from) cycle.push_back(from->rank);
        if (seen.insert(std::set<std::uint64_t>(cycle.begin(), cycle.end())).second) {
          cycles.push_back(std::move(cycle));
        }
      } else if (color[t] == 0) {
        color[t] = 1;
        path.push_back({t, g.successors(t)});
      }
    }
  }
  return cycles;
}

void check_waits(const std::vector<RankCalls>& ranks, const Collectives& collectives,
                 MpiCheckResult& result) {
  const WaitForGraph g(ranks, collectives);
  if (g.empty()) return;
  // One cycle per knot: the shortest first, then only cycles through ranks
  // no reported cycle holds; the knot's other ranks are told as blocked.
  auto cycles = find_cycles(g, 64);
  std::stable_sort(cycles.begin(), cycles.end(),
                   [](const auto& a, const auto& b) { return a.size() < b.size(); });
  std::set<std::uint64_t> on_cycle;
  for (const auto& cycle : cycles) {
    if (std::any_of(cycle.begin(), cycle.end(),
                    [&](std::uint64_t r) { return on_cycle.count(r) != 0; })) {
      continue;
    }
    MpiFinding f;
    f.kind = MpiFinding::Kind::kDeadlock;
    std::string text;
    for (std::size_t i = 0; i < cycle.size(); ++i) {
      const Blocked& b = g.blocked().at(cycle[i]);
      const std::uint64_t next = cycle[(i + 1) % cycle.size()];
      text +=
          i == 0 ? fmt::format("rank {} waits in {}{} for rank {}", cycle[i], b.call->function,
                               b.also, next)
                 : fmt::format(", which waits in {}{} for rank {}", b.call->function, b.also, next);
      f.ranks.push_back(cycle[i]);
      f.calls.push_back(*b.call);
      on_cycle.insert(cycle[i]);
    }
    f.summary = "deadlock: " + text;
    result.findings.push_back(std::move(f));
  }
  for (const auto& [rank, b] : g.blocked()) {
    if (on_cycle.count(rank) != 0) continue;
    MpiFinding f;
    f.kind = MpiFinding::Kind::kBlocked;
    f.ranks.push_back(rank);
    f.calls.push_back(*b.call);
    f.summary = g.wait_text(rank);
    result.findings.push_back(std::move(f));
  }
}

// ---- Point-to-point matching ----

struct Message {
  std::int64_t comm;
  std::uint64_t from, to;
  std::int64_t tag;  // receives: -1 any
  bool any_source = false;
  const MpiCallSite* call;
  bool matched = false;
  bool pending = false;  // open, or in flight on a hung rank: matched, never reported
};

void check_messages(const std::vector<RankCalls>& ranks, bool hung, MpiCheckResult& result) {
  std::vector<Message> sends, receives;
  for (const auto& r : ranks) {
    const auto world = world_like(r);
    // A hung rank's nonblocking calls after its last completed wait are
    // still in flight.
    std::size_t in_flight = r.calls.size();
    bool blocked = false;
    for (const auto& c : r.calls) blocked = blocked || c.place.open;
    if (hung && blocked) {
      for (std::size_t i = r.calls.size(); i-- > 0;) {
        if (is_completion(r.calls[i].function) && !r.calls[i].place.open) break;
        in_flight = i;
      }
    }
    for (std::size_t i = 0; i < r.calls.size(); ++i) {
      const MpiCallSite& c = r.calls[i];
      const bool send = is_send(c.function), receive = is_receive(c.function);
      if (!send && !receive) continue;
      // Still pending at the end: a partner for the others, no finding of
      // its own (the wait-for graph tells about it).
      const bool pending = c.place.open || (i >= in_flight && is_nonblocking_p2p(c.function));
      const auto comm = field(c, F::kComm);
      if (!comm || world.count(*comm) == 0) {
        ++result.unmapped_p2p;
        continue;
      }
      if (send) {
        const auto dest = field(c, F::kDest), tag = field(c, F::kTag);
        if (dest && *dest >= 0 && tag) {
          sends.push_back(
              {*comm, r.rank, static_cast<std::uint64_t>(*dest), *tag, false, &c, false, pending});
        }
      }
      if (receive) {
        const bool sendrecv = c.function != "MPI_Recv" && c.function != "MPI_Irecv";
        // What arrived, when the status says; else what was asked for.
        auto source = field(c, F::kStatusSource), tag = field(c, F::kStatusTag);
        if (!source) source = field(c, F::kSource);
        if (!tag) tag = field(c, sendrecv ? F::kRecvTag : F::kTag);
        if (!source || !tag) continue;
        if (field(c, F::kStatusSource) && *source < 0) continue;  // MPI_PROC_NULL
        receives.push_back({*comm, *source < 0 ? 0 : static_cast<std::uint64_t>(*source), r.rank,
                            *tag < 0 ? -1 : *tag, *source < 0, &c, false, pending});
      }
    }
  }
  // Sends by (comm, from, to), in order.
  std::map<std::tuple<std::int64_t, std::uint64_t, std::uint64_t>, std::vector<Message*>> queues;
  for (auto& s : sends) queues[{s.comm, s.from, s.to}].push_back(&s);
  auto take = [&](Message& rcv, auto&& queue) {
    for (Message* s : queue) {
      if (!s->matched && (rcv.tag < 0 || rcv.tag == s->tag)) {
        s->matched = rcv.matched = true;
        return;
      }
    }
  };
  // Named sources first, then wildcards.
  for (auto& r : receives) {
    if (r.any_source) continue;
    if (const auto q = queues.find({r.comm, r.from, r.to}); q != queues.end()) take(r, q->second);
  }
  for (auto& r : receives) {
    if (!r.any_source) continue;
    for (auto& [key, q] : queues) {
      if (std::get<0>(key) == r.comm && std::get<2>(key) == r.to && !r.matched) take(r, q);
    }
  }
  // One finding per (comm, from, to, tag, function) of what was left.
  std::map<std::tuple<std::int64_t, std::uint64_t, std::uint64_t, std::int64_t, std::string>,
           std::vector<const Message*>>
      left_sends, left_receives;
  for (const auto& s : sends) {
    if (!s.matched && !s.pending)
      left_sends[{s.comm, s.from, s.to, s.tag, s.call->function}].push_back(&s);
  }
  for (const auto& r : receives) {
    if (!r.matched && !r.pending) {
      left_receives[{r.comm, r.any_source ? UINT64_MAX : r.from, r.to, r.tag, r.call->function}]
          .push_back(&r);
    }
  }
  for (const auto& [key, list] : left_sends) {
    const auto& [comm, from, to, tag, function] = key;
    MpiFinding f;
    f.kind = MpiFinding::Kind::kUnmatchedSend;
    f.comm = comm;
    f.ranks = {from, to};
    f.calls.push_back(*list.front()->call);
    const auto bytes = field(*list.front()->call, F::kBytes);
    f.summary = fmt::format(
        "rank {} sent {} to rank {} ({}tag {}{}) that {} never received", from,
        list.size() == 1 ? "a message" : fmt::format("{} messages", list.size()), to,
        comm == 0 ? "" : comm_name(comm) + ", ", tag,
        bytes ? fmt::format(", {} bytes", *bytes) : "", list.size() == 1 ? "was" : "were");
    f.summary += fmt::format(" (in {})", function);
    result.findings.push_back(std::move(f));
  }
  for (const auto& [key, list] : left_receives) {
    const auto& [comm, from, to, tag, function] = key;
    MpiFinding f;
    f.kind = MpiFinding::Kind::kUnmatchedReceive;
    f.comm = comm;
    f.ranks = {to};
    if (from != UINT64_MAX) f.ranks.push_back(from);
    f.calls.push_back(*list.front()->call);
    f.summary =
        fmt::format("rank {} posted {} {} from {} ({}tag {}) that no message matched", to,
                    list.size() == 1 ? "a" : std::to_string(list.size()), function,
                    from == UINT64_MAX ? std::string("any rank") : fmt::format("rank {}", from),
                    comm == 0 ? "" : comm_name(comm) + ", ",
                    tag < 0 ? std::string("any") : std::to_string(tag));
    result.findings.push_back(std::move(f));
  }
}

}  // namespace

const char* finding_kind_name(MpiFinding::Kind kind) {
  switch (kind) {
    case MpiFinding::Kind::kCollectiveMismatch:
      return "collective_mismatch";
    case MpiFinding::Kind::kCollectiveCount:
      return "collective_count";
    case MpiFinding::Kind::kDeadlock:
      return "deadlock";
    case MpiFinding::Kind::kBlocked:
      return "blocked";
    case MpiFinding::Kind::kUnmatchedSend:
      return "unmatched_send";
    case MpiFinding::Kind::kUnmatchedReceive:
      return "unmatched_receive";
  }
  return "unknown";
}

MpiCheckResult check_mpi(const std::vector<RankCalls>& ranks) {
  MpiCheckResult result;
  bool hung = false;
  for (const auto& r : ranks) {
    result.calls += r.calls.size();
    for (const auto& c : r.calls) hung = hung || c.place.open;
  }
  const Collectives collectives = collect_collectives(ranks);
  check_collectives(collectives, hung, result);
  check_waits(ranks, collectives, result);
  check_messages(ranks, hung, result);
  return result;
}

}  // namespace parlot::analysis

// Unit tests of `check`'s analyses on hand-written input: call places (call
// path and loop iteration, analysis/call_places.h) on stream() trees, and
// the MPI checks (analysis/mpi_check.h) on hand-made rank call lists.
#include <gtest/gtest.h>

#include <initializer_list>
#include <utility>

#include "analysis/call_places.h"
#include "analysis/mpi_check.h"
#include "stream_support.h"

namespace parlot::analysis {
namespace {

using F = format::MpiField;

// Indices of the entry events of function `name` in `events`.
std::vector<std::uint64_t> entries_of(const std::vector<Event>& events, const std::string& name) {
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i].enter && events[i].function == function_key(name)) out.push_back(i);
  }
  return out;
}

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST(CallPlaces, NameThePathAndTheIterationOfTheInnermostLoop) {
  NameTable names;
  const auto events = stream("m(ii" + repeat("s(ar)", 6) + "f)", &names);
  const auto r = entries_of(events, "r");
  ASSERT_EQ(r.size(), 6u);
  const auto places = call_places(summarise(events), r);
  for (std::size_t k = 0; k < r.size(); ++k) {
    EXPECT_EQ(path_text(places[k], names), "m > s > r");
    EXPECT_EQ(places[k].iteration, k + 1);
    EXPECT_EQ(places[k].iterations, 6u);
    EXPECT_EQ(iteration_text(places[k], names),
              "iteration " + std::to_string(k + 1) + " of the loop in m");
    EXPECT_FALSE(places[k].open);
  }
  // Outside any loop: no iteration.
  const auto f = call_places(summarise(events), entries_of(events, "f"));
  EXPECT_EQ(path_text(f[0], names), "m > f");
  EXPECT_EQ(iteration_text(f[0], names), "");
}

TEST(CallPlaces, AFrameThatBreaksItsLoopCountsAsTheNextIteration) {
  NameTable names;
  const auto events =
      stream("m(" + repeat("s(ar)", 3) + "s(ab)" + repeat("s(ar)", 2) + ")", &names);
  const LoopSummary s = summarise(events);
  const auto b = call_places(s, entries_of(events, "b"));
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(path_text(b[0], names), "m > s > b");
  EXPECT_EQ(iteration_text(b[0], names), "iteration 4 of the loop in m");
  const auto r = call_places(s, entries_of(events, "r"));
  ASSERT_EQ(r.size(), 5u);
  const std::uint64_t expected[] = {1, 2, 3, 5, 6};
  for (std::size_t k = 0; k < r.size(); ++k) EXPECT_EQ(r[k].iteration, expected[k]) << k;
}

TEST(CallPlaces, NestedLoopsAreNamedOutermostFirst) {
  NameTable names;
  // main repeats step 5 times, each step repeats x twice: the second x of
  // the fourth step; and a step whose first x is not (yet) in its loop.
  const auto events = stream("m(" + repeat("s(" + repeat("x(r)", 2) + ")", 5) + ")", &names);
  const auto r = entries_of(events, "r");
  ASSERT_EQ(r.size(), 10u);
  const auto places = call_places(summarise(events), r);
  EXPECT_EQ(iteration_text(places[7], names),
            "iteration 4 of the loop in m, iteration 2 of the loop in s");
  EXPECT_EQ(places[7].iteration, 2u);
  EXPECT_EQ(names.name(places[7].loop_owner), "s");
}

TEST(CallPlaces, AFrameAfterALoopOfSeveralCallsContinuesItsCount) {
  NameTable names;
  // Five iterations of e r n, then one that skipped e.
  const auto events = stream("m(" + repeat("e(x)rn(y)", 5) + "rn(y))", &names);
  const auto y = call_places(summarise(events), entries_of(events, "y"));
  ASSERT_EQ(y.size(), 6u);
  EXPECT_EQ(iteration_text(y[5], names), "iteration 6 of the loop in m");
  EXPECT_EQ(iteration_text(y[2], names), "iteration 3 of the loop in m");
  // Calls of the same function with other calls between them, no loop: no
  // iteration.
  const auto plain = stream("m(a(y)ba(y))", &names);
  const auto p = call_places(summarise(plain), entries_of(plain, "y"));
  EXPECT_EQ(iteration_text(p[1], names), "");
}

TEST(CallPlaces, EveryEntryGetsThePathAStackWouldGive) {
  // Nested loops and random trees: the skipping walk agrees with a plain
  // stack over the events at every entry.
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    NameTable names;
    const std::string tree =
        round == 0 ? "a(" + repeat("b(" + repeat("cd", 3) + "e)", 4) + ")" : random_tree(rng, 40);
    const auto events = stream(tree, &names);
    std::vector<std::uint64_t> all;
    std::vector<std::vector<FunctionKey>> expected;
    std::vector<FunctionKey> open;
    for (std::size_t i = 0; i < events.size(); ++i) {
      if (!events[i].enter) {
        open.pop_back();
        continue;
      }
      open.push_back(events[i].function);
      all.push_back(i);
      expected.push_back(open);
    }
    const auto places = call_places(summarise(events), all);
    for (std::size_t k = 0; k < all.size(); ++k) {
      ASSERT_EQ(places[k].path, expected[k]) << tree << " event " << all[k];
    }
  }
}

TEST(CallPlaces, CallsOpenAtTheEndAreMarkedOpen) {
  NameTable names;
  auto events = stream("m(s(ar)s(ar)s(aw))", &names);
  events.resize(events.size() - 3);  // the trace ends inside w
  const LoopSummary s = summarise(events);
  const auto w = call_places(s, entries_of(events, "w"));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(w[0].open);
  EXPECT_EQ(iteration_text(w[0], names), "iteration 3 of the loop in m");
  const auto open = open_calls_at_end(s);
  ASSERT_EQ(open.size(), 3u);
  EXPECT_EQ(names.name(open.back()), "w");
  const auto a = call_places(s, entries_of(events, "a"));
  EXPECT_FALSE(a[2].open);
}

// ---- MPI checks ----

MpiCallSite call(std::uint64_t rank, const std::string& function,
                 std::initializer_list<std::pair<F, std::int64_t>> fields, bool open = false) {
  MpiCallSite c;
  c.rank = rank;
  c.function = function;
  for (const auto& [f, v] : fields) {
    c.args.mask |= 1u << static_cast<unsigned>(f);
    c.args.value[static_cast<unsigned>(f)] = v;
  }
  c.place.path = {function_key("main"), function_key(function)};
  c.place.open = open;
  return c;
}

MpiCallSite allreduce(std::uint64_t rank, std::int64_t bytes = 8, bool open = false) {
  return call(rank, "MPI_Allreduce", {{F::kBytes, bytes}, {F::kComm, 0}, {F::kCommSize, 3}}, open);
}
MpiCallSite reduce(std::uint64_t rank, std::int64_t root, std::int64_t bytes = 8) {
  return call(rank, "MPI_Reduce",
              {{F::kBytes, bytes}, {F::kRoot, root}, {F::kComm, 0}, {F::kCommSize, 3}});
}
MpiCallSite send(std::uint64_t rank, std::int64_t dest, std::int64_t tag, bool open = false) {
  return call(rank, "MPI_Send", {{F::kDest, dest}, {F::kTag, tag}, {F::kBytes, 4}, {F::kComm, 0}},
              open);
}
MpiCallSite recv(std::uint64_t rank, std::int64_t source, std::int64_t tag, bool open = false) {
  return call(rank, "MPI_Recv", {{F::kSource, source}, {F::kTag, tag}, {F::kComm, 0}}, open);
}

// Three ranks, each an allreduce and a reduce to root 0, then `extra(rank)`.
template <class Extra>
std::vector<RankCalls> three_ranks(Extra&& extra) {
  std::vector<RankCalls> ranks(3);
  for (std::uint64_t r = 0; r < 3; ++r) {
    ranks[r].rank = r;
    ranks[r].calls = {allreduce(r), reduce(r, 0)};
    extra(ranks[r]);
  }
  return ranks;
}

TEST(MpiCheck, AgreeingRanksHaveNoFinding) {
  const auto ranks = three_ranks([](RankCalls& r) {
    r.calls.push_back(send(r.rank, (r.rank + 1) % 3, 5));
    r.calls.push_back(recv(r.rank, (r.rank + 2) % 3, 5));
  });
  const MpiCheckResult result = check_mpi(ranks);
  EXPECT_TRUE(result.findings.empty()) << result.findings.front().summary;
  EXPECT_EQ(result.calls, 12u);
}

TEST(MpiCheck, WrongRootIsACollectiveMismatchNamingTheOddRank) {
  auto ranks = three_ranks([](RankCalls&) {});
  ranks[1].calls[1] = reduce(1, 1);
  const MpiCheckResult result = check_mpi(ranks);
  ASSERT_EQ(result.findings.size(), 1u);
  const MpiFinding& f = result.findings[0];
  EXPECT_EQ(f.kind, MpiFinding::Kind::kCollectiveMismatch);
  EXPECT_EQ(f.summary,
            "rank 1 calls MPI_Reduce with root=1 where ranks 0,2 have root=0 (collective 2 on "
            "MPI_COMM_WORLD)");
  EXPECT_EQ(f.sequence, 2u);
  ASSERT_FALSE(f.calls.empty());
  EXPECT_EQ(f.calls[0].rank, 1u);
}

TEST(MpiCheck, DifferentKindOrBytesAreMismatches) {
  auto kind = three_ranks([](RankCalls&) {});
  kind[2].calls[1] =
      call(2, "MPI_Bcast", {{F::kBytes, 8}, {F::kRoot, 0}, {F::kComm, 0}, {F::kCommSize, 3}});
  auto result = check_mpi(kind);
  ASSERT_EQ(result.findings.size(), 1u);
  EXPECT_EQ(result.findings[0].summary,
            "rank 2 calls MPI_Bcast where ranks 0-1 call MPI_Reduce (collective 2 on "
            "MPI_COMM_WORLD)");

  auto bytes = three_ranks([](RankCalls&) {});
  bytes[0].calls[0] = allreduce(0, 16);
  result = check_mpi(bytes);
  ASSERT_EQ(result.findings.size(), 1u);
  EXPECT_EQ(result.findings[0].summary,
            "rank 0 calls MPI_Allreduce with 16 bytes where ranks 1-2 have 8 bytes (collective 1 "
            "on MPI_COMM_WORLD)");
}

TEST(MpiCheck, SendNeverReceivedIsReported) {
  const auto ranks = three_ranks([](RankCalls& r) {
    if (r.rank == 0) r.calls.push_back(send(0, 1, 99));
  });
  const MpiCheckResult result = check_mpi(ranks);
  ASSERT_EQ(result.findings.size(), 1u);
  EXPECT_EQ(result.findings[0].kind, MpiFinding::Kind::kUnmatchedSend);
  EXPECT_EQ(result.findings[0].summary,
            "rank 0 sent a message to rank 1 (tag 99, 4 bytes) that was never received (in "
            "MPI_Send)");
  // A wildcard receive takes it.
  auto matched = ranks;
  matched[1].calls.push_back(recv(1, -1, -1));
  EXPECT_TRUE(check_mpi(matched).findings.empty());
}

TEST(MpiCheck, TwoRanksWaitingForEachOtherAreADeadlock) {
  auto ranks = three_ranks([](RankCalls& r) {
    if (r.rank < 2) r.calls.push_back(recv(r.rank, 1 - static_cast<std::int64_t>(r.rank), 7, true));
    if (r.rank == 2) r.calls.push_back(allreduce(2, 8, true));
  });
  const MpiCheckResult result = check_mpi(ranks);
  ASSERT_EQ(result.findings.size(), 2u);
  EXPECT_EQ(result.findings[0].kind, MpiFinding::Kind::kDeadlock);
  EXPECT_EQ(result.findings[0].summary,
            "deadlock: rank 0 waits in MPI_Recv for rank 1, which waits in MPI_Recv for rank 0");
  EXPECT_EQ(result.findings[1].kind, MpiFinding::Kind::kBlocked);
  EXPECT_EQ(result.findings[1].summary,
            "rank 2 waits in MPI_Allreduce (collective 3 on MPI_COMM_WORLD) for ranks 0-1, which "
            "are in MPI_Recv");
}

TEST(MpiCheck, ASendWhosePartnerIsStillPendingIsNotUnmatched) {
  // Rank 0's Isend completed; rank 1 posted its Irecv and hangs in the
  // Waitall after it: the pair matches, and nothing is left over.
  auto ranks = three_ranks([](RankCalls& r) {
    if (r.rank == 0) {
      r.calls.push_back(call(0, "MPI_Isend", {{F::kDest, 1}, {F::kTag, 4}, {F::kComm, 0}}));
      r.calls.push_back(call(0, "MPI_Waitall", {{F::kRequests, 1}}));
    }
    if (r.rank == 1) {
      r.calls.push_back(call(1, "MPI_Irecv", {{F::kSource, 0}, {F::kTag, 4}, {F::kComm, 0}}));
      r.calls.push_back(call(1, "MPI_Irecv", {{F::kSource, 2}, {F::kTag, 4}, {F::kComm, 0}}));
      r.calls.push_back(call(1, "MPI_Waitall", {{F::kRequests, 2}}, true));
    }
  });
  const MpiCheckResult result = check_mpi(ranks);
  ASSERT_EQ(result.findings.size(), 1u) << result.findings.back().summary;
  EXPECT_EQ(result.findings[0].summary,
            "rank 1 waits in MPI_Waitall for ranks 0,2, which have finished");
}

TEST(MpiCheck, ARankWaitingForAFinishedRankIsBlockedNotDeadlocked) {
  auto ranks = three_ranks([](RankCalls& r) {
    if (r.rank == 2) r.calls.push_back(recv(2, 0, 3, true));
  });
  ranks[1].open_call = "compute";
  const MpiCheckResult result = check_mpi(ranks);
  ASSERT_EQ(result.findings.size(), 1u);
  EXPECT_EQ(result.findings[0].summary, "rank 2 waits in MPI_Recv for rank 0, which has finished");
}

}  // namespace
}  // namespace parlot::analysis

// MPI usage checks after the fact (`parlot-read check`), in the spirit of
// MUST, over the MPI call arguments a trace recorded (PARLOT_MPI_ARGS=1):
// collectives that differ across the ranks of a communicator (kind, root,
// bytes), point-to-point messages left unmatched at the end, and, for a
// hung or killed job, who waits for whom (a wait-for graph over the ranks
// blocked in MPI; a cycle is a deadlock). docs/DESIGN.md, "MPI checks".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "call_places.h"
#include "parlot/trace_reader.h"

namespace parlot::analysis {

/// One recorded MPI call of a rank.
struct MpiCallSite {
  std::uint64_t rank = 0;
  std::uint64_t thread = 0;  ///< thread index within the rank's process
  std::string function;      ///< "MPI_Reduce" (the C name, for Fortran calls too)
  MpiCallArguments args;     ///< args.event_index: the entry event in its thread
  CallPlace place;           ///< path and iteration; place.open: never returned
  std::string site;          ///< its call site, "file:line" ("" unknown, or not shown)
};

/// What one rank recorded: its MPI calls with arguments (every thread, by
/// thread index then event) and how its trace ends.
struct RankCalls {
  std::uint64_t rank = 0;
  std::vector<MpiCallSite> calls;
  /// The innermost call open at the end of the rank's first thread with
  /// open calls ("" when every thread ran to its end: the rank finished).
  std::string open_call;
};

/// One problem found. `calls` holds the calls it is about (copies), the
/// odd one(s) first.
struct MpiFinding {
  enum class Kind {
    kCollectiveMismatch,  ///< the k-th collective on a communicator differs
    kCollectiveCount,     ///< ranks made different numbers of collectives on one
    kDeadlock,            ///< a cycle of ranks blocked in MPI, waiting for each other
    kBlocked,             ///< a rank blocked in MPI at the end, on no cycle
    kUnmatchedSend,       ///< a message sent that no rank posted a receive for
    kUnmatchedReceive,    ///< a receive posted that no message matched
  };
  Kind kind = Kind::kCollectiveMismatch;
  /// One line: "rank 1 calls MPI_Reduce with root=1 where ranks 0,2-3 have
  /// root=0 (collective 7 on communicator 0)".
  std::string summary;
  std::vector<MpiCallSite> calls;
  std::int64_t comm = -1;            ///< the communicator ID, -1 when none
  std::uint64_t sequence = 0;        ///< collectives: 1-based position on the communicator
  std::vector<std::uint64_t> ranks;  ///< the ranks it names (a cycle: in its order)
};

/// "kind" as `--format json` writes it: "collective_mismatch", ...
const char* finding_kind_name(MpiFinding::Kind kind);

/// The checks' result: findings in order of kind (collectives, deadlocks,
/// blocked ranks, unmatched messages), and what could not be checked.
struct MpiCheckResult {
  std::vector<MpiFinding> findings;
  std::uint64_t calls = 0;  ///< MPI calls with arguments looked at
  /// Point-to-point calls left out of matching: on a communicator whose
  /// ranks cannot be mapped to ranks of the job (not MPI_COMM_WORLD or a
  /// duplicate of it), or with no communicator ID.
  std::uint64_t unmapped_p2p = 0;
  /// Communicators whose collectives were not compared: one ID shared by
  /// more ranks than the communicator's size (the disjoint parts of a
  /// split, which may share an ID).
  std::uint64_t ambiguous_comms = 0;
};

/// Runs every check over `ranks` (one entry per rank, any order; each
/// rank's calls in the order it made them). Never throws but std::bad_alloc.
MpiCheckResult check_mpi(const std::vector<RankCalls>& ranks);

}  // namespace parlot::analysis

// The readers that share one parlot-read command (issue 9 §7): one process
// in a serial run, or the ranks of an mpirun job. Under mpirun (Open MPI's
// OMPI_COMM_WORLD_SIZE or MPICH's PMI_SIZE in the environment) the team
// loads the MPI plugin (libparlot-read-mpi.so, reader/mpi/) with dlopen and
// initialises MPI; otherwise MPI is never touched, so the same binary runs
// serially where no MPI is installed. The members split the process
// directories (owns()), each computes a partial result, serialises it
// (summary_bytes.h), and the leader (rank 0) gathers and merges them.
#pragma once

#include <cstddef>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "damage_log.h"

namespace parlot::tool {

/// `bytes` prefixed by its length ("<decimal>:"), to go in front of another
/// message's bytes.
std::string framed(std::string_view bytes);
/// Takes a framed() piece off the front of `message` and returns it.
/// Throws std::runtime_error on a malformed frame.
std::string_view unframe(std::string_view& message);

/// Outside the leader: this member's DamageLog entries (taken), framed, to
/// travel in front of a message to the leader. On the leader: nothing.
std::string framed_damage(bool leader);
/// On the leader: takes the framed damage off the front of `message` and
/// adds it to the leader's DamageLog.
void merge_framed_damage(std::string_view& message);

class ReaderTeam {
 public:
  /// This process's team: the MPI job it was started in, else a team of
  /// one. Initialises MPI on the first call. Throws std::runtime_error when
  /// started by mpirun with more than one rank and the plugin cannot be
  /// loaded or MPI fails to start.
  static ReaderTeam& get();

  /// Whether this process is a member of an mpirun'd team other than the
  /// leader (false before get() made the team, and in a team of one).
  static bool is_follower() { return follower_; }

  unsigned rank() const { return rank_; }
  unsigned size() const { return size_; }
  bool leader() const { return rank_ == 0; }
  /// Whether this member reads the process at `index` (position in the
  /// trace directory, as list_trace_directory() sorts it): round robin.
  bool owns(std::size_t index) const { return index % size_ == rank_; }
  /// Every member's `mine`, in rank order, on the leader; empty elsewhere.
  /// Collective: every member must call it. Throws std::runtime_error on an
  /// MPI error.
  std::vector<std::string> gather(std::string mine);
  /// The maximum of `value` over the team, on every member (collective).
  int max(int value);
  /// Sends `data` to member `to` (point to point, in order with this
  /// member's other sends to `to`; pairs with receive()). Only in a team of
  /// more than one. Throws std::runtime_error on an MPI error.
  void send(std::string_view data, unsigned to);
  /// The next send() of member `from` to this one (blocks until it comes).
  /// Throws std::runtime_error on an MPI error.
  std::string receive(unsigned from);

  ReaderTeam(const ReaderTeam&) = delete;
  ReaderTeam& operator=(const ReaderTeam&) = delete;
  ~ReaderTeam();  ///< MPI_Finalize when MPI was started

 private:
  ReaderTeam();
  struct Plugin;
  static inline bool follower_ = false;  // see is_follower()
  Plugin* plugin_ = nullptr;             // null: a team of one
  unsigned rank_ = 0;
  unsigned size_ = 1;
};

/// Runs this member's share of a command, `work` (returns its serialised
/// partial result), and gathers the partials on the leader, with what each
/// member could not read (its DamageLog, merged into the leader's). An
/// exception in `work` travels in the partial, so every member reaches the
/// gather; the leader then throws the first failed member's message
/// (std::runtime_error, printed by main as "parlot-read: error: ...").
/// Returns the partials in rank order on the leader, nothing elsewhere.
template <class Work>
std::vector<std::string> gather_partials(ReaderTeam& team, Work&& work) {
  std::string mine;
  try {
    std::string partial = work();
    mine = "+" + framed_damage(team.leader()) + partial;
  } catch (const std::exception& e) {
    mine = std::string("!") + e.what();
  }
  std::vector<std::string> all = team.gather(std::move(mine));
  for (std::string& part : all) {
    if (!part.empty() && part[0] == '!') throw std::runtime_error(part.substr(1));
    std::string_view rest = std::string_view(part).substr(1);
    merge_framed_damage(rest);  // the leader's own frame is empty
    part = std::string(rest);
  }
  return all;
}

/// Runs `work` (opening this member's share) on every member and tells
/// every member whether all succeeded (collective). In a team of one,
/// `work` runs as is and its exceptions pass unchanged. In a bigger team an
/// exception in `work` on any member makes every member return false, after
/// the leader threw the first failed member's message (rank order) as
/// std::runtime_error: a member then stops without printing. Returns true
/// when `work` succeeded everywhere.
template <class Work>
bool all_succeed(ReaderTeam& team, Work&& work) {
  if (team.size() == 1) {
    work();
    return true;
  }
  std::string mine;
  try {
    work();
  } catch (const std::exception& e) {
    mine = std::string("!") + e.what();
  }
  if (team.max(mine.empty() ? 0 : 1) == 0) return true;
  for (const auto& part : team.gather(std::move(mine))) {
    if (!part.empty()) throw std::runtime_error(part.substr(1));
  }
  return false;
}

}  // namespace parlot::tool
